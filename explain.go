package fairsched

import (
	"context"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/policy"
)

var (
	// ErrUnknownJob: Explain found no job of that (type, id) pending or
	// running.
	ErrUnknownJob = policy.ErrUnknownJob
	// ErrStartAfterDeadline: deadline-aware admission
	// (JobTypeConfig.DeadlineAdmission) refused a RunSync whose estimated
	// start is after its context's deadline; the error is a
	// *LateStartError, which matches ErrOverloaded too.
	ErrStartAfterDeadline = policy.ErrStartAfterDeadline
)

// ReasonStartAfterDeadline: deadline-aware admission refused a RunSync
// whose estimated start is after its context's deadline (the reason of its
// JobRefused event and of the refused_total metric).
const ReasonStartAfterDeadline = policy.ReasonStartAfterDeadline

// Explanation says why a job waits: see Scheduler.Explain.
//
// Fields, from core.Explanation:
//
//	Type policy.JobType
//
//	ID string
//
//	FairnessKey string
//
//	Group string
//
//	Submitted time.Time
//
//	// Running: the job runs, since Started; the rest is empty.
//	Running bool
//
//	Started time.Time
//
//	// Reasons and Reason are the snapshot's (PendingJob).
//	Reasons []policy.Reason
//
//	Reason policy.Reason
//
//	// Blockers name what holds the job under Reason (at most
//	// MaxBlockers).
//	Blockers []Blocker
//
//	// Estimate is when it is expected to start (nil while running).
//	Estimate *StartEstimate
//
//	// History is what it has waited on, oldest first (at most
//	// HistoryPerJob); HistoryDropped counts the notes it lost to the
//	// bounds.
//	History []WaitNote
//
//	HistoryDropped int
type Explanation = core.Explanation

// Blocker names what holds a pending job under its binding rule.
//
// Fields, from core.Blocker:
//
//	Reason policy.Reason
//
//	Type policy.JobType
//
//	ID string
//
//	Key *string
//
//	Group string
//
//	Tier *policy.Priority
//
//	Running int
type Blocker = core.Blocker

// StartEstimate is when a pending job is expected to start.
//
// Fields, from core.StartEstimate:
//
//	// At is the estimated start; never before the estimate was made.
//	At time.Time
//
//	// Ahead counts the jobs played forward before this one that took a
//	// slot.
//	Ahead int
//
//	// Bounded: more than EstimateBound jobs are ahead, At is a lower
//	// bound.
//	Bounded bool
type StartEstimate = core.StartEstimate

// WaitNote is one reason a job has waited on, from when.
//
// Fields, from core.WaitNote:
//
//	Reason policy.Reason
//
//	Since time.Time
type WaitNote = core.WaitNote

// LateStartError refuses a RunSync whose estimated start is after its
// context's deadline (JobTypeConfig.DeadlineAdmission).
//
// Fields, from policy.LateStartError:
//
//	Type JobType
//
//	ID string
//
//	Key string
//
//	// Estimate is when the job would have started, Deadline when its
//	// caller stops waiting; Ahead counts the jobs ahead of it in fair
//	// order that the estimate played forward.
//	Estimate, Deadline time.Time
//
//	Ahead int
type LateStartError = policy.LateStartError

// Explain says why the job of (t, id) waits — the pending one that arrived
// first, else a running one: every rule that holds it, what holds it under
// the binding one by name (the running jobs on its conflict id, the keys,
// group or tiers holding the slots of its cap; at most core.MaxBlockers),
// its estimated start (core.StartEstimate says how it is made and what it
// leaves out), and the reasons it has waited on with their times (at most
// core.HistoryPerJob per job, core.HistoryTotal in all; a history goes
// with its job). Computed on request: O(pending) to find the job, O(lanes
// + core.EstimateBound·log lanes) for the estimate, on the scheduler's
// owner goroutine.
//
// It fails with ErrUnknownJob when no such job is pending or running,
// ErrUnknownJobType for a type never registered, ErrInvalidJob for an
// invalid name, ErrClosed after Close and ctx's error if ctx ends first. In
// cluster mode the leader answers; another instance asks it through the
// database, as Cancel does, and gets an error matching
// cluster.ErrNoLeader when no leader answers within ctx.
func (s *Scheduler) Explain(ctx context.Context, t JobType, id string) (Explanation, error) {
	if err := s.checkCtx(ctx, ErrInvalidJob, "Explain"); err != nil {
		return Explanation{}, err
	}
	if err := s.eng.check(t, id, true); err != nil {
		return Explanation{}, err
	}
	return s.eng.explain(ctx, t, id)
}
