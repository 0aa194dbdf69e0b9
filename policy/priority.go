package policy

import (
	"fmt"
	"math"
)

// PriorityMode says what a job type's Priority means beyond order.
type PriorityMode uint8

// The priority modes.
const (
	// PriorityValueIsCap, the default: a priority orders tiers
	// and its value is the tier's concurrency cap — at most int(p) jobs of
	// priority p run at once — unless WithTier gives the tier a cap of its
	// own. Priority 0 would cap its tier at nothing, so it is refused,
	// except with scoring (where priority 0 is the lowest business priority), where its tier
	// has no cap of its own.
	PriorityValueIsCap PriorityMode = iota
	// PriorityOrderOnly: a priority only orders; a tier
	// has a cap only where WithTier configures one (its BurstShare and
	// MaxRunning). Priorities from 0 up are valid.
	PriorityOrderOnly
)

func (m PriorityMode) String() string {
	switch m {
	case PriorityValueIsCap:
		return "value_is_cap"
	case PriorityOrderOnly:
		return "order_only"
	}
	return fmt.Sprintf("PriorityMode(%d)", uint8(m))
}

// MarshalText writes the mode's name, so that snapshots read well.
func (m PriorityMode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads a mode's name.
func (m *PriorityMode) UnmarshalText(b []byte) error {
	for _, v := range []PriorityMode{PriorityValueIsCap, PriorityOrderOnly} {
		if string(b) == v.String() {
			*m = v
			return nil
		}
	}
	return fmt.Errorf("%w: PriorityMode = %s: must be value_is_cap or order_only", ErrInvalidConfig, b)
}

// Validate checks that the mode is one of the constants.
func (m PriorityMode) Validate() error {
	if m > PriorityOrderOnly {
		return InvalidConfig("PriorityMode", m, "must be PriorityValueIsCap or PriorityOrderOnly")
	}
	return nil
}

// noCap is the cap of a tier that has none.
const noCap = math.MaxInt

// validatePriority checks a type's priority under the priority mode and
// scoring: never negative; 0 only where it does not mean a cap of 0.
func (l Limits) validatePriority(p Priority) error {
	switch {
	case p < 0:
		return InvalidConfig("JobTypeConfig.Priority", p, "must not be negative: priorities order from 0 (lowest) up")
	case p == 0 && l.PriorityMode == PriorityValueIsCap && l.Scoring == nil:
		return InvalidConfig("JobTypeConfig.Priority", p,
			"must be at least 1 while a priority's value is its tier's concurrency cap (the default); "+
				"for priorities that only order, from 0 up, use WithPriorityMode(PriorityOrderOnly) (or WithScoring)")
	}
	return nil
}
