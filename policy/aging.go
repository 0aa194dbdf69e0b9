package policy

import (
	"math"
	"math/bits"
	"time"
)

// AgingConfig raises the priority of pending jobs the longer they wait, so
// that a stream of higher-priority work cannot starve lower tiers forever.
// The effective priority is computed at dispatch from the time waited; it is
// never stored and no timer runs per job.
type AgingConfig struct {
	// GracePeriod is how long a job waits before aging starts.
	GracePeriod time.Duration `json:"grace_period"`
	// Interval is the time per aging step after the grace period.
	Interval time.Duration `json:"interval"`
	// Step is added to the priority per interval; 0 means 1.
	Step Priority `json:"step"`
	// MaxEffectivePriority is the ceiling aging never passes. Jobs whose
	// base priority is at or above it do not age.
	MaxEffectivePriority Priority `json:"max_effective_priority"`
	// UrgentThreshold, when not 0, is the effective priority at which a job
	// may borrow a slot past its group's allocation.
	UrgentThreshold Priority `json:"urgent_threshold,omitempty"`
}

func (c AgingConfig) step() Priority {
	if c.Step == 0 {
		return 1
	}
	return c.Step
}

// Validate checks the aging settings.
func (c AgingConfig) Validate() error {
	switch {
	case c.GracePeriod < 0:
		return InvalidConfig("AgingConfig.GracePeriod", c.GracePeriod, "must not be negative")
	case c.Interval <= 0:
		return InvalidConfig("AgingConfig.Interval", c.Interval, "must be positive")
	case c.Step < 0:
		return InvalidConfig("AgingConfig.Step", c.Step, "must not be negative (0 means 1)")
	case c.MaxEffectivePriority < 1:
		return InvalidConfig("AgingConfig.MaxEffectivePriority", c.MaxEffectivePriority, "must be at least 1")
	case c.UrgentThreshold < 0:
		return InvalidConfig("AgingConfig.UrgentThreshold", c.UrgentThreshold, "must not be negative (0 means none)")
	case c.UrgentThreshold > c.MaxEffectivePriority:
		return InvalidConfig("AgingConfig.UrgentThreshold", c.UrgentThreshold,
			"must not exceed MaxEffectivePriority: no job could age to it")
	}
	return nil
}

// steps returns how many whole intervals past the grace period a job that
// has waited this long has aged.
func (c AgingConfig) steps(waited time.Duration) int64 {
	if waited <= c.GracePeriod {
		return 0
	}
	return int64((waited - c.GracePeriod) / c.Interval)
}

// Effective returns the priority a job of base priority has after waiting
// waited:
//
//	min(base + ⌊(waited − grace) / interval⌋ · step, ceiling)   when waited > grace
//	base                                                        otherwise
//
// Aging only raises: a base at or above the ceiling is returned unchanged.
// The arithmetic cannot overflow, however large the step or the gap to the
// ceiling: the result never decreases as waited grows.
func (c AgingConfig) Effective(base Priority, waited time.Duration) Priority {
	if base >= c.MaxEffectivePriority {
		return base
	}
	if k := c.steps(waited); uint64(k) < c.stepsTo(c.MaxEffectivePriority, base) {
		// k·step < ceiling − base: the sum lies in (base, ceiling), exact
		// even where k·step alone wraps.
		return base + Priority(k)*c.step()
	}
	return c.MaxEffectivePriority
}

// stepsTo returns ⌈(target − base) / step⌉, the aging steps that take base
// to target (base < target), computed in uint64, where neither the gap nor
// the rounding up can overflow.
func (c AgingConfig) stepsTo(target, base Priority) uint64 {
	gap := uint64(target) - uint64(base) // target > base: exact in uint64
	step := uint64(c.step())
	n := gap / step
	if gap%step != 0 {
		n++
	}
	return n
}

// waitFor returns grace + n·interval, the wait after which a job has aged n
// steps, and false when it exceeds the largest time.Duration (no job ever
// waits that long).
func (c AgingConfig) waitFor(n uint64) (time.Duration, bool) {
	hi, lo := bits.Mul64(n, uint64(c.Interval))
	sum, carry := bits.Add64(lo, uint64(c.GracePeriod), 0)
	if hi != 0 || carry != 0 || sum > math.MaxInt64 {
		return 0, false
	}
	return time.Duration(sum), true
}

// NextRise returns how long a job of base priority must have waited for its
// effective priority to rise above what it is after waiting waited, and false
// when it is at the ceiling already, or when that wait would exceed the
// largest time.Duration (the rise never comes).
func (c AgingConfig) NextRise(base Priority, waited time.Duration) (time.Duration, bool) {
	if c.Effective(base, waited) >= c.MaxEffectivePriority {
		return 0, false
	}
	return c.waitFor(uint64(c.steps(waited)) + 1)
}

// MaxWait is the longest a pending job of base priority waits before its
// effective priority reaches the urgent threshold (or the ceiling when there
// is none):
//
//	grace + ⌈(target − base) / step⌉ · interval
//
// 0 when base is at or above the target already. It saturates at the
// largest time.Duration (math.MaxInt64) when that sum exceeds it: the job
// then never ages to the target. With work-conserving groups, a job waits
// at most MaxWait plus the time until the next slot of its tier frees:
// after MaxWait it is dispatched ahead of all younger work.
func (c AgingConfig) MaxWait(base Priority) time.Duration {
	target := c.MaxEffectivePriority
	if c.UrgentThreshold > 0 {
		target = c.UrgentThreshold
	}
	if base >= target {
		return 0
	}
	if w, ok := c.waitFor(c.stepsTo(target, base)); ok {
		return w
	}
	return math.MaxInt64
}

// Urgent reports whether an effective priority has reached the urgent
// threshold, which lets a job borrow a slot past its group's allocation.
func (c AgingConfig) Urgent(effective Priority) bool {
	return c.UrgentThreshold > 0 && effective >= c.UrgentThreshold
}

// Band returns how many aging steps a job of base priority has climbed
// after waiting waited: ⌊(waited − grace) / interval⌋, at most the steps
// to the ceiling (0 for a base at or above it). Each step is one rise of
// the job's effective priority.
func (c AgingConfig) Band(base Priority, waited time.Duration) uint64 {
	if base >= c.MaxEffectivePriority {
		return 0
	}
	return min(uint64(c.steps(waited)), c.stepsTo(c.MaxEffectivePriority, base))
}

// Rises returns how many times the effective priority of a job of base
// priority rose while it waited from waited = from to waited = to: the
// aging steps climbed in between, less those that leave it at or below its
// floor (an inherited priority, when floored): those do not change its
// effective priority.
func (c AgingConfig) Rises(base, floor Priority, floored bool, from, to time.Duration) uint64 {
	lo, hi := c.Band(base, from), c.Band(base, to)
	if floored && floor >= base {
		if floor >= c.MaxEffectivePriority {
			return 0
		}
		// Step b is above the floor from b = ⌊(floor − base) / step⌋ + 1 on.
		lo = max(lo, (uint64(floor)-uint64(base))/uint64(c.step()))
	}
	if hi <= lo {
		return 0
	}
	return hi - lo
}
