package core

import (
	"cmp"
	"slices"
	"time"

	"github.com/fairsched/fairsched/internal/shrink"
	"github.com/fairsched/fairsched/policy"
)

// Supersede and Cancel. The core keeps the pending background jobs of each
// (type, id) — waiting, deferred, or in a retry's backoff — so that a newer
// submission can replace them (Supersede) and Cancel can find them, in
// O(jobs of the (type, id)) and with no scan. Foreground jobs (OnDemand)
// are not kept: their callers cancel them through their contexts.

// jobRef names a (type, id).
type jobRef struct {
	t  policy.JobType
	id string
}

// listBackground adds pending background job j to its (type, id)'s list.
func (c *Core) listBackground(j *Job) {
	if j.OnDemand || j.refIdx >= 0 {
		return
	}
	if c.byRef == nil {
		c.byRef = map[jobRef][]*Job{}
	}
	ref := jobRef{j.Type, j.ID}
	j.refIdx = len(c.byRef[ref])
	c.byRef[ref] = append(c.byRef[ref], j)
	shrink.Note(c.byRef, &c.refPeak)
}

// unlistBackground takes j, which leaves the queue, off its list.
func (c *Core) unlistBackground(j *Job) {
	if j.refIdx < 0 {
		return
	}
	ref := jobRef{j.Type, j.ID}
	list := c.byRef[ref]
	last := len(list) - 1
	list[j.refIdx] = list[last]
	list[j.refIdx].refIdx = j.refIdx
	list[last] = nil
	if last == 0 {
		delete(c.byRef, ref)
	} else {
		c.byRef[ref] = list[:last]
	}
	j.refIdx = -1
}

// PendingBackground returns the pending background jobs of (t, id), in
// arrival order.
func (c *Core) PendingBackground(t policy.JobType, id string) []*Job {
	out := slices.Clone(c.byRef[jobRef{t, id}])
	slices.SortFunc(out, func(a, b *Job) int { return cmp.Compare(a.Seq, b.Seq) })
	return out
}

// Supersede withdraws every pending background job of (t, id), in arrival
// order, each with a deny decision (superseded), and returns them: a newer
// submission replaces them. They leave unrun (again) and uncharged.
func (c *Core) Supersede(now time.Time, t policy.JobType, id string) []*Job {
	old := c.PendingBackground(t, id)
	for _, j := range old {
		c.Withdraw(now, j)
		c.record(now, j, DecisionDeny, CodeSuperseded, 0)
	}
	return old
}
