package policy

import (
	"errors"
	"time"
)

// ErrDenied: the admission policy denied the job. A Deny with its own error
// returns that error instead; a policy that panics denies the job with an
// error wrapping ErrDenied.
var ErrDenied = errors.New("fairsched: denied by the admission policy")

// JobInfo is what the admission policy knows of a job about to be admitted.
type JobInfo struct {
	Type      JobType
	ID        string
	Key       string
	Group     string
	Priority  Priority // base
	Effective Priority // aged or inherited
	// Waited is the time since submission; Attempt counts the policy's
	// earlier deferrals of the job (0 the first time it is asked).
	Waited  time.Duration
	Attempt int
	// QueueDepth and Running describe the scheduler at that moment.
	QueueDepth, Running int
}

// Decision is an admission policy's verdict: Admit, Deny or Defer.
type Decision struct {
	kind  decisionKind
	err   error
	delay time.Duration
}

type decisionKind uint8

const (
	admit decisionKind = iota
	deny
	deferral
)

// Admit lets the job start.
func Admit() Decision { return Decision{} }

// Deny drops the job: a RunSync caller gets err (ErrDenied when nil), a
// background job is dropped and reported.
func Deny(err error) Decision {
	if err == nil {
		err = ErrDenied
	}
	return Decision{kind: deny, err: err}
}

// Defer keeps the job waiting (reason deferred) for d, at least 1ns; the
// policy is asked again once d has passed and the job's turn comes.
func Defer(d time.Duration) Decision { return Decision{kind: deferral, delay: max(d, 1)} }

// Denied reports whether the decision denies, and with what error.
func (d Decision) Denied() (error, bool) { return d.err, d.kind == deny }

// Deferred reports whether the decision defers, and for how long.
func (d Decision) Deferred() (time.Duration, bool) { return d.delay, d.kind == deferral }

// AdmissionPolicy decides, in the scheduler's owner goroutine and at the
// moment a job would be admitted, whether it may start. It must be quick
// and must not call the scheduler.
type AdmissionPolicy func(JobInfo) Decision
