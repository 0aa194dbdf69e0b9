package core

import (
	"fmt"
	"time"

	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/queue"
)

// StartBy is the deadline of the job's caller, zero for none: with its
// type's DeadlineAdmission, Submit refuses the job when its estimated
// start is after it.
func (j *Job) StartBy() time.Time { return j.rare().startBy }

// SetStartBy sets StartBy, before Submit.
func (j *Job) SetStartBy(t time.Time) {
	if j.Rare != nil || !t.IsZero() {
		j.more().startBy = t
	}
}

// lateStart refuses j, about to be submitted, when its type asks for
// deadline-aware admission and its estimated start is after StartBy: a
// *policy.LateStartError. It costs what EstimateStart does.
func (c *Core) lateStart(now time.Time, j *Job) error {
	by := j.StartBy()
	if by.IsZero() || !j.slot.Config.DeadlineAdmission {
		return nil
	}
	est := c.estimateArrival(now, j)
	if !est.At.After(by) {
		return nil
	}
	return &policy.LateStartError{Type: j.Type, ID: j.ID, Key: j.Key, Estimate: est.At, Deadline: by, Ahead: est.Ahead}
}

// estimateArrival estimates the start of j were it submitted now: it plays
// forward the pending jobs that rank before it — its rank is its base
// priority (or its floor, or its score) and the cost its key would have
// on joining, charged like the others' as the play goes — and places it.
func (c *Core) estimateArrival(now time.Time, j *Job) StartEstimate {
	c.queue.At(now)
	prio := float64(max(j.Priority(), j.floor()))
	probe := queue.Job{Type: j.Type, Key: j.Key, Floor: j.Floor, Floored: j.Floored, OnDemand: j.OnDemand, Submitted: c.queue.Nanos(now)}
	if s, scored := c.queue.Score(&probe, j.Priority()); scored {
		prio = s
	}
	joining := c.ledger.Joining(j.Key)
	var est StartEstimate
	placed := false
	p := c.playForward(now, EstimateBound, func(p *forward, x *Job, r queue.Rank) bool {
		own := queue.Rank{Prio: prio, Cost: joining + p.charged[j.Key], Seq: c.seq + 1}
		if own.Before(r) {
			est, placed = p.place(j), true
			return false
		}
		p.place(x)
		return true
	})
	if !placed {
		est = p.place(j)
		est.Bounded = p.ahead >= EstimateBound
	}
	return est
}

// floor is the priority j inherited, 0 without.
func (j *Job) floor() policy.Priority {
	if j.Floored {
		return j.Floor
	}
	return 0
}

// CheckStart is deadline-aware admission asked ahead of a submission made
// elsewhere (cluster mode: a RunSync on another instance): j, not
// submitted, is refused with a *policy.LateStartError when its type asks
// for it and its estimated start were it submitted now is after its
// StartBy. It changes nothing; ErrUnknownJobType for a type never
// registered.
func (c *Core) CheckStart(now time.Time, j *Job) error {
	slot, ok := c.usage.Lookup(j.Type)
	if !ok {
		return fmt.Errorf("%w: %q", policy.ErrUnknownJobType, j.Type)
	}
	j.slot = slot
	defer func() { j.slot = nil }()
	return c.lateStart(now, j)
}
