// Package messages defines what crosses the boundary between the public API
// and the scheduler's owner goroutine. Every request that expects an answer
// carries its own reply channel with a buffer of one, so the owner never
// blocks on a caller that has gone away.
package messages

import (
	"context"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/policy"
)

// Task is the payload of a core.Job: what to run and whom to tell.
type Task struct {
	Fn func(context.Context) error
	// Ctx is the RunSync caller's context; nil for background work, which
	// runs under the scheduler's own context.
	Ctx context.Context
	// Reply receives the job's one outcome (its error, a refusal, or the
	// caller's context error when it left while pending). nil for background
	// work, whose errors are logged.
	Reply chan error
	// Cancel ends the job's context; the owner sets it at start.
	Cancel context.CancelFunc
}

// TaskOf returns the Task a job carries.
func TaskOf(j *core.Job) *Task { return j.Payload.(*Task) }

// Submit asks the owner to queue a job.
type Submit struct{ Job *core.Job }

// Done reports that a job's function returned (or panicked).
type Done struct {
	Job *core.Job
	Err error
}

// Withdraw asks the owner to drop a job whose caller left. A pending job is
// removed and answered with Err; a running job is left to finish, its context
// being already cancelled.
type Withdraw struct {
	Job *core.Job
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
