package actor

import (
	"context"
	"time"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// Explain asks the owner why the job of (t, id) waits: see
// core.Core.Explain.
func (a *Actor) Explain(ctx context.Context, t policy.JobType, id string) (core.Explanation, error) {
	m := messages.ExplainRequest{Type: t, ID: id, Done: ctx.Done(), Reply: make(chan messages.ExplainResult, 1)}
	if err := a.send(ctx, m); err != nil {
		return core.Explanation{}, err
	}
	select {
	case r := <-m.Reply:
		return r.Explanation, r.Err
	case <-ctx.Done():
		return core.Explanation{}, ctx.Err()
	}
}

// explain answers m, unless its caller has left.
func (a *Actor) explain(m messages.ExplainRequest) {
	if done(m.Done) {
		return
	}
	e, err := a.core.Explain(a.now(), m.Type, m.ID)
	m.Reply <- messages.ExplainResult{Explanation: e, Err: err}
}

// startBy gives foreground job j its caller's deadline, on the scheduler's
// clock, for deadline-aware admission (JobTypeConfig.DeadlineAdmission).
func (a *Actor) startBy(ctx context.Context, j *messages.Job) {
	if d, ok := ctx.Deadline(); ok {
		j.SetStartBy(a.clock.Now().Add(time.Until(d)))
	}
}

// CheckStart asks the owner whether j, to be submitted elsewhere, would
// start later than within from now (core.Core.CheckStart).
func (a *Actor) CheckStart(ctx context.Context, j *core.Job, within time.Duration) error {
	m := messages.StartCheck{Job: j, Within: within, Reply: make(chan error, 1)}
	if err := a.send(ctx, m); err != nil {
		return err
	}
	select {
	case err := <-m.Reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
