package policy

import (
	"fmt"
	"math"
	"time"
)

// DefaultKeyWeight is the weight of a fairness key without one.
const DefaultKeyWeight = 1.0

// ValidateKeyWeight checks the weight of fairness key key: a positive,
// finite number.
func ValidateKeyWeight(key string, w float64) error {
	if !(w > 0) || math.IsInf(w, 1) {
		return InvalidConfig(fmt.Sprintf("KeyWeight[%q]", key), w, "must be a positive finite number")
	}
	return nil
}

// Weighted returns what admitting a job of cost charges to a key of weight
// w: cost / w, rounded to the nanosecond (at least 1 ns for a positive
// cost, so that every admission moves the key's virtual time).
func Weighted(cost time.Duration, w float64) time.Duration {
	if w == DefaultKeyWeight {
		return cost
	}
	c := time.Duration(math.Round(float64(cost) / w))
	if c <= 0 && cost > 0 {
		c = 1
	}
	return c
}
