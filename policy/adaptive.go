package policy

import (
	"math"
	"time"
)

// AdaptiveLimitConfig lets the global limit move between Min and Max with
// the latency jobs show, in the additive-increase, multiplicative-decrease
// style of TCP congestion control and Netflix's concurrency-limits. The
// signal is each finished job's wall time against the learned cost its
// (type, id) had when it started — the cost model's own estimate — so
// jobs of every size speak the same language: a ratio of 1 is a job as
// fast as usual.
//
//	ratio = elapsed / estimate at admission
//	ratio > Tolerance                → limit = max(Min, ⌊limit · Backoff⌋)
//	ratio ≤ Tolerance, limit in use  → limit = min(Max, limit + 1)
//
// "In use" means the finishing job was one of at least limit running jobs:
// the limit, not the work, was what bounded concurrency. A service that
// slows down as load grows thus sheds concurrency fast and wins it back one
// slot at a time. With a LoadTarget the same steps follow a load signal's
// readings instead (NextLoad).
type AdaptiveLimitConfig struct {
	Min, Max int
	// Tolerance is the ratio above which a job counts as slow; default 1.5.
	Tolerance float64
	// Backoff multiplies the limit on a slow job; in (0, 1), default 0.9.
	Backoff float64
	// LoadTarget, when above 0, makes the limit follow the load signal
	// (Limits.Load) instead of latency: a reading above it backs off, one
	// at or below it grows the limit by one while the limit is in use.
	// In (0, 1).
	LoadTarget float64
}

// Defaults of AdaptiveLimitConfig.
const (
	DefaultTolerance = 1.5
	DefaultBackoff   = 0.9
)

// WithDefaults fills in the zero fields.
func (a AdaptiveLimitConfig) WithDefaults() AdaptiveLimitConfig {
	if a.Tolerance == 0 {
		a.Tolerance = DefaultTolerance
	}
	if a.Backoff == 0 {
		a.Backoff = DefaultBackoff
	}
	return a
}

// Validate checks the bounds and factors.
func (a AdaptiveLimitConfig) Validate() error {
	switch {
	case a.Min < 1:
		return InvalidConfig("AdaptiveLimit.Min", a.Min, "must be at least 1")
	case a.Max < a.Min:
		return InvalidConfig("AdaptiveLimit.Max", a.Max, "must be at least Min")
	case !(a.Tolerance > 1) || math.IsInf(a.Tolerance, 1):
		return InvalidConfig("AdaptiveLimit.Tolerance", a.Tolerance, "must be a finite ratio above 1")
	case !(a.Backoff > 0 && a.Backoff < 1):
		return InvalidConfig("AdaptiveLimit.Backoff", a.Backoff, "must be in (0, 1)")
	case !(a.LoadTarget >= 0 && a.LoadTarget < 1):
		return InvalidConfig("AdaptiveLimit.LoadTarget", a.LoadTarget, "must be in (0, 1), or 0 to follow latency")
	}
	return nil
}

// Next returns the limit after a job of the given wall time and estimate
// finished; inUse reports whether limit jobs or more were running with it.
func (a AdaptiveLimitConfig) Next(limit int, elapsed, estimate time.Duration, inUse bool) int {
	if estimate > 0 && float64(elapsed) > a.Tolerance*float64(estimate) {
		return max(a.Min, int(math.Floor(float64(limit)*a.Backoff)))
	}
	if inUse {
		if limit >= a.Max { // not limit+1 first: it overflows at the largest int
			return a.Max
		}
		return limit + 1
	}
	return limit
}
