package queue

import (
	"time"
)

// Deferred jobs. The caller's admission policy may defer a job: it leaves
// its lane for a heap ordered by the time it may be asked again, and At
// returns it to its lane then. The heap's top is the only wake-up time the
// caller needs (NextWake): one timer, never one per job.

// deferral is a deferred job as an element of the deferred heap, with the
// time it returns (Queue.Nanos): kept here, not in every Job, as few jobs
// are ever deferred.
type deferral struct {
	until int64
	j     *Job
}

func (d deferral) before(o deferral) bool {
	if d.until != o.until {
		return d.until < o.until
	}
	return d.j.Seq < o.j.Seq
}
func (d deferral) setIndex(i int) { d.j.idx = int32(i) }

// Defer takes j out of dispatch until until.
func (q *Queue) Defer(j *Job, until time.Time) {
	q.leaveLane(j)
	j.lane = nil
	j.where = placeDeferred
	q.deferred.push(deferral{q.Nanos(until), j})
}

// Deferred reports whether j waits out a deferral (or a retry backoff).
func (j *Job) Deferred() bool { return j.where == placeDeferred }

// NextWake returns the earliest time a deferred job returns to dispatch or
// a pending job expires.
func (q *Queue) NextWake() (time.Time, bool) {
	var at int64
	ok := false
	if len(q.deferred) > 0 {
		at, ok = q.deferred[0].until, true
	}
	if d, has := q.nextDeadline(); has && (!ok || d < at) {
		at, ok = d, true
	}
	if !ok {
		return time.Time{}, false
	}
	return q.TimeOf(at), true
}

// wake returns to their lanes the deferred jobs due at t (Nanos).
func (q *Queue) wake(t int64) {
	for len(q.deferred) > 0 && q.deferred[0].until <= t {
		q.woken = true
		j := q.deferred.remove(0).j
		j.backoff = false
		l := q.laneOf(j, q.typeOf(j))
		j.where = placeReturned
		l.returned.push(j)
		q.enter(l)
	}
}

// Backoff returns j, which ran and failed, to the queue to wait out its
// backoff until until, then compete again as a returned job (its arrival
// and aging clock are its first submission's); keyCost is its key's
// accumulated cost now.
func (q *Queue) Backoff(j *Job, until time.Time, keyCost time.Duration) {
	q.count(j, keyCost)
	j.lane = nil
	j.where, j.backoff = placeDeferred, true
	q.deferred.push(deferral{q.Nanos(until), j})
	q.n++
	q.expireAt(j)
}

// InBackoff reports whether j waits out a retry's backoff.
func (j *Job) InBackoff() bool { return j.where == placeDeferred && j.backoff }
