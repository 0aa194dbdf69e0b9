package machine

import (
	"context"
	"time"

	"github.com/fairsched/fairsched/messages"
)

// explain answers m, unless its caller has left.
func (a *Machine) explain(m messages.ExplainRequest) {
	if done(m.Done) {
		return
	}
	e, err := a.core.Explain(a.now(), m.Type, m.ID)
	m.Reply <- messages.ExplainResult{Explanation: e, Err: err}
}

// StartBy gives foreground job j its caller's deadline, on the scheduler's
// clock, for deadline-aware admission (JobTypeConfig.DeadlineAdmission).
// Any goroutine may call it.
func (a *Machine) StartBy(ctx context.Context, j *messages.Job) {
	if d, ok := ctx.Deadline(); ok {
		j.SetStartBy(a.clock.Now().Add(time.Until(d)))
	}
}
