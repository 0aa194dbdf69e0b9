package core

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/policy"
)

// TestTakeWokenOutsideDispatch: a retry's backoff ends during a call that
// does not dispatch (a snapshot, another job's submission). The job is
// back in dispatch, NextWake no longer names its moment — a caller that
// armed its one timer from NextWake would never dispatch it — so
// TakeWoken says so, once, and a Dispatch clears it. (The actor's turn
// reads one time for every message; a snapshot in the turn after a
// failed attempt's left a retry pending with nothing to run it.)
func TestTakeWokenOutsideDispatch(t *testing.T) {
	c := newCore(t, 4, typeDef{"retried", policy.JobTypeConfig{DefaultCost: ms(1), Priority: 2}})
	type step struct {
		What     string
		Woken    bool
		NextWake time.Duration // from t0; -1 for none
		Admitted []string
	}
	var got []step
	note := func(what string, admitted []*Job) {
		s := step{What: what, Woken: c.TakeWoken(), NextWake: -1, Admitted: labels(admitted)}
		if w, ok := c.NextWake(); ok {
			s.NextWake = w.Sub(t0)
		}
		got = append(got, s)
	}
	j := submit(t, c, at(0), "retried", "r", "k")
	note("submit", nil)
	note("dispatch", c.Dispatch(at(0), nil))
	c.Finish(at(1), j)
	c.Retry(at(1), j, ms(5)) // back at +6ms
	note("retry", nil)
	c.SnapshotRows(at(3), 10)
	note("snapshot before its return", nil)
	c.SnapshotRows(at(7), 10)
	note("snapshot after its return", nil)
	submit(t, c, at(8), "retried", "other", "k")
	note("another submission", nil)
	note("dispatch", c.Dispatch(at(8), nil))
	want := []step{
		{What: "submit", NextWake: -1, Admitted: []string{}},
		{What: "dispatch", NextWake: -1, Admitted: []string{"retried/r@k"}},
		{What: "retry", NextWake: ms(6), Admitted: []string{}},
		{What: "snapshot before its return", NextWake: ms(6), Admitted: []string{}},
		{What: "snapshot after its return", Woken: true, NextWake: -1, Admitted: []string{}},
		{What: "another submission", NextWake: -1, Admitted: []string{}},
		{What: "dispatch", NextWake: -1, Admitted: []string{"retried/r@k", "retried/other@k"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}
