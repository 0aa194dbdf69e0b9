package core

import (
	"maps"
	"time"

	"github.com/fairsched/fairsched/internal/shrink"
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
// table (agingTable), so a snapshot's cost stays bounded at a million
// pending jobs. With no more pending jobs than that, the total is exact at
// the time given; with more, it lags by the rises of jobs the sweep has not
// reached yet and catches up within ⌈pending / agingSweep⌉ snapshots (one
// more for a job moved behind the sweep into a leaving job's place). Either way it never
// decreases and never counts a rise twice: a Prometheus counter.

// agingSweep bounds the pending jobs one AgingRises call brings up to
// date (about 20 ms of owner time on this project's 2-core machine).
var agingSweep = 1 << 16

// agingTable holds, with aging on, what the rises sweep keeps of each
// pending job, apart from the job (which keeps only its position, ageIdx):
// a pending job is most of the scheduler's memory, and without aging none
// of it is needed. Joining appends, leaving moves the last entry into the
// hole: O(1) both, and the sweep walks the slice.
type agingTable struct {
	recs  []ageRec
	sweep int // where the next sweep starts
}

// ageRec is one pending job's entry in the aging table.
type ageRec struct {
	job *Job
	// riseFrom is how long the job had waited, for aging, when it last
	// entered the queue: its rises count from there (see agingRises).
	riseFrom time.Duration
	// counted are the job's rises already in Core.risen.
	counted uint64
}

// rises returns pending job j's rises since it entered the queue, at the
// time the queue was last set to.
func (c *Core) rises(j *Job) uint64 {
	a := c.limits.Aging
	if a == nil {
		return 0
	}
	return a.Rises(j.Priority(), j.Floor, j.Floored, c.aging.recs[j.ageIdx].riseFrom, c.queue.Waited(&j.Job))
}

// enters lists job j, which has just entered the queue having waited from
// (for aging) already, for the sweep.
func (c *Core) enters(j *Job, from time.Duration) {
	if c.limits.Aging == nil {
		return
	}
	j.ageIdx = int32(len(c.aging.recs))
	c.aging.recs = append(c.aging.recs, ageRec{job: j, riseFrom: from})
}

// leaves counts the rises of pending job j, which leaves the queue now.
func (c *Core) leaves(j *Job) {
	if c.limits.Aging == nil {
		return
	}
	c.catchUp(j)
	t := &c.aging
	i, last := int(j.ageIdx), len(t.recs)-1
	if i != last {
		t.recs[i] = t.recs[last]
		t.recs[i].job.ageIdx = int32(i)
	}
	t.recs[last] = ageRec{}
	t.recs = t.recs[:last]
	t.recs = shrink.Slice(t.recs) // a burst's table is not kept for good
}

// catchUp adds pending job j's rises not counted yet.
func (c *Core) catchUp(j *Job) {
	n := c.rises(j)
	r := &c.aging.recs[j.ageIdx]
	if n <= r.counted {
		return
	}
	if c.risen == nil {
		c.risen = map[policy.JobType]uint64{}
	}
	c.risen[j.Type] += n - r.counted
	r.counted = n
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
	t := &c.aging
	for range min(agingSweep, len(t.recs)) {
		if t.sweep >= len(t.recs) {
			t.sweep = 0
		}
		c.catchUp(t.recs[t.sweep].job)
		t.sweep++
	}
	return maps.Clone(c.risen)
}
