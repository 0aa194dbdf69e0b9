package policy

import (
	"errors"
	"math"
	"time"
)

// RetryPolicy retries a job whose function failed: up to MaxAttempts runs
// in all, the n-th retry waiting min(MaxBackoff, MinBackoff·2ⁿ⁻¹), less a
// random part of up to Jitter of it, outside the queue. The zero value (in
// a JobTypeConfig) means no retries.
type RetryPolicy struct {
	MaxAttempts            int
	MinBackoff, MaxBackoff time.Duration
	// Jitter in [0, 1]: the share of each backoff drawn at random, so that
	// jobs that failed together do not come back together.
	Jitter float64
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
	}
	return nil
}

// Backoff returns the wait before retry n (1 for the first), u in [0, 1)
// being the random draw.
func (r RetryPolicy) Backoff(n int, u float64) time.Duration {
	d := float64(r.MaxBackoff)
	if n-1 < 62 {
		d = math.Min(d, float64(r.MinBackoff)*math.Exp2(float64(n-1)))
	}
	return max(time.Duration(d*(1-r.Jitter*u)), 1)
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
