package policy

import (
	"fmt"
	"math"
)

// RateScopeKind says what a rate limit counts: the jobs of a type, of a
// group or of a fairness key.
type RateScopeKind uint8

// The rate scope kinds.
const (
	RateType RateScopeKind = iota + 1
	RateGroup
	RateKey
)

func (k RateScopeKind) String() string {
	switch k {
	case RateType:
		return "type"
	case RateGroup:
		return "group"
	case RateKey:
		return "key"
	}
	return fmt.Sprintf("RateScopeKind(%d)", uint8(k))
}

// RateScope names what one rate limit applies to.
type RateScope struct {
	Kind RateScopeKind
	Name string
}

func (s RateScope) String() string { return fmt.Sprintf("%s %q", s.Kind, s.Name) }

// RateLimit is a token bucket on the admissions of one scope: PerSecond
// tokens a second, at most Burst saved; each admission takes the job's
// tokens (its stated cost in whole seconds, rounded up, else 1; at most
// Burst).
type RateLimit struct {
	Scope     RateScope
	PerSecond float64
	Burst     int
}

// ValidateRateLimits checks each limit and that no scope has two.
func ValidateRateLimits(limits []RateLimit) error {
	seen := map[RateScope]bool{}
	for _, l := range limits {
		if err := InvalidName(ErrInvalidConfig, "RateLimit scope name", l.Scope.Name); err != nil {
			return err
		}
		field := fmt.Sprintf("RateLimit[%s]", l.Scope)
		switch {
		case l.Scope.Kind < RateType || l.Scope.Kind > RateKey:
			return InvalidConfig(field+".Scope", l.Scope.Kind, "must be RateForType, RateForGroup or RateForKey")
		case l.Scope.Kind == RateType && l.Scope.Name == "":
			return InvalidConfig(field+".Scope", `""`, "a type scope needs a job type")
		case !(l.PerSecond > 0) || math.IsInf(l.PerSecond, 1):
			return InvalidConfig(field+".PerSecond", l.PerSecond, "must be a positive finite rate")
		case l.Burst < 1:
			return InvalidConfig(field+".Burst", l.Burst, "must be at least 1")
		case seen[l.Scope]:
			return InvalidConfig(field, "twice", "one limit per scope")
		}
		seen[l.Scope] = true
	}
	return nil
}
