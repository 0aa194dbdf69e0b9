package core

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/queue"
)

// TestLoadDefersAndRefuses drives the core's load rules with readings as
// data: an overloaded reading with OverloadDefer holds every admission
// (one defer record, for the queue's head), a clear one lets Dispatch
// admit again; with OverloadRefuse Submit refuses meanwhile.
func TestLoadDefersAndRefuses(t *testing.T) {
	type step struct {
		At       time.Duration
		Admitted []string
		Records  []string // decision: id reason
	}
	l := policy.DefaultLimits()
	l.MaxConcurrency = 2
	l.Load = &policy.LoadConfig{Signal: policy.QueueLength(1), Every: time.Second, Threshold: 0.9}
	c := New(l)
	c.SetDecisionLog(true)
	if err := c.RegisterType("w", policy.JobTypeConfig{DefaultCost: time.Second, Priority: 2}); err != nil {
		t.Fatal(err)
	}
	jobs := map[string]*Job{}
	for _, id := range []string{"a", "b", "c", "d"} {
		jobs[id] = &Job{Job: queue.Job{Type: "w", ID: id}}
		if err := c.Submit(t0, jobs[id]); err != nil {
			t.Fatal(err)
		}
	}
	c.TakeDecisions()
	var got []step
	at := func(d time.Duration, do func(now time.Time)) {
		now := t0.Add(d)
		do(now)
		s := step{At: d}
		for _, j := range c.Dispatch(now, nil) {
			s.Admitted = append(s.Admitted, j.ID)
		}
		for _, r := range c.TakeDecisions() {
			s.Records = append(s.Records, string(r.Decision)+" "+r.Job.ID+" "+r.ReasonCode)
		}
		got = append(got, s)
	}
	at(0, func(now time.Time) { c.Load(now, 0.95, true) })              // overloaded: nothing starts
	at(time.Second, func(now time.Time) { c.Load(now, 0.5, false) })    // skipped: still overloaded
	at(2*time.Second, func(now time.Time) { c.Load(now, 0.9, true) })   // at the threshold: overloaded
	at(3*time.Second, func(now time.Time) { c.Load(now, 0.89, true) })  // clear: two start
	at(4*time.Second, func(now time.Time) { c.Finish(now, jobs["a"]) }) // a slot frees: c starts
	at(5*time.Second, func(now time.Time) { c.Load(now, 1, true) })     // overloaded again
	at(6*time.Second, func(now time.Time) { c.Finish(now, jobs["b"]) }) // d waits
	want := []step{
		{At: 0, Records: []string{"defer a overloaded"}},
		{At: time.Second},
		{At: 2 * time.Second},
		{At: 3 * time.Second, Admitted: []string{"a", "b"}, Records: []string{"admit a ", "admit b "}},
		{At: 4 * time.Second, Admitted: []string{"c"}, Records: []string{"admit c "}},
		{At: 5 * time.Second},
		{At: 6 * time.Second, Records: []string{"defer d overloaded"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
	snap := c.Snapshot(t0.Add(6 * time.Second))
	if diff := cmp.Diff([]policy.Reason{policy.ReasonOverloaded}, snap.Pending[0].Reasons); diff != "" {
		t.Errorf("d's reasons (-want +got):\n%s", diff)
	}

	l.Load = &policy.LoadConfig{Signal: policy.QueueLength(1), Every: time.Second, Threshold: 0.5, Action: policy.OverloadRefuse}
	c = New(l)
	c.SetDecisionLog(true)
	if err := c.RegisterType("w", policy.JobTypeConfig{DefaultCost: time.Second, Priority: 2}); err != nil {
		t.Fatal(err)
	}
	if !c.Refuses() {
		t.Error("Refuses() = false with OverloadRefuse")
	}
	c.Load(t0, 0.5, true)
	err := c.Submit(t0, &Job{Job: queue.Job{Type: "w", ID: "x", Key: "k"}})
	var re *policy.RefusalError
	if !errors.As(err, &re) || re.Reason != policy.ReasonOverloaded || !errors.Is(err, policy.ErrOverloaded) {
		t.Errorf("Submit while overloaded: %v, want a refusal (overloaded)", err)
	}
	c.Load(t0, 0.1, true)
	if err := c.Submit(t0, &Job{Job: queue.Job{Type: "w", ID: "y"}}); err != nil {
		t.Errorf("Submit after a clear reading: %v", err)
	}
	if n := len(c.Dispatch(t0, nil)); n != 1 {
		t.Errorf("admitted %d, want 1 (refuse mode holds no queued job)", n)
	}
}

// TestLoadStateCountsWorkers: what a signal is told of the core.
func TestLoadStateCountsWorkers(t *testing.T) {
	l := policy.DefaultLimits()
	l.MaxConcurrency = 4
	c := New(l)
	if err := c.RegisterType("w", policy.JobTypeConfig{DefaultCost: time.Second, Priority: 4, RequiresWorker: true}); err != nil {
		t.Fatal(err)
	}
	if err := c.RegisterWorker(t0, "gpu", [][]policy.JobType{{"w"}, {"w"}, {"w"}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c", "d"} {
		if err := c.Submit(t0, &Job{Job: queue.Job{Type: "w", ID: id}}); err != nil {
			t.Fatal(err)
		}
	}
	c.Dispatch(t0, nil)
	want := policy.LoadState{Now: t0, Pending: 1, Running: 3, Limit: 4, WorkerSlots: 3, WorkersBusy: 3}
	if diff := cmp.Diff(want, c.LoadState(t0)); diff != "" {
		t.Errorf("LoadState (-want +got):\n%s", diff)
	}
}
