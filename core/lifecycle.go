package core

import (
	"time"

	"github.com/fairsched/fairsched/policy"
)

// Lifecycle. What follows an attempt is a pure decision of the attempt's
// outcome and the job's retry policy: the owner applies it, for in-memory
// jobs and durable ones alike, and a leader replaying a store reaches the
// same decision from the same record.

// Step is what happens to a job once an attempt has ended.
type Step uint8

const (
	// StepDone: the attempt succeeded; the job is finished.
	StepDone Step = iota
	// StepRetry: the attempt failed and the policy allows another, after
	// a backoff.
	StepRetry
	// StepFail: the attempt failed and no other follows: a panic, a
	// Permanent error, the attempts used up, or nobody wants it any more.
	// A durable job becomes a dead job.
	StepFail
)

// AttemptEnd is an attempt's outcome as NextStep needs it.
type AttemptEnd struct {
	Err      error
	Panicked bool
	// Runs counts the job's attempts, this one included.
	Runs  int
	Retry policy.RetryPolicy
	// Unwanted: nobody wants another attempt — its caller left, Cancel
	// cancelled it, or the scheduler is giving up on pending work.
	Unwanted bool
	// Draw returns a uniform random number in [0, 1) for the backoff's
	// jitter; called once, for a retry only, so that a seeded source
	// repeats its sequence whatever else ends.
	Draw func() float64
}

// NextStep decides what follows an attempt: done, a retry after the
// returned backoff, or failure for good.
func NextStep(e AttemptEnd) (Step, time.Duration) {
	switch {
	case e.Err == nil:
		return StepDone, 0
	case e.Panicked, policy.IsPermanent(e.Err), e.Runs >= e.Retry.MaxAttempts, e.Unwanted:
		return StepFail, 0
	}
	draw := 0.0
	if e.Draw != nil {
		draw = e.Draw()
	}
	return StepRetry, e.Retry.Backoff(e.Runs, draw)
}
