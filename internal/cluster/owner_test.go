package cluster_test

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster/memback"
)

// actorOwners counts the goroutines that run an in-process scheduler's
// owner loop.
func actorOwners() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Count(buf[:n], []byte("fairsched/actor.(*Actor).run("))
		}
		buf = make([]byte, 2*len(buf))
	}
}

// TestLeaderRunsNoActorGoroutine: leading adds no scheduler owner
// goroutine — the leader's loop owns its machine and calls it in its
// turn. Every instance runs the same goroutines of its own (k each); with
// one instance, the leader, there are k+x owner loops, with two 2k+x, so
// the leader's own x is twice the first count less the second: 0.
func TestLeaderRunsNoActorGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const domain = "owner"
		b := memback.New()
		defer b.Close()
		closeAll := func(ss ...*fairsched.Scheduler) {
			for _, s := range ss {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_ = s.Close(ctx)
				cancel()
			}
		}
		open := func(name string) *fairsched.Scheduler {
			s, err := fairsched.New(fairsched.WithCluster(b, fast(domain, name, 2)))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.RegisterType("t", fairsched.JobTypeConfig{Priority: 1, DefaultCost: time.Millisecond}); err != nil {
				closeAll(s)
				t.Fatal(err)
			}
			return s
		}
		ctx := context.Background()
		lead := open("lead")
		defer closeAll(lead)
		leading := func() bool {
			snap, err := lead.Snapshot(ctx)
			return err == nil && snap.Cluster != nil && snap.Cluster.Leading
		}
		for i := 0; !leading(); i++ {
			if i == 600 {
				t.Fatal("no leader in a virtual minute")
			}
			time.Sleep(100 * time.Millisecond) // virtual: the lease loop's turns
		}
		synctest.Wait()
		one := actorOwners()
		follower := open("follow")
		defer closeAll(follower)
		time.Sleep(time.Second) // virtual: the follower's first beats
		synctest.Wait()
		if !leading() {
			t.Fatal("the first instance no longer leads")
		}
		two := actorOwners()
		t.Logf("scheduler owner goroutines: %d with the leader alone, %d with a follower", one, two)
		if x := 2*one - two; x != 0 {
			t.Errorf("scheduler owner goroutines: %d with the leader alone, %d with a follower: the leader runs %d of its own, want 0",
				one, two, x)
		}
	})
}
