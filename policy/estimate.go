package policy

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrUnknownJob: no job of that (type, id) is pending or running.
	ErrUnknownJob = errors.New("fairsched: no such job pending or running")
	// ErrStartAfterDeadline: the job's estimated start is after its
	// caller's deadline (JobTypeConfig.DeadlineAdmission); a
	// *LateStartError, which matches ErrOverloaded too.
	ErrStartAfterDeadline = errors.New("fairsched: estimated start after the deadline")
)

// ReasonStartAfterDeadline is the reason code of a refusal by deadline-aware
// admission (JobTypeConfig.DeadlineAdmission).
const ReasonStartAfterDeadline Reason = "start_after_deadline"

// LateStartError refuses a job whose estimated start is after its caller's
// deadline: it was never queued. errors.Is matches ErrStartAfterDeadline,
// and ErrOverloaded — the caller's remedy is the same (shed the request or
// try elsewhere), so a handler of overload needs no new case; the
// distinct sentinel tells the two apart where it matters.
type LateStartError struct {
	Type JobType
	ID   string
	Key  string
	// Estimate is when the job would have started, Deadline when its
	// caller stops waiting; Ahead counts the jobs ahead of it in fair
	// order that the estimate played forward.
	Estimate, Deadline time.Time
	Ahead              int
}

func (e *LateStartError) Error() string {
	return fmt.Sprintf("fairsched: job %s/%s of key %q refused: estimated start %s is %s after its deadline (%d jobs ahead)",
		e.Type, e.ID, e.Key, e.Estimate.Format(time.RFC3339Nano), e.Estimate.Sub(e.Deadline), e.Ahead)
}

// Is matches ErrStartAfterDeadline and ErrOverloaded.
func (e *LateStartError) Is(target error) bool {
	return target == ErrStartAfterDeadline || target == ErrOverloaded
}

// TierCap is how many jobs tier p may run at once, and false when nothing
// caps it.
func (u *Usage) TierCap(p Priority) (int, bool) {
	n := u.tierCap(p)
	return n, n != noCap
}
