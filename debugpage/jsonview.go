package debugpage

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"time"
)

// The JSON view. The page's JSON is the Snapshot's own JSON with two
// additions for people reading it: every duration — a number of
// nanoseconds, as in the Snapshot — has a sibling with the same name and a
// "_text" suffix holding it as Go writes durations ("1m30s"); a map of
// durations (accumulated_cost) has a sibling map of such strings. And at
// the top, pending_listed and pending_more say how many pending jobs the
// list holds and how many it leaves out (pending_total counts them all).

var (
	durationType  = reflect.TypeFor[time.Duration]()
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// withText returns v as a tree of maps, slices and leaves that encodes as
// v's JSON does, with the "_text" siblings of its durations.
func withText(v reflect.Value) any {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	t := v.Type()
	if t != durationType && (t.Implements(jsonMarshaler) || t.Implements(textMarshaler) ||
		reflect.PointerTo(t).Implements(jsonMarshaler)) {
		return v.Interface() // its own encoding (time.Time, errors with MarshalJSON)
	}
	switch v.Kind() {
	case reflect.Struct:
		out := map[string]any{}
		addFields(out, v)
		return out
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = withText(v.Index(i))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		out := make(map[string]any, v.Len())
		for it := v.MapRange(); it.Next(); {
			out[mapKey(it.Key())] = withText(it.Value())
		}
		return out
	}
	return v.Interface()
}

// addFields adds struct v's fields to out under their JSON names, with the
// "_text" siblings of durations; embedded structs are flattened, as
// encoding/json does.
func addFields(out map[string]any, v reflect.Value) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		fv := v.Field(i)
		if f.Anonymous && name == "" && fv.Kind() == reflect.Struct {
			addFields(out, fv)
			continue
		}
		if name == "" {
			name = f.Name
		}
		if strings.Contains(opts, "omitempty") && fv.IsZero() {
			continue
		}
		out[name] = withText(fv)
		switch {
		case f.Type == durationType:
			out[name+"_text"] = time.Duration(fv.Int()).String()
		case f.Type.Kind() == reflect.Map && f.Type.Elem() == durationType && !fv.IsNil():
			text := make(map[string]string, fv.Len())
			for it := fv.MapRange(); it.Next(); {
				text[mapKey(it.Key())] = time.Duration(it.Value().Int()).String()
			}
			out[name+"_text"] = text
		}
	}
}

// mapKey writes a map key as encoding/json does for string and integer
// keys (the only ones a Snapshot has).
func mapKey(k reflect.Value) string {
	if k.Kind() == reflect.String {
		return k.String()
	}
	b, _ := json.Marshal(k.Interface())
	return strings.Trim(string(b), `"`)
}
