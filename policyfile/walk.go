package policyfile

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fairsched/fairsched/policy"
)

// walker checks a YAML tree against the file's structure before anything
// is decoded — unknown fields, and values of the wrong kind, at their line
// and column — and records each node by its path ("tiers.8.min_share",
// "workloads[2]") for the errors of the checks that follow.
type walker struct {
	file  string
	errs  []error
	nodes map[string]*yaml.Node
}

var durationType = reflect.TypeFor[time.Duration]()

func (w *walker) fail(n *yaml.Node, field, format string, args ...any) {
	w.errs = append(w.errs, &Error{File: w.file, Line: n.Line, Column: n.Column, Field: field,
		Err: fmt.Errorf("%w: %s", policy.ErrInvalidConfig, fmt.Sprintf(format, args...))})
}

func (w *walker) walk(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind == yaml.AliasNode {
		w.fail(n, path, "aliases are not supported: write the value out")
		return
	}
	w.nodes[path] = n
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // absent: the zero value
	}
	switch {
	case t.Kind() == reflect.Struct:
		w.walkStruct(n, t, path)
	case t.Kind() == reflect.Map:
		w.walkMap(n, t, path)
	case t.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			w.fail(n, path, "want a list")
			return
		}
		for i, item := range n.Content {
			w.walk(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	default:
		w.scalar(n, t, path)
	}
}

func (w *walker) walkStruct(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.MappingNode {
		w.fail(n, path, "want a mapping of %s", strings.Join(fieldNames(t), ", "))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f, ok := fieldByTag(t, k.Value)
		if !ok {
			w.fail(k, join(path, k.Value), "unknown field %q; valid here: %s", policy.CleanTextN(k.Value, 64), strings.Join(fieldNames(t), ", "))
			continue
		}
		w.walk(v, f.Type, join(path, k.Value))
	}
}

func (w *walker) walkMap(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.MappingNode {
		w.fail(n, path, "want a mapping")
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if t.Key().Kind() == reflect.Int {
			var p int
			if k.Kind != yaml.ScalarNode || k.Decode(&p) != nil || p < 0 {
				w.fail(k, join(path, k.Value), "a tier is named by its priority, a whole number from 0 up, not %q", policy.CleanTextN(k.Value, 64))
				continue
			}
		} else if k.Kind != yaml.ScalarNode {
			w.fail(k, path, "want a name as the key")
			continue
		}
		w.walk(v, t.Elem(), join(path, k.Value))
	}
}

func (w *walker) scalar(n *yaml.Node, t reflect.Type, path string) {
	want := map[reflect.Kind]string{reflect.Int: "a whole number", reflect.Float64: "a number",
		reflect.Bool: "true or false", reflect.String: "a string"}[t.Kind()]
	if t == durationType {
		want = `a duration such as "30s" or "1m30s"`
	}
	if n.Kind != yaml.ScalarNode || n.Decode(reflect.New(t).Interface()) != nil {
		w.fail(n, path, "want %s, not %q", want, policy.CleanTextN(n.Value, 64))
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if f := t.Field(i); tagOf(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func fieldNames(t reflect.Type) []string {
	out := make([]string, t.NumField())
	for i := range out {
		out[i] = tagOf(t.Field(i))
	}
	return out
}

func tagOf(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}
