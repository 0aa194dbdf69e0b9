package core

import (
	"maps"

	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/queue"
)

// Aging rises. Every rise of every waiting job's effective priority is
// counted exactly, with no timer and no event per job: a job's rises over
// one stay in the queue are the aging steps between how long it had waited
// when it entered (riseFrom) and how long it has waited now, less those
// that leave it at or below an inherited floor (policy.AgingConfig.Rises).
// They are added to the job's type when the job leaves the queue —
// admitted, withdrawn, expired, denied: O(1) — and the jobs still waiting
// are summed when a snapshot asks (AgingRises), which is O(n) and is never
// on the dispatch path. Each job's count only grows while it waits (a
// paused group's clock stands still) and is fixed when it leaves, so the
// total never decreases: a Prometheus counter.

// rises returns pending job j's rises since it entered the queue, at the
// time the queue was last set to.
func (c *Core) rises(j *Job) uint64 {
	a := c.limits.Aging
	if a == nil {
		return 0
	}
	return a.Rises(j.Priority, j.Floor, j.Floored, j.riseFrom, c.queue.Waited(&j.q))
}

// leaves adds the rises of pending job j, which leaves the queue now.
func (c *Core) leaves(j *Job) {
	if n := c.rises(j); n > 0 {
		if c.risen == nil {
			c.risen = map[policy.JobType]uint64{}
		}
		c.risen[j.Type] += n
	}
}

// AgingRises returns, by type, how many times waiting jobs' effective
// priorities have risen by aging since the start — every job's every rise,
// the jobs still waiting included (up to the time last given) — and nil
// without aging or before any rise. O(n) in pending jobs.
func (c *Core) AgingRises() map[policy.JobType]uint64 {
	if c.limits.Aging == nil {
		return nil
	}
	out := maps.Clone(c.risen)
	c.queue.Each(func(qj *queue.Job) {
		j := qj.Ref.(*Job)
		if n := c.rises(j); n > 0 {
			if out == nil {
				out = map[policy.JobType]uint64{}
			}
			out[j.Type] += n
		}
	})
	return out
}
