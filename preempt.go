package fairsched

import (
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// ErrPreempted is the cause (context.Cause) of a running job's context
// when a higher tier preempted it (TierConfig.Preempt). A handler that
// returns once its context ends gives its slot back at once, and its job
// is queued again at the head of its lane — the attempt counted neither
// as a failure nor as a retry, a durable job's attempt number unchanged.
// A handler that ignores its context keeps its slot until it returns (and
// a job that then returns nil has succeeded).
var ErrPreempted = policy.ErrPreempted

// PreemptBudget bounds a tier's preemptions (TierConfig.Preempt): at most
// Max in any Window.
//
// Fields, from policy.PreemptBudget:
//
//	Max int
//
//	Window time.Duration
type PreemptBudget = policy.PreemptBudget

// JobPreempted: a running background job was preempted by a higher tier
// (TierConfig.Preempt); its attempt's context is cancelled with cause
// ErrPreempted. When the attempt returns an error the job is queued again
// (JobQueued, the same Attempt).
//
// Fields, from messages.JobPreempted:
//
//	Time time.Time
//
//	Type policy.JobType
//
//	ID string
//
//	FairnessKey string
//
//	Group string
//
//	// Tier is the job's base priority; By the tier that preempted it.
//	Tier policy.Priority
//
//	By policy.Priority
//
//	// Ran is how long the attempt had run when it was preempted.
//	Ran time.Duration
type JobPreempted = messages.JobPreempted
