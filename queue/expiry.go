package queue

import "time"

// Expiry. A pending job may have a deadline: it waits in one heap by
// deadline whatever else holds it (its lane, a conflict, a deferral), and
// the caller takes the due ones out (TakeExpired). The heap's top is one
// more wake-up time for the caller's one timer (NextWake).

// expiringJob is a Job as an element of the expiry heap.
type expiringJob Job

func (j *expiringJob) before(o *expiringJob) bool {
	if j.deadline != o.deadline {
		return j.deadline < o.deadline
	}
	return j.Seq < o.Seq
}
func (j *expiringJob) setIndex(i int) { j.eidx = i }

// expireAt gives the just-pushed job j its deadline.
func (q *Queue) expireAt(j *Job) {
	j.eidx = -1
	if j.Deadline.IsZero() {
		return
	}
	j.deadline = j.Deadline.UnixNano()
	q.expiring.push((*expiringJob)(j))
}

// TakeExpired calls fn, in deadline order, for every pending job whose
// deadline is at or before now; fn must remove the job (Remove).
func (q *Queue) TakeExpired(now time.Time, fn func(*Job)) {
	for t := now.UnixNano(); len(q.expiring) > 0 && q.expiring[0].deadline <= t; {
		j := (*Job)(q.expiring.remove(0))
		fn(j)
	}
}
