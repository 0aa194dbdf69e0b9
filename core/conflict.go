package core

import (
	"container/heap"
	"math"

	"github.com/fairsched/fairsched/policy"
)

// Conflicts. A job whose type has a conflict group holds its (group, id)
// while it runs: alone (ConflictExclusive) or together with other shared
// jobs (ConflictShared). A job that may not start because of its (group, id)
// is parked on it (queue.Park) and returns to dispatch when that can have
// changed, so dispatch never looks at it in between.
//
// Writer preference, as in sync.RWMutex: while a job runs on a (group, id),
// a shared job that arrived after a pending exclusive job of the same
// (group, id) waits behind it. The pending exclusive jobs of each key are
// kept in a heap by arrival (writers), so the rule costs O(log n) per
// submission, admission and removal, and one look at the top per check. The
// rule holds only while the key is busy: a shared job may start on an idle
// key even if an exclusive job of it waits for something else (its type's
// cap, a paused group), so such a job slows shared work down to waves —
// each starting when the key goes idle — but never stops it.
//
// A shared job parked on a key becomes free when the key goes idle (Finish
// releases everything parked on it) or when the earliest pending exclusive
// job leaves the queue unrun (dropWriter releases the parked shared jobs
// that arrived before the next one). An exclusive job becomes free only
// when the key goes idle.

// conflictBlocks reports whether j may not start now because of its
// (conflict group, id): the one place dispatch and the snapshot's reasons
// ask.
func (c *Core) conflictBlocks(j *Job) bool {
	k, ok := j.slot.Config.Conflicts(j.ID)
	if !ok {
		return false
	}
	if c.usage.Conflicting(j.slot.Config, j.ID) {
		return true
	}
	return j.slot.Config.ConflictMode == policy.ConflictShared &&
		c.usage.ConflictBusy(k) && c.firstWriter(k) < j.Seq
}

// writerQueue is the pending exclusive jobs of one conflict key, by arrival.
type writerQueue []*Job

func (w writerQueue) Len() int           { return len(w) }
func (w writerQueue) Less(a, b int) bool { return w[a].Seq < w[b].Seq }
func (w writerQueue) Swap(a, b int) {
	w[a], w[b] = w[b], w[a]
	w[a].widx, w[b].widx = a, b
}
func (w *writerQueue) Push(x any) {
	j := x.(*Job)
	j.widx = len(*w)
	*w = append(*w, j)
}
func (w *writerQueue) Pop() any {
	old := *w
	j := old[len(old)-1]
	old[len(old)-1] = nil
	*w = old[:len(old)-1]
	j.widx = -1
	return j
}

// isWriter reports whether j is an exclusive job of a conflict group: a
// writer on its key.
func isWriter(j *Job) bool {
	return j.slot.Config.ConflictGroup != "" && j.slot.Config.ConflictMode == policy.ConflictExclusive
}

// firstWriter returns the arrival of the earliest pending exclusive job on
// k, or the largest Seq when none waits.
func (c *Core) firstWriter(k policy.ConflictKey) uint64 {
	if w := c.writers[k]; w != nil {
		return (*w)[0].Seq
	}
	return math.MaxUint64
}

// addWriter lists pending job j among its key's writers, if it is one.
func (c *Core) addWriter(j *Job) {
	j.widx = -1
	if !isWriter(j) {
		return
	}
	k, _ := j.slot.Config.Conflicts(j.ID)
	w := c.writers[k]
	if w == nil {
		w = &writerQueue{}
		if c.writers == nil {
			c.writers = map[policy.ConflictKey]*writerQueue{}
		}
		c.writers[k] = w
	}
	heap.Push(w, j)
}

// removeWriter takes j, which leaves the queue, off its key's writers. When
// j leaves unrun (started is false) and was the earliest, the shared jobs
// parked behind it that arrived before the next writer may start now.
func (c *Core) removeWriter(j *Job, started bool) {
	if j.widx < 0 {
		return
	}
	k, _ := j.slot.Config.Conflicts(j.ID)
	w := c.writers[k]
	first := j.widx == 0
	heap.Remove(w, j.widx)
	if w.Len() == 0 {
		delete(c.writers, k)
	}
	if first && !started && c.usage.ConflictBusy(k) {
		c.queue.ReleaseBefore(k, c.firstWriter(k))
	}
}
