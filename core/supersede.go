package core

import (
	"cmp"
	"hash/maphash"
	"slices"
	"time"

	"github.com/fairsched/fairsched/internal/shrink"
	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/queue"
)

// Supersede and Cancel. The core keeps the pending background jobs of each
// (type, id) — waiting, deferred, or in a retry's backoff — so that a newer
// submission can replace them (Supersede) and Cancel can find them, in
// O(jobs of the (type, id)) and with no scan. Foreground jobs (OnDemand)
// are not kept: their callers cancel them through their contexts. Each
// (type, id)'s jobs are a list linked through the jobs themselves, so a
// job with an id of its own costs a map entry and no allocation. The map
// is keyed by a 64-bit hash of the (type, id), not by the two strings: a
// lookup among millions of ids then compares words, not the strings'
// bytes elsewhere in memory (a cache miss each). Two (type, id)s of one
// hash share a list; readers of a list compare the strings.

// jobRef names a (type, id).
type jobRef struct {
	t  policy.JobType
	id string
}

// refSeed seeds the hashes of (type, id)s: one per process.
var refSeed = maphash.MakeSeed()

// refHash is the hash of (t, id) that keys Core.byRef (a variable: a
// test makes (type, id)s collide).
var refHash = func(t policy.JobType, id string) uint64 {
	return maphash.Comparable(refSeed, jobRef{t, id})
}

// The lists are made the first time something reads them (Supersede,
// Cancel): until then a job with an id of its own costs no entry at all —
// with millions of ids, the map's insert and delete were a fifth of a
// Submit's decision. The first reader pays one pass over the pending jobs;
// from then on every job is listed as it comes.

// listBackground adds pending background job j to its (type, id)'s list,
// once the lists are made.
func (c *Core) listBackground(j *Job) {
	if j.OnDemand || j.refListed || !c.refsMade {
		return
	}
	if c.byRef == nil {
		c.byRef = map[uint64]*Job{}
	}
	ref := refHash(j.Type, j.ID)
	head := c.byRef[ref]
	j.refListed, j.refPrev, j.refNext = true, nil, head
	if head != nil {
		head.refPrev = j
	}
	c.byRef[ref] = j
	shrink.Note(c.byRef, &c.refPeak)
}

// unlistBackground takes j, which leaves the queue, off its list.
func (c *Core) unlistBackground(j *Job) {
	if !j.refListed {
		return
	}
	switch {
	case j.refPrev != nil:
		j.refPrev.refNext = j.refNext
	case j.refNext != nil:
		c.byRef[refHash(j.Type, j.ID)] = j.refNext
	default:
		delete(c.byRef, refHash(j.Type, j.ID))
	}
	if j.refNext != nil {
		j.refNext.refPrev = j.refPrev
	}
	j.refListed, j.refPrev, j.refNext = false, nil, nil
}

// PendingBackground returns the pending background jobs of (t, id), in
// arrival order.
func (c *Core) PendingBackground(t policy.JobType, id string) []*Job {
	if !c.refsMade {
		c.refsMade = true
		c.queue.Each(func(qj *queue.Job) { c.listBackground(jobOf(qj)) })
	}
	var out []*Job
	for j := c.byRef[refHash(t, id)]; j != nil; j = j.refNext {
		if j.Type == t && j.ID == id {
			out = append(out, j)
		}
	}
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
