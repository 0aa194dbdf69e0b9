package core

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/fairsched/fairsched/policy"
)

// BenchmarkHierarchical is BenchmarkCoreDecision's backlog at 10 000
// tenants × 10 keys, two jobs pending per key (200 000), cap 64: one
// operation is one decision (a job ends, one is submitted, one admitted),
// with one level (levels=1: no hierarchy, the path every scheduler
// without tenants takes) and with the keys' tenants read from their paths
// (levels=2). The two-level run reports x-vs-one-level: its ns/op over the
// median of the one-level run's repetitions in the same `go test` run.
func BenchmarkHierarchical(b *testing.B) {
	const tenants, perTenant, perKey, capN = 10_000, 10, 2, 64
	keys := make([]string, 0, tenants*perTenant)
	for t := range tenants {
		for k := range perTenant {
			keys = append(keys, fmt.Sprintf("t%05d/k%d", t, k))
		}
	}
	name := func(levels int) string {
		return fmt.Sprintf("levels=%d/tenants=%d/keys=%d", levels, tenants, tenants*perTenant)
	}
	for _, tc := range []struct {
		levels int
		hier   *Hierarchy
	}{
		{1, nil},
		{2, &Hierarchy{Sep: "/"}},
	} {
		b.Run(name(tc.levels), func(b *testing.B) {
			l := policy.DefaultLimits()
			l.MaxConcurrency = capN
			c := New(l)
			if tc.hier != nil {
				if err := c.SetHierarchy(*tc.hier); err != nil {
					b.Fatal(err)
				}
			}
			if err := c.RegisterType("bench", policy.JobTypeConfig{DefaultCost: time.Millisecond, Priority: capN}); err != nil {
				b.Fatal(err)
			}
			now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			var running, buf []*Job
			n := 0
			submit := func(j *Job) {
				if err := c.Submit(now, j); err != nil {
					b.Fatal(err)
				}
				buf = c.Dispatch(now, buf[:0])
				running = append(running, buf...)
			}
			for i := range perKey * len(keys) {
				n++
				j := new(Job)
				j.Type, j.ID, j.Key = "bench", fmt.Sprint(n), keys[i%len(keys)]
				submit(j)
			}
			runtime.GC() // the prefill's garbage, and the last run's, must not be collected on the clock
			b.ReportAllocs()
			for b.Loop() {
				now = now.Add(time.Microsecond)
				j := running[0]
				running = running[1:]
				c.Finish(now, j)
				n++
				j.ID = fmt.Sprint(n) // a new job of the same key
				submit(j)
				if len(running) > 4*capN {
					running = append(running[:0:0], running...)
				}
			}
			if r := c.RunningCount(); r != capN {
				b.Fatalf("not at steady state: %d running, want %d", r, capN)
			}
			ns := book.Record(b, "hier/"+name(tc.levels))
			if base := book.Median("hier/" + name(1)); tc.levels > 1 && base > 0 {
				b.ReportMetric(ns/base, "x-vs-one-level")
			}
		})
	}
}
