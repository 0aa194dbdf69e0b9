package core

import (
	"github.com/fairsched/fairsched/queue"
	"testing"
	"time"

	"github.com/fairsched/fairsched/policy"
)

// TestCoalescingInCore: the coalescing rules without a goroutine. Two
// waiters join a pending run; one leaves and the run stays for the other;
// the last leaving withdraws it — unless a background request wants it; a
// run that starts is no longer joinable and its waiters stop watching
// their own timeouts; EndRun hands the waiters back once.
func TestCoalescingInCore(t *testing.T) {
	l := policy.DefaultLimits()
	l.MaxConcurrency = 1
	c := New(l)
	if err := c.RegisterType("fetch", policy.JobTypeConfig{DefaultCost: time.Second, Priority: 1, Coalesce: true}); err != nil {
		t.Fatal(err)
	}
	hold := &Job{Job: queue.Job{Type: "fetch", ID: "busy"}}
	if err := c.Submit(t0, hold); err != nil {
		t.Fatal(err)
	}
	c.Dispatch(t0, nil) // the one slot is taken: runs wait
	newRun := func(id string) *Job {
		run := &Job{Job: queue.Job{Type: "fetch", ID: id}}
		if err := c.Submit(t0, run); err != nil {
			t.Fatal(err)
		}
		c.StartRun(run)
		return run
	}
	run := newRun("feed")
	if c.Joinable("fetch", "feed") != run {
		t.Fatal("the run is not joinable")
	}
	a, b := &Job{Job: queue.Job{Type: "fetch", ID: "feed"}}, &Job{Job: queue.Job{Type: "fetch", ID: "feed"}}
	a.SetTTL(time.Minute)
	c.Join(t0, run, a)
	c.Join(t0, run, b)
	if got, withdrawn, unwanted := c.Leave(t0, a); got != run || withdrawn || unwanted || c.Leader(a) != nil {
		t.Errorf("the first waiter leaving: %v %v %v", got == run, withdrawn, unwanted)
	}
	if _, withdrawn, unwanted := c.Leave(t0, b); !withdrawn || !unwanted || c.IsPending(run) || c.Joinable("fetch", "feed") == run {
		t.Errorf("the last waiter leaving: withdrawn %v unwanted %v", withdrawn, unwanted)
	}
	c.EndRun(run)

	wanted := newRun("wanted")
	w := &Job{Job: queue.Job{Type: "fetch", ID: "wanted"}}
	c.Join(t0, wanted, w)
	c.Want(t0, wanted, 0)
	if _, withdrawn, unwanted := c.Leave(t0, w); withdrawn || unwanted || !c.IsPending(wanted) {
		t.Errorf("a wanted run withdrawn when its waiter left")
	}

	started := newRun("started")
	x := &Job{Job: queue.Job{Type: "fetch", ID: "started"}}
	x.SetTTL(time.Minute)
	c.Join(t0, started, x)
	c.Withdraw(t0, wanted)
	c.EndRun(wanted)
	c.Finish(t0.Add(time.Second), hold)
	if js := c.Dispatch(t0.Add(time.Second), nil); len(js) != 1 || js[0] != started {
		t.Fatalf("dispatched %v; want the started run", js)
	}
	if c.Joinable("fetch", "started") != nil {
		t.Error("a started run is still joinable")
	}
	c.Advance(t0.Add(time.Hour))
	if len(c.TakeExpiredWaiters()) != 0 {
		t.Error("a waiter of a started run expired on its own timeout")
	}
	if ws := c.EndRun(started); len(ws) != 1 || ws[0] != x || len(c.EndRun(started)) != 0 {
		t.Errorf("EndRun: %v", ws)
	}
}
