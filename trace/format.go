package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"
)

// Version is the version of the line format Record writes and Read
// accepts: the first line of a trace is {"fairsched_trace":1}.
const Version = 1

// Limits of what Read accepts, so that a hostile file costs bounded memory.
const (
	// MaxLineBytes is the longest line Read accepts.
	MaxLineBytes = 4096
	// MaxRecords is the most records Read returns.
	MaxRecords = 1 << 20
	// MaxBytes bounds the record lines Read keeps, all told.
	MaxBytes = 128 << 20
	// maxNameBytes bounds each name field (type, id, key, tenant, group).
	maxNameBytes = 512
	// maxDuration bounds wait, run and cost, so that sums cannot overflow.
	maxDuration = 30 * 24 * time.Hour
)

// Errors of Read, matched with errors.Is; each comes wrapped in a
// *LineError that names the line and the field at fault.
var (
	// ErrVersion: the header line is missing or names another version.
	ErrVersion = errors.New("trace: unsupported version")
	// ErrCorrupt: a line is not a valid record.
	ErrCorrupt = errors.New("trace: corrupt record")
	// ErrTooLarge: a line or the whole trace is beyond Read's limits.
	ErrTooLarge = errors.New("trace: too large")
)

// LineError says which line of a trace is wrong, and which field.
type LineError struct {
	Line  int    // 1-based
	Field string // "" when the line as a whole is wrong
	Err   error  // wraps ErrVersion, ErrCorrupt or ErrTooLarge
}

func (e *LineError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("line %d: %v", e.Line, e.Err)
	}
	return fmt.Sprintf("line %d: field %q: %v", e.Line, e.Field, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// Record is one run of a job: a line of a trace. Arrival is when the job
// (or its retry) entered the queue, Wait how long it waited to be
// admitted, Run how long its function ran, Cost what admission charged its
// fairness key. Tenant is the key's tenant (the key itself unless the
// recorder was given WithTenant).
type Record struct {
	Type    string        `json:"type"`
	ID      string        `json:"id"`
	Key     string        `json:"key,omitempty"`
	Tenant  string        `json:"tenant,omitempty"`
	Group   string        `json:"group,omitempty"`
	Arrival time.Time     `json:"arrival"`
	Wait    time.Duration `json:"wait_ns"`
	Run     time.Duration `json:"run_ns"`
	Cost    time.Duration `json:"cost_ns"`
	Failed  bool          `json:"failed,omitempty"`
}

// TenantOrKey is the record's tenant, or its key when it names none.
func (r Record) TenantOrKey() string {
	if r.Tenant != "" {
		return r.Tenant
	}
	return r.Key
}

// header is the first line of every trace.
type header struct {
	Version *int `json:"fairsched_trace"`
}

// appendHeader appends the header line to b.
func appendHeader(b []byte) []byte {
	return append(b, `{"fairsched_trace":`+strconv.Itoa(Version)+"}\n"...)
}

// appendRecord appends r as one line to b.
func appendRecord(b []byte, r Record) []byte {
	line, err := json.Marshal(r)
	if err != nil { // strings and numbers only: cannot happen
		panic(err)
	}
	return append(append(b, line...), '\n')
}

// Write writes a whole trace: the header, then a line per record.
func Write(w io.Writer, records []Record) error {
	b := appendHeader(nil)
	for _, r := range records {
		b = appendRecord(b, r)
	}
	_, err := w.Write(b)
	return err
}

// Read reads a trace written by a Recorder or by Write. Every line is
// checked: a line that is not a record of this version is an error
// wrapping ErrVersion, ErrCorrupt or ErrTooLarge, in a *LineError with
// its line number. Blank lines are skipped. Read never holds more than
// MaxRecords records or MaxBytes of them, nor reads a line longer than
// MaxLineBytes.
func Read(r io.Reader) ([]Record, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxLineBytes)
	var out []Record
	line, headed, kept := 0, false, 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		if !headed {
			if err := parseHeader(text); err != nil {
				return nil, &LineError{Line: line, Err: err}
			}
			headed = true
			continue
		}
		if kept += len(text); len(out) == MaxRecords || kept > MaxBytes {
			return nil, &LineError{Line: line, Err: fmt.Errorf("%w: more than %d records or %d bytes", ErrTooLarge, MaxRecords, MaxBytes)}
		}
		rec, err := parseRecord(text)
		if err != nil {
			err.Line = line
			return nil, err
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &LineError{Line: line + 1, Err: fmt.Errorf("%w: a line longer than %d bytes", ErrTooLarge, MaxLineBytes)}
		}
		return nil, err
	}
	if !headed {
		return nil, &LineError{Line: 1, Err: fmt.Errorf("%w: no header line", ErrVersion)}
	}
	return out, nil
}

func parseHeader(text []byte) error {
	var h header
	if err := json.Unmarshal(text, &h); err != nil || h.Version == nil {
		return fmt.Errorf("%w: the first line must be {\"fairsched_trace\":%d}", ErrVersion, Version)
	}
	if *h.Version != Version {
		return fmt.Errorf("%w: version %d, this reader reads %d", ErrVersion, *h.Version, Version)
	}
	return nil
}

// parseRecord decodes and checks one record line; the caller sets Line.
func parseRecord(text []byte) (Record, *LineError) {
	var rec Record
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return Record{}, &LineError{Err: fmt.Errorf("%w: %v", ErrCorrupt, err)}
	}
	if dec.More() {
		return Record{}, &LineError{Err: fmt.Errorf("%w: more than one value on the line", ErrCorrupt)}
	}
	return rec, rec.check()
}

// check rejects what a recorder never writes: names that are empty,
// too long or not UTF-8, negative durations, an arrival outside years
// 1–9999.
func (r Record) check() *LineError {
	names := []struct{ field, value string }{{"type", r.Type}, {"id", r.ID}, {"key", r.Key}, {"tenant", r.Tenant}, {"group", r.Group}}
	for i, n := range names {
		switch {
		case i < 2 && n.value == "":
			return &LineError{Field: n.field, Err: fmt.Errorf("%w: empty", ErrCorrupt)}
		case len(n.value) > maxNameBytes:
			return &LineError{Field: n.field, Err: fmt.Errorf("%w: %d bytes, at most %d", ErrCorrupt, len(n.value), maxNameBytes)}
		case !utf8.ValidString(n.value):
			return &LineError{Field: n.field, Err: fmt.Errorf("%w: not UTF-8", ErrCorrupt)}
		}
	}
	durations := []struct {
		field string
		value time.Duration
	}{{"wait_ns", r.Wait}, {"run_ns", r.Run}, {"cost_ns", r.Cost}}
	for _, d := range durations {
		if d.value < 0 || d.value > maxDuration {
			return &LineError{Field: d.field, Err: fmt.Errorf("%w: %d is outside [0, %d]", ErrCorrupt, d.value, maxDuration)}
		}
	}
	if r.Arrival.IsZero() {
		return &LineError{Field: "arrival", Err: fmt.Errorf("%w: missing", ErrCorrupt)}
	}
	return nil
}
