package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/workers"
)

// Lifecycle. What follows an attempt is a pure decision of the attempt's
// outcome and the job's retry policy: the owner applies it, for in-memory
// jobs and durable ones alike, and a leader replaying a store reaches the
// same decision from the same record.
//
// An attempt of a durable job ends in one of two ways besides success: it
// failed (its function returned an error, or panicked), or it was
// interrupted — the process died under it, a Close whose context ended
// stopped it, or the instance or worker slot that ran it was lost. A
// failure is weighed by the retry policy (MaxAttempts); an interruption
// says nothing about the job, so it runs again whatever the policy, and
// only MaxInterruptions bounds how often (a job that kills its process
// every time must end somewhere).

// Step is what happens to a job once an attempt has ended.
type Step uint8

const (
	// StepDone: the attempt succeeded; the job is finished.
	StepDone Step = iota
	// StepRetry: the attempt failed and the policy allows another, after
	// a backoff.
	StepRetry
	// StepFail: the attempt failed and no other follows: a panic, a
	// Permanent error, the attempts used up, nobody wants it any more, or
	// a durable job interrupted past its MaxInterruptions. A durable job
	// becomes a dead job.
	StepFail
	// StepRerun: the durable job's attempt was interrupted; it runs again
	// at once, the attempt counted as an interruption, not as a failure.
	StepRerun
	// StepKeep: the durable job's attempt was interrupted by its scheduler
	// stopping; it stays pending in its store, and the next start counts
	// the interruption (Restored).
	StepKeep
	// StepRequeue: the durable job's start could not be written, so its
	// function never ran: nothing counts, and it is admitted again after
	// UnwrittenStartDelay (or, if the scheduler stops, stays pending in
	// its store).
	StepRequeue
)

// UnwrittenStartDelay is how long a durable job whose start could not be
// written waits before it is admitted again: the store failed, and an
// immediate retry would spin on it.
const UnwrittenStartDelay = 100 * time.Millisecond

// AttemptEnd is an attempt's outcome as NextStep needs it.
type AttemptEnd struct {
	Err      error
	Panicked bool
	// Runs counts the job's failed attempts, this one included; the
	// interrupted ones are not among them.
	Runs  int
	Retry policy.RetryPolicy
	// Unwanted: nobody wants another attempt — its caller left, Cancel
	// cancelled it, or the scheduler is giving up on pending work.
	Unwanted bool
	// Durable: the job is a durable one, whose attempts can be
	// interrupted (Interrupted) rather than fail.
	Durable bool
	// Stopping: the scheduler is stopping (a Close whose context ended):
	// an attempt that ended because its context did is interrupted.
	Stopping bool
	// Interruptions counts the job's interrupted attempts before this one.
	Interruptions int
	// Unstarted: the durable job's start could not be written; its
	// function did not run.
	Unstarted bool
	// Draw returns a uniform random number in [0, 1) for the backoff's
	// jitter; called once, for a retry only, so that a seeded source
	// repeats its sequence whatever else ends.
	Draw func() float64
}

// Interrupted reports whether the attempt was interrupted rather than
// failed: a durable job's attempt whose instance, grant or worker slot was
// lost (an error matching workers.ErrWorkerLost that is not Permanent —
// a lost function, such as that of a RunSync whose instance is gone, is
// Permanent), or that a stopping scheduler's ended context ended. A panic
// and a Cancel are never interruptions.
func (e AttemptEnd) Interrupted() bool {
	if !e.Durable || e.Err == nil || e.Panicked || e.Unwanted || policy.IsPermanent(e.Err) {
		return false
	}
	return errors.Is(e.Err, workers.ErrWorkerLost) || e.Stopping && errors.Is(e.Err, context.Canceled)
}

// NextStep decides what follows an attempt: done, a retry after the
// returned backoff, a re-run of an interrupted durable job (at once, or
// after the restart), a new admission of one whose start could not be
// written, or failure for good.
func NextStep(e AttemptEnd) (Step, time.Duration) {
	switch {
	case e.Err == nil:
		return StepDone, 0
	case e.Unstarted && e.Stopping:
		return StepKeep, 0
	case e.Unstarted:
		return StepRequeue, UnwrittenStartDelay
	case e.Interrupted() && e.Interruptions >= e.Retry.InterruptionLimit():
		return StepFail, 0
	case e.Interrupted() && e.Stopping:
		return StepKeep, 0
	case e.Interrupted():
		return StepRerun, 0
	case e.Panicked, policy.IsPermanent(e.Err), e.Runs >= e.Retry.MaxAttempts, e.Unwanted:
		return StepFail, 0
	}
	draw := 0.0
	if e.Draw != nil {
		draw = e.Draw()
	}
	return StepRetry, e.Retry.Backoff(e.Runs, draw)
}

// InterruptedError is the end of a durable job interrupted n times, more
// than its MaxInterruptions allows; last is the last interruption's
// cause. It matches workers.ErrWorkerLost and is Permanent.
func InterruptedError(n int, last error) error {
	return policy.Permanent(fmt.Errorf("%w: interrupted %d times, more than its retry policy's MaxInterruptions allows; the last: %w",
		workers.ErrWorkerLost, n, last))
}

// ErrInterrupted is the cause of an interruption a restart finds: an
// attempt that started and whose end was never written (the process died,
// or a Close whose context ended stopped it). It matches
// workers.ErrWorkerLost.
var ErrInterrupted = fmt.Errorf("%w: its process stopped while it ran", workers.ErrWorkerLost)

// Restored applies to rec, a pending record read back at a start (or by a
// new leader), the rule of attempts that never ended: its last attempt
// started (the start is written before the handler runs) and no end was
// written for it, so it was interrupted. It counts the interruption and
// marks the attempt ended, and reports whether it did so and, if so, the
// step that follows under retry: StepRerun, or StepFail past
// MaxInterruptions (the job is dead, InterruptedError). A record a
// previous leader granted and that still runs (Granted) was not
// interrupted.
func Restored(rec *JobRecord, retry policy.RetryPolicy) (bool, Step) {
	if rec.State != RecordPending || rec.Granted != "" || rec.Attempt <= rec.EndedAttempt {
		return false, StepDone
	}
	step, _ := NextStep(AttemptEnd{Err: ErrInterrupted, Durable: true, Retry: retry, Interruptions: rec.Interruptions})
	rec.Interruptions++
	rec.EndedAttempt = rec.Attempt
	return true, step
}
