package core

import (
	"fmt"
	"testing"
	"time"

	"github.com/fairsched/fairsched/policy"
)

// BenchmarkCoreDecision is the scheduling decision of the root package's
// end-to-end benchmarks with no goroutine, channel or pool: one job type
// whose priority is the global cap c, as newBenchScheduler registers it.
// One operation is what the owner decides for one job, Submit + Dispatch +
// Finish.
//
//   - runsync: BenchmarkRunSync's 64 callers, each its own fairness key, at
//     cap 64 — nothing waits: a job is submitted and admitted, and the
//     oldest of the 64 running ends.
//   - backlog: BenchmarkThroughput's background jobs over 1 024 ids, with
//     `pending` waiting (its producer outruns the owner, so the queue
//     grows through the run): a job ends, one is submitted, one admitted.
//
// What the end-to-end benchmarks measure beyond these figures is the hand
// over between goroutines (BenchmarkActorFloor in the root package).
func BenchmarkCoreDecision(b *testing.B) {
	ids := make([]string, 1024)
	for i := range ids {
		ids[i] = fmt.Sprintf("repo-%04d", i)
	}
	keys := make([]string, 64)
	for i := range keys {
		keys[i] = fmt.Sprintf("caller-%02d", i)
	}
	type workload struct {
		name      string
		cap       int
		pending   int
		keyed     bool // each job has its caller's key (RunSync), else none
		onDemand  bool
		nextKey   int
		nextID    int
		submitted int
	}
	for _, w := range []*workload{
		{name: "runsync/cap=64", cap: 64, keyed: true, onDemand: true},
		{name: "backlog/cap=4/pending=1000", cap: 4, pending: 1_000},
		{name: "backlog/cap=64/pending=100000", cap: 64, pending: 100_000},
	} {
		b.Run(w.name, func(b *testing.B) {
			l := policy.DefaultLimits()
			l.MaxConcurrency = w.cap
			c := New(l)
			if err := c.RegisterType("bench", policy.JobTypeConfig{DefaultCost: time.Millisecond, Priority: policy.Priority(w.cap)}); err != nil {
				b.Fatal(err)
			}
			now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			fill := func(j *Job) { // a finished job's record is reused, as the harness does
				j.Type, j.ID, j.OnDemand = "bench", ids[w.nextID%len(ids)], w.onDemand
				w.nextID++
				if w.keyed {
					j.Key = keys[w.nextKey%len(keys)]
					w.nextKey++
				}
			}
			var running []*Job // admission order: the oldest ends first
			var buf []*Job
			submit := func(j *Job) {
				fill(j)
				if err := c.Submit(now, j); err != nil {
					b.Fatal(err)
				}
				buf = c.Dispatch(now, buf[:0])
				running = append(running, buf...)
			}
			for range w.cap + w.pending {
				submit(new(Job))
			}
			b.ReportAllocs()
			for b.Loop() {
				now = now.Add(time.Microsecond)
				j := running[0]
				running = running[1:]
				c.Finish(now, j)
				submit(j)
				if len(running) > 4*w.cap { // keep the slice short: drop what was taken
					running = append(running[:0:0], running...)
				}
			}
			if p, r := c.Pending(), c.RunningCount(); p != w.pending || r != w.cap {
				b.Fatalf("not at steady state: %d pending, %d running (want %d, %d)", p, r, w.pending, w.cap)
			}
		})
	}
}
