package core

import (
	"container/heap"
	"time"

	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/queue"
)

// EstimateBound is how many pending jobs an estimate plays forward: a job
// with more ahead of it in fair order gets a lower bound (Bounded).
const EstimateBound = 1000

// StartEstimate is when a pending job is expected to start.
//
// It plays dispatch forward from now: the running jobs end at their start
// plus their learned cost, and the jobs ahead in fair order — effective
// priority (or score), then the key's accumulated cost, which each job
// played forward charges as admission would, then arrival — take the
// slots of the global cap as they free, each for its learned cost. A job
// held by its own state (deferred, backoff, paused group) or by a conflict
// takes no slot ahead of others; a conflict holds its job until the
// running holder is expected to end. The type and tier caps are played
// alike (a job takes a slot of each cap it counts against); the key,
// group, rate and worker rules are not: with them the estimate is early.
// Without any cap a job is estimated to start now, unless a conflict holds
// it.
type StartEstimate struct {
	// At is the estimated start; never before the estimate was made.
	At time.Time `json:"at"`
	// Ahead counts the jobs played forward before this one that took a
	// slot.
	Ahead int `json:"ahead"`
	// Bounded: more than EstimateBound jobs are ahead, At is a lower
	// bound.
	Bounded bool `json:"bounded,omitempty"`
}

// EstimateStart estimates when pending job j starts. It costs O(lanes +
// EstimateBound·log lanes) and changes nothing; it reports false when j is
// not pending.
func (c *Core) EstimateStart(now time.Time, j *Job) (StartEstimate, bool) {
	if !j.Job.Queued() {
		return StartEstimate{}, false
	}
	est, found := StartEstimate{}, false
	c.playForward(now, EstimateBound+1, func(p *forward, x *Job, _ queue.Rank) bool {
		e := p.place(x)
		if x == j {
			est, found = e, true
			return false
		}
		est = e
		return true
	})
	if !found { // beyond the bound: no earlier than the last job played
		est.Bounded, est.Ahead = true, est.Ahead+1
	}
	return est, true
}

// playForward visits at most limit pending jobs in the order dispatch
// would admit them, each with its rank, until visit returns false; visit
// places each job it passes (forward.place) to learn its estimated start.
// O(lanes + limit·log lanes + running).
func (c *Core) playForward(now time.Time, limit int, visit func(*forward, *Job, queue.Rank) bool) *forward {
	c.queue.At(now)
	p := &forward{c: c, now: now, charged: map[string]time.Duration{}}
	p.slots = c.slotsFree(now)
	rank := func(qj *queue.Job) queue.Rank {
		j := jobOf(qj)
		prio, scored := c.queue.Score(qj, j.Priority())
		if !scored {
			prio = float64(c.queue.Effective(qj, j.Priority()))
		}
		return queue.Rank{Prio: prio, Cost: c.queue.KeyCost(qj) + p.charged[j.Key], Seq: j.Seq}
	}
	c.queue.Walk(limit, rank, func(qj *queue.Job) bool { return visit(p, jobOf(qj), rank(qj)) })
	return p
}

// forward is the state of one playForward: the times the slots free and
// what the jobs played so far charged their keys.
type forward struct {
	c       *Core
	now     time.Time
	slots   *timeQueue // nil without a global cap
	charged map[string]time.Duration
	ahead   int
	holders map[policy.ConflictKey]time.Time // built on first use
	// caps are the slots of the type and tier caps, built on first use.
	caps map[capScope]*timeQueue
}

// capScope is a type's cap (tier false) or a tier's.
type capScope struct {
	tier bool
	p    policy.Priority
	t    policy.JobType
}

// place estimates j's start and, unless j is held on its own, gives it the
// first slot to free.
func (p *forward) place(j *Job) StartEstimate {
	c := p.c
	at := p.now
	if r := j.Rare; r != nil && r.NotBefore.After(at) {
		at = r.NotBefore
	}
	held := j.Job.Queued() && (j.Job.Deferred() || j.Job.Group.Paused())
	if c.conflictBlocks(j) {
		held = true
		if end, ok := p.holderEnd(j); ok && end.After(at) {
			at = end
		}
	}
	if held {
		return StartEstimate{At: at, Ahead: p.ahead}
	}
	cost := c.costOf(j)
	qs := p.capsOf(j)
	for _, q := range qs {
		if free := (*q)[0]; free.After(at) {
			at = free
		}
	}
	for _, q := range qs {
		heap.Pop(q)
		heap.Push(q, at.Add(cost))
	}
	p.charged[j.Key] += policy.Weighted(cost, c.keyWeight(j.Key))
	e := StartEstimate{At: at, Ahead: p.ahead}
	p.ahead++
	return e
}

// capsOf returns the slot queues j needs one of: the global cap's, its
// type's and its tier's, those that have a cap.
func (p *forward) capsOf(j *Job) []*timeQueue {
	qs := make([]*timeQueue, 0, 3)
	if p.slots != nil {
		qs = append(qs, p.slots)
	}
	if n := j.slot.Config.MaxConcurrency; n > 0 && p.c.binds(n) {
		qs = append(qs, p.capQueue(capScope{t: j.Type}, n, func(r *Job) bool { return r.Type == j.Type }))
	}
	if n, ok := p.c.usage.TierCap(j.Priority()); ok && p.c.binds(n) {
		tier := j.Priority()
		qs = append(qs, p.capQueue(capScope{tier: true, p: tier}, n, func(r *Job) bool { return r.Priority() == tier }))
	}
	return qs
}

// capQueue returns the slots of scope, n of them, when each frees: the
// running jobs in it end at their expected end.
func (p *forward) capQueue(scope capScope, n int, in func(*Job) bool) *timeQueue {
	if q := p.caps[scope]; q != nil {
		return q
	}
	if p.caps == nil {
		p.caps = map[capScope]*timeQueue{}
	}
	q := p.c.slotQueue(p.now, n, in)
	p.caps[scope] = q
	return q
}

// holderEnd is when the running jobs on j's conflict key are expected to
// end, the latest of them.
func (p *forward) holderEnd(j *Job) (time.Time, bool) {
	if p.holders == nil {
		p.holders = map[policy.ConflictKey]time.Time{}
		for _, r := range p.c.running {
			if k, ok := r.slot.Config.Conflicts(r.ID); ok {
				if end := expectedEnd(p.now, r); end.After(p.holders[k]) {
					p.holders[k] = end
				}
			}
		}
	}
	k, _ := j.slot.Config.Conflicts(j.ID)
	end, ok := p.holders[k]
	return end, ok
}

// costOf is what j is expected to run for: its Tokens, else its learned
// cost, else its type's default.
func (c *Core) costOf(j *Job) time.Duration {
	if t := j.Tokens(); t > 0 {
		return t
	}
	return c.estimates.Peek(estimateKey(j), j.slot.Config.DefaultCost)
}

// expectedEnd is when running job r is expected to end: its start plus its
// learned cost, or now when that has passed.
func expectedEnd(now time.Time, r *Job) time.Time {
	end := r.Started.Add(r.estimate)
	if end.Before(now) {
		return now
	}
	return end
}

// slotsFree returns when each slot of the global cap frees, the earliest
// first; nil without a cap. With more jobs running than the cap (it was
// lowered), the first to end free no slot.
func (c *Core) slotsFree(now time.Time) *timeQueue {
	n := c.limits.MaxConcurrency
	if n <= 0 || !c.binds(n) {
		return nil
	}
	return c.slotQueue(now, n, func(*Job) bool { return true })
}

// binds reports whether a cap of n may hold a job of a play: not when
// every running job and every job played fit under it.
func (c *Core) binds(n int) bool { return n <= len(c.running)+EstimateBound }

// slotQueue returns when each of n slots frees, the running jobs in them
// (in) ending at their expected end; with more of those running than n,
// the first to end free no slot. O(running).
func (c *Core) slotQueue(now time.Time, n int, in func(*Job) bool) *timeQueue {
	q := make(timeQueue, 0, n)
	for _, r := range c.running {
		if in(r) {
			q = append(q, expectedEnd(now, r))
		}
	}
	for len(q) < n {
		q = append(q, now)
	}
	heap.Init(&q)
	for len(q) > n {
		heap.Pop(&q)
	}
	return &q
}

// timeQueue is a min-heap of times.
type timeQueue []time.Time

func (q timeQueue) Len() int           { return len(q) }
func (q timeQueue) Less(i, j int) bool { return q[i].Before(q[j]) }
func (q timeQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *timeQueue) Push(x any)        { *q = append(*q, x.(time.Time)) }
func (q *timeQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// startsOf estimates the starts of the first n jobs in the order dispatch
// plays them: O(lanes + n·log lanes + running).
func (c *Core) startsOf(now time.Time, n int) map[*Job]StartEstimate {
	out := make(map[*Job]StartEstimate, n)
	c.playForward(now, n, func(p *forward, j *Job, _ queue.Rank) bool {
		out[j] = p.place(j)
		return true
	})
	return out
}
