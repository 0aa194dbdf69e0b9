// Package workers is the index of worker slots by the job types they take.
//
// A worker offers slots; each slot runs one job at a time of any type it
// lists. The pool answers the scheduler's two questions without scanning
// every slot: "is there a free slot for type T" (a count per type, O(1))
// and "which one" (a scan of the free slots that support T only, O(free
// compatible slots)). It prefers the slot that supports the fewest types —
// a specialist — so versatile slots stay free for work only they can take;
// among equals, the earliest registered.
//
// Removing a worker removes its slots at once, free or busy. A busy slot
// removed this way is marked Lost; releasing it later changes nothing.
//
// The pool is a plain data structure: not safe for concurrent use, no
// goroutine, no clock. The scheduler's owner goroutine holds it.
//
// It is a part of the scheduler's inside: programs use the root package,
// github.com/fairsched/fairsched (RegisterWorker).
package workers

import (
	"errors"
	"fmt"

	"github.com/fairsched/fairsched/policy"
)

// Errors. Returned errors wrap them with the worker or slot at fault.
var (
	// ErrWorkerLost is the cause (context.Cause) given to the context of a
	// job whose worker was unregistered while the job ran.
	ErrWorkerLost = errors.New("fairsched: worker lost")
	// ErrDuplicateWorker: a worker with this ID is registered already.
	ErrDuplicateWorker = policy.ErrDuplicateWorker
	// ErrUnknownWorker: no worker with this ID is registered.
	ErrUnknownWorker = policy.ErrUnknownWorker
)

// Slot is one slot of a worker.
type Slot struct {
	Worker string
	Index  int // position in the worker's spec
	types  []policy.JobType
	pos    []int // while free: position in free[types[i]]; -1 while busy
	seq    uint64
	busy   bool
	lost   bool
	// Job is the caller's record of the job running on the slot, nil while
	// it is free.
	Job any
}

// Types returns the job types the slot takes. The caller must not modify it.
func (s *Slot) Types() []policy.JobType { return s.types }

// Busy reports whether a job runs on the slot.
func (s *Slot) Busy() bool { return s.busy }

// Lost reports whether the slot's worker was removed while it was busy.
func (s *Slot) Lost() bool { return s.lost }

// Pool holds the registered workers' slots.
type Pool struct {
	workers map[string][]*Slot
	order   []string // worker IDs in registration order
	free    map[policy.JobType][]*Slot
	total   map[policy.JobType]int // registered slots per type, busy or free
	seq     uint64
}

// New returns an empty pool.
func New() *Pool {
	return &Pool{workers: map[string][]*Slot{}, free: map[policy.JobType][]*Slot{}, total: map[policy.JobType]int{}}
}

// Add registers worker id with one slot per entry of slots, each the list
// of types it takes. Validation of the types themselves is the caller's;
// the pool refuses a duplicate ID, no slot, an empty slot or a type listed
// twice in a slot.
func (p *Pool) Add(id string, slots [][]policy.JobType) ([]*Slot, error) {
	if err := policy.CheckWorkerSpec(id, slots, p.registered); err != nil {
		return nil, err
	}
	out := make([]*Slot, len(slots))
	for i, types := range slots {
		p.seq++
		s := &Slot{Worker: id, Index: i, types: append([]policy.JobType(nil), types...), pos: make([]int, len(types)), seq: p.seq}
		for _, t := range types {
			p.total[t]++
		}
		p.putFree(s)
		out[i] = s
	}
	p.workers[id] = out
	p.order = append(p.order, id)
	return out, nil
}

func (p *Pool) registered(id string) bool {
	_, ok := p.workers[id]
	return ok
}

// Remove unregisters worker id and returns its slots. Busy ones are marked
// Lost: their jobs run on a worker that is gone.
func (p *Pool) Remove(id string) ([]*Slot, error) {
	slots, ok := p.workers[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownWorker, id)
	}
	for _, s := range slots {
		if s.busy {
			s.lost = true
		} else {
			p.takeFree(s)
		}
		for _, t := range s.types {
			if p.total[t]--; p.total[t] == 0 {
				delete(p.total, t)
			}
		}
	}
	delete(p.workers, id)
	for i, w := range p.order {
		if w == id {
			p.order = append(p.order[:i], p.order[i+1:]...)
			break
		}
	}
	return slots, nil
}

// Free returns the number of free slots that take type t. O(1).
func (p *Pool) Free(t policy.JobType) int { return len(p.free[t]) }

// Total returns the number of registered slots that take type t, busy or
// free. O(1).
func (p *Pool) Total(t policy.JobType) int { return p.total[t] }

// Acquire takes the free slot for type t that supports the fewest types
// (the earliest registered among equals), marks it busy with job and
// returns it; nil when no free slot takes t. O(free slots that take t).
func (p *Pool) Acquire(t policy.JobType, job any) *Slot {
	var best *Slot
	for _, s := range p.free[t] {
		if best == nil || len(s.types) < len(best.types) || len(s.types) == len(best.types) && s.seq < best.seq {
			best = s
		}
	}
	if best != nil {
		p.takeFree(best)
		best.busy, best.Job = true, job
	}
	return best
}

// Release frees slot s at the end of its job. It reports false, changing
// nothing, when the slot's worker was removed meanwhile.
func (p *Pool) Release(s *Slot) bool {
	if !s.busy {
		panic(fmt.Sprintf("workers: Release of free slot %s/%d", s.Worker, s.Index))
	}
	s.busy, s.Job = false, nil
	if s.lost {
		return false
	}
	p.putFree(s)
	return true
}

// Each calls fn for every registered slot, workers in registration order.
func (p *Pool) Each(fn func(*Slot)) {
	for _, id := range p.order {
		for _, s := range p.workers[id] {
			fn(s)
		}
	}
}

// Len returns the number of registered workers.
func (p *Pool) Len() int { return len(p.order) }

func (p *Pool) putFree(s *Slot) {
	for i, t := range s.types {
		s.pos[i] = len(p.free[t])
		p.free[t] = append(p.free[t], s)
	}
}

// takeFree removes free slot s from the free lists of its types: swap with
// the last entry, O(types of s · types of the moved slot).
func (p *Pool) takeFree(s *Slot) {
	for i, t := range s.types {
		list := p.free[t]
		last := len(list) - 1
		at := s.pos[i]
		if at != last {
			moved := list[last]
			list[at] = moved
			for k, u := range moved.types {
				if u == t {
					moved.pos[k] = at
					break
				}
			}
		}
		list[last] = nil
		p.free[t] = list[:last] // kept when empty: a slot freeing reuses it
		s.pos[i] = -1
	}
}
