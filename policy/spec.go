package policy

import (
	"fmt"
	"maps"
	"slices"
)

// Policy is the scheduling policy as data: what the scheduler's options
// say, in one value that a file can hold (package policyfile) and that a
// running scheduler can replace as a whole (Scheduler.ApplyPolicy).
//
// A field left empty sets nothing from the policy: at New the options'
// value stays; when a running scheduler applies it, the tiers, the tenant
// and key limits, the key weights, the groups' settings and the workloads
// are replaced by the policy's (empty ones included), MaxConcurrency only
// when set, the types are added (a registered type must keep its config)
// and the rate limits must stay as they are.
type Policy struct {
	// Version names this policy in the event and the metric that record
	// it once applied (a name: valid UTF-8 without NUL, at most
	// MaxLabelLen bytes).
	Version string
	// MaxConcurrency caps running jobs over all tiers; 0 leaves the cap
	// as it is.
	MaxConcurrency int
	// Tiers are the tier shares and caps, by priority (TierConfig).
	Tiers map[Priority]TierConfig
	// Tenants are the limits of fairness keys: a default and each key's.
	Tenants *TenantsConfig
	// KeyWeights are the weights of fairness keys.
	KeyWeights map[string]float64
	// Types are the job types to register, with their config.
	Types map[JobType]JobTypeConfig
	// Groups are the group weights, minimums and limits; they split
	// MaxConcurrency.
	Groups *GroupsConfig
	// RateLimits are token buckets on admissions.
	RateLimits []RateLimit
	// Workloads are the label-matched rules, first match first.
	Workloads []Workload

	// Rules added later (preemption, a starvation window, overload
	// signals) take their place below, each a field of its own.
}

// Limits returns l with the policy's settings in place: those it sets
// replace l's.
func (p Policy) Limits(l Limits) Limits {
	if p.MaxConcurrency > 0 {
		l.MaxConcurrency = p.MaxConcurrency
	}
	if p.Tiers != nil {
		l.Tiers = maps.Clone(p.Tiers)
	}
	if p.Tenants != nil {
		t := *p.Tenants
		t.Keys = maps.Clone(t.Keys)
		l.Tenants = &t
	}
	if p.KeyWeights != nil {
		l.KeyWeights = maps.Clone(p.KeyWeights)
	}
	if p.Groups != nil {
		g := *p.Groups
		g.Groups = maps.Clone(g.Groups)
		if g.Groups == nil {
			g.Groups = map[string]GroupConfig{}
		}
		l.Groups = &g
	}
	if p.RateLimits != nil {
		l.RateLimits = slices.Clone(p.RateLimits)
	}
	return l
}

// Validate checks the policy as a whole against base, the limits it
// completes: the limits it gives, every type (sorted by name) and the
// workloads.
func (p Policy) Validate(base Limits) error {
	if p.Version != "" {
		if err := checkLabel(ErrInvalidConfig, "Policy.Version", p.Version, false); err != nil {
			return err
		}
	}
	if p.MaxConcurrency < 0 {
		return InvalidConfig("Policy.MaxConcurrency", p.MaxConcurrency, "must not be negative (0 leaves the cap as it is)")
	}
	l := p.Limits(base)
	if err := l.Validate(); err != nil {
		return err
	}
	for _, t := range slices.Sorted(maps.Keys(p.Types)) {
		if err := p.Types[t].ValidateFor(t, l); err != nil {
			return fmt.Errorf("type %q: %w", CleanTextN(string(t), 64), err)
		}
	}
	for i, w := range p.Workloads {
		if w.Priority == nil {
			continue
		}
		if err := l.validatePriority(*w.Priority); err != nil { // a tier as a type's priority is one
			return fmt.Errorf("Workloads[%d %q].Priority: %w", i, CleanTextN(w.Name, 64), err)
		}
	}
	_, err := CompileWorkloads(p.Workloads)
	return err
}
