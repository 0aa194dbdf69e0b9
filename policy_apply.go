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
//
// Fields, from policy.Policy:
//
//	// Version names this policy in the event and the metric that record
//	// it once applied (a name: valid UTF-8 without NUL, at most
//	// MaxLabelLen bytes).
//	Version string
//
//	// MaxConcurrency caps running jobs over all tiers; 0 leaves the cap
//	// as it is.
//	MaxConcurrency int
//
//	// Tiers are the tier shares and caps, by priority (TierConfig).
//	Tiers map[Priority]TierConfig
//
//	// Tenants are the limits of fairness keys: a default and each key's.
//	Tenants *TenantsConfig
//
//	// KeyWeights are the weights of fairness keys.
//	KeyWeights map[string]float64
//
//	// Types are the job types to register, with their config.
//	Types map[JobType]JobTypeConfig
//
//	// Groups are the group weights, minimums and limits; they split
//	// MaxConcurrency.
//	Groups *GroupsConfig
//
//	// RateLimits are token buckets on admissions.
//	RateLimits []RateLimit
//
//	// Workloads are the label-matched rules, first match first.
//	Workloads []Workload
type Policy = policy.Policy

// Workload is a rule of a Policy that matches jobs by their labels
// (WithLabels) and sets their priority, tokens, queue timeout or fairness
// key.
//
// Fields, from policy.Workload:
//
//	// Name identifies the rule in errors and decision logs; unique in a
//	// list, not empty.
//	Name string
//
//	MatchLabels map[string]string
//
//	MatchExpressions []LabelRequirement
//
//	// Priority, when set, is the job's tier: the priority it competes at
//	// (higher or lower than its type's) and whose cap, share, preemption
//	// and starvation window apply to it, as if its type had that
//	// priority. Its type's own cap, conflicts and other settings still
//	// apply. An inherited priority given at the call (InheritPriority)
//	// overrides it.
//	Priority *Priority
//
//	// Tokens is the job's stated cost (as WithTokens); 0 sets none.
//	Tokens time.Duration
//
//	// QueueTimeout is how long the job may wait (as WithQueueTimeout); 0
//	// sets none.
//	QueueTimeout time.Duration
//
//	// FairnessLabelKey names the label whose value is the job's fairness
//	// key, for a job without a key of its own; a job without the label
//	// keeps its key.
//	FairnessLabelKey string
type Workload = policy.Workload

// LabelRequirement is one condition of a Workload's selector.
//
// Fields, from policy.LabelRequirement:
//
//	Key string
//
//	Op SelectorOp
//
//	Values []string // In, NotIn: at least one; Exists, DoesNotExist: none
type LabelRequirement = policy.LabelRequirement

// SelectorOp is how a LabelRequirement compares a label.
//
// Declared, in policy.SelectorOp, as:
//
//	type SelectorOp string
type SelectorOp = policy.SelectorOp

// The selector operators, as in Kubernetes set-based label selectors.
const (
	SelectorIn           = policy.SelectorIn
	SelectorNotIn        = policy.SelectorNotIn
	SelectorExists       = policy.SelectorExists
	SelectorDoesNotExist = policy.SelectorDoesNotExist
)

// RateLimit is a rate limit of a Policy (as WithRateLimit gives one).
//
// Fields, from policy.RateLimit:
//
//	Scope RateScope
//
//	PerSecond float64
//
//	Burst int
type RateLimit = policy.RateLimit

// GroupsConfig is the group settings of a Policy (as WithGroupWeight,
// WithDefaultGroupWeight, WithGroupMinSlots and WithGroupLimit give them).
//
// Fields, from policy.GroupsConfig:
//
//	// DefaultWeight is the weight of groups not in Groups, the jobs without
//	// a group included (they form the group ""). At least 1.
//	DefaultWeight int
//
//	// Groups holds the groups configured by name.
//	Groups map[string]GroupConfig
type GroupsConfig = policy.GroupsConfig

// GroupConfig is one group's settings in a GroupsConfig.
//
// Fields, from policy.GroupConfig:
//
//	// Weight is the group's relative share of the capacity left after the
//	// minimums; at least 1.
//	Weight int
//
//	// MinSlots are guaranteed to the group while it has that much work.
//	MinSlots int
//
//	// Limit caps the group's running jobs; 0 means no cap.
//	Limit int
type GroupConfig = policy.GroupConfig

// TenantsConfig is the tenant limits of a Policy: a default
// (WithTenantLimits) and each key's own (WithKeyLimits).
//
// Fields, from policy.TenantsConfig:
//
//	Default TenantLimits
//
//	Keys map[string]TenantLimits
type TenantsConfig = policy.TenantsConfig

// PolicyApplied: ApplyPolicy (or a cluster's leader taking the domain's
// stored policy) applied a policy; it governs every decision from now on.
//
// Fields, from messages.PolicyApplied:
//
//	Time time.Time
//
//	Version string
//
//	Seq uint64
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
// package metrics. A Submit racing the first policy that sets a pending
// bound (WithMaxPending, MaxPending of tenants) may return nil and be
// refused after: the refusal is logged and reported (JobRefused). In cluster mode the call goes to the leader, which
// applies it and stores it for every later leader; its types reach every
// instance of the domain (one that joins later registers them as it
// joins, one already running at the first call naming one of them).
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
	if o.hier != nil {
		_ = c.SetHierarchy(*o.hier) // checked by New
	}
	if sh := o.limits.Shed; sh != nil && !sh.Durable {
		c.SetShedKeeps(func(j *core.Job) bool {
			m := messages.Of(j)
			return m.Durable() && m.Record.Owner == "" // an Enqueue's; a cluster's RunSync and Submit have an owner
		})
	}
	if o.workloads.Len() > 0 {
		c.SetWorkloads(o.workloads)
	}
	return c
}

// registerPolicyTypes registers the types of WithPolicy's policy, in name
// order.
// withPolicyTypes returns s once the types of p (WithPolicy) are
// registered; if one cannot be, s is closed and the error returned.
func (s *Scheduler) withPolicyTypes(p *Policy) (*Scheduler, error) {
	if err := s.registerPolicyTypes(p); err != nil {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = s.Close(ctx)
		return nil, err
	}
	return s, nil
}

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
		if cfg, ok := e.node.Registry().Type(t); ok && cfg != p.Types[t] {
			return policy.InvalidConfig(fmt.Sprintf("Policy.Types[%q]", policy.CleanTextN(string(t), 64)), "a new config",
				"a registered type keeps its config while running: give the changed type a new name")
		}
	}
	if err := e.node.ApplyPolicy(ctx, p); err != nil {
		return err
	}
	for _, t := range slices.Sorted(maps.Keys(p.Types)) {
		if _, ok := e.node.Registry().Type(t); !ok {
			if err := e.registerType(t, p.Types[t]); err != nil {
				return err
			}
		}
	}
	return nil
}
