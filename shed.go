package fairsched

import "github.com/fairsched/fairsched/policy"

// ReasonShed: a pending job was shed for a newcomer of a key under its
// fair share while the queue held WithMaxPending jobs (WithShedding). Its
// caller gets a *RefusalError matching ErrOverloaded.
const ReasonShed = policy.ReasonShed

// ShedOption configures WithShedding.
type ShedOption func(*policy.ShedConfig)

// ShedDurable lets WithShedding shed durable jobs: a shed durable job leaves
// the queue and its record ends dead with the shed error (DeadJobs lists
// it; RequeueDead and DeleteDead act on it). Without it only in-memory
// jobs are shed, and a durable one is never dropped for another.
func ShedDurable() ShedOption {
	return func(c *policy.ShedConfig) { c.Durable = true }
}

// WithShedding makes a full queue (WithMaxPending) fair: a submission that
// finds it full is accepted when its fairness key claims less than the key
// furthest over its fair share, and that key's newest pending job is shed
// instead. The shed job's caller gets a *RefusalError matching
// ErrOverloaded with reason shed (a RunSync returns it, a Submit's
// completion and a durable job's record end with it), and a JobRefused
// event with that reason is reported. A key at or over its share is
// refused as without shedding (reason pool_overloaded).
//
// A key's claim is its accumulated cost — the weighted service it has
// received, the measure fair dispatch orders keys by — plus the weighted
// cost estimates (Tokens, else the learned cost) of its pending jobs: the
// virtual time by which its queued work would be served. The newcomer's
// claim counts its own job. Finding the key with the largest claim and
// its newest job costs O(log keys) per submission, admission and removal;
// nothing scans the keys or the queue.
//
// Jobs already retried and coalesced runs are never shed, nor are durable
// jobs unless ShedDurable. The per-key bound (TenantLimits.MaxPending) and
// the load signal's refusals are not affected. WithShedding without
// WithMaxPending is ErrInvalidConfig.
func WithShedding(opts ...ShedOption) Option {
	return optionFunc(func(o *options) {
		c := &policy.ShedConfig{}
		for _, opt := range opts {
			if opt != nil {
				opt(c)
			}
		}
		o.limits.Shed = c
	})
}
