package fairsched

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// Policy is the scheduling policy as one value: tiers, tenant and key
// limits and weights, job types, groups, rate limits and label-matched
// workloads (package policyfile reads one from YAML). WithPolicy starts a
// scheduler with it; ApplyPolicy replaces the policy of a running one.
type Policy = policy.Policy

// Workload is a rule of a Policy that matches jobs by their labels
// (WithLabels) and sets their priority, tokens, queue timeout or fairness
// key.
type Workload = policy.Workload

// LabelRequirement is one condition of a Workload's selector.
type LabelRequirement = policy.LabelRequirement

// SelectorOp is how a LabelRequirement compares a label.
type SelectorOp = policy.SelectorOp

// The selector operators, as in Kubernetes set-based label selectors.
const (
	SelectorIn           = policy.SelectorIn
	SelectorNotIn        = policy.SelectorNotIn
	SelectorExists       = policy.SelectorExists
	SelectorDoesNotExist = policy.SelectorDoesNotExist
)

// PolicyApplied: ApplyPolicy (or a cluster's leader taking the domain's
// stored policy) applied a policy; it governs every decision from now on.
type PolicyApplied = messages.PolicyApplied

// WithPolicy starts the scheduler with policy p: the limits it sets take
// the place of the options' (whatever their order), its types are
// registered by New, its workloads match every job queued. An invalid
// policy makes New fail with ErrInvalidConfig naming the field.
func WithPolicy(p Policy) Option {
	return optionFunc(func(o *options) { o.policy = &p })
}

// ApplyPolicy replaces the policy of the running scheduler, atomically,
// through its owner goroutine: all of it applies or none, and an invalid
// policy (ErrInvalidConfig, naming the field and what would be valid)
// changes nothing. What it replaces: the tiers, the tenant and key limits,
// the key weights, the groups' weights, minimums and limits, and the
// workloads (each becomes the policy's, empty ones included); the global
// cap when the policy sets one. Its new types are registered; a type
// already registered must keep its config, and the rate limits must stay
// as they are, and a scheduler started without groups cannot start them.
// The new weights, limits and tiers reach the jobs already queued at the
// next decision; nothing running is stopped: a tier, group or key now
// over its cap starts nothing more until its jobs have drained below it.
// Each applied policy is logged, reported as PolicyApplied and counted by
// package metrics. In cluster mode the call goes to the leader, which
// applies it and stores it for every later leader.
func (s *Scheduler) ApplyPolicy(ctx context.Context, p Policy) error {
	if err := s.checkCtx(ctx, ErrInvalidConfig, "ApplyPolicy"); err != nil {
		return err
	}
	return s.eng.applyPolicy(ctx, p)
}

// startPolicy folds the policy of WithPolicy into the options' limits and
// compiles its workloads.
func (o *options) startPolicy() error {
	p := o.policy
	if p == nil {
		return nil
	}
	if err := p.Validate(o.limits); err != nil {
		return fmt.Errorf("WithPolicy: %w", err)
	}
	o.limits = p.Limits(o.limits)
	ws, err := policy.CompileWorkloads(p.Workloads)
	o.workloads = ws
	return err
}

// newCore returns the core of a scheduler (or of a cluster's leader) with
// the options' limits and workloads.
func (o *options) newCore() *core.Core {
	c := core.New(o.limits)
	if o.workloads.Len() > 0 {
		c.SetWorkloads(o.workloads)
	}
	return c
}

// registerPolicyTypes registers the types of WithPolicy's policy, in name
// order.
func (s *Scheduler) registerPolicyTypes(p *Policy) error {
	if p == nil {
		return nil
	}
	for _, t := range slices.Sorted(maps.Keys(p.Types)) {
		if err := s.eng.registerType(t, p.Types[t]); err != nil {
			return fmt.Errorf("WithPolicy: %w", err)
		}
	}
	return nil
}

func (e localEngine) applyPolicy(ctx context.Context, p Policy) error {
	return e.a.ApplyPolicy(ctx, p)
}

// applyPolicy sends p to the leader; the types it adds are registered on
// this instance (and so with the leader) once it applied. A type this
// instance registered with another config is refused first, changing
// nothing.
func (e *clusterEngine) applyPolicy(ctx context.Context, p Policy) error {
	for _, t := range slices.Sorted(maps.Keys(p.Types)) {
		if cfg, ok := e.a.TypeConfig(t); ok && cfg != p.Types[t] {
			return policy.InvalidConfig(fmt.Sprintf("Policy.Types[%q]", policy.CleanTextN(string(t), 64)), "a new config",
				"a registered type keeps its config while running: give the changed type a new name")
		}
	}
	if err := e.node.ApplyPolicy(ctx, p); err != nil {
		return err
	}
	for _, t := range slices.Sorted(maps.Keys(p.Types)) {
		if _, ok := e.a.TypeConfig(t); !ok {
			if err := e.registerType(t, p.Types[t]); err != nil {
				return err
			}
		}
	}
	return nil
}
