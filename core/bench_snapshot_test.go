package core

import (
	"fmt"
	"github.com/fairsched/fairsched/queue"
	"testing"
	"time"

	"github.com/fairsched/fairsched/policy"
)

// BenchmarkSnapshotRows measures the owner's time for a bounded snapshot
// (the default of Scheduler.Snapshot, what a metrics scrape and a debug page
// refresh take) at 1 000 and 1 000 000 pending jobs over 10 000 keys. The
// goal is under 50 ms at a million: the rows come from merging the lanes
// (queue.Top), reasons are computed for the listed rows only. With aging,
// Snapshot.AgingRises brings at most agingSweep waiting jobs' rises up to
// date per snapshot (rises.go).
func BenchmarkSnapshotRows(b *testing.B) {
	for _, tc := range []struct {
		pending int
		aging   bool
	}{{1_000, false}, {1_000_000, false}, {1_000, true}, {1_000_000, true}} {
		pending := tc.pending
		b.Run(fmt.Sprintf("pending=%d/aging=%v", pending, tc.aging), func(b *testing.B) {
			l := policy.DefaultLimits()
			l.MaxConcurrency = 1
			if tc.aging {
				l.Aging = &policy.AgingConfig{GracePeriod: time.Second, Interval: time.Second, Step: 1, MaxEffectivePriority: 9}
			}
			c := New(l)
			if err := c.RegisterType("t", policy.JobTypeConfig{DefaultCost: time.Millisecond, Priority: 1}); err != nil {
				b.Fatal(err)
			}
			now := t0
			for i := range pending {
				if i%1000 == 0 {
					now = now.Add(time.Second) // arrivals spread over the aging bands
				}
				if err := c.Submit(now, &Job{Job: queue.Job{Type: "t", ID: fmt.Sprint(i), Key: fmt.Sprint("k", i%10_000)}}); err != nil {
					b.Fatal(err)
				}
			}
			c.Dispatch(now, nil)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				s := c.SnapshotRows(now, 1000)
				if len(s.Pending) != min(1000, pending-1) || s.PendingTotal != pending-1 {
					b.Fatalf("%d rows of %d", len(s.Pending), s.PendingTotal)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/snapshot")
		})
	}
}
