package core

import (
	"fmt"
	"testing"
	"time"

	"github.com/fairsched/fairsched/policy"
)

// BenchmarkHierarchical is BenchmarkCoreDecision's backlog at 10 000
// tenants × 10 keys, two jobs pending per key (200 000), cap 64: one
// operation is one decision (a job ends, one is submitted, one admitted),
// with one level and with the keys' tenants read from their paths.
func BenchmarkHierarchical(b *testing.B) {
	const tenants, perTenant, perKey, capN = 10_000, 10, 2, 64
	keys := make([]string, 0, tenants*perTenant)
	for t := range tenants {
		for k := range perTenant {
			keys = append(keys, fmt.Sprintf("t%05d/k%d", t, k))
		}
	}
	for _, tc := range []struct {
		name string
		hier *Hierarchy
	}{
		{"one-level", nil},
		{"two-level", &Hierarchy{Sep: "/"}},
	} {
		b.Run(fmt.Sprintf("%s/tenants=%d/keys=%d", tc.name, tenants, tenants*perTenant), func(b *testing.B) {
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
		})
	}
}
