package policy

import (
	"errors"
	"math/bits"
	"time"
)

// RetryPolicy retries a job whose function failed: up to MaxAttempts runs
// in all, the n-th retry waiting min(MaxBackoff, MinBackoff·2ⁿ⁻¹), less a
// random part of up to Jitter of it, outside the queue. The zero value (in
// a JobTypeConfig) means no retries.
//
// An attempt of a durable job that was interrupted rather than failed —
// its process died, a Close whose context ended stopped it, the instance
// or worker that ran it was lost — is no failure: it runs again whatever
// the policy, and counts against MaxInterruptions, not MaxAttempts.
type RetryPolicy struct {
	MaxAttempts            int
	MinBackoff, MaxBackoff time.Duration
	// Jitter in [0, 1]: the share of each backoff drawn at random, so that
	// jobs that failed together do not come back together.
	Jitter float64
	// MaxInterruptions bounds the interrupted attempts of a durable job
	// that run again: the next interruption past it ends the job dead,
	// with an error matching workers.ErrWorkerLost — a job that kills its
	// process every time stops there instead of looping. 0 means
	// DefaultMaxInterruptions; negative is invalid.
	MaxInterruptions int `json:",omitempty"`
}

// DefaultMaxInterruptions is RetryPolicy.MaxInterruptions when it is 0,
// the zero policy's included: a durable job survives three interruptions.
const DefaultMaxInterruptions = 3

// InterruptionLimit is the policy's MaxInterruptions, 0 meaning
// DefaultMaxInterruptions.
func (r RetryPolicy) InterruptionLimit() int {
	if r.MaxInterruptions == 0 {
		return DefaultMaxInterruptions
	}
	return r.MaxInterruptions
}

// Retries reports whether the policy retries at all.
func (r RetryPolicy) Retries() bool { return r.MaxAttempts > 1 }

// Validate checks that the policy is bounded: a finite number of attempts,
// and a positive backoff between them.
func (r RetryPolicy) Validate(field string) error {
	switch {
	case r.MaxAttempts < 1:
		return InvalidConfig(field+".MaxAttempts", r.MaxAttempts, "must be at least 1 (1: no retry)")
	case r.MaxAttempts > 1 && r.MinBackoff <= 0:
		return InvalidConfig(field+".MinBackoff", r.MinBackoff, "must be positive: retries without backoff would spin")
	case r.MaxBackoff < r.MinBackoff:
		return InvalidConfig(field+".MaxBackoff", r.MaxBackoff, "must be at least MinBackoff")
	case !(r.Jitter >= 0 && r.Jitter <= 1):
		return InvalidConfig(field+".Jitter", r.Jitter, "must be in [0, 1]")
	case r.MaxInterruptions < 0:
		return InvalidConfig(field+".MaxInterruptions", r.MaxInterruptions, "must not be negative (0 means DefaultMaxInterruptions)")
	}
	return nil
}

// Backoff returns the wait before retry n (1 for the first), u in [0, 1)
// being the random draw:
//
//	ideal = min(MaxBackoff, MinBackoff·2ⁿ⁻¹)
//	wait  = ideal − ⌊ideal·Jitter·u⌋
//
// The ideal backoff is computed exactly, in integers that saturate at
// MaxBackoff instead of overflowing, and the jitter only takes from it: the
// wait is always in [0, MaxBackoff] (at least 1ns when both bounds are
// positive) and, for a given draw, never shrinks as n grows. An n below 1
// counts as 1; a draw of 1 or more counts as the largest below 1, a
// negative or NaN one as 0.
func (r RetryPolicy) Backoff(n int, u float64) time.Duration {
	ideal := r.MinBackoff
	if ideal <= 0 || r.MaxBackoff <= 0 {
		return 0
	}
	for i := 1; i < n && ideal < r.MaxBackoff; i++ {
		if ideal > r.MaxBackoff/2 {
			ideal = r.MaxBackoff // doubling would pass (or overflow past) the cap
			break
		}
		ideal *= 2
	}
	ideal = min(ideal, r.MaxBackoff)
	u = min(u, 0x1p-53*(0x1p53-1)) // the largest draw below 1
	j := r.Jitter * u
	if !(j > 0) { // no jitter, or a negative or NaN draw
		return ideal
	}
	if j >= 1 { // only with a Jitter above 1, which Validate rejects
		return 1
	}
	// ⌊ideal·j⌋ exactly: j < 1 as a 64-bit binary fraction q/2⁶⁴ (exact for
	// j ≥ 2⁻¹², within 2⁻⁶⁴ otherwise), times ideal in 128 bits. The cut is
	// below ideal, and ideal − ⌊ideal·q/2⁶⁴⌋ never decreases as ideal grows.
	q := uint64(j * 0x1p64)
	cut, _ := bits.Mul64(uint64(ideal), q)
	return ideal - time.Duration(cut)
}

// permanent marks an error that must not be retried.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent wraps err so that a retry policy does not retry it; errors.Is
// and errors.As still see err.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}

// IsPermanent reports whether err was marked with Permanent.
func IsPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p)
}
