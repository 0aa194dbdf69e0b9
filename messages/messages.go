// Package messages defines what crosses the boundary between the public API
// and the scheduler's owner goroutine. Requests travel on one buffered
// channel; the owner counts the requests on their way and takes them all
// before it stops, so none is left behind in the buffer (see actor). Every
// request that expects an answer carries its own reply channel with a buffer
// of one, so the owner never blocks on a caller that has gone away.
// Completions travel on a buffered channel of their own: the owner outlives
// every running job, so none is lost, and a finishing job never waits for
// the owner. Events travel the other way, from the owner to each subscriber's
// channel, and never make the owner wait (see Event).
//
// Programs use the root package, github.com/fairsched/fairsched, whose
// names for the event and snapshot types of this package are the ones to
// use; the requests are the scheduler's inside.
package messages

import (
	"context"
	"encoding/json"
	"errors"
	"time"
	"unsafe"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/policy"
)

// runningKey is the context key under which a running job's function finds
// the job's effective priority (InheritPriority reads it; RunContext
// answers it).
type runningKey struct{}

// slotKey is the context key under which a job running on a worker slot
// finds it (SlotFromContext).
type slotKey struct{}

// SlotRef names a worker slot.
type SlotRef struct {
	Worker string
	Slot   int
}

// WithSlot returns ctx marked as the context of a job running on slot.
func WithSlot(ctx context.Context, slot SlotRef) context.Context {
	return context.WithValue(ctx, slotKey{}, slot)
}

// SlotOf returns the worker slot the job whose context ctx is (or derives
// from) runs on, if any.
func SlotOf(ctx context.Context) (SlotRef, bool) {
	if ctx == nil {
		return SlotRef{}, false
	}
	s, ok := ctx.Value(slotKey{}).(SlotRef)
	return s, ok
}

// RunningPriority returns the effective priority of the job whose context
// ctx is (or derives from), if any.
func RunningPriority(ctx context.Context) (policy.Priority, bool) {
	if ctx == nil {
		return 0, false
	}
	p, ok := ctx.Value(runningKey{}).(policy.Priority)
	return p, ok
}

// Job is a core.Job with what it takes to run it and to answer for it, in
// one allocation. A pending background job is most of the scheduler's
// memory, so what such a job seldom uses lives in Extra: NewJob and
// foreground records carry it in the same allocation, a pooled Submit
// record gets it (More) only when an option or the owner needs it. Read
// Extra's fields only on a job known to have it (durable, foreground,
// coalesced), or through the nil-safe methods.
type Job struct {
	core.Job
	Fn func(context.Context) error
	*Extra
}

// A Job's flags, in core.Job.Flags: a word of their own would cost every
// pending job 8 B.
const (
	// flagCancelled (owner only): Cancel cancelled the running job's
	// context: it is not retried.
	flagCancelled uint8 = 1 << iota
	// flagPooled: the record came from the pool (NewPooledJob) and goes
	// back to it when the job ends (Recycle).
	flagPooled
	// flagInline: Extra is part of the record's allocation (a full record).
	flagInline
)

// Cancelled reports whether Cancel cancelled the running job's context
// (SetCancelled): it is not retried. Owner only.
func (j *Job) Cancelled() bool { return j.Flags&flagCancelled != 0 }

// SetCancelled records that Cancel cancelled the running job's context.
func (j *Job) SetCancelled() { j.Flags |= flagCancelled }

// Pooled reports whether the record came from the pool (NewPooledJob) and
// goes back to it when the job ends (Recycle).
func (j *Job) Pooled() bool { return j.Flags&flagPooled != 0 }

func (j *Job) inline() bool { return j.Flags&flagInline != 0 }

// Run is the context the job's current attempt runs under (SetRun): Cancel
// cancels it with ErrCancelled, a lost worker with workers.ErrWorkerLost.
// nil while the job is not running. It is kept in core.Running, which only
// admitted jobs have.
func (j *Job) Run() *RunContext {
	if j.Running == nil {
		return nil
	}
	rc, _ := j.Running.Caller.(*RunContext)
	return rc
}

// SetRun sets the context of the job's attempt, set by the owner for each
// attempt (Attempt) of an admitted job, and nil when the attempt ends.
func (j *Job) SetRun(rc *RunContext) { j.Running.Caller = rc }

// Extra holds the fields of a Job that most background jobs never use.
type Extra struct {
	// Ctx and Cancel: a foreground job runs under Ctx, derived from its
	// caller's context; the owner calls Cancel when Close's deadline passes.
	// Both are nil for background work, which runs under the owner's context.
	Ctx    context.Context
	Cancel context.CancelFunc
	// Admit is signalled for a foreground job each time the owner decides
	// for it: nil when it may run (its caller runs it), or the
	// reason it never will (again); after a failed attempt of a job that
	// retries, nil when the next attempt is admitted or the final error.
	// nil for background work.
	//
	// The value travels in answer (Answer, Answered), the channel only
	// signals it: a channel of a pointer-free element is one allocation,
	// a chan error two.
	Admit  chan struct{}
	answer error
	// OwnRetry, when not zero, is the job's own retry policy (WithRetry,
	// a durable record's): it replaces its type's. RetrySet: it was given
	// (WithRetry; kept in durable records).
	OwnRetry policy.RetryPolicy
	RetrySet bool
	// LastErr is the error of the job's last failed attempt while it waits
	// for its retry: what its caller is told if it never runs again.
	LastErr error
	// Parent is, for a RunSync called with the context of a running job of
	// the same scheduler (or one derived from it), that job: a graceful
	// Close drops the nested call when its parent can only wait for it.
	Parent *Job
	// OnEnd, when set, is called by the owner once the job has left for
	// good: it ran (its last attempt), or was dropped, expired or denied.
	OnEnd func()
	// Jitter: for SubmitPeriodic, the most each occurrence is delayed.
	Jitter time.Duration
	// Supersede: the job replaces every pending background job of its
	// (type, id), those in a retry's backoff included.
	Supersede bool
	// Values, when set (WithValuesFrom), is the context whose values a
	// background job's context carries, without its cancellation.
	Values context.Context
	// Record (owner only) is a durable job's record, nil for in-memory
	// work: the owner keeps it up to date and writes copies to the store.
	// Data and RunAt are what Enqueue was given; Committing says the
	// record's commit is under way, Replaced that a Supersede replaces it.
	Record               *core.JobRecord
	Data                 []byte
	RunAt                time.Time
	Delay                time.Duration
	Committing, Replaced bool
	// Coalescing: the job is the shared run of a coalescing type's
	// requests (the core keeps its waiters).
	Coalescing bool
}

// full is a record with its Extra in the same allocation.
type full struct {
	Job
	x Extra
	r core.Rare
}

// More returns j's Extra, allocating it if j has none yet.
func (j *Job) More() *Extra {
	if j.Extra == nil {
		j.Extra = new(Extra)
	}
	return j.Extra
}

// Durable reports whether j has a durable record.
func (j *Job) Durable() bool { return j.Extra != nil && j.Record != nil }

// Superseding reports whether j replaces the pending jobs of its (type, id).
func (j *Job) Superseding() bool { return j.Extra != nil && j.Supersede }

// Explicit reports whether j was given a retry policy of its own.
func (j *Job) Explicit() bool { return j.Extra != nil && j.RetrySet }

// NewJob returns a job of type t on id for fairness key key.
func NewJob(t policy.JobType, id, key string, fn func(context.Context) error) *Job {
	f := new(full)
	j := &f.Job
	j.Extra, j.Rare, j.Flags, j.Fn = &f.x, &f.r, flagInline, fn
	j.Type, j.ID, j.Key = t, id, key
	return j
}

// Joined is what a waiter of a coalesced run receives on Admit: the run's
// result, Err (nil for a success). It is an error only to travel on Admit.
type Joined struct{ Err error }

func (j *Joined) Error() string { return "fairsched: coalesced run ended" }

// Answer tells a foreground job's caller the owner's decision err (see
// Admit). Only the owner calls it.
func (j *Job) Answer(err error) {
	j.answer = err
	j.Admit <- struct{}{}
}

// Answered is the decision the caller was signalled on Admit: it reads it
// after each receive.
func (j *Job) Answered() error { return j.answer }

// Fresh returns a new background job asking for what j asks: its type,
// id, key, function and the settings its options gave (group, tokens, time
// to live, retry policy, inherited priority) — none of j's history.
func (j *Job) Fresh() *Job {
	f := NewJob(j.Type, j.ID, j.Key, j.Fn)
	f.Group, f.Floor, f.Floored = j.Group, j.Floor, j.Floored
	f.SetTokens(j.Tokens())
	f.SetTTL(j.TTL())
	f.SetLabels(j.Labels())
	if j.Extra != nil {
		f.OwnRetry = j.OwnRetry
	}
	return f
}

// Retry is j's retry policy: its own (OwnRetry), else its type's once
// submitted (none before).
func (j *Job) Retry() policy.RetryPolicy {
	if j.Extra != nil && j.OwnRetry != (policy.RetryPolicy{}) {
		return j.OwnRetry
	}
	return j.TypeRetry()
}

// Of returns the Job a core.Job belongs to. Every core.Job the owner hands
// the core is the one embedded first in a Job (NewJob, the pool), so their
// addresses are the same: no field leads back, which would cost every
// pending job 16 B.
func Of(j *core.Job) *Job { return (*Job)(unsafe.Pointer(j)) }

// core.Job must stay Job's first field for Of.
var _ = [1]struct{}{}[unsafe.Offsetof(Job{}.Job)]

// Foreground reports whether a caller waits for the job.
func (j *Job) Foreground() bool { return j.Extra != nil && j.Admit != nil }

// Request is a message for the owner goroutine.
type Request interface{ request() }

// Submit asks the owner to queue a job. It is one pointer, so making it a
// Request allocates nothing.
type Submit struct {
	Job *Job
}

// SubmitChecked is Submit when the scheduler has pending bounds that may
// refuse the job: Verdict receives nil once it is queued, or why it was
// refused. The channel travels in the message, not in the job's record,
// which it would cost 8 B for as long as the job waits.
type SubmitChecked struct {
	Job     *Job
	Verdict chan error
}

// Withdraw tells the owner that a foreground job's caller left with Err. A
// pending job is removed and answered with Err on its Admit channel; an
// admitted job is left alone, its context being already cancelled.
type Withdraw struct {
	Job *Job
	Err error
}

// DurableJob is a durable job as its handler sees it.
type DurableJob struct {
	Type    policy.JobType
	ID      string
	Payload []byte
	// Attempt is 1 on the first run and larger on every run after it —
	// a retry after a failure, a re-run after an interruption (a crash, a
	// Close whose context ended, a lost instance or worker): each start is
	// written to the store before the handler runs, so a handler can tell
	// that it runs again. Numbers may be skipped, never repeated.
	Attempt     int
	FairnessKey string
	Group       string
	// EnqueuedAt is when Enqueue accepted the job: its aging clock and
	// queue timeout run from there, across restarts.
	EnqueuedAt time.Time
	// Seq is the job's sequence number in its store; Owner, in cluster
	// mode, the instance whose RunSync or Submit made it ("" for a job any
	// instance runs). Granted is the instance a previous leader granted
	// this attempt to, when the job was already running as the scheduler
	// started (its handler finds it running there).
	Seq     uint64
	Owner   string
	Granted string
}

// Handler runs the durable jobs of a type.
type Handler func(ctx context.Context, job DurableJob) error

// Adopt hands the owner durable jobs another instance committed (cluster
// mode's leader reads them from the change feed): they are queued as a
// restart queues its records, a running one (Granted) counted as running
// at once. Reply gets how many were new.
type Adopt struct {
	Records []core.JobRecord
	Reply   chan int
}

// ReplacePending asks the owner to take out the pending durable job of
// (Type, ID) and delete its record, for a Supersede made elsewhere
// (cluster mode): Reply gets N = 1 once the delete is committed, N = 0 if
// no such job waits (it runs, or is gone).
type ReplacePending struct {
	Type  policy.JobType
	ID    string
	Reply chan DeadResult
}

// Enqueue asks the owner to make Job durable and queue it; Reply gets nil
// once its record is committed, or why not.
type Enqueue struct {
	Job   *Job
	Reply chan error
}

// SubmitMany asks the owner to queue Jobs, in order, as one batch: one
// dispatch for all. Verdicts, when set (pending bounds may refuse), has
// a channel for each job, which receives its verdict as SubmitChecked's.
type SubmitMany struct {
	Jobs     []*Job
	Verdicts []chan error
}

// EnqueueMany asks the owner to make Jobs durable and queue them, in
// order, in one commit: Replies[i] gets Jobs[i]'s answer, as for Enqueue.
type EnqueueMany struct {
	Jobs    []*Job
	Replies []chan error
}

// RegisterHandler asks the owner to run the durable jobs of Type with
// Handler.
type RegisterHandler struct {
	Type    policy.JobType
	Handler Handler
	// All, when set instead of Type and Handler, registers several at
	// once: the jobs already running elsewhere (cluster mode) of every
	// type are counted before any other starts.
	All map[policy.JobType]Handler
	// Remote starts the jobs of the types of All (whose handlers are nil)
	// elsewhere: each attempt waits in the owner's outbox as a RemoteOp.
	Remote bool
	Reply  chan error
}

// RemoteOp is what an owner that starts durable jobs elsewhere (cluster
// mode's leader) sends its starter, in order: an attempt to start or, with
// Revoke, one that Cancel takes back — sent after the attempt's start.
type RemoteOp struct {
	Attempt *RemoteAttempt
	Revoke  bool
}

// RemoteAttempt is a durable job's attempt started away from its owner.
// Its starter reports its end to the owner exactly once (the machine's
// EndRemote); an end the owner no longer waits for (it ended the attempt
// itself: its scheduler stopped, its worker went) is ignored.
type RemoteAttempt struct {
	Job DurableJob
	// Slot is its worker slot, when OnSlot (a job of a worker type).
	Slot   SlotRef
	OnSlot bool
	// Ctx is the attempt's context: its Err is set once the attempt is
	// cancelled or its scheduler stops — a start not carried out by then
	// is not carried out at all.
	Ctx context.Context
	job *Job
}

// NewRemoteAttempt returns the remote attempt of j, which its owner
// admitted, as job.
func NewRemoteAttempt(ctx context.Context, j *Job, job DurableJob, slot SlotRef, onSlot bool) *RemoteAttempt {
	return &RemoteAttempt{Job: job, Slot: slot, OnSlot: onSlot, Ctx: ctx, job: j}
}

// Of returns the owner's job whose attempt r is (for its owner only).
func (r *RemoteAttempt) Of() *Job { return r.job }

// DeadOpKind names a DeadOp.
type DeadOpKind uint8

// The operations on dead jobs.
const (
	ListDead DeadOpKind = iota
	RequeueDead
	DeleteDead
	// SyncDead changes nothing: it is answered once every write queued
	// before it is committed — after a ListDead, the dead records it
	// listed are in the store.
	SyncDead
)

// DeadOp lists, requeues or deletes dead jobs: all of them, or those of
// (Type, ID) when ID is set.
type DeadOp struct {
	Op    DeadOpKind
	Type  policy.JobType
	ID    string
	Limit int // ListDead: at most this many, oldest first (0: all)
	Reply chan DeadResult
}

// DeadResult answers a DeadOp: the dead jobs listed, or how many were
// requeued or deleted.
type DeadResult struct {
	Jobs []core.JobRecord
	N    int
	Err  error
}

// Register asks the owner to add a job type.
type Register struct {
	Type   policy.JobType
	Config policy.JobTypeConfig
	Reply  chan error
}

// WorkerOp asks the owner to register worker ID with Slots (each the types
// a slot takes), or with Remove to unregister it.
type WorkerOp struct {
	ID     string
	Slots  [][]policy.JobType
	Remove bool
	Reply  chan error
}

// GroupOp asks the owner to change a group: its weight, the weights of all,
// or whether it is paused.
type GroupOp struct {
	Op     GroupOpKind
	Group  string
	Weight int
	Reply  chan error
}

// GroupOpKind names a GroupOp.
type GroupOpKind uint8

// The group operations.
const (
	SetGroupWeight GroupOpKind = iota
	ResetGroupWeights
	PauseGroup
	ResumeGroup
)

// SetKeyWeight asks the owner to change a fairness key's weight (0: back
// to the default).
type SetKeyWeight struct {
	Key    string
	Weight float64
	Reply  chan error
}

// AddPeriodic asks the owner to run Job every Every (plus up to Jitter);
// Reply gets the schedule's id, 0 when the scheduler is closing.
type AddPeriodic struct {
	Job           *Job
	Every, Jitter time.Duration
	Reply         chan uint64
}

// StopPeriodic asks the owner to end a schedule.
type StopPeriodic struct {
	ID    uint64
	Reply chan struct{}
}

// Cancel asks the owner to cancel the background jobs of (Type, ID): the
// pending ones leave unrun, the running ones' contexts are cancelled.
type Cancel struct {
	Type  policy.JobType
	ID    string
	Done  <-chan struct{} // the caller's context: skipped once it has left
	Reply chan CancelResult
}

// CancelResult counts what a Cancel did.
type CancelResult struct{ Pending, Running int }

// SnapshotRequest asks the owner for a copy of its state, with at most
// Rows pending jobs (0: all; see core.SnapshotRows). The owner skips it
// when Done is already closed: the caller has left.
type SnapshotRequest struct {
	Rows  int
	Done  <-chan struct{}
	Reply chan core.Snapshot
}

// Subscribe asks the owner to deliver events to Events from now on. The
// owner answers on Reply once it has; it closes Events on Unsubscribe or when
// it stops.
type Subscribe struct {
	Events chan Event
	Reply  chan struct{}
}

// Unsubscribe asks the owner to stop delivering to Events and to close it.
// The owner answers on Reply once Events is closed; an Events it does not
// know (removed already) is left alone.
type Unsubscribe struct {
	Events chan Event
	Reply  chan struct{}
}

// Close asks the owner to stop once pending and running work is done.
// InJob, when not nil, says the call comes from inside a job (its goroutine
// runs one): the owner answers ErrCloseInJob on it once the running jobs
// are no more than such calls, which may be waiting for themselves.
type Close struct{ InJob chan error }

// Abort asks the owner to stop now: cancel running jobs, refuse pending ones.
type Abort struct{}

func (Submit) request()          {}
func (SubmitChecked) request()   {}
func (Withdraw) request()        {}
func (Cancel) request()          {}
func (Enqueue) request()         {}
func (SubmitMany) request()      {}
func (EnqueueMany) request()     {}
func (Adopt) request()           {}
func (ReplacePending) request()  {}
func (RegisterHandler) request() {}
func (DeadOp) request()          {}
func (Register) request()        {}
func (GroupOp) request()         {}
func (SetKeyWeight) request()    {}
func (WorkerOp) request()        {}
func (AddPeriodic) request()     {}
func (StopPeriodic) request()    {}
func (SnapshotRequest) request() {}
func (Subscribe) request()       {}
func (Unsubscribe) request()     {}
func (Close) request()           {}
func (Abort) request()           {}

// Done reports that a job's function returned (or panicked).
type Done struct {
	Job *Job
	Err error
	// Panicked: the function panicked and Err is the *PanicError made of it
	// (a function merely returning such an error, from a nested job, did
	// not panic).
	Panicked bool
	// Remote: the end of this remote attempt of Job, reported by its
	// starter.
	Remote *RemoteAttempt
}

// Event is something the owner did, as told to subscribers: one of the
// Job* types, GroupAllocationChanged and PolicyApplied. The set is
// closed: no other package can add a variant, so a type switch over them
// is exhaustive.
type Event interface{ event() }

// JobQueued: a job entered the queue — submitted, a periodic occurrence,
// the first waiter's coalesced run — or entered it again to wait out a
// retry's backoff (Attempt > 1). A RunSync that joins a pending coalesced
// run adds no job and no event.
type JobQueued struct {
	Time        time.Time      `json:"time"`
	Type        policy.JobType `json:"type"`
	ID          string         `json:"id"`
	FairnessKey string         `json:"fairness_key"`
	Group       string         `json:"group"`
	// Foreground: a caller waits for it (RunSync).
	Foreground bool `json:"foreground"`
	// Attempt is the attempt it waits to make: 1, or more after a failure
	// (or, for a durable job, an interruption).
	Attempt int `json:"attempt"`
}

// JobCancelled: a pending job left the queue unrun and uncharged because
// it was cancelled: Cancel removed it (Err is ErrCancelled), or its
// RunSync caller's context ended (Err is the context's error), or every
// waiter of a coalesced run left. A running job that Cancel interrupts is
// reported when it ends, as JobFailed or JobCompleted.
type JobCancelled struct {
	Time        time.Time      `json:"time"`
	Type        policy.JobType `json:"type"`
	ID          string         `json:"id"`
	FairnessKey string         `json:"fairness_key"`
	Group       string         `json:"group"`
	Err         error          `json:"-"`
}

// MarshalJSON writes Err as a string.
func (e JobCancelled) MarshalJSON() ([]byte, error) {
	type plain JobCancelled
	var msg string
	if e.Err != nil {
		msg = e.Err.Error()
	}
	return json.Marshal(struct {
		plain
		Err string `json:"error,omitempty"`
	}{plain(e), msg})
}

// JobJoined: a request of a coalescing type joined the pending run of its
// (type, id) instead of queueing a job: a RunSync waits for the run's
// result (Foreground), a Submit marks the run as wanted.
type JobJoined struct {
	Time        time.Time      `json:"time"`
	Type        policy.JobType `json:"type"`
	ID          string         `json:"id"`
	FairnessKey string         `json:"fairness_key"`
	Foreground  bool           `json:"foreground"`
}

// JobAdmitted: a job was admitted and starts running. Its cost was charged
// to its fairness key at that moment.
type JobAdmitted struct {
	Time        time.Time      `json:"time"`
	Type        policy.JobType `json:"type"`
	ID          string         `json:"id"`
	FairnessKey string         `json:"fairness_key"`
	// BasePriority is the job's tier, whose cap the job counts against:
	// its type's priority, or the one a workload rule gave it.
	// EffectivePriority is the priority it was dispatched at; the two are
	// equal unless the job aged or inherited a priority.
	BasePriority      policy.Priority `json:"base_priority"`
	EffectivePriority policy.Priority `json:"effective_priority"`
	// Group is the job's group; "" when it has none.
	Group string `json:"group"`
	// Waited is the time from submission to admission.
	Waited time.Duration `json:"waited"`
	// Cost is the estimate charged to the key; KeyCost is the key's
	// accumulated cost right after that charge.
	Cost    time.Duration `json:"cost"`
	KeyCost time.Duration `json:"key_cost"`
}

// JobCompleted: a job's function returned nil.
type JobCompleted struct {
	Time        time.Time      `json:"time"`
	Type        policy.JobType `json:"type"`
	ID          string         `json:"id"`
	FairnessKey string         `json:"fairness_key"`
	// Elapsed is the wall time from admission to completion; Estimate is
	// the learned cost of the job's (type, id) once Elapsed is folded in.
	Elapsed  time.Duration `json:"elapsed"`
	Estimate time.Duration `json:"estimate"`
}

// JobFailed: a job's function returned an error or panicked. Its run
// counts towards the cost model like a completion.
type JobFailed struct {
	Time        time.Time      `json:"time"`
	Type        policy.JobType `json:"type"`
	ID          string         `json:"id"`
	FairnessKey string         `json:"fairness_key"`
	Elapsed     time.Duration  `json:"elapsed"`
	Estimate    time.Duration  `json:"estimate"`
	// Err is what the function returned or, when Panicked, the
	// *PanicError made of its panic (value and stack). In JSON it is the
	// "error" string: its message.
	Err      error `json:"-"`
	Panicked bool  `json:"panicked"`
	// Retrying: the job waits out a backoff and runs again (its retry
	// policy allows another attempt).
	Retrying bool `json:"retrying,omitempty"`
}

// jobFailedJSON is JobFailed with its error as a message.
type jobFailedJSON struct {
	*jobFailedFields
	Error string `json:"error"`
}

type jobFailedFields JobFailed // JobFailed without its methods

// MarshalJSON encodes the event with its error as the "error" message.
func (e JobFailed) MarshalJSON() ([]byte, error) {
	v := jobFailedJSON{jobFailedFields: (*jobFailedFields)(&e)}
	if e.Err != nil {
		v.Error = e.Err.Error()
	}
	return json.Marshal(v)
}

// UnmarshalJSON decodes what MarshalJSON encodes. The error comes back as a
// plain error with the original message (nil for an empty message).
func (e *JobFailed) UnmarshalJSON(b []byte) error {
	v := jobFailedJSON{jobFailedFields: (*jobFailedFields)(e)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	e.Err = nil
	if v.Error != "" {
		e.Err = errors.New(v.Error)
	}
	return nil
}

// JobDenied reports a job the admission policy denied: it never runs. Err
// is what its submitter gets (RunSync returns it).
type JobDenied struct {
	Time        time.Time      `json:"time"`
	Type        policy.JobType `json:"type"`
	ID          string         `json:"id"`
	FairnessKey string         `json:"fairness_key"`
	Err         error          `json:"-"`
	Panicked    bool           `json:"policy_panicked"`
}

// JobExpired reports a job that was still pending when its queue timeout
// ran out: it never runs. Waited is the whole time since its submission,
// its group's pauses included (they did not count against its time to
// live).
type JobExpired struct {
	Time        time.Time      `json:"time"`
	Type        policy.JobType `json:"type"`
	ID          string         `json:"id"`
	FairnessKey string         `json:"fairness_key"`
	Waited      time.Duration  `json:"waited"`
}

// JobDropped reports a job dropped unrun because the scheduler closed
// (Close's context ended first, or it raced Close).
type JobDropped struct {
	Time        time.Time      `json:"time"`
	Type        policy.JobType `json:"type"`
	ID          string         `json:"id"`
	FairnessKey string         `json:"fairness_key"`
}

// JobSuperseded reports a pending background job that a newer submission
// of its (type, id) with Supersede replaced: it never runs.
type JobSuperseded struct {
	Time        time.Time      `json:"time"`
	Type        policy.JobType `json:"type"`
	ID          string         `json:"id"`
	FairnessKey string         `json:"fairness_key"`
}

// JobRefused reports a submission refused before it was queued: by a
// pending bound (Reason tenant_limit or pool_overloaded), by the load
// signal (overloaded), or by deadline-aware admission because its
// estimated start is after its caller's deadline (start_after_deadline);
// or a pending job shed for a newcomer of a key under its fair share
// (WithShedding): Reason is shed.
type JobRefused struct {
	Time        time.Time      `json:"time"`
	Type        policy.JobType `json:"type"`
	ID          string         `json:"id"`
	FairnessKey string         `json:"fairness_key"`
	Reason      policy.Reason  `json:"reason"`
}

// JobAged: a pending job's effective priority rose as it waited. It is
// reported for the job at the head of its queue (the oldest pending job of
// its type, fairness key and group: the most aged, the one that competes),
// at most once per aging step, when the scheduler next handles any call; a
// job behind it reports its priority once it reaches the head, in one event
// however many steps it rose meanwhile. Snapshots show every pending job's
// effective priority at any time.
type JobAged struct {
	Time              time.Time       `json:"time"`
	Type              policy.JobType  `json:"type"`
	ID                string          `json:"id"`
	FairnessKey       string          `json:"fairness_key"`
	BasePriority      policy.Priority `json:"base_priority"`
	EffectivePriority policy.Priority `json:"effective_priority"`
	// Waited is the time since submission.
	Waited time.Duration `json:"waited"`
}

// AllocationReason says why a group's slot allocation changed; it
// serialises as its string value.
type AllocationReason string

// Reasons an allocation changes.
const (
	// AllocationWeightChange: a group's weight was set or reset.
	AllocationWeightChange AllocationReason = "weight_change"
	// AllocationRebalance: demand moved, so slots moved between groups.
	AllocationRebalance AllocationReason = "rebalance"
	// AllocationGroupDrained: the group ran out of work and gave its slots
	// back.
	AllocationGroupDrained AllocationReason = "group_drained"
)

// GroupAllocationChanged: a group's share of the global capacity changed
// from PreviousSlots to NewSlots.
type GroupAllocationChanged struct {
	Time          time.Time        `json:"time"`
	Group         string           `json:"group"`
	PreviousSlots int              `json:"previous_slots"`
	NewSlots      int              `json:"new_slots"`
	Reason        AllocationReason `json:"reason"`
}

func (JobQueued) event()              {}
func (JobJoined) event()              {}
func (JobCancelled) event()           {}
func (JobAdmitted) event()            {}
func (JobCompleted) event()           {}
func (JobFailed) event()              {}
func (JobAged) event()                {}
func (GroupAllocationChanged) event() {}
func (JobDenied) event()              {}
func (JobRefused) event()             {}
func (JobExpired) event()             {}
func (JobDropped) event()             {}
func (JobSuperseded) event()          {}
