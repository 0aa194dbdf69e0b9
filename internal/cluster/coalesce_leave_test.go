package cluster_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster/memback"
)

// TestRunSyncCallerLeavesRunningCoalescedRun: the caller of a coalesced
// run on one instance leaves while its function runs, which stops the
// function (it runs with its caller's context); the waiter that joined the
// run from another instance is not answered with that caller's
// cancellation: its own function runs instead, as when the run's caller
// leaves before it starts, and it gets that function's result.
func TestRunSyncCallerLeavesRunningCoalescedRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b := memback.New()
		defer b.Close()
		var nodes []*fairsched.Scheduler
		for _, name := range []string{"a", "b"} { // a, the first, leads
			s, err := fairsched.New(fairsched.WithCluster(b, fast("d", name, 2)), fairsched.WithMaxConcurrency(1))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = s.Close(ctx) }()
			for typ, coalesce := range map[fairsched.JobType]bool{"fetch": true, "block": false} {
				if err := s.RegisterType(typ, fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond, Coalesce: coalesce}); err != nil {
					t.Fatal(err)
				}
			}
			nodes = append(nodes, s)
		}
		a, bn := nodes[0], nodes[1]
		var tl timeline
		note := tl.note
		fetch := func(who string) func(context.Context) error {
			return func(ctx context.Context) error {
				note("%s's function starts", who)
				select {
				case <-time.After(time.Second):
					note("%s's function returns", who)
					return nil
				case <-ctx.Done():
					note("%s's function stopped", who)
					return ctx.Err()
				}
			}
		}
		answered := func(who string, err error) { note("%s's caller gets %v", who, err) }

		// The cap of 1 held for a second: a's call pends, b's joins it.
		go func() {
			_ = a.RunSync(ctx, "block", "b", "", func(context.Context) error { time.Sleep(time.Second); return nil })
		}()
		time.Sleep(100 * time.Millisecond)
		leave, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() { answered("a", a.RunSync(leave, "fetch", "linux", "", fetch("a"))) }()
		time.Sleep(100 * time.Millisecond)
		go func() { answered("b", bn.RunSync(ctx, "fetch", "linux", "", fetch("b"))) }()
		time.Sleep(time.Second) // the block ends, a's function runs
		cancel()
		time.Sleep(5 * time.Second)

		want := []string{
			"01.000 a's function starts",
			"01.200 a's caller gets context canceled",
			"01.200 a's function stopped",
			"01.200 b's function starts",
			"02.200 b's caller gets <nil>",
			"02.200 b's function returns",
		}
		tl.checkSorted(t, want)
	})
}
