package fairsched

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// Job is a durable job as its handler sees it (see Enqueue).
//
// Fields, from messages.DurableJob:
//
//	Type policy.JobType
//
//	ID string
//
//	Payload []byte
//
//	// Attempt is 1 on the first run and larger on every run after it —
//	// a retry after a failure, a re-run after an interruption (a crash, a
//	// Close whose context ended, a lost instance or worker): each start is
//	// written to the store before the handler runs, so a handler can tell
//	// that it runs again. Numbers may be skipped, never repeated.
//	Attempt int
//
//	FairnessKey string
//
//	Group string
//
//	// EnqueuedAt is when Enqueue accepted the job: its aging clock and
//	// queue timeout run from there, across restarts.
//	EnqueuedAt time.Time
//
//	// Seq is the job's sequence number in its store; Owner, in cluster
//	// mode, the instance whose RunSync or Submit made it ("" for a job any
//	// instance runs). Granted is the instance a previous leader granted
//	// this attempt to, when the job was already running as the scheduler
//	// started (its handler finds it running there).
//	Seq uint64
//
//	Owner string
//
//	Granted string
type Job = messages.DurableJob

// Handler runs the durable jobs of a type (RegisterHandler): a
// func(ctx context.Context, job Job) error. Its error
// decides as a function's does: nil is a success (the record is deleted),
// an error retries by the job's retry policy, Permanent(err), a panic or
// the last attempt's error makes it a dead job.
type Handler = messages.Handler

// JobStore is a Store that also keeps durable jobs; boltstore's and
// pgstore's are.
//
// Methods, from machine.JobStore:
//
//	Store
//
//	// LoadJobs calls fn with every job record, in sequence order.
//	LoadJobs(fn func(core.JobRecord) error) error
//
//	// ApplyJobs commits ops in one transaction, durably (synced), or none
//	// of them. Its error wraps ErrRecordRefused when a record's content is
//	// at fault (the scheduler then commits the ops in parts, in order, to
//	// find it), ErrDuplicateJob when the store holds an unfinished job of a
//	// record's (type, id), ErrOutcomeUnknown when the commit may have
//	// happened (its ops are written again: a put or delete written twice
//	// must leave what one leaves).
//	ApplyJobs(ops []JobOp) error
type JobStore = machine.JobStore

// JobRecord is a durable job as a JobStore keeps it.
//
// Fields, from core.JobRecord:
//
//	Seq uint64
//
//	Type policy.JobType
//
//	ID string
//
//	Payload []byte
//
//	Key string
//
//	Group string
//
//	// Tokens, TTL (the job's own queue timeout), Retry (when RetrySet) and
//	// Floor (when Floored, an inherited priority) are the job's options.
//	Tokens time.Duration
//
//	TTL time.Duration
//
//	Retry policy.RetryPolicy
//
//	RetrySet bool
//
//	Floor policy.Priority
//
//	Floored bool
//
//	// Labels are the job's labels (WithLabels), matched by the workload
//	// rules each time the job is queued.
//	Labels policy.Labels
//
//	// EnqueuedAt is when Enqueue accepted it: its aging clock and queue
//	// timeout run from there across restarts. RunAt, when set, is when it
//	// becomes due.
//	EnqueuedAt time.Time
//
//	RunAt time.Time
//
//	// Attempt counts the attempts started: one that a crash or Close
//	// interrupted counts. Each start is written before its handler runs,
//	// so a re-run always has a larger Attempt than the run it replaces.
//	Attempt int
//
//	// Interruptions counts the attempts that were interrupted rather than
//	// failed (Interrupted): they do not count against the retry policy's
//	// MaxAttempts, only against its MaxInterruptions.
//	Interruptions int
//
//	State RecordState
//
//	// LastError is the last failed attempt's error; FinishedAt when the
//	// job became dead or succeeded.
//	LastError string
//
//	FinishedAt time.Time
//
//	// Owner, in cluster mode, is the incarnation of the instance whose
//	// RunSync or Submit made the job: only that process holds the
//	// function, so only it is granted the job, and the job ends with it.
//	// "" for a durable job any instance runs.
//	Owner string
//
//	// EndedAttempt is the last attempt whose end the scheduler applied (a
//	// retry decided): in cluster mode, a new leader applies an end reported
//	// for a later attempt instead of running the job again.
//	EndedAttempt int
//
//	// OnDemand: a caller waits for the job (a RunSync in cluster mode); with
//	// scoring it has the on-demand bonus, as in one process.
//	OnDemand bool
//
//	// Granted, in cluster mode, is the instance a previous leader granted
//	// the job to and that still runs it, as the store read it: the new
//	// leader counts it as running until it ends. Never
//	// written: the store keeps grants in columns of their own.
//	Granted string
type JobRecord = core.JobRecord

// JobOp is one write of a JobStore commit: a record to put, or a sequence
// to delete.
//
// Fields, from machine.JobOp:
//
//	Put *core.JobRecord
//
//	Delete uint64
type JobOp = machine.JobOp

// Errors of durable jobs.
var (
	// ErrDuplicateJob: Enqueue of a (type, id) whose durable job is still
	// pending or running (and neither its type coalesces nor Supersede
	// was given).
	ErrDuplicateJob = machine.ErrDuplicateJob
	// ErrNoJobStore: Enqueue or RegisterHandler on a scheduler whose store
	// does not keep jobs (durable jobs need WithStore with a JobStore, such
	// as boltstore's or pgstore's, or WithCluster).
	ErrNoJobStore = machine.ErrNoJobStore
)

// DefaultMaxPayload bounds a durable job's payload unless WithMaxPayload
// changes it: 1 MiB.
const DefaultMaxPayload = machine.DefaultMaxPayload

// RegisterHandler runs the durable jobs of type t with h, from now on:
// the jobs of t that wait for a handler (restored from the store, or
// enqueued before) enter the queue, oldest first. t must be registered
// (ErrUnknownJobType); registering again replaces the handler for the
// attempts that start after. A scheduler whose store does not keep
// durable jobs (no WithStore, or a Store that is not a JobStore) refuses
// it with ErrNoJobStore.
func (s *Scheduler) RegisterHandler(t JobType, h Handler) error {
	if err := s.check(); err != nil {
		return err
	}
	if h == nil {
		return fmt.Errorf("%w: RegisterHandler(%q): nil handler", ErrInvalidConfig, t)
	}
	return s.eng.registerHandler(t, h)
}

// Enqueue queues a durable job of type t: its record — id, payload and
// options — is written to the scheduler's JobStore, and Enqueue returns
// nil only once that record is committed and synced. Calls that arrive
// together share one commit. The job then competes like any background
// job, with every option that applies (WithFairnessKey, InGroup,
// WithTokens, WithQueueTimeout, WithRetry, InheritPriority, Supersede,
// RunAt, Delay); its type's handler (RegisterHandler) runs it. After a
// crash or a restart, New restores it with its arrival time, attempts and
// options: it runs at least once, and more than once only if an attempt
// was interrupted (handlers should be idempotent).
//
// (type, id) is unique among durable jobs not finished: a second Enqueue
// returns an error matching ErrDuplicateJob, unless the type coalesces
// (nil: one run serves both) or Supersede is given and the first is still
// pending (its payload and options are replaced). A payload over
// WithMaxPayload is ErrInvalidJob; a store failure is ErrStore, and then
// nothing was written — except when it also matches ErrOutcomeUnknown:
// the commit was sent and its reply lost, so the job may be stored.
// Retrying with the same (type, id) is then safe: nil means it is stored
// now, ErrDuplicateJob that the first one was (and runs). In one process
// the scheduler writes that record again until the commit is known, so
// the job is stored and runs unless Close gives up first. A record the
// store refuses for its content is ErrRecordRefused (with ErrStore):
// sending it again fails again, and the Enqueues that shared its commit
// are not affected. A job the limits refuse once committed (a tenant's
// MaxPending, WithMaxPending) gets the *RefusalError, and its record is
// deleted.
func (s *Scheduler) Enqueue(ctx context.Context, t JobType, id string, payload []byte, opts ...JobOption) error {
	if err := s.checkCtx(ctx, ErrInvalidJob, "Enqueue"); err != nil {
		return err
	}
	j, err := s.durableJob(t, id, payload, opts)
	if err != nil {
		return err
	}
	return s.eng.enqueue(ctx, j)
}

// durableJob checks a durable job as Enqueue takes it and makes its record.
func (s *Scheduler) durableJob(t JobType, id string, payload []byte, opts []JobOption) (*messages.Job, error) {
	if err := s.eng.check(t, id, true); err != nil {
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

// RunAt makes a durable job due at t: until then it waits in the queue
// (reason scheduled), in one heap with one timer, across restarts. It
// applies to Enqueue only: on Submit or RunSync it does nothing.
func RunAt(t time.Time) JobOption {
	return jobOptionFunc(func(j *messages.Job) { j.More().RunAt = t })
}

// Delay makes a durable job due d after Enqueue (RunAt of the clock's
// time then plus d); a negative d is ErrInvalidJob. It applies to Enqueue
// only: on Submit or RunSync it does nothing.
func Delay(d time.Duration) JobOption {
	return jobOptionFunc(func(j *messages.Job) { j.More().Delay = d })
}

// EnqueueJSON enqueues a durable job whose payload is args in JSON: the
// typed counterpart of Enqueue, for handlers made with HandleJSON.
func EnqueueJSON[T any](ctx context.Context, s *Scheduler, t JobType, id string, args T, opts ...JobOption) error {
	payload, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("%w: %s/%s: encoding the payload: %w", ErrInvalidJob, t, id, err)
	}
	return s.Enqueue(ctx, t, id, payload, opts...)
}

// HandleJSON returns a Handler that decodes each job's payload into a T
// and calls fn with it. A payload that does not decode fails the job for
// good (Permanent): no retry would decode it.
func HandleJSON[T any](fn func(ctx context.Context, job Job, args T) error) Handler {
	return func(ctx context.Context, job Job) error {
		var args T
		if err := json.Unmarshal(job.Payload, &args); err != nil {
			return Permanent(fmt.Errorf("fairsched: %s/%s: decoding the payload: %w", job.Type, job.ID, err))
		}
		return fn(ctx, job, args)
	}
}

// WithMaxPayload bounds the payload of a durable job (Enqueue); n must be
// positive. Default DefaultMaxPayload (1 MiB).
func WithMaxPayload(n int) Option {
	return optionFunc(func(o *options) {
		if n < 1 {
			o.fail(fmt.Errorf("%w: WithMaxPayload(%d): must be positive", ErrInvalidConfig, n))
			return
		}
		o.maxPayload = n
	})
}

// WithRetention keeps the records of durable jobs that succeeded for d
// (state succeeded, with their finish time) instead of deleting them at
// once. Default 0: deleted.
func WithRetention(d time.Duration) Option {
	return optionFunc(func(o *options) {
		if d < 0 {
			o.fail(fmt.Errorf("%w: WithRetention(%v): must not be negative", ErrInvalidConfig, d))
			return
		}
		o.retention = d
	})
}

// DeadJob is a durable job that failed for good: its retries used up, a
// Permanent error, a panic, its queue timeout, the admission policy's
// denial, or shedding (ShedDurable). It stays in the store until requeued
// or deleted.
type DeadJob struct {
	Job
	// LastError is the text of the error it failed with, as stored:
	// cleaned and at most MaxTextLen bytes (see MaxTextLen); FailedAt when.
	LastError string
	FailedAt  time.Time
}

// DeadJobs lists the dead jobs in the order they were enqueued (by
// sequence number, not by when they died); at most limit of them (0: all). A dead job whose record the store refuses — even with its error
// text cleaned — has its record deleted instead, so that it cannot run
// again, and leaves this list once that delete is committed.
func (s *Scheduler) DeadJobs(ctx context.Context, limit int) ([]DeadJob, error) {
	if err := s.checkCtx(ctx, ErrInvalidJob, "DeadJobs"); err != nil {
		return nil, err
	}
	r, err := s.eng.dead(ctx, messages.DeadOp{Op: messages.ListDead, Limit: max(limit, 0)})
	if err != nil {
		return nil, err
	}
	out := make([]DeadJob, len(r.Jobs))
	for i, rec := range r.Jobs {
		out[i] = DeadJob{
			Job: Job{Type: rec.Type, ID: rec.ID, Payload: rec.Payload, Attempt: rec.Attempt, FairnessKey: rec.Key,
				Group: rec.Group, EnqueuedAt: rec.EnqueuedAt},
			LastError: rec.LastError, FailedAt: rec.FinishedAt,
		}
	}
	return out, nil
}

// RequeueDead queues the dead jobs of (t, id) again — of type t when id is
// "", all of them when t is "" too — as if enqueued now, their attempts
// starting over, and returns how many once that is committed. A dead job
// whose (type, id) has an unfinished durable job is left dead.
func (s *Scheduler) RequeueDead(ctx context.Context, t JobType, id string) (int, error) {
	return s.deadOp(ctx, messages.RequeueDead, t, id)
}

// DeleteDead deletes the dead jobs of (t, id) — of type t when id is "",
// all of them when t is "" too — and returns how many once that is
// committed.
func (s *Scheduler) DeleteDead(ctx context.Context, t JobType, id string) (int, error) {
	return s.deadOp(ctx, messages.DeleteDead, t, id)
}

func (s *Scheduler) deadOp(ctx context.Context, op messages.DeadOpKind, t JobType, id string) (int, error) {
	if err := s.checkCtx(ctx, ErrInvalidJob, "dead jobs"); err != nil {
		return 0, err
	}
	if err := policy.InvalidName(ErrInvalidJob, "job type", string(t)); err != nil {
		return 0, err
	}
	if err := policy.InvalidName(ErrInvalidJob, "job id", id); err != nil {
		return 0, err
	}
	if id != "" && t == "" {
		return 0, fmt.Errorf("%w: an id (%q) needs its type", ErrInvalidJob, id)
	}
	r, err := s.eng.dead(ctx, messages.DeadOp{Op: op, Type: t, ID: id})
	return r.N, err
}
