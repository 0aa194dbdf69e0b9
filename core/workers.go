package core

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/queue"
	"github.com/fairsched/fairsched/workers"
)

// Worker slots. A type with RequiresWorker is blocked — out of dispatch,
// like a type at its cap — while no free slot takes it, and put back when a
// slot that takes it frees or registers: the pool counts free slots per
// type, so the check is O(1) and nothing waits by scanning.

// WorkerSnapshot is one registered worker in a Snapshot.
type WorkerSnapshot struct {
	ID    string         `json:"id"`
	Slots []SlotSnapshot `json:"slots"`
}

// SlotSnapshot is one slot of a worker in a Snapshot.
type SlotSnapshot struct {
	Types []policy.JobType `json:"types"`
	// Type and ID name the job running on the slot; empty while it is free.
	Type policy.JobType `json:"type,omitempty"`
	ID   string         `json:"id,omitempty"`
}

// RegisterWorker adds worker id with one slot per entry of slots, each the
// types the slot takes. Every type must be registered with RequiresWorker.
func (c *Core) RegisterWorker(now time.Time, id string, slots [][]policy.JobType) error {
	if err := policy.CheckWorkerTypes(id, slots, c.typeConfig); err != nil {
		return err
	}
	added, err := c.pool.Add(id, slots)
	if err != nil {
		return err
	}
	c.queue.At(now)
	for _, s := range added {
		c.slotTypesChanged(s)
	}
	return nil
}

// typeConfig is t's configuration, if t is registered.
func (c *Core) typeConfig(t policy.JobType) (policy.JobTypeConfig, bool) {
	s, ok := c.usage.Lookup(t)
	if !ok {
		return policy.JobTypeConfig{}, false
	}
	return s.Config, true
}

// UnregisterWorker removes worker id and all its slots, and returns the
// jobs that were running on them: they run on, on a worker that is gone,
// until their owner reports their end with Finish (which frees no slot).
func (c *Core) UnregisterWorker(now time.Time, id string) ([]*Job, error) {
	removed, err := c.pool.Remove(id)
	if err != nil {
		return nil, err
	}
	var lost []*Job
	for _, s := range removed {
		if s.Busy() {
			lost = append(lost, s.Job.(*Job))
		}
		// A type left without a free slot leaves dispatch; none gains one.
		for _, t := range s.Types() {
			if c.pool.Free(t) == 0 {
				c.queue.BlockType(t, true)
			}
		}
	}
	c.wakeAllShared() // a writer left without slots holds no shared job back
	return lost, nil
}

// WithdrawWorkerless removes the pending jobs of worker types that no
// registered worker slot takes, in arrival order: once no worker can
// register any more (the scheduler closes), they would wait for ever. One
// pass over the pending jobs.
func (c *Core) WithdrawWorkerless(now time.Time) []*Job {
	var out []*Job
	c.queue.Each(func(qj *queue.Job) {
		if j := jobOf(qj); j.slot.Config.RequiresWorker && c.pool.Total(j.Type) == 0 {
			out = append(out, j)
		}
	})
	slices.SortFunc(out, func(a, b *Job) int { return cmp.Compare(a.Seq, b.Seq) })
	for _, j := range out {
		c.Withdraw(now, j)
	}
	return out
}

// slotTypesChanged puts back in (or takes out of) dispatch each type slot
// s takes, after s freed or was taken.
func (c *Core) slotTypesChanged(s *workers.Slot) {
	for _, t := range s.Types() {
		ts, _ := c.usage.Lookup(t)
		c.queue.BlockType(t, c.typeBlocked(ts))
	}
}

// takeWorker gives admitted job j of a worker type its slot: the free one
// that takes the fewest types. Dispatch only sees such a job while its
// type has a free slot.
func (c *Core) takeWorker(j *Job) {
	s := c.pool.Acquire(j.Type, j)
	if s == nil {
		panic(fmt.Sprintf("core: %s/%s admitted with no free slot for its type", j.Type, j.ID))
	}
	j.Worker = s
	for _, t := range s.Types() {
		if c.pool.Free(t) == 0 {
			c.queue.BlockType(t, true)
		}
	}
}

// releaseWorker frees finished job j's slot, unless its worker is gone.
func (c *Core) releaseWorker(j *Job) {
	if !c.pool.Release(j.Worker) {
		return
	}
	for _, t := range j.Worker.Types() {
		if c.pool.Free(t) == 1 { // it had none: its type may return
			ts, _ := c.usage.Lookup(t)
			c.queue.BlockType(t, c.typeBlocked(ts))
		}
	}
}

// freeSlots returns the free slots that take type t, 0 for a type that
// needs no worker: the divisor of the rarity bonus.
func (c *Core) freeSlots(t policy.JobType) int {
	if s, ok := c.usage.Lookup(t); ok && s.Config.RequiresWorker {
		return c.pool.Free(t)
	}
	return 0
}

// workerReason says why a job of worker type t waits for a slot, or "".
func (c *Core) workerReason(s *policy.Slot) policy.Reason {
	switch {
	case !s.Config.RequiresWorker || c.pool.Free(s.Type) > 0:
		return ""
	case c.pool.Total(s.Type) == 0:
		return policy.ReasonNoWorkers
	}
	return policy.ReasonWorkerBusy
}

func (c *Core) workerSnapshots() []WorkerSnapshot {
	var out []WorkerSnapshot
	c.pool.Each(func(s *workers.Slot) {
		if len(out) == 0 || out[len(out)-1].ID != s.Worker {
			out = append(out, WorkerSnapshot{ID: s.Worker})
		}
		ss := SlotSnapshot{Types: append([]policy.JobType(nil), s.Types()...)}
		if s.Busy() {
			j := s.Job.(*Job)
			ss.Type, ss.ID = j.Type, j.ID
		}
		w := &out[len(out)-1]
		w.Slots = append(w.Slots, ss)
	})
	return out
}
