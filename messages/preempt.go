package messages

import (
	"time"

	"github.com/fairsched/fairsched/policy"
)

// JobPreempted: a running background job was preempted by a higher tier
// (TierConfig.Preempt): its attempt's context is cancelled with cause
// ErrPreempted. When the attempt returns it is queued again at the head of
// its lane (JobQueued, the same Attempt: a preempted attempt is not
// counted), unless it returned nil (JobCompleted) or was cancelled too.
type JobPreempted struct {
	Time        time.Time      `json:"time"`
	Type        policy.JobType `json:"type"`
	ID          string         `json:"id"`
	FairnessKey string         `json:"fairness_key"`
	Group       string         `json:"group"`
	// Tier is the job's base priority; By the tier that preempted it.
	Tier policy.Priority `json:"tier"`
	By   policy.Priority `json:"by"`
	// Ran is how long the attempt had run when it was preempted.
	Ran time.Duration `json:"ran"`
}

func (JobPreempted) event() {}
