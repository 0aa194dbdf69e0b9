// Package messages defines what crosses the boundary between the public API
// and the scheduler's owner goroutine. Requests travel on one buffered
// channel; the owner counts the requests on their way and takes them all
// before it stops, so none is left behind in the buffer (see actor). Every
// request that expects an answer carries its own reply channel with a buffer
// of one, so the owner never blocks on a caller that has gone away.
// Completions travel on a buffered channel of their own: the owner outlives
// every running job, so none is lost, and a finishing job never waits for
// the owner.
package messages

import (
	"context"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/policy"
)

// Job is a core.Job with what it takes to run it and to answer for it, in
// one allocation.
type Job struct {
	core.Job
	Fn func(context.Context) error
	// Ctx and Cancel: a foreground job runs under Ctx, derived from its
	// caller's context; the owner calls Cancel when Close's deadline passes.
	// Both are nil for background work, which runs under the owner's context.
	Ctx    context.Context
	Cancel context.CancelFunc
	// Admit receives exactly one value for a foreground job: nil when it may
	// run (its caller runs it), or the reason it never will. nil for
	// background work.
	Admit chan error
}

// NewJob returns a job of type t on id for fairness key key.
func NewJob(t policy.JobType, id, key string, fn func(context.Context) error) *Job {
	j := &Job{Fn: fn}
	j.Type, j.ID, j.Key, j.Payload = t, id, key, j
	return j
}

// Of returns the Job a core.Job belongs to.
func Of(j *core.Job) *Job { return j.Payload.(*Job) }

// Foreground reports whether a caller waits for the job.
func (j *Job) Foreground() bool { return j.Admit != nil }

// Request is a message for the owner goroutine.
type Request interface{ request() }

// Submit asks the owner to queue a job.
type Submit struct{ Job *Job }

// Withdraw tells the owner that a foreground job's caller left with Err. A
// pending job is removed and answered with Err on its Admit channel; an
// admitted job is left alone, its context being already cancelled.
type Withdraw struct {
	Job *Job
	Err error
}

// Register asks the owner to add a job type.
type Register struct {
	Type   policy.JobType
	Config policy.JobTypeConfig
	Reply  chan error
}

// SnapshotRequest asks the owner for a copy of its state.
type SnapshotRequest struct{ Reply chan core.Snapshot }

// Close asks the owner to stop once pending and running work is done.
type Close struct{}

// Abort asks the owner to stop now: cancel running jobs, refuse pending ones.
type Abort struct{}

func (Submit) request()          {}
func (Withdraw) request()        {}
func (Register) request()        {}
func (SnapshotRequest) request() {}
func (Close) request()           {}
func (Abort) request()           {}

// Done reports that a job's function returned (or panicked).
type Done struct {
	Job *Job
	Err error
}
