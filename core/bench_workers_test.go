package core

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/fairsched/fairsched/policy"
)

// workersBench is the steady state of BenchmarkCoreWorkers: 50 job types
// of one tier, 1,000 jobs running, 100k pending. With workers, the 1,000
// run on the slots of 250 workers, four slots each, every slot taking one
// to three of the types; without, the same cap of 1,000 binds instead.
// One step finishes the oldest running job, submits one and dispatches.
type workersBench struct {
	c     *Core
	now   time.Time
	ring  []*Job // running jobs, oldest first (a FIFO of fixed size)
	head  int
	n     int
	buf   []*Job
	types []policy.JobType
	keys  []string
	rng   uint64
}

const (
	wbTypes   = 50
	wbSlots   = 1_000
	wbPending = 100_000
)

func newWorkersBench(workers, scoring bool) *workersBench {
	l := policy.DefaultLimits()
	l.MaxConcurrency = wbSlots
	if scoring {
		sc := policy.ScoreConfig{}.WithDefaults()
		l.Scoring = &sc
	}
	h := &workersBench{c: New(l), now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), ring: make([]*Job, wbSlots), rng: 0x9e3779b97f4a7c15}
	for i := range wbTypes {
		t := policy.JobType(fmt.Sprintf("type-%02d", i))
		h.types = append(h.types, t)
		cfg := policy.JobTypeConfig{DefaultCost: 10 * time.Millisecond, Priority: wbSlots, RequiresWorker: workers}
		if err := h.c.RegisterType(t, cfg); err != nil {
			panic(err)
		}
	}
	for i := range 10 {
		h.keys = append(h.keys, fmt.Sprint("key-", i))
	}
	if workers {
		for w := range wbSlots / 4 {
			slots := make([][]policy.JobType, 4)
			for s := range slots {
				first := (w*4 + s) % wbTypes
				for k := range 1 + (w+s)%3 {
					slots[s] = append(slots[s], h.types[(first+k*17)%wbTypes])
				}
			}
			if err := h.c.RegisterWorker(h.now, fmt.Sprint("worker-", w), slots); err != nil {
				panic(err)
			}
		}
	}
	for range wbPending + wbSlots {
		h.submit(&Job{})
	}
	h.dispatch()
	if h.n != wbSlots {
		panic(fmt.Sprintf("workers bench: %d running after the prefill, want %d", h.n, wbSlots))
	}
	runtime.GC()
	return h
}

func (h *workersBench) next() uint64 {
	h.rng ^= h.rng >> 12
	h.rng ^= h.rng << 25
	h.rng ^= h.rng >> 27
	return h.rng * 2685821657736338717
}

func (h *workersBench) submit(j *Job) {
	j.Type = h.types[h.next()%wbTypes]
	j.ID = fmt.Sprint("job-", h.next()%4096)
	j.Key = h.keys[h.next()%uint64(len(h.keys))]
	if err := h.c.Submit(h.now, j); err != nil {
		panic(err)
	}
}

func (h *workersBench) dispatch() {
	h.buf = h.c.Dispatch(h.now, h.buf[:0])
	for _, j := range h.buf {
		h.ring[(h.head+h.n)%len(h.ring)] = j
		h.n++
	}
}

func (h *workersBench) step() {
	h.now = h.now.Add(time.Millisecond)
	j := h.ring[h.head]
	h.ring[h.head] = nil
	h.head = (h.head + 1) % len(h.ring)
	h.n--
	h.c.Finish(h.now, j)
	*j = Job{} // a fresh record, without the allocation
	h.submit(j)
	h.dispatch()
}

// BenchmarkCoreWorkers measures one Finish + Submit + Dispatch at 100k
// pending with 1,000 worker slots over 50 types against the same workload
// without workers (x-vs-off; target ≤ 1.5), and with scoring on top.
func BenchmarkCoreWorkers(b *testing.B) {
	for _, v := range []struct {
		name             string
		workers, scoring bool
	}{{"off", false, false}, {"workers", true, false}, {"scoring", false, true}, {"workers+scoring", true, true}} {
		var h *workersBench
		b.Run(v.name, func(b *testing.B) {
			if h == nil {
				h = newWorkersBench(v.workers, v.scoring)
			}
			b.ReportAllocs()
			for b.Loop() {
				h.step()
			}
			if p, r := h.c.Pending(), h.c.RunningCount(); p != wbPending || r != wbSlots {
				b.Fatalf("not at steady state: %d pending, %d running", p, r)
			}
			ns := book.Record(b, "workers/"+v.name)
			if base := book.Median("workers/off"); v.name != "off" && base > 0 {
				b.ReportMetric(ns/base, "x-vs-off")
			}
		})
	}
}
