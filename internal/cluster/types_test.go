package cluster_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// TestNewLeaderCountsEveryRunningJob: a new leader counts the jobs a
// previous leader granted against the cap even when the types of those
// jobs are not registered on it yet — an instance that starts takes the
// lease before its own RegisterType calls — because the domain keeps
// every type's configuration. Two jobs of "gc" run on a follower under
// cap 2; the leader closes; a new instance leads with no type, then
// registers "build" only: the pending builds wait for the gc jobs to end.
func TestNewLeaderCountsEveryRunningJob(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	cfg := fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}
	var mu sync.Mutex
	running, peak := 0, 0
	var order []string
	track := func(what string) func() {
		mu.Lock()
		running++
		peak = max(peak, running)
		order = append(order, "start "+what)
		mu.Unlock()
		return func() {
			mu.Lock()
			running--
			order = append(order, "end "+what)
			mu.Unlock()
		}
	}
	first := join(t, url, fast("d", "first", 4), fairsched.WithMaxConcurrency(2))
	if leaderOf(t, first) != first {
		t.Fatal("the first instance does not lead")
	}
	st, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	f := &faulty{b: st.ClusterBackend()}
	f.follower.Store(true)
	s, err := fairsched.New(fairsched.WithCluster(link{f}, fast("d", "worker", 4)), fairsched.WithMaxConcurrency(2))
	if err != nil {
		t.Fatal(err)
	}
	worker := &member{s: s, st: st}
	t.Cleanup(worker.close)
	for _, m := range []*member{first, worker} {
		for _, typ := range []fairsched.JobType{"gc", "build"} {
			if err := m.s.RegisterType(typ, cfg); err != nil {
				t.Fatal(err)
			}
		}
	}
	started, release := make(chan string, 4), make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // before the instances close, should the test fail first
	if err := worker.s.RegisterHandler("gc", func(ctx context.Context, j fairsched.Job) error {
		defer track(j.ID)()
		started <- j.ID
		<-release
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"gc-1", "gc-2"} {
		if err := first.s.Enqueue(ctx, "gc", id, nil); err != nil {
			t.Fatal(err)
		}
	}
	<-started
	<-started
	for _, id := range []string{"build-1", "build-2"} {
		if err := first.s.Enqueue(ctx, "build", id, nil); err != nil {
			t.Fatal(err)
		}
	}
	first.close() // a graceful handover: the lease is free at once

	// The new instance leads before it registers anything.
	next := join(t, url, fast("d", "next", 4), fairsched.WithMaxConcurrency(2))
	if leaderOf(t, next, worker) != next {
		t.Fatal("the new instance does not lead")
	}
	if err := next.s.RegisterType("build", cfg); err != nil {
		t.Fatal(err)
	}
	built := make(chan string, 2)
	if err := next.s.RegisterHandler("build", func(ctx context.Context, j fairsched.Job) error {
		defer track(j.ID)()
		built <- j.ID
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// The builds are held by the cap, the two gc jobs counted.
	pgtest.Eventually(t, "the builds held by the cap", func() bool {
		snap, err := next.s.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held := 0
		for _, p := range snap.Pending {
			if p.Reason == fairsched.ReasonGlobalLimit {
				held++
			}
		}
		return held == 2 && len(snap.Running) == 2
	})
	free()
	<-built
	<-built
	mu.Lock()
	defer mu.Unlock()
	if peak > 2 {
		t.Errorf("%d jobs ran at once; the cap is 2: %v", peak, order)
	}
}
