package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
)

// TestCommandsReachTheLeader: what only the leader's scheduler can do is
// asked from a follower. Cancel takes a pending job out and stops a
// running one on the instance that runs it, for good; a key's weight set
// on a follower holds in the leader, and in the next leader after a
// handover; dead jobs are listed, requeued (they run again) and deleted
// from a follower.
func TestCommandsReachTheLeader(t *testing.T) {
	url := pgtest.URL(t)
	lead := joinLeader(t, url, fast("d", "lead", 2), fairsched.WithMaxConcurrency(1))
	follow := join(t, url, fast("d", "follow", 2), fairsched.WithMaxConcurrency(1))
	cfg := fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}
	started := make(chan string, 8)
	stopped := make(chan error, 8)
	failNext := make(chan bool, 8)
	for _, m := range []*member{lead, follow} {
		if err := m.s.RegisterType("work", cfg); err != nil {
			t.Fatal(err)
		}
		if err := m.s.RegisterHandler("work", func(ctx context.Context, j fairsched.Job) error {
			started <- j.ID
			if j.ID == "flaky" {
				if <-failNext {
					return fairsched.Permanent(errors.New("broken"))
				}
				return nil
			}
			<-ctx.Done() // runs until cancelled
			stopped <- context.Cause(ctx)
			return context.Cause(ctx)
		}); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if err := follow.s.Enqueue(ctx, "work", "long", nil); err != nil {
		t.Fatal(err)
	}
	if got := <-started; got != "long" {
		t.Fatalf("started %s", got)
	}
	if err := follow.s.Enqueue(ctx, "work", "waiting", nil); err != nil { // the cap of 1 holds it
		t.Fatal(err)
	}
	waitFor(t, func() bool { snap, _ := lead.s.Snapshot(ctx); return len(snap.Pending) == 1 })
	c, err := follow.s.Cancel(ctx, "work", "waiting")
	if err != nil || c != (fairsched.Cancelled{Pending: 1}) {
		t.Fatalf("cancel of a pending job: %+v, %v", c, err)
	}
	c, err = follow.s.Cancel(ctx, "work", "long")
	if err != nil || c != (fairsched.Cancelled{Running: 1}) {
		t.Fatalf("cancel of a running job: %+v, %v", c, err)
	}
	if err := <-stopped; err == nil {
		t.Error("the cancelled job's context ended without a cause")
	}
	// Both are gone for good: the table empties, nothing runs again.
	waitFor(t, func() bool { n, _ := lead.st.CountJobs(ctx); return n == 0 })

	// A weight set on a follower holds in the leader.
	if err := follow.s.SetKeyWeight("alice", 3); err != nil {
		t.Fatal(err)
	}
	if snap, _ := lead.s.Snapshot(ctx); snap.KeyWeights["alice"] != 3 {
		t.Errorf("the leader's key weights: %v", snap.KeyWeights)
	}

	// Dead jobs from a follower.
	failNext <- true
	if err := follow.s.Enqueue(ctx, "work", "flaky", nil); err != nil {
		t.Fatal(err)
	}
	<-started
	var dead []fairsched.DeadJob
	waitFor(t, func() bool { dead, _ = follow.s.DeadJobs(ctx, 0); return len(dead) == 1 })
	if dead[0].ID != "flaky" || dead[0].LastError != "broken" {
		t.Errorf("dead: %+v", dead[0])
	}
	failNext <- false
	if n, err := follow.s.RequeueDead(ctx, "work", "flaky"); err != nil || n != 1 {
		t.Fatalf("requeue: %d, %v", n, err)
	}
	if got := <-started; got != "flaky" {
		t.Errorf("started %s", got)
	}
	waitFor(t, func() bool { n, _ := lead.st.CountJobs(ctx); return n == 0 })
	if n, err := follow.s.DeleteDead(ctx, "work", ""); err != nil || n != 0 {
		t.Errorf("delete with none dead: %d, %v", n, err)
	}

	// The next leader applies the weight before it decides anything.
	lead.close()
	if leaderOf(t, follow) != follow {
		t.Fatal("the follower did not take over")
	}
	snap, err := follow.s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]float64{"alice": 3}, snap.KeyWeights); diff != "" {
		t.Errorf("the next leader's key weights (-want +got):\n%s", diff)
	}
}

// waitFor waits until cond (the cluster's own state) holds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	pgtest.Eventually(t, "the cluster's state", cond)
}
