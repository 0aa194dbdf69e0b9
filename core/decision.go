package core

import (
	"time"

	"github.com/fairsched/fairsched/policy"
)

// Decision records. With SetDecisionLog on, the core records each
// scheduling decision about a job, in the shape of an audit record,
// for its owner to log (TakeDecisions):
//
//   - admit: Dispatch admitted the job;
//   - defer: the job waits — the admission policy deferred it (deferred,
//     with the delay), a failed attempt waits out its backoff (backoff, with
//     the delay), or the job starts to wait on tenant_limit, rate_limited
//     (with the time until its bucket refills), no_workers, worker_busy or
//     overloaded (the load signal holds every admission: the queue's head);
//   - refuse: Submit refused it (tenant_limit, pool_overloaded,
//     overloaded);
//   - deny: it left the queue unrun — the admission policy denied it
//     (denied) or its time to live ran out (expired); the owner records a
//     superseded job with Record.
//
// A job gets one defer record when it starts to wait on a reason, not one
// per dispatch pass: Dispatch records it where it holds the job's lane or
// blocks its bucket's scope, which it does once per wait (the job is not
// seen again until the blocker wakes it), and the job remembers the reason
// it last recorded, so a second hold for the same reason records nothing.
// A worker type without a free slot is out of dispatch altogether, so its
// jobs are recorded when they are submitted and find no free slot (a job
// that waits for a slot after a retry's backoff, or that waited on another
// rule while the slots filled, gets none). Each record is O(1).

// DecisionKind is what a decision record decided.
type DecisionKind string

// The decisions.
const (
	DecisionAdmit  DecisionKind = "admit"
	DecisionDefer  DecisionKind = "defer"
	DecisionRefuse DecisionKind = "refuse"
	DecisionDeny   DecisionKind = "deny"
)

// Reason codes of deny records (the others are policy.Reason values).
const (
	CodeDenied     = "denied"     // the admission policy denied the job
	CodeExpired    = "expired"    // its time to live ran out while pending
	CodeSuperseded = "superseded" // a newer submission replaced it
	CodeCancelled  = "cancelled"  // Cancel removed it
)

// Decision is one decision record: tenant, tier, queue depth, in flight, decision, reason, delay, attempt, and the job and time.
type Decision struct {
	Time time.Time
	Job  *Job
	// Tenant is the job's fairness key, Tier its base priority.
	Tenant string
	Tier   policy.Priority
	// QueueDepth and Inflight are the pending and running jobs at the
	// decision (after it, for an admission: the job counts as running).
	QueueDepth, Inflight int
	Decision             DecisionKind
	// ReasonCode says why ("" for an admission): a policy.Reason, or one
	// of the Code constants.
	ReasonCode string
	// RetryDelay, when positive, is how long the job waits before it is
	// considered again: a deferral's delay, a backoff, a bucket's refill.
	RetryDelay time.Duration
	// Attempt counts the admission policy's deferrals of the job so far
	// (policy.JobInfo.Attempt).
	Attempt int
}

// SetDecisionLog turns decision records on or off (off by default, so a
// core driven without an owner that takes them keeps none).
func (c *Core) SetDecisionLog(on bool) { c.logDecisions = on }

// Record adds a decision the owner made about j, such as a supersession.
func (c *Core) Record(now time.Time, j *Job, kind DecisionKind, code string) {
	c.record(now, j, kind, code, 0)
}

// TakeDecisions returns the decision records since the last call, in the
// order they were made. The slice is reused: use it before the next call
// into the core.
func (c *Core) TakeDecisions() []Decision {
	out := c.decisions
	c.decisions = c.decisions[:0]
	return out
}

func (c *Core) record(now time.Time, j *Job, kind DecisionKind, code string, delay time.Duration) {
	if !c.logDecisions {
		return
	}
	c.decisions = append(c.decisions, Decision{Time: now, Job: j, Tenant: j.Key, Tier: j.Priority(),
		QueueDepth: c.queue.Len(), Inflight: len(c.running), Decision: kind, ReasonCode: code,
		RetryDelay: max(delay, 0), Attempt: int(j.Deferrals())})
}

// startsWaiting records that pending job j starts to wait on reason r,
// unless r is the reason it last started to wait on.
func (c *Core) startsWaiting(now time.Time, j *Job, r policy.Reason, delay time.Duration) {
	c.noteWait(now, j, r)
	if j.waiting() == r {
		return
	}
	j.setWaiting(r)
	c.record(now, j, DecisionDefer, string(r), delay)
}

// arrives records a job of a worker type that arrives with no free slot
// for it: dispatch will not see it until one frees.
func (c *Core) arrives(now time.Time, j *Job) {
	if c.logDecisions && j.slot.Config.RequiresWorker {
		if r := c.workerReason(j.slot); r != "" {
			c.startsWaiting(now, j, r, 0)
		}
	}
}
