package core

import (
	"fmt"
	"github.com/fairsched/fairsched/queue"
	"testing"
	"time"

	"github.com/fairsched/fairsched/policy"
	"github.com/google/go-cmp/cmp"
)

// TestSupersedeInCore: the core keeps the pending background jobs of each
// (type, id) — waiting or in a retry's backoff, not running, not a
// caller's — and Supersede withdraws them all, in arrival order, with a
// deny decision each; the index forgets what leaves.
func TestSupersedeInCore(t *testing.T) {
	l := policy.DefaultLimits()
	l.MaxConcurrency = 1
	c := New(l)
	c.SetDecisionLog(true)
	if err := c.RegisterType("render", policy.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
		t.Fatal(err)
	}
	submit := func(id string, onDemand bool) *Job {
		j := &Job{Job: queue.Job{Type: "render", ID: id, OnDemand: onDemand}}
		if err := c.Submit(t0, j); err != nil {
			t.Fatal(err)
		}
		return j
	}
	first := submit("dash", false) // admitted below: running, not listed
	c.Dispatch(t0, nil)
	c.Finish(t0.Add(time.Second), first)
	c.Retry(t0.Add(time.Second), first, time.Minute) // in backoff: listed again
	queued := submit("dash", false)
	submit("dash", true)   // a caller's: not listed
	submit("other", false) // another id
	var got []string
	for _, j := range c.PendingBackground("render", "dash") {
		got = append(got, fmt.Sprint(j.Seq))
	}
	if diff := cmp.Diff([]string{"1", "2"}, got); diff != "" {
		t.Errorf("listed (-want +got):\n%s", diff)
	}
	gone := c.Supersede(t0.Add(2*time.Second), "render", "dash")
	if len(gone) != 2 || gone[0] != first || gone[1] != queued || c.IsPending(first) || c.IsPending(queued) {
		t.Errorf("superseded %v", gone)
	}
	var codes []string
	for _, d := range c.TakeDecisions() {
		if d.Decision == DecisionDeny {
			codes = append(codes, d.Job.ID+" "+d.ReasonCode)
		}
	}
	if diff := cmp.Diff([]string{"dash superseded", "dash superseded"}, codes); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	if n := len(c.PendingBackground("render", "dash")); n != 0 || len(c.byRef) != 1 {
		t.Errorf("after Supersede: %d listed, %d refs kept; want 0 and 1 (other)", n, len(c.byRef))
	}
}

// TestSupersedeOfCollidingRefs: (type, id)s of one hash share a list in
// the index, and each still sees, supersedes and forgets only its own
// jobs.
func TestSupersedeOfCollidingRefs(t *testing.T) {
	real := refHash
	refHash = func(policy.JobType, string) uint64 { return 7 }
	t.Cleanup(func() { refHash = real })
	l := policy.DefaultLimits()
	l.MaxConcurrency = 1
	c := New(l)
	for _, typ := range []policy.JobType{"render", "fetch"} {
		if err := c.RegisterType(typ, policy.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
	}
	submit := func(typ policy.JobType, id string) *Job {
		j := &Job{Job: queue.Job{Type: typ, ID: id}}
		if err := c.Submit(t0, j); err != nil {
			t.Fatal(err)
		}
		return j
	}
	submit("render", "a")
	submit("render", "b")
	submit("fetch", "a")
	submit("render", "a")
	pending := func() map[string][]uint64 {
		out := map[string][]uint64{}
		for _, r := range []jobRef{{"render", "a"}, {"render", "b"}, {"fetch", "a"}} {
			for _, j := range c.PendingBackground(r.t, r.id) {
				out[string(r.t)+"/"+r.id] = append(out[string(r.t)+"/"+r.id], j.Seq)
			}
		}
		return out
	}
	if diff := cmp.Diff(map[string][]uint64{"render/a": {1, 4}, "render/b": {2}, "fetch/a": {3}}, pending()); diff != "" {
		t.Errorf("pending by (type, id) (-want +got):\n%s", diff)
	}
	if gone := c.Supersede(t0, "render", "a"); len(gone) != 2 {
		t.Errorf("superseded %d, want render/a's 2", len(gone))
	}
	if diff := cmp.Diff(map[string][]uint64{"render/b": {2}, "fetch/a": {3}}, pending()); diff != "" {
		t.Errorf("pending after Supersede (-want +got):\n%s", diff)
	}
	if gone := c.Supersede(t0, "fetch", "a"); len(gone) != 1 || len(c.byRef) != 1 {
		t.Errorf("superseded %d with %d hashes left; want 1 and 1", len(gone), len(c.byRef))
	}
}
