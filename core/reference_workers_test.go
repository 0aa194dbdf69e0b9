package core

import (
	"fmt"
	"slices"
	"time"

	"github.com/fairsched/fairsched/policy"
)

// The reference's worker slots and scoring, written out as plainly as the
// rest: slots in one slice scanned end to end for every question, scores
// computed for every pending job on every pass.

// refSlot is one worker slot of the reference.
type refSlot struct {
	worker string
	index  int
	types  []policy.JobType
	job    *refJob // running on it; nil when free
	gone   bool    // its worker was unregistered
}

func (s *refSlot) takes(t policy.JobType) bool { return slices.Contains(s.types, t) }

// refWorkerTypes are the types that require a worker in the workers runs.
var refWorkerTypes = []policy.JobType{"clone", "snap", "vacuum"}

// freeSlots counts the free registered slots that take t.
func (r *refScheduler) freeSlots(t policy.JobType) int {
	n := 0
	for _, s := range r.slots {
		if s.job == nil && s.takes(t) {
			n++
		}
	}
	return n
}

// workerReason: no registered slot takes the job's type, or none is free.
func (r *refScheduler) workerReason(j *refJob) policy.Reason {
	if !r.types[j.typ].RequiresWorker || r.freeSlots(j.typ) > 0 {
		return ""
	}
	for _, s := range r.slots {
		if s.takes(j.typ) {
			return policy.ReasonWorkerBusy
		}
	}
	return policy.ReasonNoWorkers
}

// takeSlot gives j the free slot that takes its type and the fewest types,
// the earliest registered among equals.
func (r *refScheduler) takeSlot(j *refJob) {
	if !r.types[j.typ].RequiresWorker {
		return
	}
	var best *refSlot
	for _, s := range r.slots {
		if s.job == nil && s.takes(j.typ) && (best == nil || len(s.types) < len(best.types)) {
			best = s
		}
	}
	best.job, j.slot = j, best
}

// freeSlot frees the slot of finished job j, unless its worker is gone.
func (r *refScheduler) freeSlot(j *refJob) {
	if j.slot != nil && !j.slot.gone {
		j.slot.job = nil
	}
}

func (r *refScheduler) register(id string, slots [][]policy.JobType) {
	for i, types := range slots {
		r.slots = append(r.slots, &refSlot{worker: id, index: i, types: types})
	}
}

// unregister removes worker id's slots and returns the jobs that ran on them.
func (r *refScheduler) unregister(id string) []*refJob {
	var lost []*refJob
	r.slots = slices.DeleteFunc(r.slots, func(s *refSlot) bool {
		if s.worker != id {
			return false
		}
		s.gone = true
		if s.job != nil {
			lost = append(lost, s.job)
		}
		return true
	})
	return lost
}

// score is spec 3's formula written out again, in the order
// ScoreConfig.Score adds its terms (floating point addition is not
// associative): priority, rarity, on-demand bonus, then the slope times the
// whole seconds waited.
func (r *refScheduler) score(j *refJob, now time.Time) float64 {
	c := r.scoring
	s := c.PriorityWeight * float64(r.effective(j, now))
	if r.types[j.typ].RequiresWorker {
		if n := r.freeSlots(j.typ); n > 0 {
			s += c.RarityBonus / float64(n)
		}
	}
	slope := c.AgeWeight
	if j.onDemand {
		s += c.OnDemandBonus
		slope += c.OnDemandAgeWeight
	}
	return s + slope*float64(now.Unix()-j.submitted.Unix())
}

func (r *refScheduler) workerSnapshots() []WorkerSnapshot {
	var out []WorkerSnapshot
	for _, s := range r.slots {
		if len(out) == 0 || out[len(out)-1].ID != s.worker {
			out = append(out, WorkerSnapshot{ID: s.worker})
		}
		ss := SlotSnapshot{Types: s.types}
		if s.job != nil {
			ss.Type, ss.ID = s.job.typ, s.job.id
		}
		out[len(out)-1].Slots = append(out[len(out)-1].Slots, ss)
	}
	return out
}

func workersEqual(a, b []WorkerSnapshot) bool {
	return slices.EqualFunc(a, b, func(x, y WorkerSnapshot) bool {
		return x.ID == y.ID && slices.EqualFunc(x.Slots, y.Slots, func(p, q SlotSnapshot) bool {
			return slices.Equal(p.Types, q.Types) && p.Type == q.Type && p.ID == q.ID
		})
	})
}

// workerOp registers a worker of one to three random slots, or unregisters
// a random one, on both sides; the jobs lost must be the same.
func (run *refRun) workerOp(op int) {
	r := run.rng
	if len(run.ref.slots) > 0 && r.IntN(3) == 0 {
		id := run.ref.slots[r.IntN(len(run.ref.slots))].worker
		run.logf("unregister worker %s", id)
		want := seqs(run.ref.unregister(id), func(j *refJob) uint64 { return j.seq })
		lost, err := run.c.UnregisterWorker(run.now, id)
		if err != nil {
			run.fail(op, "UnregisterWorker(%s): %v", id, err)
		}
		got := seqs(lost, func(j *Job) uint64 { return j.Seq })
		slices.Sort(want)
		slices.Sort(got)
		if diff := diffOf(want, got, slices.Equal); diff != "" {
			run.fail(op, "UnregisterWorker(%s) lost (-ref +core):\n%s", id, diff)
		}
		run.stats.lost += len(got)
		return
	}
	run.workers++
	id := fmt.Sprintf("w%d", run.workers)
	slots := make([][]policy.JobType, 1+r.IntN(3))
	for i := range slots {
		for _, t := range refWorkerTypes {
			if r.IntN(2) == 0 {
				slots[i] = append(slots[i], t)
			}
		}
		if len(slots[i]) == 0 {
			slots[i] = []policy.JobType{refWorkerTypes[r.IntN(len(refWorkerTypes))]}
		}
	}
	run.logf("register worker %s %v", id, slots)
	if err := run.c.RegisterWorker(run.now, id, slots); err != nil {
		run.fail(op, "RegisterWorker(%s): %v", id, err)
	}
	run.ref.register(id, slots)
}
