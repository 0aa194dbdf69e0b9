package policy

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"
)

// JobType names a kind of work. The application defines its own constants;
// the scheduler attaches no meaning to them beyond the registered config.
type JobType string

// Priority orders tiers (higher first), from 0 up. By default
// (PriorityValueIsCap) its value is also the tier's concurrency cap: at most
// int(p) jobs of priority p run at once. With PriorityOrderOnly it only
// orders, and a tier has a cap only where a TierConfig gives one.
type Priority int

// ConflictGroup names a set of job types that must never run concurrently on
// the same job id. The empty group never conflicts.
type ConflictGroup string

// ConflictMode says how a job holds its (conflict group, id) while it runs,
// like the two sides of a readers–writer lock.
type ConflictMode uint8

const (
	// ConflictExclusive, the zero value: the job runs alone on its
	// (group, id) — no other job of the group runs on the id meanwhile.
	ConflictExclusive ConflictMode = iota
	// ConflictShared: jobs of shared types run together on a (group, id),
	// never alongside an exclusive one. Once an exclusive job waits for the
	// (group, id), shared jobs that arrive after it wait behind it (reason
	// conflict), so a stream of shared jobs cannot starve it — unless it
	// waits on its own (its group paused, a deferral or backoff, no worker
	// slot for its type): see the package docs.
	ConflictShared
)

// String returns "exclusive" or "shared".
func (m ConflictMode) String() string {
	switch m {
	case ConflictExclusive:
		return "exclusive"
	case ConflictShared:
		return "shared"
	}
	return fmt.Sprintf("ConflictMode(%d)", uint8(m))
}

// MarshalText encodes the mode by name, for JSON and YAML.
func (m ConflictMode) MarshalText() ([]byte, error) {
	if m > ConflictShared {
		return nil, InvalidConfig("ConflictMode", uint8(m), "is not a conflict mode")
	}
	return []byte(m.String()), nil
}

// UnmarshalText decodes "exclusive" (or "") and "shared".
func (m *ConflictMode) UnmarshalText(b []byte) error {
	switch string(b) {
	case "", "exclusive":
		*m = ConflictExclusive
	case "shared":
		*m = ConflictShared
	default:
		return InvalidConfig("ConflictMode", string(b), `must be "exclusive" or "shared"`)
	}
	return nil
}

// JobTypeConfig is the registration of one job type.
type JobTypeConfig struct {
	// DefaultCost is the cost charged for a (type, id) the scheduler has not
	// observed yet. Must be positive.
	DefaultCost time.Duration `json:"default_cost"`
	// MaxConcurrency caps running jobs of this type. Zero means no per-type
	// cap (the tier and global caps still apply). Must not be negative.
	MaxConcurrency int `json:"max_concurrency"`
	// ConflictGroup: jobs whose types share a non-empty group never run at
	// the same time on the same job id. A name (valid UTF-8 without NUL, at
	// most MaxNameLen bytes).
	ConflictGroup ConflictGroup `json:"conflict_group,omitempty"`
	// ConflictMode says whether the type's jobs run alone on their
	// (ConflictGroup, id) — ConflictExclusive, the zero value — or together
	// with other shared jobs (ConflictShared). It needs a ConflictGroup.
	ConflictMode ConflictMode `json:"conflict_mode,omitzero"`
	// Priority is the tier: higher is dispatched first. By default the
	// value is also the tier's concurrency cap, and must be at least 1;
	// with PriorityOrderOnly (or with scoring) it may be 0. Never negative.
	Priority Priority `json:"priority"`
	// QueueTimeout is how long a job of the type may stay pending before it
	// expires (ErrExpired), unless the job sets its own (WithQueueTimeout); time its
	// group spends paused does not count. Zero means no limit; it must not
	// be negative.
	QueueTimeout time.Duration `json:"queue_timeout,omitempty"`
	// Retry retries the type's failed jobs (unless a job sets its own with
	// WithRetry); the zero value retries nothing.
	Retry RetryPolicy `json:"retry,omitzero"`
	// Coalesce: requests for a (type, id) that is pending share one run of
	// the first request's function, which executes in a scheduler
	// goroutine; every RunSync caller gets its result (a caller that leaves
	// is answered at once), and a run that has started is never joined.
	Coalesce bool `json:"coalesce,omitempty"`
	// RequiresWorker: jobs of the type run only on a free worker slot that
	// supports the type (Scheduler.RegisterWorker), one job per slot; they
	// wait with reason no_workers while no registered slot supports the
	// type and worker_busy while every one that does is taken.
	RequiresWorker bool `json:"requires_worker,omitempty"`
	// Preemptible: a running background job of the type may be preempted
	// by a higher tier that preempts (TierConfig.Preempt): its context is
	// cancelled with cause ErrPreempted and it is queued again, the attempt
	// not counted.
	Preemptible bool `json:"preemptible,omitempty"`
	// DeadlineAdmission: a RunSync whose context has a deadline is refused
	// at once (LateStartError) when its estimated start is after the
	// deadline, rather than queued to give up waiting later.
	DeadlineAdmission bool `json:"deadline_admission,omitempty"`
}

// Reason says why a pending job is not running.
type Reason string

// The reasons a pending job waits. A snapshot lists every rule that holds
// a job (PendingJob.Reasons), narrowest first — the job's own state, its
// conflict, type, key, group, tier, the workers, the global cap — and the
// first is its headline (PendingJob.Reason).
const (
	ReasonGlobalLimit Reason = "global_limit" // WithMaxConcurrency reached
	ReasonTierLimit   Reason = "tier_limit"   // the tier runs its cap: int(Priority), or its TierConfig's
	ReasonTypeLimit   Reason = "type_limit"   // JobTypeConfig.MaxConcurrency reached
	ReasonConflict    Reason = "conflict"     // a job of the same conflict group runs on the same id
	ReasonGroupLimit  Reason = "group_limit"  // the job's group runs its allocation of slots (or its limit)
	ReasonPaused      Reason = "paused"       // the job's group is paused
	ReasonDeferred    Reason = "deferred"     // the admission policy deferred it; it waits out the delay
	ReasonBackoff     Reason = "backoff"      // an attempt failed; it waits out its backoff before the next
	ReasonScheduled   Reason = "scheduled"    // a durable job enqueued to run later (RunAt, Delay): not due yet
	ReasonNoHandler   Reason = "no_handler"   // a durable job whose type has no handler yet (RegisterHandler)
	ReasonRateLimited Reason = "rate_limited" // a rate limit of its type, group or key has no token
	// ReasonNoWorkers: the job's type requires a worker and no registered
	// slot supports it.
	ReasonNoWorkers Reason = "no_workers"
	// ReasonWorkerBusy: every registered slot that supports the job's type
	// is running a job.
	ReasonWorkerBusy Reason = "worker_busy"
	// ReasonNoFreeSlot: cluster mode; every Slot of the instances is taken.
	ReasonNoFreeSlot Reason = "no_free_slot"
	// Waiting, or refused: its fairness key runs TenantLimits.MaxRunning
	// jobs, or (refused, never queued) has MaxPending jobs waiting.
	ReasonTenantLimit Reason = "tenant_limit"
	// Refused: the job was never queued.
	ReasonPoolOverloaded Reason = "pool_overloaded" // the queue holds Limits.MaxPending jobs
)

// Sentinel errors. Match them with errors.Is; the returned errors wrap them
// with the field or value at fault.
var (
	ErrInvalidConfig  = errors.New("fairsched: invalid config")
	ErrUnknownJobType = errors.New("fairsched: unknown job type")
	ErrDuplicateType  = errors.New("fairsched: job type already registered")
	ErrInvalidJob     = errors.New("fairsched: invalid job")
	// ErrTenantLimit: the job's fairness key is at its limit
	// (RefusalError with ReasonTenantLimit).
	ErrTenantLimit = errors.New("fairsched: tenant limit")
	// ErrOverloaded: the scheduler's queue is full (RefusalError with
	// ReasonPoolOverloaded), its load signal reads overloaded with
	// OverloadRefuse (ReasonOverloaded), shedding dropped the job
	// (ReasonShed), or a LateStartError refused it.
	ErrOverloaded = errors.New("fairsched: overloaded")
	// ErrExpired: the job was still pending when its queue timeout ran out.
	ErrExpired = errors.New("fairsched: job expired while pending")
)

// InvalidConfig returns an error wrapping ErrInvalidConfig that names the
// field at fault, its value and the rule it breaks.
func InvalidConfig(field string, value any, rule string) error {
	return fmt.Errorf("%w: %s = %v: %s", ErrInvalidConfig, field, value, rule)
}

// Validate checks a job type registration under the default limits (a
// priority's value is its tier's cap): see ValidateFor.
func (c JobTypeConfig) Validate(t JobType) error { return c.ValidateFor(t, DefaultLimits()) }

// ValidateFor checks a job type registration under the scheduler's limits,
// whose priority mode and scoring decide whether priority 0 is valid.
func (c JobTypeConfig) ValidateFor(t JobType, l Limits) error {
	if err := InvalidName(ErrInvalidConfig, "JobType", string(t)); err != nil {
		return err
	}
	if err := InvalidName(ErrInvalidConfig, "JobTypeConfig.ConflictGroup", string(c.ConflictGroup)); err != nil {
		return err
	}
	switch {
	case t == "":
		return InvalidConfig("JobType", `""`, "must not be empty")
	case c.DefaultCost <= 0:
		return InvalidConfig("JobTypeConfig.DefaultCost", c.DefaultCost, "must be positive")
	case c.MaxConcurrency < 0:
		return InvalidConfig("JobTypeConfig.MaxConcurrency", c.MaxConcurrency, "must not be negative (0 means no per-type cap)")
	}
	if err := l.validatePriority(c.Priority); err != nil {
		return err
	}
	switch {
	case c.ConflictMode > ConflictShared:
		return InvalidConfig("JobTypeConfig.ConflictMode", uint8(c.ConflictMode), "is not a conflict mode")
	case c.ConflictMode == ConflictShared && c.ConflictGroup == "":
		return InvalidConfig("JobTypeConfig.ConflictMode", c.ConflictMode, "shared needs a ConflictGroup to share")
	case c.QueueTimeout < 0:
		return InvalidConfig("JobTypeConfig.QueueTimeout", c.QueueTimeout, "must not be negative (0 means no limit)")
	case c.Retry != RetryPolicy{}:
		return c.Retry.Validate("JobTypeConfig.Retry")
	}
	return nil
}

// ValidateJob checks the parts of a job the caller names at the call: its
// type and id follow the rule for caller strings (CheckName), the id is not
// empty, and a function is given.
func ValidateJob(t JobType, jobID string, hasFn bool) error {
	if err := InvalidName(ErrInvalidJob, "job type", string(t)); err != nil {
		return err
	}
	if err := InvalidName(ErrInvalidJob, "job id", jobID); err != nil {
		return err
	}
	switch {
	case jobID == "":
		return fmt.Errorf("%w: empty job id (type %q)", ErrInvalidJob, t)
	case !hasFn:
		return fmt.Errorf("%w: nil function (type %q, id %q)", ErrInvalidJob, t, jobID)
	}
	return nil
}

// ValidateJobNames checks the names a job's options give it — its fairness
// key and its group — against the rule for caller strings (CheckName).
func ValidateJobNames(key, group string) error {
	if err := InvalidName(ErrInvalidJob, "fairness key", key); err != nil {
		return err
	}
	return InvalidName(ErrInvalidJob, "group", group)
}

// Limits are the scheduler-wide settings the admission rules use.
type Limits struct {
	// MaxConcurrency caps all running jobs; 0 means unlimited.
	MaxConcurrency int
	// CostSmoothing is the EMA factor α in (0, 1].
	CostSmoothing float64
	// KeyTTL is how long an idle fairness key or an unused cost estimate is
	// kept. Any positive duration is valid. The scheduler evicts on a tick
	// every max(KeyTTL/4, 1ms) — the floor keeps a tiny TTL (KeyTTL/4 is 0
	// below 4ns) from making a ticker with no period — so idle state goes
	// between KeyTTL and KeyTTL + max(KeyTTL/4, 1ms) after its last use.
	KeyTTL time.Duration
	// MaxCostEstimates bounds the cost estimates learned per (type, id):
	// past it, learning a new one drops the least recently used, whose
	// (type, id) starts again from its type's default cost. 0 means
	// DefaultMaxCostEstimates. Ids made fresh per job (a request id, a
	// timestamp) would otherwise fill it for a whole KeyTTL.
	MaxCostEstimates int
	// MaxIdleKeys bounds the idle fairness keys kept (a key is idle while
	// it has no pending or running job): past it, a key that becomes idle
	// pushes out the least recently used one, forgotten as if its KeyTTL
	// had passed. 0 means DefaultMaxIdleKeys.
	MaxIdleKeys int
	// Aging, when not nil, raises the effective priority of waiting jobs.
	Aging *AgingConfig
	// Groups, when not nil, splits MaxConcurrency among job groups.
	Groups *GroupsConfig
	// MaxPending bounds the number of pending jobs; a submission beyond it
	// is refused (ErrOverloaded). 0 means unbounded.
	MaxPending int
	// Shed, when not nil, sheds the newest job of the key furthest over
	// its fair share instead of refusing a newcomer under it (ShedConfig).
	Shed *ShedConfig
	// Tenants, when not nil, limits each fairness key (see TenantLimits).
	Tenants *TenantsConfig
	// Scoring, when not nil, orders dispatch by linear score (see
	// ScoreConfig) instead of by effective priority.
	Scoring *ScoreConfig
	// Adaptive, when not nil, moves MaxConcurrency between its Min and Max
	// with job latency (MaxConcurrency is the starting limit).
	Adaptive *AdaptiveLimitConfig
	// Load, when not nil, reads a load signal: an overloaded reading
	// defers or refuses new work (see LoadConfig), and an adaptive limit
	// with a LoadTarget follows it.
	Load *LoadConfig
	// RateLimits are token buckets on the admissions of types, groups and
	// fairness keys.
	RateLimits []RateLimit
	// Admission, when not nil, is asked before each admission (see
	// AdmissionPolicy).
	Admission AdmissionPolicy
	// Tiers reserve and cap shares of MaxConcurrency per priority, and cap
	// a tier's running jobs (MaxRunning); tiers without one keep the rule
	// "value = cap", or have no cap with PriorityOrderOnly.
	Tiers map[Priority]TierConfig
	// PriorityMode says whether a priority's value is its tier's cap (the
	// default) or whether priorities only order (PriorityOrderOnly).
	PriorityMode PriorityMode
	// KeyWeights are the weights of fairness keys (DefaultKeyWeight for the
	// others): admitting a job charges its cost divided by its key's weight,
	// so saturated keys receive service in proportion to their weights.
	KeyWeights map[string]float64
}

// GroupConfig is the share settings of one group.
type GroupConfig struct {
	// Weight is the group's relative share of the capacity left after the
	// minimums; at least 1.
	Weight int `json:"weight"`
	// MinSlots are guaranteed to the group while it has that much work.
	MinSlots int `json:"min_slots,omitempty"`
	// Limit caps the group's running jobs; 0 means no cap.
	Limit int `json:"limit,omitempty"`
}

// GroupsConfig configures weighted group slots.
type GroupsConfig struct {
	// DefaultWeight is the weight of groups not in Groups, the jobs without
	// a group included (they form the group ""). At least 1.
	DefaultWeight int `json:"default_weight"`
	// Groups holds the groups configured by name.
	Groups map[string]GroupConfig `json:"groups"`
}

// Config returns the settings of group name: its own, or the default
// weight.
func (c *GroupsConfig) Config(name string) GroupConfig {
	if g, ok := c.Groups[name]; ok {
		return g
	}
	return GroupConfig{Weight: c.DefaultWeight}
}

// Validate checks the group settings against the global cap.
func (c *GroupsConfig) Validate(maxConcurrency int) error {
	if maxConcurrency < 1 {
		return InvalidConfig("MaxConcurrency", "unlimited", "is required with group weights, minimums or limits: the capacity they split")
	}
	if c.DefaultWeight < 1 {
		return InvalidConfig("DefaultGroupWeight", c.DefaultWeight, "must be at least 1")
	}
	mins, overflow := 0, false
	for _, name := range slices.Sorted(maps.Keys(c.Groups)) { // sorted: the same error on every run
		g := c.Groups[name]
		if err := g.Validate(name); err != nil {
			return err
		}
		overflow = overflow || g.MinSlots > math.MaxInt-mins // each is at least 0
		mins += g.MinSlots
	}
	switch {
	case overflow:
		return InvalidConfig("GroupMinSlots", fmt.Sprintf("more than %d", math.MaxInt), fmt.Sprintf("the minimums add up to more than MaxConcurrency (%d)", maxConcurrency))
	case mins > maxConcurrency:
		return InvalidConfig("GroupMinSlots", mins, fmt.Sprintf("the minimums add up to more than MaxConcurrency (%d)", maxConcurrency))
	}
	return nil
}

// Validate checks one group's settings, and its name (CheckName).
func (g GroupConfig) Validate(name string) error {
	if err := InvalidName(ErrInvalidConfig, "group", name); err != nil {
		return err
	}
	switch {
	case g.Weight < 1:
		return InvalidConfig(fmt.Sprintf("GroupWeight[%q]", name), g.Weight, "must be at least 1")
	case g.MinSlots < 0:
		return InvalidConfig(fmt.Sprintf("GroupMinSlots[%q]", name), g.MinSlots, "must not be negative")
	case g.Limit < 0:
		return InvalidConfig(fmt.Sprintf("GroupLimit[%q]", name), g.Limit, "must not be negative (0 means no cap)")
	case g.Limit > 0 && g.MinSlots > g.Limit:
		return InvalidConfig(fmt.Sprintf("GroupMinSlots[%q]", name), g.MinSlots, fmt.Sprintf("must not exceed the group's limit %d", g.Limit))
	}
	return nil
}

// Default limits.
const (
	DefaultCostSmoothing = 0.3
	DefaultKeyTTL        = 10 * time.Minute
	// DefaultMaxCostEstimates is about 15 MB of estimates.
	DefaultMaxCostEstimates = 100_000
	// DefaultMaxIdleKeys is about 80 MB of idle keys (their accumulated
	// cost and the queue's records of them).
	DefaultMaxIdleKeys = 100_000
)

// DefaultLimits returns the limits used when no option changes them.
func DefaultLimits() Limits {
	return Limits{CostSmoothing: DefaultCostSmoothing, KeyTTL: DefaultKeyTTL}
}

// Validate checks the scheduler-wide settings.
func (l Limits) Validate() error {
	switch {
	case l.MaxConcurrency < 0:
		return InvalidConfig("MaxConcurrency", l.MaxConcurrency, "must be positive (omit the option for unlimited)")
	case !(l.CostSmoothing > 0 && l.CostSmoothing <= 1):
		return InvalidConfig("CostSmoothing", l.CostSmoothing, "must be in (0, 1]")
	case l.KeyTTL <= 0:
		return InvalidConfig("KeyTTL", l.KeyTTL, "must be positive")
	case l.MaxCostEstimates < 0:
		return InvalidConfig("MaxCostEstimates", l.MaxCostEstimates, "must be positive (0: the default)")
	case l.MaxIdleKeys < 0:
		return InvalidConfig("MaxIdleKeys", l.MaxIdleKeys, "must be positive (0: the default)")
	}
	if err := l.PriorityMode.Validate(); err != nil {
		return err
	}
	if l.Aging != nil {
		if err := l.Aging.Validate(); err != nil {
			return err
		}
	}
	if l.Scoring != nil {
		if l.Aging != nil {
			return InvalidConfig("WithScoring", "with WithAging", "the score has its own aging term (AgeWeight): use one or the other")
		}
		if err := l.Scoring.Validate(); err != nil {
			return err
		}
	}
	if l.MaxPending < 0 {
		return InvalidConfig("MaxPending", l.MaxPending, "must not be negative (0 for unbounded)")
	}
	if l.Shed != nil && l.MaxPending == 0 {
		return InvalidConfig("Shed", "without MaxPending", "shedding makes room under the queue's bound: set MaxPending")
	}
	if l.Tenants != nil {
		if err := l.Tenants.Validate(); err != nil {
			return err
		}
	}
	if err := ValidateTiers(l.Tiers, l.MaxConcurrency); err != nil {
		return err
	}
	if err := ValidateRateLimits(l.RateLimits); err != nil {
		return err
	}
	if a := l.Adaptive; a != nil {
		if err := a.Validate(); err != nil {
			return err
		}
		if l.MaxConcurrency < a.Min || l.MaxConcurrency > a.Max {
			return InvalidConfig("MaxConcurrency", l.MaxConcurrency, "the starting limit must be within the adaptive limit's [Min, Max]")
		}
	}
	if err := l.validateLoad(); err != nil {
		return err
	}
	for _, key := range slices.Sorted(maps.Keys(l.KeyWeights)) { // sorted: the same error on every run
		if err := ValidateKeyWeight(key, l.KeyWeights[key]); err != nil {
			return err
		}
	}
	if l.Groups != nil {
		return l.Groups.Validate(l.MaxConcurrency)
	}
	return nil
}
