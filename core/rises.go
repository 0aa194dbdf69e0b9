package core

import (
	"maps"

	"github.com/fairsched/fairsched/policy"
)

// Aging rises. Every rise of every waiting job's effective priority is
// counted, with no timer and no event per job: a job's rises over one stay
// in the queue are the aging steps between how long it had waited when it
// entered (riseFrom) and how long it has waited now, less those that leave
// it at or below an inherited floor (policy.AgingConfig.Rises).
//
// risen holds, by type, the rises counted so far. A job's rises only grow
// while it waits (a paused group's clock stands still), so counting is
// catching up: when a job leaves the queue — admitted, withdrawn, expired,
// denied — its rises not yet counted are added, O(1). The jobs still
// waiting are caught up by a sweep that AgingRises runs over at most
// agingSweep of them per call, round robin over the pending jobs in a
// list, so a snapshot's cost stays bounded at a million pending jobs. With
// no more pending jobs than that, the total is exact at the time given;
// with more, it lags by the rises of jobs the sweep has not reached yet and
// catches up within ⌈pending / agingSweep⌉ snapshots. Either way it never
// decreases and never counts a rise twice: a Prometheus counter.

// agingSweep bounds the pending jobs one AgingRises call brings up to
// date (about 20 ms of owner time on this project's 2-core machine).
var agingSweep = 1 << 16

// agingList is a doubly linked list of pending jobs, through
// Job.agePrev/ageNext: O(1) to join and to leave.
type agingList struct {
	head, tail *Job
	n          int
}

func (l *agingList) push(j *Job) {
	j.agePrev, j.ageNext = l.tail, nil
	if l.tail != nil {
		l.tail.ageNext = j
	} else {
		l.head = j
	}
	l.tail = j
	l.n++
}

func (l *agingList) remove(j *Job) {
	if j.agePrev != nil {
		j.agePrev.ageNext = j.ageNext
	} else {
		l.head = j.ageNext
	}
	if j.ageNext != nil {
		j.ageNext.agePrev = j.agePrev
	} else {
		l.tail = j.agePrev
	}
	j.agePrev, j.ageNext = nil, nil
	l.n--
}

// rises returns pending job j's rises since it entered the queue, at the
// time the queue was last set to.
func (c *Core) rises(j *Job) uint64 {
	a := c.limits.Aging
	if a == nil {
		return 0
	}
	return a.Rises(j.Priority, j.Floor, j.Floored, j.riseFrom, c.queue.Waited(&j.Job))
}

// enters lists job j, which has just entered the queue, for the sweep.
func (c *Core) enters(j *Job) {
	if c.limits.Aging == nil {
		return
	}
	j.counted = 0
	c.aging.push(j)
}

// leaves counts the rises of pending job j, which leaves the queue now.
func (c *Core) leaves(j *Job) {
	if c.limits.Aging == nil {
		return
	}
	c.catchUp(j)
	if c.sweep == j {
		c.sweep = j.ageNext
	}
	c.aging.remove(j)
}

// catchUp adds pending job j's rises not counted yet.
func (c *Core) catchUp(j *Job) {
	n := c.rises(j)
	if n <= j.counted {
		return
	}
	if c.risen == nil {
		c.risen = map[policy.JobType]uint64{}
	}
	c.risen[j.Type] += n - j.counted
	j.counted = n
}

// AgingRises returns, by type, how many times waiting jobs' effective
// priorities have risen by aging since the start — every job's every rise,
// those of the jobs still waiting as far as the sweep has reached (see
// above) — and nil without aging or before any rise. It brings at most
// agingSweep pending jobs up to date.
func (c *Core) AgingRises() map[policy.JobType]uint64 {
	if c.limits.Aging == nil {
		return nil
	}
	j := c.sweep
	for range min(agingSweep, c.aging.n) {
		if j == nil {
			j = c.aging.head
		}
		c.catchUp(j)
		j = j.ageNext
	}
	c.sweep = j
	return maps.Clone(c.risen)
}
