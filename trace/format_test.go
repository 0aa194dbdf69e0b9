package trace_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/trace"
)

const header = `{"fairsched_trace":1}` + "\n"

// TestReadWriteRoundTrip: what Write writes, Read reads back whole.
func TestReadWriteRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 28, 10, 0, 0, 250_000_000, time.UTC)
	want := []trace.Record{
		{Type: "render", ID: "r1", Key: "acme/u1", Tenant: "acme", Arrival: at, Wait: 5 * time.Millisecond, Run: time.Second, Cost: time.Second},
		{Type: "export", ID: "é\u2028\"", Group: "batch", Arrival: at.Add(time.Second), Failed: true},
	}
	var buf bytes.Buffer
	if err := trace.Write(&buf, want); err != nil {
		t.Fatal(err)
	}
	got, err := trace.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestReadErrors: each wrong line is a *LineError with its line, field and
// sentinel.
func TestReadErrors(t *testing.T) {
	good := `{"type":"t","id":"1","arrival":"2026-11-28T10:00:00Z"}`
	for _, tc := range []struct {
		name, text string
		line       int
		field      string
		sentinel   error
	}{
		{"empty file", "", 1, "", trace.ErrVersion},
		{"no header", good + "\n", 1, "", trace.ErrVersion},
		{"other version", `{"fairsched_trace":2}` + "\n", 1, "", trace.ErrVersion},
		{"not JSON", header + good + "\n{oops\n", 3, "", trace.ErrCorrupt},
		{"unknown field", header + `{"type":"t","id":"1","arrival":"2026-11-28T10:00:00Z","x":1}`, 2, "", trace.ErrCorrupt},
		{"two values", header + good + good, 2, "", trace.ErrCorrupt},
		{"no type", header + `{"id":"1","arrival":"2026-11-28T10:00:00Z"}`, 2, "type", trace.ErrCorrupt},
		{"no arrival", header + `{"type":"t","id":"1"}`, 2, "arrival", trace.ErrCorrupt},
		{"negative wait", header + `{"type":"t","id":"1","arrival":"2026-11-28T10:00:00Z","wait_ns":-1}`, 2, "wait_ns", trace.ErrCorrupt},
		{"huge run", header + `{"type":"t","id":"1","arrival":"2026-11-28T10:00:00Z","run_ns":9223372036854775807}`, 2, "run_ns", trace.ErrCorrupt},
		{"long key", header + `{"type":"t","id":"1","key":"` + strings.Repeat("k", 600) + `","arrival":"2026-11-28T10:00:00Z"}`, 2, "key", trace.ErrCorrupt},
		{"bad escape", header + `{"type":"t","id":"1","tenant":"\xff","arrival":"2026-11-28T10:00:00Z"}`, 2, "", trace.ErrCorrupt},
		{"long line", header + good + "\n" + strings.Repeat(" ", trace.MaxLineBytes+1) + "x\n", 3, "", trace.ErrTooLarge},
	} {
		_, err := trace.Read(strings.NewReader(tc.text))
		var le *trace.LineError
		if !errors.As(err, &le) || !errors.Is(err, tc.sentinel) || le.Line != tc.line || le.Field != tc.field {
			t.Errorf("%s: %v; want line %d, field %q, %v", tc.name, err, tc.line, tc.field, tc.sentinel)
		}
	}
}

// FuzzTrace: any input either reads, and then writes and reads back the
// same, or fails with a *LineError wrapping one of Read's sentinels; never
// a panic.
func FuzzTrace(f *testing.F) {
	f.Add([]byte(header + `{"type":"t","id":"1","key":"k","arrival":"2026-11-28T10:00:00Z","wait_ns":1,"run_ns":2,"cost_ns":3}` + "\n"))
	f.Add([]byte(header + `{"type":"t","id":"1","arrival":"0001-01-01T00:00:00.000000001Z","failed":true}`))
	f.Add([]byte(`{"fairsched_trace":1}{"type":"t"}`))
	f.Add([]byte("\n\n" + header + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := trace.Read(bytes.NewReader(data))
		if err != nil {
			var le *trace.LineError
			if !errors.As(err, &le) || !(errors.Is(err, trace.ErrCorrupt) || errors.Is(err, trace.ErrVersion) || errors.Is(err, trace.ErrTooLarge)) {
				t.Fatalf("error %v (%T) is not a *LineError with a sentinel", err, err)
			}
			return
		}
		var buf bytes.Buffer
		if err := trace.Write(&buf, recs); err != nil {
			t.Fatal(err)
		}
		again, err := trace.Read(&buf)
		if err != nil {
			t.Fatalf("what Read accepted does not read back: %v", err)
		}
		if diff := cmp.Diff(recs, again); diff != "" {
			t.Errorf("(-read +read again):\n%s", diff)
		}
	})
}
