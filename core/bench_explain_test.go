package core

import (
	"fmt"
	"testing"

	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/queue"
)

// BenchmarkExplain measures Explain at 100 000 pending jobs over 10 000
// keys, cap 1: the job asked about arrived last, so finding it walks every
// pending job, and its estimate plays the fair order up to EstimateBound.
// Nothing is computed between requests, so this is the whole added cost.
func BenchmarkExplain(b *testing.B) {
	const pending = 100_000
	l := policy.DefaultLimits()
	l.MaxConcurrency = 1
	c := New(l)
	if err := c.RegisterType("t", policy.JobTypeConfig{DefaultCost: 1e6, Priority: 1}); err != nil {
		b.Fatal(err)
	}
	for i := range pending + 1 {
		if err := c.Submit(t0, &Job{Job: queue.Job{Type: "t", ID: fmt.Sprint(i), Key: fmt.Sprint("k", i%10_000)}}); err != nil {
			b.Fatal(err)
		}
	}
	c.Dispatch(t0, nil)
	last := fmt.Sprint(pending)
	b.ReportAllocs()
	for b.Loop() {
		e, err := c.Explain(t0, "t", last)
		if err != nil || e.Running {
			b.Fatalf("explain: %+v, %v", e, err)
		}
	}
}
