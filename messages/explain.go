package messages

import (
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
