package cluster_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/internal/cluster/memback"
)

// TestLeaderRunsNoGoroutinePerGrant: a leader with N jobs granted to an
// instance runs as many goroutines as with none. The instance is played
// by the test on the in-memory backend (heartbeats, never an end), so that
// the count holds only the leader's process: its goroutines after 200 and
// after 400 grants are those it ran before the first (give or take a
// few: timers, a parked reader), not one more per job.
func TestLeaderRunsNoGoroutinePerGrant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const domain, worker = "g", "far#1"
		b := memback.New()
		defer b.Close()
		s, err := fairsched.New(fairsched.WithCluster(b, fast(domain, "lead", 2)),
			fairsched.WithPriorityMode(fairsched.PriorityOrderOnly))
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = s.Close(ctx) // the jobs stay granted to the instance, which never ends them
		}()
		if err := s.RegisterType("t", fairsched.JobTypeConfig{Priority: 1, DefaultCost: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		// grantedAfter enqueues n jobs and waits (virtual time) until this
		// instance leads, counting the other, which holds total grants; it
		// returns the goroutines then.
		grantedAfter := func(n, total int) int {
			t.Helper()
			for i := range n {
				if err := s.Enqueue(ctx, "t", fmt.Sprint(total, "-", i), nil); err != nil {
					t.Fatal(err)
				}
			}
			for range 600 { // a minute of the leader's turns
				if _, err := b.Heartbeat(ctx, domain, cluster.Instance{ID: worker, Slots: 10_000, Types: []string{"t"}}); err != nil {
					t.Fatal(err)
				}
				time.Sleep(100 * time.Millisecond) // virtual: the leader's turns
				gs, err := b.Granted(ctx, worker)
				if err != nil {
					t.Fatal(err)
				}
				snap, err := s.Snapshot(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(gs) == total && snap.Cluster != nil && snap.Cluster.Leading && len(snap.Cluster.Instances) == 2 {
					synctest.Wait()
					return runtime.NumGoroutine()
				}
			}
			t.Fatalf("%d jobs granted in a virtual minute, want %d", total, total)
			return 0
		}
		before := grantedAfter(0, 0)
		at200 := grantedAfter(200, 200)
		at400 := grantedAfter(200, 400)
		t.Logf("goroutines: %d before, %d with 200 granted, %d with 400", before, at200, at400)
		if at200-before > 10 || at400-at200 > 10 {
			t.Errorf("goroutines: %d before, %d with 200 granted, %d with 400: more per granted job", before, at200, at400)
		}
	})
}
