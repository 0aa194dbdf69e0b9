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

// TestBackgroundListsMadeOnFirstRead: the (type, id) lists are not kept
// until something reads them; the first read lists every pending
// background job, wherever it waits (in its lane, parked on a conflict,
// deferred), and from then on jobs are listed as they come and unlisted
// as they leave.
func TestBackgroundListsMadeOnFirstRead(t *testing.T) {
	l := policy.DefaultLimits()
	l.MaxConcurrency = 2
	c := New(l)
	if err := c.RegisterType("git", policy.JobTypeConfig{DefaultCost: time.Second, Priority: 2, ConflictGroup: "repo"}); err != nil {
		t.Fatal(err)
	}
	names := map[*Job]string{}
	submit := func(name, id string, notBefore time.Duration) *Job {
		j := &Job{Job: queue.Job{Type: "git", ID: id}}
		names[j] = name
		if notBefore > 0 {
			j.Rare = &Rare{NotBefore: t0.Add(notBefore)}
		}
		if err := c.Submit(t0, j); err != nil {
			t.Fatal(err)
		}
		c.Dispatch(t0, nil)
		return j
	}
	listed := func(id string) (out []string) {
		for _, j := range c.PendingBackground("git", id) {
			out = append(out, names[j])
		}
		return out
	}
	submit("running", "a", 0)
	submit("parked", "a", 0) // conflicts with the running "a"
	submit("deferred", "b", time.Hour)
	other := submit("other", "c", 0) // takes the second slot
	waiting := submit("waiting", "c", 0)
	if len(c.byRef) != 0 {
		t.Fatalf("%d lists kept before anything read them", len(c.byRef))
	}
	for id, want := range map[string][]string{"a": {"parked"}, "b": {"deferred"}, "c": {"waiting"}} {
		if diff := cmp.Diff(want, listed(id)); diff != "" {
			t.Errorf("first read of %q (-want +got):\n%s", id, diff)
		}
	}
	submit("later", "c", 0)
	if diff := cmp.Diff([]string{"waiting", "later"}, listed("c")); diff != "" {
		t.Errorf("after a later submission (-want +got):\n%s", diff)
	}
	c.Finish(t0.Add(time.Second), other)
	if got := c.Dispatch(t0.Add(time.Second), nil); len(got) != 1 || got[0] != waiting {
		t.Fatalf("admitted %v, want the waiting c", got)
	}
	if diff := cmp.Diff([]string{"later"}, listed("c")); diff != "" {
		t.Errorf("after an admission (-want +got):\n%s", diff)
	}
}
