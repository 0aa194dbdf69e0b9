package core

import (
	"container/heap"
	"math"

	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/queue"
)

// Conflicts. A job whose type has a conflict group holds its (group, id)
// while it runs: alone (ConflictExclusive) or together with other shared
// jobs (ConflictShared). A job that may not start because of its (group, id)
// is parked on it (queue.Park), shared jobs apart from exclusive ones, and
// returns to dispatch when that can have changed, so dispatch never looks at
// it in between.
//
// Writer preference, as in a writer-preferring readers–writer lock: a shared job waits while an
// exclusive job of its (group, id) that arrived before it is pending —
// unless that job waits for something of its own (its group is paused, it
// waits out a deferral or a backoff, no worker slot takes its type), which
// would otherwise hold the shared work back for as long. The pending exclusive jobs of each key wait
// in a heap by arrival (writers): the rule costs O(log n) per submission,
// admission and removal and one look at the top per check (a scan of the
// key's writers only while the earliest waits for something of its own).
//
// Parked jobs return when the rule may let them go: the exclusive ones when
// the key goes idle (Finish); the shared ones that arrived before the first
// writer when no exclusive job runs and that writer changes — the key goes
// idle, or the writer leaves unrun, is deferred, its group is paused or its
// type loses its last worker slot (wakeShared).

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
	return j.slot.Config.ConflictMode == policy.ConflictShared && c.firstWriter(k) < j.Seq
}

// park parks j, which conflictBlocks holds, on its conflict key.
func (c *Core) park(j *Job) {
	k, _ := j.slot.Config.Conflicts(j.ID)
	c.queue.Park(&j.Job, k, j.slot.Config.ConflictMode == policy.ConflictShared)
}

// released wakes the jobs parked on k, which just went idle.
func (c *Core) released(k policy.ConflictKey) {
	c.queue.Release(k)
	c.queue.ReleaseShared(k, c.firstWriter(k))
}

// wakeShared returns the shared jobs parked on k that no writer holds any
// more, after the writers of k changed.
func (c *Core) wakeShared(k policy.ConflictKey) {
	if !c.usage.ExclusiveBusy(k) {
		c.queue.ReleaseShared(k, c.firstWriter(k))
	}
}

// wakeAllShared runs wakeShared on every key with writers: a group was
// paused, and its writers hold nothing back now. O(keys with writers).
func (c *Core) wakeAllShared() {
	for k := range c.writers {
		c.wakeShared(k)
	}
}

// writerQueue is the pending exclusive jobs of one conflict key, by arrival.
// Entries carry the job's Seq, so that ordering reads no job.
type writerQueue []writer

type writer struct {
	seq uint64
	job *Job
}

func (w writerQueue) Len() int           { return len(w) }
func (w writerQueue) Less(a, b int) bool { return w[a].seq < w[b].seq }
func (w writerQueue) Swap(a, b int) {
	w[a], w[b] = w[b], w[a]
	w[a].job.widx, w[b].job.widx = int32(a), int32(b)
}
func (w *writerQueue) Push(x any) {
	e := x.(writer)
	e.job.widx = int32(len(*w))
	*w = append(*w, e)
}
func (w *writerQueue) Pop() any {
	old := *w
	e := old[len(old)-1]
	old[len(old)-1] = writer{}
	*w = old[:len(old)-1]
	e.job.widx = -1
	return e
}

// isWriter reports whether j is an exclusive job of a conflict group that
// has shared types: a writer on its key. Without shared types writer
// preference has nothing to do, and costs nothing.
func (c *Core) isWriter(j *Job) bool {
	g := j.slot.Config.ConflictGroup
	return g != "" && j.slot.Config.ConflictMode == policy.ConflictExclusive && c.sharedGroups[g]
}

// sharedTypeRegistered is RegisterType's: the first shared type of conflict
// group g turns writer preference on for g, and the pending exclusive jobs
// of g become writers (O(n) once per group, at registration).
func (c *Core) sharedTypeRegistered(g policy.ConflictGroup) {
	if c.sharedGroups[g] {
		return
	}
	if c.sharedGroups == nil {
		c.sharedGroups = map[policy.ConflictGroup]bool{}
	}
	c.sharedGroups[g] = true
	c.queue.Each(func(qj *queue.Job) {
		if j := jobOf(qj); j.slot.Config.ConflictGroup == g {
			c.addWriter(j)
		}
	})
}

// firstWriter returns the arrival of the earliest pending exclusive job on
// k that waits for nothing of its own (see conflictBlocks), or the largest
// Seq when there is none.
func (c *Core) firstWriter(k policy.ConflictKey) uint64 {
	w := c.writers[k]
	if w == nil {
		return math.MaxUint64
	}
	if top := (*w)[0]; !c.waitsOnItsOwn(top.job) {
		return top.seq
	}
	first := uint64(math.MaxUint64)
	for _, e := range *w {
		if e.seq < first && !c.waitsOnItsOwn(e.job) {
			first = e.seq
		}
	}
	return first
}

// waitsOnItsOwn reports whether pending job j waits for something of its
// own: its group is paused, it waits out a deferral or a backoff, or no
// registered worker slot takes its type.
func (c *Core) waitsOnItsOwn(j *Job) bool {
	return j.Job.Deferred() || j.Job.Group.Paused() || j.slot.Config.RequiresWorker && c.pool.Total(j.Type) == 0
}

// addWriter lists pending job j among its key's writers, if it is one.
func (c *Core) addWriter(j *Job) {
	j.widx = -1
	if !c.isWriter(j) {
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
	heap.Push(w, writer{j.Seq, j})
}

// removeWriter takes j, which leaves the queue, off its key's writers. When
// j leaves unrun (started is false), the shared jobs parked behind it may
// start now.
func (c *Core) removeWriter(j *Job, started bool) {
	if j.widx < 0 {
		return
	}
	k, _ := j.slot.Config.Conflicts(j.ID)
	w := c.writers[k]
	heap.Remove(w, int(j.widx))
	if w.Len() == 0 {
		delete(c.writers, k)
	}
	if !started {
		c.wakeShared(k)
	}
}
