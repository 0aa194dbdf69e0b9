package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fairsched/fairsched"
)

// TestClassifyWriteError: each kind of failure of a write is classed as
// the package doc says.
func TestClassifyWriteError(t *testing.T) {
	t.Parallel()
	pg := func(code, severity, constraint string) error {
		return fmt.Errorf("writing: %w", &pgconn.PgError{Code: code, Severity: severity, ConstraintName: constraint})
	}
	_, connectErr := pgconn.Connect(context.Background(), "host=/nonexistent/socket/dir port=1 connect_timeout=1")
	cases := map[string]error{
		"invalid parameter (22023)":     pg("22023", "ERROR", ""),
		"NUL in text (22P05)":           pg("22P05", "ERROR", ""),
		"check constraint (23514)":      pg("23514", "ERROR", "some_check"),
		"unique, other index (23505)":   pg("23505", "ERROR", "other"),
		"unique unfinished (23505)":     pg("23505", "ERROR", uniqueUnfinished),
		"index row too large (54000)":   pg("54000", "ERROR", ""),
		"serialization (40001)":         pg("40001", "ERROR", ""),
		"deadlock (40P01)":              pg("40P01", "ERROR", ""),
		"admin shutdown, FATAL (57P01)": pg("57P01", "FATAL", ""),
		"not encoded":                   fmt.Errorf("%w: encoding", fairsched.ErrRecordRefused),
		"no connection made":            connectErr,
		"reply lost":                    fmt.Errorf("reading: %w", io.ErrUnexpectedEOF),
	}
	names := map[writeFailure]string{failTransient: "transient", failRefused: "refused", failDuplicate: "duplicate", failUnknown: "unknown"}
	got := map[string]string{}
	for name, err := range cases {
		got[name] = names[classifyWriteError(err)]
	}
	want := map[string]string{
		"invalid parameter (22023)": "refused", "NUL in text (22P05)": "refused", "check constraint (23514)": "refused",
		"unique, other index (23505)": "refused", "unique unfinished (23505)": "duplicate", "index row too large (54000)": "refused",
		"serialization (40001)": "transient", "deadlock (40P01)": "transient", "admin shutdown, FATAL (57P01)": "unknown",
		"not encoded": "refused", "no connection made": "transient", "reply lost": "unknown",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("classes (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		err  error
		want error
	}{
		{cases["invalid parameter (22023)"], fairsched.ErrRecordRefused},
		{cases["unique unfinished (23505)"], fairsched.ErrDuplicateJob},
		{cases["reply lost"], fairsched.ErrOutcomeUnknown},
	} {
		if err := classified("writing jobs", tc.err); !errors.Is(err, tc.want) {
			t.Errorf("classified(%v) = %v; want it to match %v", tc.err, err, tc.want)
		}
	}
	if err := classified("writing jobs", cases["deadlock (40P01)"]); errors.Is(err, fairsched.ErrRecordRefused) || errors.Is(err, fairsched.ErrOutcomeUnknown) {
		t.Errorf("a transient failure classified as %v", err)
	}
}
