package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster/memback"
)

// TestSilencedCallerIsNotToldItSucceeded: instance b, cut off from the
// database while its RunSync waits behind the cap, is declared lost; the
// leader answers the call with ErrWorkerLost and, b staying silent,
// forgets the row. When b comes back the row is gone, which on its own
// would read as a success: b waits for its first heartbeat, which lists
// it anew (it had been declared lost), and tells the caller the outcome
// is unknown (ErrWorkerLost), not nil; its function never runs.
func TestSilencedCallerIsNotToldItSucceeded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		back := memback.New()
		defer back.Close()
		f := &faulty{b: back}
		f.follower.Store(true) // a leads
		var nodes []*fairsched.Scheduler
		for _, s := range []fairsched.Option{
			fairsched.WithCluster(back, fast("d", "a", 2)),
			fairsched.WithCluster(link{f}, fast("d", "b", 2)),
		} {
			n, err := fairsched.New(s, fairsched.WithMaxConcurrency(1))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = n.Close(ctx) }()
			if err := n.RegisterType("work", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
				t.Fatal(err)
			}
			nodes = append(nodes, n)
			time.Sleep(100 * time.Millisecond) // a leads before b joins
		}
		a, b := nodes[0], nodes[1]
		var mu sync.Mutex
		var timeline []string
		note := func(format string, args ...any) {
			mu.Lock()
			timeline = append(timeline, time.Now().Format("05.0 ")+fmt.Sprintf(format, args...))
			mu.Unlock()
		}

		// The cap of 1 held until 5 s: b's call waits pending.
		go func() {
			_ = a.RunSync(ctx, "work", "hold", "", func(context.Context) error { time.Sleep(4800 * time.Millisecond); return nil })
		}()
		time.Sleep(100 * time.Millisecond)
		go func() {
			err := b.RunSync(ctx, "work", "x", "", func(context.Context) error { note("b's function runs"); return nil })
			note("b's caller gets ErrWorkerLost: %v, nil: %v", errors.Is(err, fairsched.ErrWorkerLost), err == nil)
		}()
		time.Sleep(100 * time.Millisecond)
		f.cut.Store(true) // b is silent from 0.4 s: lost at about 1.4 s
		note("b cut off")
		time.Sleep(9600 * time.Millisecond) // the call answered at 5 s, its row forgotten 2 s later
		f.cut.Store(false)
		note("b back")
		time.Sleep(5 * time.Second)

		mu.Lock()
		defer mu.Unlock()
		slices.Sort(timeline)
		want := []string{
			"00.4 b cut off",
			"10.0 b back",
			"10.1 b's caller gets ErrWorkerLost: true, nil: false",
		}
		if diff := cmp.Diff(want, timeline); diff != "" {
			t.Errorf("timeline (-want +got):\n%s", diff)
		}
	})
}
