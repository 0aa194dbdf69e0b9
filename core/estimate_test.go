package core

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/queue"
)

func str(s string) *string { return &s }

func explain(t *testing.T, c *Core, now time.Time, typ policy.JobType, id string) Explanation {
	t.Helper()
	e, err := c.Explain(now, typ, id)
	if err != nil {
		t.Fatalf("Explain(%s/%s): %v", typ, id, err)
	}
	return e
}

// Two slots held by key k1: a k2 job waits on the global cap, held by k1's
// two running jobs, and starts when their learned cost has run out.
func TestExplainGlobalLimit(t *testing.T) {
	a := typeDef{"a", policy.JobTypeConfig{DefaultCost: ms(10), Priority: 4}}
	c := newCore(t, 2, a)
	submit(t, c, at(0), "a", "1", "k1")
	submit(t, c, at(0), "a", "2", "k1")
	wantDispatch(t, c, at(0), "a/1@k1", "a/2@k1")
	submit(t, c, at(1), "a", "3", "k2")
	submit(t, c, at(1), "a", "4", "k1")
	wantDispatch(t, c, at(1))

	want := Explanation{Type: "a", ID: "3", FairnessKey: "k2", Submitted: at(1),
		Reasons: []policy.Reason{policy.ReasonGlobalLimit}, Reason: policy.ReasonGlobalLimit,
		Blockers: []Blocker{{Reason: policy.ReasonGlobalLimit, Key: str("k1"), Running: 2}},
		Estimate: &StartEstimate{At: at(10), Ahead: 0},
		History:  []WaitNote{{Reason: policy.ReasonGlobalLimit, Since: at(2)}},
	}
	if diff := cmp.Diff(want, explain(t, c, at(2), "a", "3")); diff != "" {
		t.Fatalf("Explain(a/3) (-want +got):\n%s", diff)
	}
	// k1 was charged 20ms for its running jobs, k2 joined at the floor
	// (k1's cost): a/3 arrived first, so a/4 takes the other slot.
	got := explain(t, c, at(2), "a", "4")
	if diff := cmp.Diff(&StartEstimate{At: at(10), Ahead: 1}, got.Estimate); diff != "" {
		t.Fatalf("Explain(a/4).Estimate (-want +got):\n%s", diff)
	}

	for _, r := range c.Running() {
		c.Finish(at(10), r)
	}
	wantDispatch(t, c, at(10), "a/3@k2", "a/4@k1")
	want = Explanation{Type: "a", ID: "3", FairnessKey: "k2", Submitted: at(1), Running: true, Started: at(10)}
	if diff := cmp.Diff(want, explain(t, c, at(11), "a", "3")); diff != "" {
		t.Fatalf("Explain(a/3) running (-want +got):\n%s", diff)
	}
	if c.waitNotes != 0 {
		t.Fatalf("waitNotes = %d after every job started, want 0", c.waitNotes)
	}
}

func TestExplainUnknown(t *testing.T) {
	c := newCore(t, 2, typeDef{"a", policy.JobTypeConfig{DefaultCost: ms(10), Priority: 4}})
	if _, err := c.Explain(at(0), "a", "nope"); !errors.Is(err, policy.ErrUnknownJob) {
		t.Fatalf("Explain(a/nope) = %v, want ErrUnknownJob", err)
	}
	if _, err := c.Explain(at(0), "zz", "1"); !errors.Is(err, policy.ErrUnknownJobType) {
		t.Fatalf("Explain(zz/1) = %v, want ErrUnknownJobType", err)
	}
}

// A job on a busy conflict id names the running job that holds it, and
// is expected to start when that job's learned cost has run out.
func TestExplainConflict(t *testing.T) {
	w := typeDef{"w", policy.JobTypeConfig{DefaultCost: ms(30), Priority: 4, ConflictGroup: "doc"}}
	c := newCore(t, 4, w)
	submit(t, c, at(0), "w", "x", "k1")
	wantDispatch(t, c, at(0), "w/x@k1")
	submit(t, c, at(5), "w", "x", "k2")
	wantDispatch(t, c, at(5))
	want := Explanation{Type: "w", ID: "x", FairnessKey: "k2", Submitted: at(5),
		Reasons: []policy.Reason{policy.ReasonConflict}, Reason: policy.ReasonConflict,
		Blockers: []Blocker{{Reason: policy.ReasonConflict, Type: "w", ID: "x", Key: str("k1"), Running: 1}},
		Estimate: &StartEstimate{At: at(30)},
		History:  []WaitNote{{Reason: policy.ReasonConflict, Since: at(5)}},
	}
	if diff := cmp.Diff(want, explain(t, c, at(7), "w", "x")); diff != "" {
		t.Fatalf("Explain(w/x) (-want +got):\n%s", diff)
	}
}

// A job's history keeps its last HistoryPerJob notes, and all jobs' notes
// together stay within HistoryTotal.
func TestWaitHistoryBounds(t *testing.T) {
	c := newCore(t, 1, typeDef{"a", policy.JobTypeConfig{DefaultCost: ms(10), Priority: 4}})
	j := submit(t, c, at(0), "a", "1", "k")
	rs := []policy.Reason{policy.ReasonTenantLimit, policy.ReasonRateLimited}
	for i := range HistoryPerJob + 2 {
		c.noteWait(at(i), j, rs[i%2])
	}
	notes, dropped := waitHistoryOf(j)
	if len(notes) != HistoryPerJob || dropped != 2 || notes[0].Since != at(2) {
		t.Fatalf("history = %d notes from %v, %d dropped; want %d from +2ms, 2 dropped", len(notes), notes[0].Since.Sub(t0), dropped, HistoryPerJob)
	}
	k := submit(t, c, at(0), "a", "2", "k")
	c.waitNotes = HistoryTotal
	c.noteWait(at(20), k, policy.ReasonConflict)
	if notes, dropped := waitHistoryOf(k); len(notes) != 0 || dropped != 1 {
		t.Fatalf("past HistoryTotal: %d notes, %d dropped; want 0, 1", len(notes), dropped)
	}
	c.waitNotes = HistoryPerJob
	c.Withdraw(at(21), j)
	if c.waitNotes != 0 {
		t.Fatalf("waitNotes = %d after the job left, want 0", c.waitNotes)
	}
}

// Deadline-aware admission refuses a job whose estimated start is after
// its caller's deadline, with the estimate; it queues one that makes it,
// and a type that did not opt in queues both.
func TestDeadlineAdmission(t *testing.T) {
	a := typeDef{"a", policy.JobTypeConfig{DefaultCost: ms(10), Priority: 4, DeadlineAdmission: true}}
	b := typeDef{"b", policy.JobTypeConfig{DefaultCost: ms(10), Priority: 4}}
	c := newCore(t, 1, a, b)
	submit(t, c, at(0), "a", "1", "k1")
	wantDispatch(t, c, at(0), "a/1@k1")
	submit(t, c, at(0), "a", "2", "k1") // starts at +10ms, runs to +20ms

	late := &Job{Job: queue.Job{Type: "a", ID: "3", Key: "k2"}}
	late.SetStartBy(at(15))
	err := c.Submit(at(1), late)
	var le *policy.LateStartError
	if !errors.As(err, &le) || !errors.Is(err, policy.ErrOverloaded) || !errors.Is(err, policy.ErrStartAfterDeadline) {
		t.Fatalf("Submit with a deadline before the estimate = %v, want a LateStartError matching ErrOverloaded", err)
	}
	want := policy.LateStartError{Type: "a", ID: "3", Key: "k2", Estimate: at(20), Deadline: at(15), Ahead: 1}
	if diff := cmp.Diff(want, *le); diff != "" {
		t.Fatalf("LateStartError (-want +got):\n%s", diff)
	}
	if c.Pending() != 1 || late.Job.Queued() {
		t.Fatalf("refused job queued: %d pending", c.Pending())
	}
	ok := &Job{Job: queue.Job{Type: "a", ID: "4", Key: "k2"}}
	ok.SetStartBy(at(20))
	if err := c.Submit(at(1), ok); err != nil {
		t.Fatalf("Submit with a deadline at the estimate: %v", err)
	}
	other := &Job{Job: queue.Job{Type: "b", ID: "5", Key: "k2"}}
	other.SetStartBy(at(2))
	if err := c.Submit(at(1), other); err != nil {
		t.Fatalf("Submit of a type without DeadlineAdmission: %v", err)
	}
}

// The estimate charges each job it plays to its key, as admission would:
// a newcomer on another key goes ahead of the busy key's second job, and
// starts when estimated.
func TestEstimateChargesAsItPlays(t *testing.T) {
	c := newCore(t, 1, typeDef{"a", policy.JobTypeConfig{DefaultCost: ms(10), Priority: 4}})
	submit(t, c, at(0), "a", "0", "k1")
	wantDispatch(t, c, at(0), "a/0@k1")
	for _, id := range []string{"1", "2", "3"} {
		submit(t, c, at(0), "a", id, "k1")
	}
	submit(t, c, at(1), "a", "b", "k2")
	got := explain(t, c, at(1), "a", "b").Estimate
	if diff := cmp.Diff(&StartEstimate{At: at(20), Ahead: 1}, got); diff != "" {
		t.Fatalf("estimate of k2's job (-want +got):\n%s", diff)
	}
	c.Finish(at(10), c.Running()[0])
	wantDispatch(t, c, at(10), "a/1@k1")
	c.Finish(at(20), c.Running()[0])
	wantDispatch(t, c, at(20), "a/b@k2")
}
