package messages

import (
	"time"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/policy"
)

// ExplainRequest asks the owner why the job of (Type, ID) waits (see
// core.Core.Explain). The owner skips it when Done is already closed.
type ExplainRequest struct {
	Type  policy.JobType
	ID    string
	Done  <-chan struct{}
	Reply chan ExplainResult
}

// ExplainResult is the owner's answer to an ExplainRequest.
type ExplainResult struct {
	Explanation core.Explanation
	Err         error
}

func (ExplainRequest) request() {}

// StartCheck asks the owner for deadline-aware admission of a job to be
// submitted elsewhere (core.Core.CheckStart): Job is not submitted, its
// caller's deadline is Within from the owner's now; Reply gets nil or why
// it would start too late.
type StartCheck struct {
	Job    *core.Job
	Within time.Duration
	Reply  chan error
}

func (StartCheck) request() {}
