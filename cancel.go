package fairsched

import (
	"context"

	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/messages"
)

// ErrCancelled is the cause of a running job's context that Cancel
// cancelled (context.Cause), and what the RunSync waiters of a coalesced
// run that Cancel removed get.
var ErrCancelled = machine.ErrCancelled

// Cancelled says what Cancel did.
type Cancelled struct {
	// Pending counts the jobs removed from the queue: they never ran and
	// were never charged, and will not run (a job waiting for its retry
	// included: it will not be retried).
	Pending int
	// Running counts the running jobs whose context Cancel cancelled, with
	// ErrCancelled as its cause. Each ends when its function returns and is
	// reported then (JobFailed, or JobCompleted if it returned nil); it is
	// not retried.
	Running int
}

// None reports whether Cancel found nothing to cancel.
func (c Cancelled) None() bool { return c.Pending == 0 && c.Running == 0 }

// Cancel cancels the background jobs of (t, id) — those queued by Submit
// or Enqueue, a periodic occurrence (the schedule goes on), and a
// coalescing type's pending run — and says
// what it did: the pending ones leave the queue at once, unrun and
// uncharged (a JobCancelled event and a "cancelled" decision record each);
// the running ones have their context cancelled. Cancelled.None means no
// such job was pending or running. RunSync calls are cancelled through
// their own context, and periodic schedules stopped by the function
// SubmitPeriodic returned.
//
// It returns ctx's error if ctx ends before the scheduler answers (then
// nothing was cancelled), ErrClosed after Close, ErrUnknownJobType for a
// type never registered and ErrInvalidJob for an empty id.
func (s *Scheduler) Cancel(ctx context.Context, t JobType, id string) (Cancelled, error) {
	if err := s.checkCtx(ctx, ErrInvalidJob, "Cancel"); err != nil {
		return Cancelled{}, err
	}
	if err := s.eng.check(t, id, true); err != nil {
		return Cancelled{}, err
	}
	r, err := s.eng.cancel(ctx, t, id)
	return Cancelled(r), err
}

// WithValuesFrom gives a background job's context the values of ctx — a
// request's trace and span ids, a logger — without ctx's cancellation or
// deadline: the job outlives the request that submitted it. Values the
// scheduler sets on the job's context come first. On RunSync, whose
// function runs under the caller's context already, it does nothing.
func WithValuesFrom(ctx context.Context) JobOption {
	return jobOptionFunc(func(j *messages.Job) {
		if ctx != nil {
			j.More().Values = context.WithoutCancel(ctx)
		}
	})
}
