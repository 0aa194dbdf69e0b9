package messages

import (
	"time"

	"github.com/fairsched/fairsched/policy"
)

// ApplyPolicy asks the owner to replace the scheduler's policy, all of it
// or none (core.Core.ApplyPolicy); Reply gets nil once it applies, or why
// it does not.
type ApplyPolicy struct {
	Policy policy.Policy
	Reply  chan error
}

func (ApplyPolicy) request() {}

// PolicyApplied: a scheduling policy was applied (ApplyPolicy), from the
// next decision on. Version is the policy's own name for itself (may be
// empty); Seq counts the policies applied to this scheduler since it
// started (in cluster mode, to the leader since it took over).
type PolicyApplied struct {
	Time    time.Time `json:"time"`
	Version string    `json:"version"`
	Seq     uint64    `json:"seq"`
}

func (PolicyApplied) event() {}
