package core

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/queue"
	"github.com/google/go-cmp/cmp"
)

// exactRises is the reference for AgingRises: the rises counted for jobs
// that left, plus every pending job's rises now, summed over all of them.
type exactRises struct {
	left map[policy.JobType]uint64
}

func (r *exactRises) total(c *Core) map[policy.JobType]uint64 {
	out := map[policy.JobType]uint64{}
	for t, n := range r.left {
		out[t] += n
	}
	c.queue.Each(func(qj *queue.Job) {
		j := jobOf(qj)
		out[j.Type] += c.rises(j)
	})
	for t, n := range out {
		if n == 0 {
			delete(out, t)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// TestAgingRisesSweep: with fewer pending jobs than the sweep takes,
// AgingRises is exact at every call; with more, it never decreases, never
// passes the exact count, and reaches it once the sweep has gone round
// (⌈pending / sweep⌉ calls with no time passing). Jobs leave meanwhile
// (admitted, withdrawn, expired) and groups pause, so the sweep's cursor
// meets removals.
func TestAgingRisesSweep(t *testing.T) {
	for _, sweep := range []int{1 << 16, 7} {
		t.Run(fmt.Sprint("sweep=", sweep), func(t *testing.T) {
			defer func(n int) { agingSweep = n }(agingSweep)
			agingSweep = sweep
			rng := rand.New(rand.NewPCG(1, uint64(sweep)))
			l := policy.DefaultLimits()
			l.MaxConcurrency = 2
			l.Aging = &policy.AgingConfig{GracePeriod: time.Second, Interval: time.Second, Step: 1, MaxEffectivePriority: 6}
			c := New(l)
			for _, ty := range []policy.JobType{"a", "b"} {
				if err := c.RegisterType(ty, policy.JobTypeConfig{DefaultCost: time.Second, Priority: 1, QueueTimeout: 40 * time.Second}); err != nil {
					t.Fatal(err)
				}
			}
			ref := &exactRises{left: map[policy.JobType]uint64{}}
			var last map[policy.JobType]uint64
			now := t0
			var running []*Job
			var pending []*Job
			for step := range 400 {
				now = now.Add(time.Duration(rng.IntN(1500)) * time.Millisecond)
				// Every pending job's rises now, before any leaves: those
				// that leave in this step (expired, withdrawn, admitted)
				// count these.
				c.queue.At(now)
				before := map[*Job]uint64{}
				c.queue.Each(func(qj *queue.Job) { before[jobOf(qj)] = c.rises(jobOf(qj)) })
				c.Advance(now)
				switch rng.IntN(6) {
				case 0, 1, 2:
					j := &Job{Job: queue.Job{Type: []policy.JobType{"a", "b"}[rng.IntN(2)], ID: fmt.Sprint(step), Key: fmt.Sprint("k", rng.IntN(4))}, Group: []string{"", "g"}[rng.IntN(2)]}
					if err := c.Submit(now, j); err != nil {
						t.Fatal(err)
					}
					pending = append(pending, j)
				case 3:
					if len(pending) > 0 {
						i := rng.IntN(len(pending))
						j := pending[i]
						c.Withdraw(now, j)
						pending = append(pending[:i], pending[i+1:]...)
					}
				case 4:
					if rng.IntN(2) == 0 {
						_ = c.PauseGroup(now, "g")
					} else {
						_ = c.ResumeGroup(now, "g")
					}
				case 5:
					for _, j := range running {
						c.Finish(now, j)
					}
					running = running[:0]
				}
				running = append(running, c.Dispatch(now, nil)...)
				for j, n := range before {
					if !j.Queued() {
						ref.left[j.Type] += n
					}
				}
				want := ref.total(c)
				got := c.AgingRises()
				if len(c.aging.recs) <= sweep {
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("step %d: AgingRises (-exact +got):\n%s", step, diff)
					}
				} else {
					for ty, n := range got {
						if n > want[ty] {
							t.Fatalf("step %d: %s counted %d rises, only %d happened", step, ty, n, want[ty])
						}
					}
				}
				for ty, n := range last {
					if got[ty] < n {
						t.Fatalf("step %d: %s went down from %d to %d", step, ty, n, got[ty])
					}
				}
				last = got
			}
			// No time passes: the sweep goes round and catches up.
			for range (len(c.aging.recs) + sweep - 1) / sweep {
				last = c.AgingRises()
			}
			if diff := cmp.Diff(ref.total(c), last); diff != "" {
				t.Fatalf("after a full sweep (-exact +got):\n%s", diff)
			}
			if last["a"] == 0 || last["b"] == 0 {
				t.Fatalf("the workload never aged a job: %v", last)
			}
		})
	}
}
