package fairsched

import (
	"context"
	"fmt"

	"github.com/fairsched/fairsched/messages"
)

// Submission is one background job of SubmitMany: what Submit takes.
type Submission struct {
	Type    JobType
	ID      string
	Fn      func(context.Context) error
	Options []JobOption
}

// Enqueueing is one durable job of EnqueueMany: what Enqueue takes.
type Enqueueing struct {
	Type    JobType
	ID      string
	Payload []byte
	Options []JobOption
}

// ManyError is the error of a SubmitMany or EnqueueMany that queued some of
// its jobs and not others. Errs[i] is the i-th job's error, nil for a job
// that was queued (and, for EnqueueMany, committed). errors.Is and
// errors.As look at every job's error.
type ManyError struct {
	Errs []error
}

func (e *ManyError) Error() string {
	n, first := 0, -1
	for i, err := range e.Errs {
		if err != nil {
			n++
			if first < 0 {
				first = i
			}
		}
	}
	if n == 0 {
		return "fairsched: every job was queued"
	}
	return fmt.Sprintf("fairsched: %d of %d jobs not queued; job %d: %v", n, len(e.Errs), first, e.Errs[first])
}

// Unwrap returns the errors of the jobs that were not queued.
func (e *ManyError) Unwrap() []error {
	var errs []error
	for _, err := range e.Errs {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// many returns nil when no job failed, else a *ManyError.
func many(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return &ManyError{Errs: errs}
		}
	}
	return nil
}

// SubmitMany queues several background jobs in one message to the
// scheduler, with one dispatch for all: the same jobs as that many Submit
// calls, in order, at a fraction of the cost each.
//
// It is all or nothing for the jobs themselves: if one is invalid (what
// Submit refuses before queueing anything — ErrInvalidJob,
// ErrUnknownJobType, a nil option), none is queued and the error names its
// index; after Close every call returns ErrClosed. The limits then decide
// for each job alone: one that a pending bound refuses (a *RefusalError)
// leaves the others queued, and SubmitMany returns a *ManyError with each
// job's error at its index.
func (s *Scheduler) SubmitMany(jobs []Submission) error {
	if err := s.check(); err != nil {
		return err
	}
	js := make([]*messages.Job, len(jobs))
	for i, sub := range jobs {
		if err := s.eng.check(sub.Type, sub.ID, sub.Fn != nil); err != nil {
			return fmt.Errorf("fairsched: SubmitMany: job %d: %w", i, err)
		}
		j, err := checkJob(messages.NewPooledJob(sub.Type, sub.ID, "", sub.Fn), sub.Options)
		if err != nil {
			return fmt.Errorf("fairsched: SubmitMany: job %d: %w", i, err)
		}
		js[i] = j
	}
	if len(js) == 0 {
		return nil
	}
	return s.eng.submitMany(js)
}

// EnqueueMany makes several durable jobs durable in one message to the
// scheduler and one commit of its store, and queues them: the same jobs as
// that many Enqueue calls, in order, with one fsync for all (in cluster
// mode, one INSERT and one commit in the database). It returns once every
// record is committed and synced, or failed.
//
// Like SubmitMany it is all or nothing for the jobs themselves: an invalid
// one (what Enqueue refuses before writing anything — ErrInvalidJob,
// ErrUnknownJobType, a payload over WithMaxPayload) means nothing is
// written, and the error names its index. What then happens to each job is
// its own, as for Enqueue: a duplicate (type, id) (ErrDuplicateJob), a
// refusal by the limits once committed, a failed commit (ErrStore) — the
// others are committed and queued, and EnqueueMany returns a *ManyError
// with each job's error at its index. If ctx ends before the jobs are
// handed over, none is written and ctx's error is returned.
func (s *Scheduler) EnqueueMany(ctx context.Context, jobs []Enqueueing) error {
	if err := s.checkCtx(ctx, ErrInvalidJob, "EnqueueMany"); err != nil {
		return err
	}
	js := make([]*messages.Job, len(jobs))
	for i, e := range jobs {
		j, err := s.durableJob(e.Type, e.ID, e.Payload, e.Options)
		if err != nil {
			return fmt.Errorf("fairsched: EnqueueMany: job %d: %w", i, err)
		}
		js[i] = j
	}
	if len(js) == 0 {
		return nil
	}
	return s.eng.enqueueMany(ctx, js)
}
