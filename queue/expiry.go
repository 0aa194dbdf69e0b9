package queue

import (
	"math"
	"time"

	"github.com/fairsched/fairsched/policy"
)

// Expiry. A pending job may have a deadline: it is removed if still pending
// then (TakeExpired). Its group's pauses do not count against it: like its
// aging clock, a job's deadline stands still while its group is paused, and
// moves back by the length of each pause after the job's arrival.
//
// Within a group every job's deadline moves by the same pauses, so the
// group's jobs keep one order: each waits in its group's heap by its
// deadline less the group's paused time at its arrival (ekey), and its
// effective deadline is ekey plus the group's paused time now. The ekey is
// worked out from the two, not kept: 8 B less in every pending job. The groups
// that are not paused wait in one heap by their first job's effective
// deadline; a pause takes the group out of it and a resume puts it back, so
// neither touches a job. The heap's top is one more wake-up time for the
// caller's one timer (NextWake).

// expiringJob is a Job as an element of its group's expiry heap.
type expiringJob Job

func (j *expiringJob) before(o *expiringJob) bool {
	if a, b := (*Job)(j).ekey(), (*Job)(o).ekey(); a != b {
		return a < b
	}
	return j.Seq < o.Seq
}
func (j *expiringJob) setIndex(i int) { j.eidx = int32(i) }

// expiringGroup is a Group as an element of the queue's expiry heap.
type expiringGroup Group

func (g *expiringGroup) before(o *expiringGroup) bool {
	a, b := (*Group)(g).firstDeadline(), (*Group)(o).firstDeadline()
	if a != b {
		return a < b
	}
	return g.expiring[0].Seq < o.expiring[0].Seq
}
func (g *expiringGroup) setIndex(i int) { g.eidx = i }

// firstDeadline returns the effective deadline of g's first expiring job
// (Queue.Nanos); g has one.
func (g *Group) firstDeadline() int64 {
	return satAdd((*Job)(g.expiring[0]).ekey(), int64(g.pausedTotal))
}

// ekey is j's deadline less its group's paused time at its arrival: its
// order in its group's expiry heap, which the group's pauses do not change.
func (j *Job) ekey() int64 { return satAdd(j.Deadline, -int64(j.pauseBase)) }

// expiryGroup returns the group whose pauses j's deadline follows: its
// group, or the queue's stand-in for jobs without one.
func (q *Queue) expiryGroup(j *Job) *Group {
	if j.Group != nil {
		return j.Group
	}
	if q.ungrouped == nil {
		q.ungrouped = &Group{eidx: -1}
	}
	return q.ungrouped
}

// expireAt gives the just-pushed job j its deadline.
func (q *Queue) expireAt(j *Job) {
	j.eidx = -1
	if j.Deadline == 0 {
		return
	}
	g := q.expiryGroup(j)
	g.expiring.push((*expiringJob)(j))
	q.regroup(g)
}

// unexpire takes pending job j, which leaves the queue, off its group's
// expiry heap.
func (q *Queue) unexpire(j *Job) {
	if j.eidx < 0 {
		return
	}
	g := q.expiryGroup(j)
	g.expiring.remove(int(j.eidx))
	q.regroup(g)
}

// regroup puts group g where it belongs in the expiry heap after its first
// job or its pauses changed: out of it while paused or without expiring
// jobs.
func (q *Queue) regroup(g *Group) {
	in := len(g.expiring) > 0 && !g.paused
	switch {
	case in && g.eidx < 0:
		q.expiring.push((*expiringGroup)(g))
	case in:
		q.expiring.fix(g.eidx)
	case g.eidx >= 0:
		q.expiring.remove(g.eidx)
	}
}

// deadlineOf returns pending job j's effective deadline (Queue.Nanos), the
// largest int64 while its group is paused; 0 when it has none.
func (q *Queue) deadlineOf(j *Job) int64 {
	if j.eidx < 0 {
		return 0
	}
	g := q.expiryGroup(j)
	if g.paused {
		return math.MaxInt64
	}
	return satAdd(j.ekey(), int64(g.pausedTotal))
}

// Deadline returns when pending job j expires at the time set by At, its
// group's pauses so far taken into account; false when it has no deadline
// or its group is paused (it cannot expire until resumed).
func (q *Queue) Deadline(j *Job) (time.Time, bool) {
	d := q.deadlineOf(j)
	if d == 0 || d == math.MaxInt64 {
		return time.Time{}, false
	}
	return q.TimeOf(d), true
}

// nextDeadline returns the earliest effective deadline of a pending job
// whose group is not paused (Queue.Nanos), and whether there is one.
func (q *Queue) nextDeadline() (int64, bool) {
	if len(q.expiring) == 0 {
		return 0, false
	}
	return (*Group)(q.expiring[0]).firstDeadline(), true
}

// TakeExpired calls fn, in deadline order, for every pending job whose
// deadline is at or before now, and every watched one (Watch): it is off
// its expiry heap already; fn must remove a pending job (Remove). A
// watched job is the one whose Queued is false.
func (q *Queue) TakeExpired(now time.Time, fn func(*Job)) {
	for t := q.Nanos(now); ; {
		d, ok := q.nextDeadline()
		if !ok || d > t {
			return
		}
		g := (*Group)(q.expiring[0])
		j := (*Job)(g.expiring[0])
		q.unexpire(j)
		fn(j)
	}
}

// Extend moves pending job j's deadline to until if that is later, as if
// until had been its deadline from the time set by At on: its group's
// pauses after now move it back, those before do not. A zero until means
// never: j loses its deadline. It reports whether the deadline moved.
func (q *Queue) Extend(j *Job, until time.Time) bool {
	if j.where == placeNone || j.eidx < 0 {
		return false // not pending, or no deadline: nothing to extend
	}
	if until.IsZero() {
		q.unexpire(j)
		j.eidx, j.Deadline = -1, 0
		return true
	}
	g := q.expiryGroup(j)
	key := satAdd(q.Nanos(until), -int64(q.pausedNow(j.Group)))
	if key <= j.ekey() {
		return false
	}
	// Stored as a deadline from the job's arrival: the pauses since then
	// are taken off, as those to come will be added.
	j.Deadline = satAdd(key, int64(j.pauseBase))
	if j.Deadline == 0 {
		j.Deadline = 1 // 0 is "none"
	}
	g.expiring.fix(int(j.eidx))
	q.regroup(g)
	return true
}

// satAdd returns a + b (nanoseconds), saturated to the int64 range.
func satAdd(a, b int64) int64 { return int64(policy.AddSat(time.Duration(a), time.Duration(b))) }

// Watch puts a deadline that belongs to no pending job into j's group's
// expiry heap: j (Group, Deadline and Seq set) is not pushed, but
// TakeExpired hands it to fn, off the heap, when its deadline, moved back
// by its group's pauses after now (the time set by At), comes.
// The caller uses it for what waits on a pending job of the group with a
// time to live of its own (a coalesced run's waiters).
func (q *Queue) Watch(j *Job) {
	if j.where != placeNone || j.Deadline == 0 {
		panic("queue: Watch of a queued job or without a deadline")
	}
	j.pauseBase = q.pausedNow(j.Group)
	q.expireAt(j)
}

// Unwatch takes j off its group's expiry heap if Watch put it there; any
// other job that is not queued, a zero one included, is left alone.
func (q *Queue) Unwatch(j *Job) {
	if q.Watched(j) {
		q.unexpire(j)
	}
}

// Watched reports whether j waits in an expiry heap by Watch.
func (q *Queue) Watched(j *Job) bool {
	if j.where != placeNone || j.eidx < 0 {
		return false
	}
	h := q.expiryGroup(j).expiring
	return int(j.eidx) < len(h) && (*Job)(h[j.eidx]) == j
}

// pausedNow returns group g's paused time so far at the time set by At, the
// pause under way included; 0 for no group.
func (q *Queue) pausedNow(g *Group) time.Duration {
	if g == nil {
		return 0
	}
	if g.paused {
		return g.pausedTotal + q.now.Sub(g.pausedAt)
	}
	return g.pausedTotal
}
