package policy

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"
)

// DefaultKeyWeight is the weight of a fairness key without one.
const DefaultKeyWeight = 1.0

// ValidateKeyWeight checks the weight of fairness key key: a positive,
// finite number.
func ValidateKeyWeight(key string, w float64) error {
	if err := InvalidName(ErrInvalidConfig, "KeyWeight key", key); err != nil {
		return err
	}
	if !(w > 0) || math.IsInf(w, 1) {
		return InvalidConfig(fmt.Sprintf("KeyWeight[%q]", key), w, "must be a positive finite number")
	}
	if w < MinKeyWeight || w > MaxKeyWeight {
		return InvalidConfig(fmt.Sprintf("KeyWeight[%q]", key), w, fmt.Sprintf("must be within [%g, %g]: a share a million times another's is the most that means anything", MinKeyWeight, MaxKeyWeight))
	}
	return nil
}

// MinKeyWeight and MaxKeyWeight bound a fairness key's weight: a charge is
// cost / weight, and past these ratios it says nothing a scheduler can act
// on while it brings the accumulated costs near overflow.
const (
	MinKeyWeight = 1e-6
	MaxKeyWeight = 1e6
)

// MaxTokens bounds the cost a job may state (WithTokens): a year.
const MaxTokens = 365 * 24 * time.Hour

// Weighted returns what admitting a job of cost charges to a key of weight
// w: cost / w, rounded to the nanosecond (at least 1 ns for a positive
// cost, so that every admission moves the key's virtual time).
func Weighted(cost time.Duration, w float64) time.Duration {
	if w == DefaultKeyWeight {
		return min(cost, MaxCharge)
	}
	c := DurationSat(math.Round(float64(cost) / w))
	if c <= 0 && cost > 0 {
		c = 1
	}
	return min(c, MaxCharge)
}

// MaxCharge bounds what one admission charges a key, whatever its cost and
// weight: 2^56 ns, about 2.3 years, above MaxTokens so that it binds only
// on keys weighted below 1. Accumulated costs then stay far from overflow
// (see costmodel.RebaseAt).
const MaxCharge = time.Duration(1) << 56

// TenantLimits bound what one fairness key (a tenant) may hold. 0 means no
// bound.
type TenantLimits struct {
	// MaxRunning: while the key runs this many jobs, its other jobs wait
	// (reason tenant_limit) and the slots go to other keys.
	MaxRunning int
	// MaxPending: a submission while the key has this many jobs pending is
	// refused at once (ErrTenantLimit), and nothing is queued.
	MaxPending int
}

// Validate checks the limits; field names the option they come from.
func (t TenantLimits) Validate(field string) error {
	if t.MaxRunning < 0 {
		return InvalidConfig(field+".MaxRunning", t.MaxRunning, "must not be negative (0 for no bound)")
	}
	if t.MaxPending < 0 {
		return InvalidConfig(field+".MaxPending", t.MaxPending, "must not be negative (0 for no bound)")
	}
	return nil
}

// TenantsConfig holds the limits of every fairness key: Default, or the
// key's own in Keys.
type TenantsConfig struct {
	Default TenantLimits
	Keys    map[string]TenantLimits
}

// For returns the limits of key.
func (c *TenantsConfig) For(key string) TenantLimits {
	if l, ok := c.Keys[key]; ok {
		return l
	}
	return c.Default
}

// Validate checks every limit.
func (c *TenantsConfig) Validate() error {
	if err := c.Default.Validate("TenantLimits"); err != nil {
		return err
	}
	for _, key := range slices.Sorted(maps.Keys(c.Keys)) { // sorted: the same error on every run
		if err := InvalidName(ErrInvalidConfig, "KeyLimits key", key); err != nil {
			return err
		}
		if err := c.Keys[key].Validate(fmt.Sprintf("KeyLimits[%q]", key)); err != nil {
			return err
		}
	}
	return nil
}

// RefusalError is the error of a submission the scheduler refused, which
// was never queued, or of a pending job shed for a newcomer (ReasonShed).
// Reason says which rule refused it; errors.Is matches it
// with the rule's sentinel (ErrTenantLimit, ErrOverloaded).
type RefusalError struct {
	Reason Reason
	Type   JobType
	ID     string
	Key    string
	// Limit is the bound that was reached; 0 for a refusal of the load
	// signal (reason overloaded).
	Limit int
}

func (e *RefusalError) Error() string {
	if e.Reason == ReasonShed {
		return fmt.Sprintf("fairsched: job %s/%s of key %q%s%d) and a key under its fair share submitted", e.Type, e.ID, e.Key, shedWords, e.Limit)
	}
	if e.Reason == ReasonOverloaded { // a reading, not a count: no limit to tell
		return fmt.Sprintf("fairsched: job %s/%s of key %q refused: %s", e.Type, e.ID, e.Key, e.Reason)
	}
	return fmt.Sprintf("fairsched: job %s/%s of key %q refused: %s (limit %d)", e.Type, e.ID, e.Key, e.Reason, e.Limit)
}

// Is matches the sentinel of the error's reason.
func (e *RefusalError) Is(target error) bool {
	switch e.Reason {
	case ReasonTenantLimit:
		return target == ErrTenantLimit
	case ReasonPoolOverloaded, ReasonOverloaded, ReasonShed:
		return target == ErrOverloaded
	}
	return false
}

// TierConfig reserves part of the global capacity for one tier (priority)
// and caps it, in place of the tier rule "value = cap" (see PriorityMode).
// It needs a cap of some kind: shares (BurstShare), MaxRunning, or both.
type TierConfig struct {
	// MinShare of MaxConcurrency is reserved for the tier: other tiers
	// never hold those slots (⌊MinShare·C⌋ of them, at most MaxRunning).
	MinShare float64
	// BurstShare of MaxConcurrency is the most the tier may run
	// (⌊BurstShare·C⌋, at least its reservation and at least 1). It is
	// required with a MinShare; 0 without one means no share cap (then
	// MaxRunning must be set).
	BurstShare float64
	// MaxRunning caps the tier's running jobs absolutely (a
	// max_inflight), beside the shares: the tier runs at most
	// min(burst, MaxRunning). 0 means no absolute cap. A tier with only
	// MaxRunning needs no global cap.
	MaxRunning int
	// LendIdle lets other tiers use the reservation while the tier has
	// nothing waiting; borrowed slots come back as the borrowers finish.
	// Without it the reservation stays free for the tier even while it
	// has no work: reservations that add up to the whole capacity, none
	// lent, leave nothing to the other tiers.
	LendIdle bool
	// Preempt, when set, lets the tier preempt running jobs of lower
	// tiers whose types are Preemptible, within its budget (see
	// PreemptBudget). A tier with only Preempt or StarvationWindow set
	// keeps its default cap.
	Preempt *PreemptBudget
	// StarvationWindow, when positive, is the longest the tier lets a
	// lower tier that has work go without an admission: past it, the next
	// slot the tier would take goes to the starved tier's next job.
	StarvationWindow time.Duration
}

// shares reports whether the tier takes shares of the global cap.
func (t TierConfig) shares() bool { return t.MinShare != 0 || t.BurstShare != 0 }

// Slots returns the reserved and the burst slots of the tier out of a
// global capacity c: the burst is the most it may run (the largest int for
// no cap), the reservation at most that.
func (t TierConfig) Slots(c int) (reserved, burst int) {
	burst = noCap
	if t.shares() {
		reserved = shareOf(t.MinShare, c)
		burst = max(shareOf(t.BurstShare, c), reserved, 1)
	}
	if t.MaxRunning > 0 {
		burst = min(burst, t.MaxRunning)
		reserved = min(reserved, burst)
	}
	return reserved, burst
}

// shareOf returns ⌊share·c⌋, at most c: for a c near the largest int,
// float64(c) rounds up to 2⁶³, which int cannot hold.
func shareOf(share float64, c int) int {
	f := math.Floor(share * float64(c))
	if f >= float64(c) {
		return c
	}
	return int(f)
}

// ValidateTiers checks the tier configs against the global capacity c:
// shares in [0, 1], MinShare ≤ BurstShare, reservations that fit together,
// a global cap to take shares of, MaxRunning not negative, and a cap of
// some kind on each tier.
func ValidateTiers(tiers map[Priority]TierConfig, c int) error {
	if len(tiers) == 0 {
		return nil
	}
	// In sorted order, so that the error names the same tier on every run
	// and the float sum of the MinShares rounds the same way.
	sum := 0.0
	for _, p := range slices.Sorted(maps.Keys(tiers)) {
		t := tiers[p]
		field := fmt.Sprintf("Tier[%d]", p)
		if t.MaxRunning < 0 {
			return InvalidConfig(field+".MaxRunning", t.MaxRunning, "must not be negative (0 for no absolute cap)")
		}
		if err := t.validateRules(field); err != nil {
			return err
		}
		switch {
		case !t.shares() && t.MaxRunning == 0 && t.rulesOnly():
			continue // the tier keeps its default cap
		case !t.shares() && t.MaxRunning == 0:
			return InvalidConfig(field, "no cap", "set BurstShare (with MinShare) or MaxRunning")
		case !t.shares():
			continue
		case c <= 0:
			return InvalidConfig("MaxConcurrency", c, "tier shares (WithTier's MinShare, BurstShare) need a global cap")
		case !(t.MinShare >= 0 && t.MinShare <= 1):
			return InvalidConfig(field+".MinShare", t.MinShare, "must be in [0, 1]")
		case !(t.BurstShare > 0 && t.BurstShare <= 1):
			return InvalidConfig(field+".BurstShare", t.BurstShare, "must be in (0, 1]")
		case t.MinShare > t.BurstShare:
			return InvalidConfig(field+".MinShare", t.MinShare, fmt.Sprintf("must not exceed BurstShare %v", t.BurstShare))
		}
		sum += t.MinShare
	}
	if sum > 1+1e-9 {
		return InvalidConfig("Tier MinShares", sum, "must add up to at most 1")
	}
	return nil
}
