package fairsched

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/messages"
)

// EnqueueMany, cluster mode's bulk path. Enqueueing, ManyError and
// EnqueueMany's signature are those of the in-process EnqueueMany (one
// message and one commit of the store for N jobs); in cluster mode the
// batch is one INSERT and one commit in the database instead of a round
// trip per job.

// Enqueueing is one durable job of EnqueueMany: what Enqueue takes.
type Enqueueing struct {
	Type    JobType
	ID      string
	Payload []byte
	Options []JobOption
}

// ManyError is the error of an EnqueueMany that queued some of its jobs
// and not others. Errs[i] is the i-th job's error, nil for a job that was
// queued (and committed). errors.Is and errors.As look at every job's
// error.
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

// EnqueueMany makes several durable jobs durable and queues them: the
// same jobs as that many Enqueue calls, in order. In cluster mode they are
// written in one statement and one commit of the database (a round trip
// for all instead of one each).
//
// It is all or nothing for the jobs themselves: an invalid one (what
// Enqueue refuses before writing anything — ErrInvalidJob,
// ErrUnknownJobType, a payload over WithMaxPayload) means nothing is
// written, and the error names its index; so does a failed commit in
// cluster mode (ErrStore: none was written). What then happens to each
// job is its own, as for Enqueue: a duplicate (type, id)
// (ErrDuplicateJob; joined for a coalescing type, replaced with
// Supersede), a refusal by the limits — the others are committed and
// queued, and EnqueueMany returns a *ManyError with each job's error at
// its index.
func (s *Scheduler) EnqueueMany(ctx context.Context, jobs []Enqueueing) error {
	if err := s.checkCtx(ctx, ErrInvalidJob, "EnqueueMany"); err != nil {
		return err
	}
	js := make([]*messages.Job, len(jobs))
	for i, e := range jobs {
		j, err := s.durableJobOf(e.Type, e.ID, e.Payload, e.Options)
		if err != nil {
			return fmt.Errorf("fairsched: EnqueueMany: job %d: %w", i, err)
		}
		js[i] = j
	}
	if len(js) == 0 {
		return nil
	}
	errs := make([]error, len(js))
	if s.node == nil {
		for i, j := range js {
			errs[i] = s.a.Enqueue(ctx, j)
		}
		return many(errs)
	}
	recs := make([]*core.JobRecord, len(js))
	for i, j := range js {
		recs[i] = s.clusterRecord(j)
	}
	errs, err := s.node.EnqueueMany(ctx, recs)
	if err != nil {
		return err
	}
	for i, err := range errs {
		if !errors.Is(err, ErrDuplicateJob) {
			continue
		}
		switch cfg, _ := s.a.TypeConfig(js[i].Type); {
		case cfg.Coalesce:
			errs[i] = nil // one run serves both, as in one process
		case js[i].Supersede: // the leader replaces the pending one
			errs[i] = s.node.Supersede(ctx, recs[i])
		}
	}
	return many(errs)
}

// durableJobOf checks a durable job as Enqueue does and makes its job.
func (s *Scheduler) durableJobOf(t JobType, id string, payload []byte, opts []JobOption) (*messages.Job, error) {
	if err := s.a.Check(t, id, true); err != nil {
		return nil, err
	}
	if max := s.maxPayload; len(payload) > max {
		return nil, fmt.Errorf("%w: %s/%s: a payload of %d bytes is over the %d of WithMaxPayload", ErrInvalidJob, t, id, len(payload), max)
	}
	j, err := newJob(t, id, "", nil, opts)
	if err != nil {
		return nil, err
	}
	j.Data = payload
	if !j.RunAt.IsZero() && j.RunAt.Before(time.Unix(0, 0)) {
		return nil, fmt.Errorf("%w: %s/%s: RunAt before 1970", ErrInvalidJob, t, id)
	}
	return j, nil
}
