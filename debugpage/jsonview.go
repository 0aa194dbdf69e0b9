package debugpage

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"time"

	"github.com/fairsched/fairsched"
)

// The JSON view. The page's JSON is the Snapshot's own JSON — the same
// fields, names, order and omissions, so that it decodes into a
// fairsched.Snapshot — with additions for people reading it:
//
//   - every duration, a number of nanoseconds as in the Snapshot, has a
//     sibling right after it with the same name and a "_text" suffix holding
//     it as Go writes durations (time.Duration.String: "1m30s"); a map of
//     durations (accumulated_cost) has a sibling map of such strings;
//   - each pending job has waited (the snapshot's time less its submission)
//     and each running job running_for (the snapshot's time less its
//     start), durations with their "_text" too;
//   - after pending_total, pending_listed and pending_more say how many
//     pending jobs the list holds and how many it leaves out;
//   - at the end, dead_jobs lists the dead durable jobs, if any.

var (
	durationType  = reflect.TypeFor[time.Duration]()
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	zeroer        = reflect.TypeFor[interface{ IsZero() bool }]()
)

// jsonView returns snap and the dead jobs as the page's JSON document.
func jsonView(snap fairsched.Snapshot, dead []fairsched.DeadJob) object {
	doc := withText(reflect.ValueOf(snap)).(object)
	doc = doc.insertAfter("pending_total",
		member{"pending_listed", len(snap.Pending)},
		member{"pending_more", max(snap.PendingTotal-len(snap.Pending), 0)})
	if rows, ok := doc.get("pending").([]any); ok {
		for i, p := range snap.Pending {
			rows[i] = rows[i].(object).insertAfter("submitted", duration("waited", snap.Time.Sub(p.Submitted))...)
		}
	}
	if rows, ok := doc.get("running").([]any); ok {
		for i, r := range snap.Running {
			rows[i] = rows[i].(object).insertAfter("started", duration("running_for", snap.Time.Sub(r.Started))...)
		}
	}
	if len(dead) > 0 {
		doc = append(doc, member{"dead_jobs", withText(reflect.ValueOf(dead))})
	}
	return doc
}

// duration returns the members for a duration: its nanoseconds and its
// "_text" sibling.
func duration(name string, d time.Duration) []member {
	return []member{{name, int64(d)}, {name + "_text", d.String()}}
}

// object is a JSON object that keeps its members in order: a struct's
// fields in the order encoding/json writes them, each duration's "_text"
// sibling next to it.
type object []member

type member struct {
	name  string
	value any
}

func (o object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		name, err := json.Marshal(m.name)
		if err != nil {
			return nil, err
		}
		value, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		buf.Write(name)
		buf.WriteByte(':')
		buf.Write(value)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// get returns the value of the member called name, or nil.
func (o object) get(name string) any {
	for _, m := range o {
		if m.name == name {
			return m.value
		}
	}
	return nil
}

// insertAfter returns o with ms after the member called name, or at the end
// if o has none.
func (o object) insertAfter(name string, ms ...member) object {
	for i, m := range o {
		if m.name == name {
			return append(o[:i+1:i+1], append(ms, o[i+1:]...)...)
		}
	}
	return append(o, ms...)
}

// withText returns v as a tree of objects, maps, slices and leaves that
// encodes as v's JSON does, with the "_text" siblings of its durations.
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
		return v.Interface() // its own encoding (time.Time, modes by name)
	}
	switch v.Kind() {
	case reflect.Struct:
		return addFields(nil, v)
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
		out := make(map[string]any, v.Len()) // encoding/json sorts its keys
		for it := v.MapRange(); it.Next(); {
			out[mapKey(it.Key())] = withText(it.Value())
		}
		return out
	}
	return v.Interface()
}

// addFields appends struct v's fields to out under their JSON names, in
// order, with the "_text" siblings of durations; embedded structs are
// flattened, as encoding/json does (the Snapshot has no two fields of one
// name, so encoding/json's rules for those are not needed).
func addFields(out object, v reflect.Value) object {
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
			out = addFields(out, fv)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if hasOption(opts, "omitempty") && isEmpty(fv) || hasOption(opts, "omitzero") && isZero(fv) {
			continue
		}
		out = append(out, member{name, withText(fv)})
		switch {
		case f.Type == durationType:
			out = append(out, member{name + "_text", time.Duration(fv.Int()).String()})
		case f.Type.Kind() == reflect.Map && f.Type.Elem() == durationType && !fv.IsNil():
			text := make(map[string]string, fv.Len())
			for it := fv.MapRange(); it.Next(); {
				text[mapKey(it.Key())] = time.Duration(it.Value().Int()).String()
			}
			out = append(out, member{name + "_text", text})
		}
	}
	return out
}

// hasOption reports whether a json tag's options (after the name) hold opt.
func hasOption(opts, opt string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

// isEmpty is omitempty's test in encoding/json: false, 0, a nil pointer or
// interface, an empty array, slice, map or string. Structs are never empty.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// isZero is omitzero's test in encoding/json: the value's IsZero method if
// it has one, else the type's zero value.
func isZero(v reflect.Value) bool {
	if v.Type().Implements(zeroer) {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			return true
		}
		return v.Interface().(interface{ IsZero() bool }).IsZero()
	}
	return v.IsZero()
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
