package core

import (
	"time"

	"golang.org/x/time/rate"

	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/queue"
)

// Rate limits. Each limited scope — a type, a group, a fairness key — has a
// token bucket (x/time/rate, driven by the times the core is given, never
// the wall clock). A job may start only when every bucket of its scopes
// holds its tokens (see tokensOf: its stated cost in whole seconds, else
// 1; at most the bucket's burst); it takes them from each. A job that
// finds a bucket short
// does not wait alone: its whole scope leaves dispatch — the type's queue is
// switched off, the key's lanes are held, the group has no room — until the
// bucket refills, found with one heap of refill times (the owner's one
// timer). The slots go to other work meanwhile.

// bucket is the state of one limited scope.
type bucket struct {
	scope   policy.RateScope
	lim     *rate.Limiter
	blocked bool
	until   time.Time // while blocked: when to look again
	idx     int       // in Core.refills; -1 when not there
}

// When and SetIndex make a bucket a timeheap.Item: blocked buckets wait by
// refill time.
func (b *bucket) When() time.Time { return b.until }
func (b *bucket) SetIndex(i int)  { b.idx = i }

func (c *Core) initRates() {
	if len(c.limits.RateLimits) == 0 {
		return
	}
	c.buckets = map[policy.RateScope]*bucket{}
	for _, l := range c.limits.RateLimits {
		c.buckets[l.Scope] = &bucket{scope: l.Scope, lim: rate.NewLimiter(rate.Limit(l.PerSecond), l.Burst), idx: -1}
	}
}

// bucketsOf resolves j's buckets at submission: at most one per scope kind.
func (c *Core) bucketsOf(j *Job) {
	if j.Rare != nil {
		j.buckets = j.buckets[:0]
	}
	for _, s := range [...]policy.RateScope{{Kind: policy.RateType, Name: string(j.Type)},
		{Kind: policy.RateGroup, Name: j.Group}, {Kind: policy.RateKey, Name: j.Key}} {
		if b := c.buckets[s]; b != nil {
			r := j.more()
			r.buckets = append(r.buckets, b)
		}
	}
}

// emptyBucket returns a bucket of j's that keeps it from starting at now,
// or nil: one whose scope is out of dispatch (j waits with it and starts no
// other wait), else the first that holds fewer than j's tokens.
func (c *Core) emptyBucket(now time.Time, j *Job) *bucket {
	var short *bucket
	for _, b := range j.bucketList() {
		if b.blocked {
			return b
		}
		if short == nil && b.short(now, j) {
			short = b
		}
	}
	return short
}

// block takes bucket b's scope out of dispatch until it holds the tokens
// of j (qj's job), and holds j's lane if the scope is its key or group.
func (c *Core) block(now time.Time, b *bucket, qj *queue.Job) {
	if !b.blocked {
		wait := b.waitFor(now, tokensOf(jobOf(qj), b))
		b.blocked, b.until = true, now.Add(wait)
		c.refills.Push(b)
		if b.scope.Kind == policy.RateType {
			slot, _ := c.usage.Lookup(policy.JobType(b.scope.Name))
			c.queue.BlockType(slot.Type, true)
		}
	}
	switch b.scope.Kind {
	case policy.RateKey:
		c.queue.HoldForKey(qj)
	case policy.RateGroup:
		c.queue.Hold(qj)
	}
}

// refill returns to dispatch the scopes whose buckets may hold a token at
// now; a bucket still short when looked at is blocked again then.
func (c *Core) refill(now time.Time) {
	for c.refills.Len() > 0 && !c.refills.Top().until.After(now) {
		b := c.refills.Pop()
		b.blocked = false
		switch b.scope.Kind {
		case policy.RateType:
			slot, _ := c.usage.Lookup(policy.JobType(b.scope.Name))
			c.queue.BlockType(slot.Type, c.typeBlocked(slot))
		case policy.RateKey:
			if !c.keyAtLimit(b.scope.Name) {
				c.queue.ReleaseKey(b.scope.Name)
			}
		case policy.RateGroup:
			if g := c.groups[b.scope.Name]; g != nil && c.hasRoom(g.q) {
				c.queue.ReleaseGroup(g.q)
			}
		}
	}
}

// take takes j's tokens from each of its buckets, at its admission.
func (c *Core) take(now time.Time, j *Job) {
	for _, b := range j.bucketList() {
		b.lim.AllowN(now, tokensOf(j, b))
	}
}

// typeBlocked reports whether type slot s is out of dispatch: at its cap,
// no free worker slot takes it, or its rate limit's bucket is empty.
func (c *Core) typeBlocked(s *policy.Slot) bool {
	if s.TypeFull() || s.Config.RequiresWorker && c.pool.Free(s.Type) == 0 {
		return true
	}
	b := c.buckets[policy.RateScope{Kind: policy.RateType, Name: string(s.Type)}]
	return b != nil && b.blocked
}

// rateBlocksGroup reports whether group g's rate limit keeps it from
// starting jobs.
func (c *Core) rateBlocksGroup(g *group) bool {
	if c.buckets == nil {
		return false
	}
	b := c.buckets[policy.RateScope{Kind: policy.RateGroup, Name: g.name}]
	return b != nil && b.blocked
}

// keyAtLimit reports whether fairness key key runs its tenant limit.
func (c *Core) keyAtLimit(key string) bool {
	if c.limits.Tenants == nil {
		return false
	}
	limit := c.limits.Tenants.For(key).MaxRunning
	return limit > 0 && c.keyRunning[key] >= limit
}

// keyRateBlocked reports whether key's rate limit keeps its lanes held.
func (c *Core) keyRateBlocked(key string) bool {
	if c.buckets == nil {
		return false
	}
	b := c.buckets[policy.RateScope{Kind: policy.RateKey, Name: key}]
	return b != nil && b.blocked
}

// bucketList returns j's buckets.
func (j *Job) bucketList() []*bucket { return j.rare().buckets }
