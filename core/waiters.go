package core

import (
	"time"

	"github.com/fairsched/fairsched/queue"
)

// Watched deadlines. Something that waits on a pending job with a time to
// live of its own — a RunSync caller that joined a coalesced run — is not
// a pending job, but its time to live follows the same rule: it stands
// still while the job's group is paused. Its deadline waits in the group's
// expiry heap with the jobs' (queue.Watch): one timer, no work per waiter
// on a pause or a resume.

// Watch starts w's time to live ttl at now: w waits on pending job on (of
// its group) and is handed out by TakeExpiredWaiters once ttl of time the
// group was not paused has passed, unless Unwatch comes first. w itself is
// never submitted: only its deadline is kept.
func (c *Core) Watch(now time.Time, w, on *Job, ttl time.Duration) {
	c.queue.Unwatch(&w.Job)
	c.queue.At(now) // first: the queue's epoch is a time of the clock
	w.Job = queue.Job{Type: w.Type, ID: w.ID, Key: w.Key, Seq: on.Seq, Submitted: c.queue.Nanos(now), Group: on.Job.Group, Deadline: c.queue.DeadlineAt(now.Add(ttl))}
	c.queue.Watch(&w.Job)
}

// Extend lets pending job j wait until now + ttl (ttl ≤ 0: its type's
// QueueTimeout, and none if that is 0) if that is later than its deadline:
// a coalesced run waits as long as the request that allows the longest
// wait.
func (c *Core) Extend(now time.Time, j *Job, ttl time.Duration) {
	if ttl <= 0 {
		ttl = j.slot.Config.QueueTimeout
	}
	c.queue.At(now)
	until := time.Time{}
	if ttl > 0 {
		until = now.Add(ttl)
	}
	c.queue.Extend(&j.Job, until)
}

// Unwatch drops w's deadline (Watch), if it is kept; any other job that is
// not pending is left alone.
func (c *Core) Unwatch(w *Job) { c.queue.Unwatch(&w.Job) }

// TakeExpiredWaiters returns the watched jobs whose deadline came since the
// last call; their deadlines are dropped. The slice is reused: use it
// before the next call into the core.
func (c *Core) TakeExpiredWaiters() []*Job {
	out := c.expiredWaiters
	c.expiredWaiters = c.expiredWaiters[:0]
	return out
}

// expireWatched keeps qj, whose deadline came (TakeExpired took it off its
// heap), for TakeExpiredWaiters if it is a watched job; it reports false
// for a pending job.
func (c *Core) expireWatched(qj *queue.Job) bool {
	if qj.Queued() {
		return false
	}
	c.expiredWaiters = append(c.expiredWaiters, jobOf(qj))
	return true
}
