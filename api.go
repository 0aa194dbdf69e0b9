package fairsched

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/zap"

	"github.com/fairsched/fairsched/actor"
	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/workers"
)

// JobType names a kind of work, such as "sync-clone" or "repack". The
// application defines the constants.
//
// Declared, in policy.JobType, as:
//
//	type JobType string
type JobType = policy.JobType

// Priority is a tier: higher is dispatched first. By default the value is
// also the most jobs of the tier that run at once, so it is at least
// 1; with WithPriorityMode(PriorityOrderOnly) it only orders and may be 0.
// It is never negative.
//
// Declared, in policy.Priority, as:
//
//	type Priority int
type Priority = policy.Priority

// PriorityMode says whether a priority's value caps its tier (see
// WithPriorityMode).
//
// Declared, in policy.PriorityMode, as:
//
//	type PriorityMode uint8
type PriorityMode = policy.PriorityMode

// The priority modes.
const (
	// PriorityValueIsCap, the default: priority p's tier runs at most p
	// jobs at once, unless WithTier caps it otherwise.
	PriorityValueIsCap = policy.PriorityValueIsCap
	// PriorityOrderOnly: priorities only order dispatch; a tier is capped
	// only by WithTier.
	PriorityOrderOnly = policy.PriorityOrderOnly
)

// ConflictGroup names job types that must never run at the same time on the
// same job id. The empty group conflicts with nothing.
//
// Declared, in policy.ConflictGroup, as:
//
//	type ConflictGroup string
type ConflictGroup = policy.ConflictGroup

// ConflictMode says how a job holds its (ConflictGroup, id) while it runs:
// alone, or together with other shared jobs (JobTypeConfig.ConflictMode).
//
// Declared, in policy.ConflictMode, as:
//
//	type ConflictMode uint8
type ConflictMode = policy.ConflictMode

// The conflict modes. A git proxy makes clones shared — clones of one
// repository run together — and repacks exclusive. Once an exclusive job
// waits for a (group, id), shared jobs that arrive after it wait behind it,
// as writers go first in a writer-preferring readers–writer lock (see the policy package's docs for
// the exact rule).
const (
	ConflictExclusive = policy.ConflictExclusive // the zero value: alone on its (group, id)
	ConflictShared    = policy.ConflictShared    // with other shared jobs, never an exclusive one
)

// JobTypeConfig registers a job type: its default cost, its cap, its
// conflict group and its tier.
//
// Fields, from policy.JobTypeConfig:
//
//	// DefaultCost is the cost charged for a (type, id) the scheduler has not
//	// observed yet. Must be positive.
//	DefaultCost time.Duration
//
//	// MaxConcurrency caps running jobs of this type. Zero means no per-type
//	// cap (the tier and global caps still apply). Must not be negative.
//	MaxConcurrency int
//
//	// ConflictGroup: jobs whose types share a non-empty group never run at
//	// the same time on the same job id. A name (valid UTF-8 without NUL, at
//	// most MaxNameLen bytes).
//	ConflictGroup ConflictGroup
//
//	// ConflictMode says whether the type's jobs run alone on their
//	// (ConflictGroup, id) — ConflictExclusive, the zero value — or together
//	// with other shared jobs (ConflictShared). It needs a ConflictGroup.
//	ConflictMode ConflictMode
//
//	// Priority is the tier: higher is dispatched first. By default the
//	// value is also the tier's concurrency cap, and must be at least 1;
//	// with PriorityOrderOnly (or with scoring) it may be 0. Never negative.
//	Priority Priority
//
//	// QueueTimeout is how long a job of the type may stay pending before it
//	// expires (ErrExpired), unless the job sets its own (WithQueueTimeout); time its
//	// group spends paused does not count. Zero means no limit; it must not
//	// be negative.
//	QueueTimeout time.Duration
//
//	// Retry retries the type's failed jobs (unless a job sets its own with
//	// WithRetry); the zero value retries nothing.
//	Retry RetryPolicy
//
//	// Coalesce: requests for a (type, id) that is pending share one run of
//	// the first request's function, which executes in a scheduler
//	// goroutine; every RunSync caller gets its result (a caller that leaves
//	// is answered at once), and a run that has started is never joined.
//	Coalesce bool
//
//	// RequiresWorker: jobs of the type run only on a free worker slot that
//	// supports the type (Scheduler.RegisterWorker), one job per slot; they
//	// wait with reason no_workers while no registered slot supports the
//	// type and worker_busy while every one that does is taken.
//	RequiresWorker bool
//
//	// Preemptible: a running background job of the type may be preempted
//	// by a higher tier that preempts (TierConfig.Preempt): its context is
//	// cancelled with cause ErrPreempted and it is queued again, the attempt
//	// not counted.
//	Preemptible bool
//
//	// DeadlineAdmission: a RunSync whose context has a deadline is refused
//	// at once (LateStartError) when its estimated start is after the
//	// deadline, rather than queued to give up waiting later.
//	DeadlineAdmission bool
type JobTypeConfig = policy.JobTypeConfig

// AgingConfig raises the effective priority of waiting jobs (WithAging).
//
// Fields, from policy.AgingConfig:
//
//	// GracePeriod is how long a job waits before aging starts.
//	GracePeriod time.Duration
//
//	// Interval is the time per aging step after the grace period.
//	Interval time.Duration
//
//	// Step is added to the priority per interval; 0 means 1.
//	Step Priority
//
//	// MaxEffectivePriority is the ceiling aging never passes. Jobs whose
//	// base priority is at or above it do not age.
//	MaxEffectivePriority Priority
//
//	// UrgentThreshold, when not 0, is the effective priority at which a job
//	// may borrow a slot past its group's allocation.
//	UrgentThreshold Priority
type AgingConfig = policy.AgingConfig

// Reason says why a pending job waits; it serialises as its string value.
//
// Declared, in policy.Reason, as:
//
//	type Reason string
type Reason = policy.Reason

// Reasons a pending job waits, as reported in a Snapshot (PendingJob.Reasons),
// and reasons a job is refused (RefusalError.Reason, JobRefused). The load
// signal's ReasonOverloaded is both; ReasonShed and ReasonStartAfterDeadline
// are refusals.
const (
	ReasonGlobalLimit = policy.ReasonGlobalLimit
	ReasonTierLimit   = policy.ReasonTierLimit
	ReasonTypeLimit   = policy.ReasonTypeLimit
	ReasonConflict    = policy.ReasonConflict
	ReasonGroupLimit  = policy.ReasonGroupLimit
	ReasonPaused      = policy.ReasonPaused
	ReasonDeferred    = policy.ReasonDeferred
	ReasonBackoff     = policy.ReasonBackoff
	ReasonScheduled   = policy.ReasonScheduled // a durable job not due yet (RunAt, Delay)
	ReasonNoHandler   = policy.ReasonNoHandler // a durable job whose type has no handler yet
	ReasonRateLimited = policy.ReasonRateLimited
	ReasonNoWorkers   = policy.ReasonNoWorkers
	ReasonWorkerBusy  = policy.ReasonWorkerBusy
	// Cluster mode: every Slot of the instances is taken.
	ReasonNoFreeSlot = policy.ReasonNoFreeSlot
	// Waiting: its fairness key runs TenantLimits.MaxRunning jobs; or
	// refused, never queued: it has TenantLimits.MaxPending jobs waiting.
	ReasonTenantLimit = policy.ReasonTenantLimit
	// Refused, never queued: the queue holds WithMaxPending jobs.
	ReasonPoolOverloaded = policy.ReasonPoolOverloaded
)

// TierConfig gives a tier a reserved and a burst share of the global cap
// and an absolute cap, MaxRunning (see WithTier).
//
// Fields, from policy.TierConfig:
//
//	// MinShare of MaxConcurrency is reserved for the tier: other tiers
//	// never hold those slots (⌊MinShare·C⌋ of them, at most MaxRunning).
//	MinShare float64
//
//	// BurstShare of MaxConcurrency is the most the tier may run
//	// (⌊BurstShare·C⌋, at least its reservation and at least 1). It is
//	// required with a MinShare; 0 without one means no share cap (then
//	// MaxRunning must be set).
//	BurstShare float64
//
//	// MaxRunning caps the tier's running jobs absolutely (a
//	// max_inflight), beside the shares: the tier runs at most
//	// min(burst, MaxRunning). 0 means no absolute cap. A tier with only
//	// MaxRunning needs no global cap.
//	MaxRunning int
//
//	// LendIdle lets other tiers use the reservation while the tier has
//	// nothing waiting; borrowed slots come back as the borrowers finish.
//	// Without it the reservation stays free for the tier even while it
//	// has no work: reservations that add up to the whole capacity, none
//	// lent, leave nothing to the other tiers.
//	LendIdle bool
//
//	// Preempt, when set, lets the tier preempt running jobs of lower
//	// tiers whose types are Preemptible, within its budget (see
//	// PreemptBudget). A tier with only Preempt or StarvationWindow set
//	// keeps its default cap.
//	Preempt *PreemptBudget
//
//	// StarvationWindow, when positive, is the longest the tier lets a
//	// lower tier that has work go without an admission: past it, the next
//	// slot the tier would take goes to the starved tier's next job.
//	StarvationWindow time.Duration
type TierConfig = policy.TierConfig

// TenantLimits bound what one fairness key may hold (see WithTenantLimits).
//
// Fields, from policy.TenantLimits:
//
//	// MaxRunning: while the key runs this many jobs, its other jobs wait
//	// (reason tenant_limit) and the slots go to other keys.
//	MaxRunning int
//
//	// MaxPending: a submission while the key has this many jobs pending is
//	// refused at once (ErrTenantLimit), and nothing is queued.
//	MaxPending int
type TenantLimits = policy.TenantLimits

// RefusalError is the error of a job the scheduler refused to queue
// (RunSync, Submit, Enqueue and their Many forms), or shed from the queue
// for a newcomer (reason shed, WithShedding): its Reason names the rule,
// and errors.Is matches the rule's sentinel (ErrTenantLimit,
// ErrOverloaded).
//
// Fields, from policy.RefusalError:
//
//	Reason Reason
//
//	Type JobType
//
//	ID string
//
//	Key string
//
//	// Limit is the bound that was reached; 0 for a refusal of the load
//	// signal (reason overloaded).
//	Limit int
type RefusalError = policy.RefusalError

// Snapshot is a deep copy of the scheduler's state, safe to keep and to
// serialise as JSON.
//
// Fields, from core.Snapshot:
//
//	Time time.Time
//
//	// MaxConcurrency is the global cap; 0 means unlimited.
//	MaxConcurrency int
//
//	// Running jobs in admission order. In cluster mode a job is running
//	// from its admission by the leader: some may not yet be placed on an
//	// instance (their Instance is empty until they are).
//	Running []RunningJob
//
//	// Pending jobs in rank order — effective priority (or score), then the
//	// key's accumulated cost, then arrival: the order dispatch considers
//	// them in. Dispatch skips every job a rule holds (PendingJob.Reasons),
//	// so this is not the order in which they will start.
//	Pending []PendingJob
//
//	// AccumulatedCost per fairness key ("" is background work): the sum of
//	// the key's charges, each a job's cost divided by the key's weight.
//	AccumulatedCost map[string]time.Duration
//
//	// Adaptive is the adaptive limit's configuration; MaxConcurrency is its
//	// current limit.
//	Adaptive *policy.AdaptiveLimitConfig
//
//	// Load is the load signal's last reading and settings; nil without
//	// one.
//	Load *LoadSnapshot
//
//	// Tiers are the tier shares and caps (WithTier), by priority.
//	Tiers map[policy.Priority]policy.TierConfig
//
//	// PriorityMode says whether a priority's value caps its tier (the
//	// default, omitted) or priorities only order.
//	PriorityMode policy.PriorityMode
//
//	// KeyWeights are the fairness keys with a weight other than 1.
//	KeyWeights map[string]float64
//
//	// CostEstimates are the learned costs, by type then id.
//	CostEstimates []CostEstimate
//
//	RunningByTier map[policy.Priority]int
//
//	RunningByType map[policy.JobType]int
//
//	Types map[policy.JobType]policy.JobTypeConfig
//
//	// Aging is the aging configuration; nil when aging is off.
//	Aging *policy.AgingConfig
//
//	// AgingRises counts, by type, every rise of a waiting job's effective
//	// priority by aging since the start: each job's every step, the jobs
//	// still waiting included (JobAged reports only a lane's head). It never
//	// decreases and never counts a rise twice; with more than 65 536 jobs
//	// waiting, their rises are brought up to date round robin, that many per
//	// snapshot, so it may lag. Nil without aging or before
//	// the first rise.
//	AgingRises map[policy.JobType]uint64
//
//	// Groups lists the groups with jobs, paused or holding slots, by name.
//	Groups []GroupSnapshot
//
//	// Cluster, in cluster mode, is the instance's view of its cluster.
//	Cluster *ClusterSnapshot
//
//	// EventsLost counts the events dropped since the start because a
//	// subscriber's channel (Subscribe) was full, once per subscriber that
//	// missed one. In cluster mode, this instance's subscribers' losses, and
//	// on the leader those of its scheduler's publisher too.
//	EventsLost uint64
//
//	// Workers are the registered workers and their slots, in registration
//	// order.
//	Workers []WorkerSnapshot
//
//	// Expired counts the jobs that expired pending since the start.
//	Expired uint64
//
//	// PendingTotal, KeysTotal and EstimatesTotal count every pending job,
//	// fairness key and cost estimate. A bounded snapshot (the default of
//	// Scheduler.Snapshot) lists fewer: the first pending jobs in rank
//	// order, the keys of the listed jobs, the most recently used
//	// estimates.
//	PendingTotal int
//
//	KeysTotal int
//
//	EstimatesTotal int
//
//	// Tenants are the tenants of hierarchical fair share with jobs pending
//	// or running, by name; nil with one level. A bounded snapshot with
//	// more tenants than rows lists those of its listed pending jobs and of
//	// the running ones; TenantsTotal counts them all.
//	Tenants []TenantSnapshot
//
//	TenantsTotal int
type Snapshot = core.Snapshot

// RunningJob is one running job in a Snapshot.
//
// Fields, from core.RunningJob:
//
//	Type policy.JobType
//
//	ID string
//
//	FairnessKey string
//
//	Group string
//
//	// Priority is the base priority, the tier the job counts against;
//	// EffectivePriority the priority it was admitted at.
//	Priority policy.Priority
//
//	EffectivePriority policy.Priority
//
//	Submitted time.Time
//
//	Started time.Time
//
//	// EstimatedCost is what admission charged to the key.
//	EstimatedCost time.Duration
//
//	// Worker and Slot name the worker slot the job runs on (types with
//	// RequiresWorker); Worker is empty otherwise.
//	Worker string
//
//	Slot int
//
//	// Instance, in cluster mode, is the instance the job was granted to;
//	// empty while the leader has admitted it but not yet placed it.
//	Instance string
type RunningJob = core.RunningJob

// PendingJob is one waiting job in a Snapshot, in dispatch order.
//
// Fields, from core.PendingJob:
//
//	Type policy.JobType
//
//	ID string
//
//	FairnessKey string
//
//	Group string
//
//	// Priority is the base priority, the tier the job counts against;
//	// EffectivePriority the priority it competes at now (aging, inherited
//	// priority); InheritedPriority the floor it inherited, if any.
//	Priority policy.Priority
//
//	EffectivePriority policy.Priority
//
//	InheritedPriority *policy.Priority
//
//	Submitted time.Time
//
//	// Reasons lists every rule that holds the job now, narrowest first:
//	// the job's own state (paused, backoff, scheduled, deferred; a durable
//	// job without a handler, no_handler, alone), its (conflict group, id),
//	// its type, its fairness key, its group, its tier, the workers, the
//	// load signal, the global cap (the policy package's doc lists them in
//	// order). Empty when nothing holds it: it starts at the next dispatch.
//	Reasons []policy.Reason
//
//	// Reason is the headline: Reasons[0], the narrowest rule — the one to
//	// look at first, since lifting a broader one (a bigger global cap)
//	// would not start the job while it holds. "" when nothing holds it.
//	Reason policy.Reason
//
//	// Score is the job's linear score now (WithScoring), 0 without.
//	Score float64
//
//	// Blockers name what holds the job under Reason (Explanation).
//	Blockers []Blocker
//
//	// Estimate is when the job is expected to start; nil when it is
//	// beyond the first EstimateBound jobs in the order dispatch plays
//	// them.
//	Estimate *StartEstimate
//
//	// History and HistoryDropped are what it has waited on
//	// (Explanation).
//	History []WaitNote
//
//	HistoryDropped int
type PendingJob = core.PendingJob

// CostEstimate is the learned cost of one (type, id) in a Snapshot.
//
// Fields, from core.CostEstimate:
//
//	Type policy.JobType
//
//	ID string
//
//	Cost time.Duration
type CostEstimate = core.CostEstimate

// GroupSnapshot is one group in a Snapshot.
//
// Fields, from core.GroupSnapshot:
//
//	Name string
//
//	Weight int
//
//	MinSlots int
//
//	Limit int
//
//	// Allocation is the slots the group holds by weight (0 without group
//	// weights).
//	Allocation int
//
//	Running int
//
//	Pending int
//
//	Paused bool
type GroupSnapshot = core.GroupSnapshot

// WorkerSnapshot is one registered worker in a Snapshot.
//
// Fields, from core.WorkerSnapshot:
//
//	ID string
//
//	Slots []SlotSnapshot
type WorkerSnapshot = core.WorkerSnapshot

// SlotSnapshot is one slot of a worker in a Snapshot.
//
// Fields, from core.SlotSnapshot:
//
//	Types []policy.JobType
//
//	// Type and ID name the job running on the slot; empty while it is free.
//	Type policy.JobType
//
//	ID string
type SlotSnapshot = core.SlotSnapshot

// PanicError is the error of a job whose function panicked. It carries the
// panic value and the stack; errors.As finds it in RunSync's error.
//
// Fields, from machine.PanicError:
//
//	Value any // what the function panicked with
//
//	Stack []byte // the goroutine's stack at the panic
type PanicError = machine.PanicError

// Errors. Match them with errors.Is: returned errors wrap them with details.
var (
	// ErrUnknownJobType: the job type was never registered.
	ErrUnknownJobType = policy.ErrUnknownJobType
	// ErrClosed: Close was called.
	ErrClosed = machine.ErrClosed
	// ErrCloseInJob: Close was called from inside a job, which it would
	// wait for. With the job's own context (or one derived from it) Close
	// returns it at once and closes nothing; with another context the
	// scheduler is closed and drains on its own once the job returns.
	ErrCloseInJob = machine.ErrCloseInJob
	// ErrInvalidConfig: an option or a JobTypeConfig is out of range, or a
	// name in it (a job type, conflict group, group, fairness key, worker
	// id, cluster domain or instance) breaks the rule for names; the error
	// names the field and the value.
	ErrInvalidConfig = policy.ErrInvalidConfig
	// ErrInvalidJob: a job the call refuses before queueing or writing
	// anything — a job type, id, fairness key or group that breaks the
	// rule for names (valid UTF-8, no NUL byte, at most MaxNameLen bytes),
	// an empty id, a nil function, an option out of range, a payload over
	// WithMaxPayload. The error names the field.
	ErrInvalidJob = policy.ErrInvalidJob
	// ErrDuplicateType: RegisterType was called twice for one type.
	ErrDuplicateType = policy.ErrDuplicateType
	// ErrTenantLimit: the job's fairness key has as many jobs pending as
	// its limits allow (WithTenantLimits); nothing was queued.
	ErrTenantLimit = policy.ErrTenantLimit
	// ErrOverloaded: the scheduler refused the job for its load, and it
	// does not run: the queue held WithMaxPending jobs, the load signal
	// refuses while overloaded (WithLoadSignal), shedding took it out of
	// the queue for a newcomer (WithShedding), or a RunSync would start
	// after its deadline (ErrStartAfterDeadline).
	ErrOverloaded = policy.ErrOverloaded
	// ErrStore: a store failed. The Store given to WithStore could not be
	// read (New fails and the store is left as it was), a store could not
	// be opened, or a write of the state or of durable jobs failed.
	ErrStore = machine.ErrStore
	// ErrRecordRefused: a store refused a record for its content (a
	// JobStore returns it, wrapped, for a batch it cannot commit because
	// of one record's data); it also matches ErrStore. Only the refused
	// record's call fails: the rest of its batch is committed.
	ErrRecordRefused = machine.ErrRecordRefused
	// ErrOutcomeUnknown: the store's reply to a commit was lost, so the
	// write may or may not have happened; it also matches ErrStore.
	// Retrying an Enqueue with the same (type, id) is safe:
	// ErrDuplicateJob then means the first one was stored.
	ErrOutcomeUnknown = machine.ErrOutcomeUnknown
	// ErrExpired: the job was still pending when its queue timeout
	// (WithQueueTimeout, JobTypeConfig.QueueTimeout) ran out; it never ran.
	ErrExpired = policy.ErrExpired
	// ErrDenied: the admission policy denied the job (Deny(nil)), or
	// panicked while deciding.
	ErrDenied = policy.ErrDenied
	// ErrWorkerLost is the cause (context.Cause) with which the context of
	// a job is cancelled when its worker is unregistered while it runs;
	// the attempt's error wraps it too. A durable job interrupted more
	// often than RetryPolicy.MaxInterruptions allows is dead with an error
	// that matches it.
	ErrWorkerLost = workers.ErrWorkerLost
	// ErrDuplicateWorker: RegisterWorker was called twice for one ID.
	ErrDuplicateWorker = workers.ErrDuplicateWorker
	// ErrUnknownWorker: UnregisterWorker of an ID that is not registered.
	ErrUnknownWorker = workers.ErrUnknownWorker
)

// Scheduler decides which job runs next. All its methods are safe for
// concurrent use; its state lives in one owner goroutine. Call Close when
// done: until then that goroutine runs.
type Scheduler struct {
	eng        engine // checks and runs the calls: this process's actor, or a cluster's leader (WithCluster)
	maxPayload int    // WithMaxPayload
}

// New starts a scheduler configured by opts. It fails with ErrInvalidConfig
// for a nil option, an invalid limit or options that do not combine
// (WithCluster with WithStore), with WithPolicy's error for a policy that
// does not apply, and with ErrStore for a store it cannot read (its state or
// its durable jobs). Call Close when done.
func New(opts ...Option) (*Scheduler, error) {
	o := defaultOptions()
	for i, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("%w: New: option %d is nil", ErrInvalidConfig, i+1)
		}
		opt.apply(&o)
	}
	if o.err != nil {
		return nil, o.err
	}
	if gs := o.limits.Groups; gs != nil {
		for name, g := range gs.Groups {
			if g.Weight == 0 {
				g.Weight = gs.DefaultWeight
				gs.Groups[name] = g
			}
		}
	}
	if a := o.limits.Adaptive; a != nil && o.limits.MaxConcurrency == 0 {
		o.limits.MaxConcurrency = a.Max // the starting limit
	}
	if err := o.startPolicy(); err != nil {
		return nil, err
	}
	if err := o.limits.Validate(); err != nil {

		return nil, err
	}
	if err := o.checkHierarchy(); err != nil {
		return nil, err
	}
	refuseInCluster := loadInCluster(&o)
	if o.cluster != nil && o.store != nil {
		return nil, fmt.Errorf("%w: WithCluster and WithStore: the cluster's database is the store", ErrInvalidConfig)
	}
	if o.cluster != nil {
		node, err := startCluster(&o)
		if err != nil {
			return nil, err
		}
		node.RefuseWhenOverloaded(refuseInCluster)
		eng := &clusterEngine{node: node, clock: o.clock, limits: o.limits}
		s := &Scheduler{eng: eng, maxPayload: o.maxPayload}
		if _, err := s.withPolicyTypes(o.policy); err != nil {
			return nil, err
		}
		eng.learnAtJoin(o.logger)
		return s, nil
	}
	c := o.newCore()
	var state core.State
	var jobs []core.JobRecord
	if o.store != nil {
		st, err := machine.SafeLoad(o.store) // a panic too is an ErrStore
		if err != nil {
			return nil, err
		}
		if js, ok := o.store.(JobStore); ok {
			if jobs, err = machine.SafeLoadJobs(js); err != nil {
				return nil, err
			}
		}
		state = st
		c.RestoreEstimates(o.clock.Now(), st.Estimates)
		c.RestoreKeyCosts(o.clock.Now(), st.KeyCosts)
	}
	a := actor.Start(c, machine.Config{
		Clock:     o.clock,
		Logger:    o.logger,
		Tick:      o.limits.KeyTTL / 4,
		Rand:      o.rand,
		Store:     o.store,
		State:     state,
		Jobs:      jobs,
		Retention: o.retention,
	})
	s := &Scheduler{eng: localEngine{a}, maxPayload: o.maxPayload}
	return s.withPolicyTypes(o.policy)
}

// RegisterType adds a job type. Types can be added at any time; a type is
// registered once (ErrDuplicateType) and cfg must be valid
// (ErrInvalidConfig).
func (s *Scheduler) RegisterType(t JobType, cfg JobTypeConfig) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.eng.registerType(t, cfg)
}

// RunSync runs fn as a foreground job and returns its error once it has run.
// fairnessKey identifies the client the work is done for (an IP, a user):
// among jobs of one priority, the key that has consumed the least cost goes
// first. jobID names what the work is done on, not the request: for a
// request, pass the object it serves (the repository a clone reads, the
// report it renders), the same for every request on that object. Jobs of one
// (type, id) share a learned cost estimate, and a ConflictGroup applies
// per id; a fresh id per request leaves every job at its
// type's DefaultCost estimate, learned from no earlier run, and in conflict
// with none. The type, the id and the key are
// names: valid UTF-8 without NUL, at most MaxNameLen bytes, else
// ErrInvalidJob and nothing is queued.
//
// fn runs in the calling goroutine once admitted, under a context derived
// from ctx. If ctx ends while the job is pending, the job is dropped without
// running or being charged and RunSync returns ctx.Err(). If ctx ends while
// it runs, fn's context is cancelled and RunSync returns what fn returns. A
// panic in fn is returned as a *PanicError.
//
// In cluster mode fn runs on this instance, in a goroutine of its own, once
// the leader grants the job here. When ctx ends RunSync returns ctx.Err()
// at once: fn's context is cancelled if it runs, and a job still pending
// stays in the leader's queue until it is admitted (and charged), then
// ends without running fn.
func (s *Scheduler) RunSync(ctx context.Context, t JobType, jobID, fairnessKey string,
	fn func(context.Context) error, opts ...JobOption) error {
	if err := s.checkCtx(ctx, ErrInvalidJob, "RunSync"); err != nil {
		return err
	}
	if err := s.eng.check(t, jobID, fn != nil); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	j, err := checkJob(messages.NewPooledFull(t, jobID, fairnessKey, fn), opts)
	if err != nil {
		return err
	}
	return s.eng.runSync(ctx, j)
}

// Submit queues fn as a background job (fairness key "", or the tenant
// WithFairnessKey names) and returns at once. The job's error, or its panic, is logged at error level. Background
// jobs run until they return; Close with an expired context cancels their
// context.
func (s *Scheduler) Submit(t JobType, jobID string, fn func(context.Context) error, opts ...JobOption) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := s.eng.check(t, jobID, fn != nil); err != nil {
		return err
	}
	j, err := checkJob(messages.NewPooledJob(t, jobID, "", fn), opts)
	if err != nil {
		return err
	}
	return s.eng.submit(j)
}

func newJob(t JobType, jobID, key string, fn func(context.Context) error, opts []JobOption) (*messages.Job, error) {
	return checkJob(messages.NewJob(t, jobID, key, fn), opts)
}

// checkJob applies opts to the new job j and checks what they set.
func checkJob(j *messages.Job, opts []JobOption) (*messages.Job, error) {
	t, jobID := j.Type, j.ID
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: job option %d is nil (type %q, id %q)", ErrInvalidJob, i+1, t, jobID)
		}
		o.applyJob(j)
	}
	if j.Explicit() {
		if err := j.OwnRetry.Validate("WithRetry"); err != nil {
			return nil, fmt.Errorf("%w (type %q, id %q): %w", ErrInvalidJob, t, jobID, err)
		}
	}
	if x := j.Extra; x != nil { // only options set it
		if x.Jitter < 0 {
			return nil, fmt.Errorf("%w: WithJitter(%v): must not be negative (type %q, id %q)", ErrInvalidJob, x.Jitter, t, jobID)
		}
		if x.Delay < 0 {
			return nil, fmt.Errorf("%w: Delay(%v): must not be negative (type %q, id %q)", ErrInvalidJob, x.Delay, t, jobID)
		}
	}
	if err := policy.ValidateJobNames(j.Key, j.Group); err != nil {
		return nil, err
	}
	if err := policy.ValidateLabels(j.Labels()); err != nil {
		return nil, fmt.Errorf("%w (type %q, id %q)", err, t, jobID)
	}
	if ttl := j.TTL(); ttl < 0 {
		return nil, fmt.Errorf("%w: WithQueueTimeout(%v): a queue timeout must not be negative (type %q, id %q)", ErrInvalidJob, ttl, t, jobID)
	}
	if tokens := j.Tokens(); tokens < 0 || tokens > MaxTokens {
		return nil, fmt.Errorf("%w: WithTokens(%v): tokens must be within [0, %v] (type %q, id %q)", ErrInvalidJob, tokens, MaxTokens, t, jobID)
	}
	return j, nil
}

// JobOption configures one job of RunSync, Submit, SubmitPeriodic or
// Enqueue (and their Many and JSON forms); each option's doc says where it
// applies.
type JobOption interface{ applyJob(*messages.Job) }

type jobOptionFunc func(*messages.Job)

func (f jobOptionFunc) applyJob(j *messages.Job) { f(j) }

// WithTokens states the job's cost: it is charged to the job's fairness key
// instead of the learned estimate of its (type, id), for callers that know
// what a job costs (a request's size, a batch's length). The learned
// estimate keeps learning from the job's wall time all the same. It is also
// what the job takes from each rate limit that applies (WithRateLimit: one
// unit for the fair queue and the quota): cost in seconds, rounded up to a
// whole token — 4s takes 4 tokens, 2.5s takes 3, 1ns takes 1 — at
// most the bucket's burst. A job without it takes 1. 0 means the estimate
// (and 1 token); a negative cost is ErrInvalidJob. Given, it overrides the
// tokens of a workload rule the job's labels match (WithLabels).
func WithTokens(cost time.Duration) JobOption {
	return jobOptionFunc(func(j *messages.Job) { j.SetTokens(cost) })
}

// SubmitPeriodic runs fn as a background job every `every`: the first
// occurrence at once, then at each multiple of every, each delayed by a
// random share of up to WithJitter's d. Each occurrence is a fresh job (a
// fresh aging clock) with the options given; one is skipped (and logged)
// while the previous is still pending or running, so a slow job never piles
// up. stop ends the schedule — no occurrence is submitted after it returns,
// one under way runs to its end — and is safe to call more than once;
// Close stops every schedule the same way.
func (s *Scheduler) SubmitPeriodic(t JobType, jobID string, every time.Duration,
	fn func(context.Context) error, opts ...JobOption) (stop func(), err error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := s.eng.check(t, jobID, fn != nil); err != nil {
		return nil, err
	}
	if every <= 0 {
		return nil, fmt.Errorf("%w: SubmitPeriodic(%s, %s): every = %v: must be positive", ErrInvalidJob, t, jobID, every)
	}
	j, err := newJob(t, jobID, "", fn, opts)
	if err != nil {
		return nil, err
	}
	return s.eng.submitPeriodic(j, every)
}

// Supersede, on Submit, replaces every pending background job of the same
// (type, id) — waiting, deferred, or failed and waiting for its retry
// (WithRetry): each leaves the queue unrun (again) and uncharged, with a
// JobSuperseded event and a decision record, and this one takes their place
// with its own function and a fresh aging clock (it arrives now). Without a
// pending job it is a plain Submit. A running job is never replaced (if its
// attempt fails and retries, the retry is pending again: a later Supersede
// replaces it). On Enqueue it replaces the payload and options of the
// pending durable job of the (type, id) (see Enqueue); on RunSync it does
// nothing. For a type with JobTypeConfig.Coalesce a Submit is a request
// for the pending run of its (type, id), Supersede or not: it joins that
// run, which keeps its first function.
func Supersede() JobOption {
	return jobOptionFunc(func(j *messages.Job) { j.More().Supersede = true })
}

// WithJitter delays each occurrence of a SubmitPeriodic job by a random
// share of up to d, so that schedules started together spread out.
func WithJitter(d time.Duration) JobOption {
	return jobOptionFunc(func(j *messages.Job) { j.More().Jitter = d })
}

// RetryPolicy retries failed jobs with exponential backoff (see WithRetry,
// JobTypeConfig.Retry).
//
// Fields, from policy.RetryPolicy:
//
//	MaxAttempts int
//
//	MinBackoff, MaxBackoff time.Duration
//
//	// Jitter in [0, 1]: the share of each backoff drawn at random, so that
//	// jobs that failed together do not come back together.
//	Jitter float64
//
//	// MaxInterruptions bounds the interrupted attempts of a durable job
//	// that run again: the next interruption past it ends the job dead,
//	// with an error matching workers.ErrWorkerLost — a job that kills its
//	// process every time stops there instead of looping. 0 means
//	// DefaultMaxInterruptions; negative is invalid.
//	MaxInterruptions int
type RetryPolicy = policy.RetryPolicy

// DefaultMaxInterruptions is RetryPolicy.MaxInterruptions when it is 0 —
// the zero policy of a type without retries too: a durable job is run
// again after each of its first three interruptions (a crash, a Close
// whose context ended, a lost instance or worker), and ends dead with an
// error matching ErrWorkerLost at the fourth.
const DefaultMaxInterruptions = policy.DefaultMaxInterruptions

// WithRetry retries the job, in place of its type's policy: a failed
// attempt (an error that is not Permanent; not a panic) waits
// min(MaxBackoff, MinBackoff·2ⁿ⁻¹) less up to Jitter of it outside the
// queue (reason backoff, holding no slot), then competes again with its
// first submission's arrival and aging clock, until MaxAttempts attempts
// ran. Each attempt is charged and teaches the cost estimate. RunSync
// returns the first success, or after the last attempt an error that counts
// the attempts and wraps the last error. A policy without bounds is
// ErrInvalidJob.
func WithRetry(p RetryPolicy) JobOption {
	return jobOptionFunc(func(j *messages.Job) { x := j.More(); x.OwnRetry, x.RetrySet = p, true })
}

// Permanent marks err as not worth retrying: a job whose function returns
// it is not retried, whatever its policy. errors.Is and errors.As still see
// err.
func Permanent(err error) error { return policy.Permanent(err) }

// Store keeps what must survive a restart: the learned cost estimates, each
// fairness key's accumulated cost and when each periodic job last ran
// (StoreState); a Store that is also a JobStore keeps the durable jobs.
// New loads it — a store it cannot read makes New fail with ErrStore, and
// nothing is written to it — and the scheduler saves to it on each eviction
// tick (WithIdleExpiry/4, at least a millisecond) and when Close ends.
// Package boltstore has one on an embedded database, package pgstore one in
// PostgreSQL.
//
// Methods, from machine.Store:
//
//	Load() (core.State, error)
//
//	Save(core.State) error
type Store = machine.Store

// StoreState is what a Store keeps.
//
// Fields, from core.State:
//
//	Estimates []CostEstimate
//
//	// LastRuns holds, by "type/id", when each periodic job's last
//	// occurrence was submitted.
//	LastRuns map[string]time.Time
//
//	// KeyCosts holds each fairness key's accumulated cost, so that a
//	// restart does not hand every key a clean slate.
//	KeyCosts map[string]time.Duration
type StoreState = core.State

// WithStore persists the scheduler's state in st (see Store). Without it
// nothing is persisted.
func WithStore(st Store) Option {
	return optionFunc(func(o *options) {
		if st == nil {
			o.fail(fmt.Errorf("%w: WithStore(nil)", ErrInvalidConfig))
		}
		o.store = st
	})
}

// WithRandSeed seeds the random draws of the scheduler (retry jitter), for
// runs that must repeat exactly; by default they are seeded from the clock.
func WithRandSeed(seed uint64) Option {
	return optionFunc(func(o *options) { o.rand = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) })
}

// WithQueueTimeout bounds how long this job may wait in the queue: if it
// is still pending d after its submission it is removed — RunSync returns an error matching
// ErrExpired, a background job is logged and reported (JobExpired, and
// Snapshot.Expired counts it). It overrides its type's QueueTimeout. Time
// the job's group spends paused (PauseGroup) does not count, as for aging:
// a paused job never expires, and its deadline moves back by each pause.
// The same holds for a RunSync that joins a pending coalesced run
// (JobTypeConfig.Coalesce): it keeps its own d, frozen while the run's
// group is paused, and leaves the run when d runs out before the run
// starts (once started, it waits for the result); the run itself waits as
// long as the request that allows the longest wait (its own d, or its
// type's QueueTimeout, none if both are 0). JobExpired.Waited and
// the error report the whole wait, pauses included. A RunSync's context
// deadline holds beside it (and does not stop during a pause).
// The scheduler arms one timer, for the earliest deadline. Given, it
// overrides the queue timeout of a workload rule the job's labels match
// (WithLabels), which overrides its type's.
func WithQueueTimeout(d time.Duration) JobOption {
	return jobOptionFunc(func(j *messages.Job) { j.SetTTL(d) })
}

// WithFairnessKey attributes the job to a tenant: its cost is charged to key
// and it is ordered by key's accumulated cost, as a RunSync job of that key
// is. Background jobs without it share the key "". On RunSync it replaces
// the fairnessKey argument. Like every name it is valid UTF-8 without NUL,
// at most MaxNameLen bytes (ErrInvalidJob). A job with a key (this, or a
// RunSync's) keeps it whatever a workload rule's fairness label says
// (WithLabels).
func WithFairnessKey(key string) JobOption {
	return jobOptionFunc(func(j *messages.Job) { j.Key = key })
}

// InGroup puts the job in a group: groups share the capacity by weight
// (WithGroupWeight) and can be paused together (PauseGroup). Jobs without a
// group form the group "". The name is valid UTF-8 without NUL, at most
// MaxNameLen bytes (ErrInvalidJob).
func InGroup(group string) JobOption {
	return jobOptionFunc(func(j *messages.Job) { j.Group = group })
}

// InheritPriority makes the job compete at no less than the effective
// priority of the job running in ctx — the context a job's function
// receives, or one derived from it — as that job was admitted: work a job
// spawns is as urgent as the job itself, aged priority included. The job's
// base priority (its type's) still decides which tier's cap it counts
// against, and it ages from its own submission; its effective priority is
// the higher of the two. With a ctx that belongs to no running job the
// option does nothing. It overrides the priority of a workload rule the
// job's labels match (WithLabels).
func InheritPriority(ctx context.Context) JobOption {
	p, ok := messages.RunningPriority(ctx)
	return jobOptionFunc(func(j *messages.Job) {
		if ok {
			j.Floor, j.Floored = p, true
		}
	})
}

// SetKeyWeight changes a fairness key's weight at run time, from its next
// admission on (see WithKeyWeight); weight 0 restores the default of 1. It
// fails with ErrInvalidConfig, changing nothing, for a weight outside
// [MinKeyWeight, MaxKeyWeight] (a negative, infinite or NaN one included)
// or a key that is not a valid name.
func (s *Scheduler) SetKeyWeight(key string, weight float64) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.eng.setKeyWeight(key, weight)
}

// SetGroupWeight changes a group's weight at run time; the allocation is
// recomputed at once and takes effect as slots free. Weight 0 restores the
// default weight. It fails with ErrInvalidConfig, changing nothing, for a
// negative weight or when group weights are not configured.
func (s *Scheduler) SetGroupWeight(group string, weight int) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.group(messages.SetGroupWeight, group, weight)
}

// ResetGroupWeights gives every group the default weight (minimums and
// limits stay).
func (s *Scheduler) ResetGroupWeights() error {
	if err := s.check(); err != nil {
		return err
	}
	return s.group(messages.ResetGroupWeights, "", 0)
}

// PauseGroup holds every pending job of the group (reason paused) and stops
// their aging clocks; running jobs finish. The group's allocation goes to
// the other groups until ResumeGroup. Pausing a paused group does nothing.
func (s *Scheduler) PauseGroup(group string) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.group(messages.PauseGroup, group, 0)
}

// ResumeGroup returns a paused group's jobs to dispatch; their aging clocks
// go on from where they stopped.
func (s *Scheduler) ResumeGroup(group string) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.group(messages.ResumeGroup, group, 0)
}

func (s *Scheduler) group(op messages.GroupOpKind, group string, weight int) error {
	return s.eng.group(op, group, weight)
}

// Snapshot returns a deep copy of the scheduler's state: running jobs,
// pending jobs with the reasons each waits, accumulated cost per fairness
// key, learned cost estimates, running counts per tier and type, and the
// registered types.
//
// By default it is bounded, so that a scrape or a page refresh cannot stall
// the scheduler: it lists the first DefaultSnapshotRows pending jobs in rank
// order, the accumulated costs of every key (only the listed and running
// jobs' keys when there are more keys than that) and the most recently used
// estimates, and counts all of them in PendingTotal,
// KeysTotal and EstimatesTotal. SnapshotRows(n) changes the bound,
// SnapshotAll() lifts it. Its cost for the scheduler's owner goroutine
// grows with the lanes — (type, key, group) — not the jobs: about 6 ms at a
// million pending jobs in ten thousand lanes, 18 ms with aging on
// (BenchmarkSnapshotRows): AgingRises brings at most 65 536 waiting jobs'
// rises up to date per snapshot, so beyond that many it may lag (see
// Snapshot.AgingRises). A request whose ctx has ended
// before the owner reaches it is skipped.
//
// In cluster mode the leader's instance answers with the whole domain's
// jobs; another instance's snapshot holds only its Cluster part (which
// names the leader) and its EventsLost.
func (s *Scheduler) Snapshot(ctx context.Context, opts ...SnapshotOption) (Snapshot, error) {
	if err := s.checkCtx(ctx, ErrInvalidConfig, "Snapshot"); err != nil {
		return Snapshot{}, err
	}
	rows := DefaultSnapshotRows
	for _, o := range opts {
		if o != nil {
			rows = o.rows(rows)
		}
	}
	return s.eng.snapshot(ctx, rows)
}

// DefaultSnapshotRows bounds the pending jobs, keys and estimates a
// Snapshot lists unless told otherwise.
const DefaultSnapshotRows = 1000

// SnapshotOption changes what Snapshot copies.
type SnapshotOption interface{ rows(int) int }

type snapshotRows int

func (n snapshotRows) rows(int) int { return int(n) }

// SnapshotRows lists at most n pending jobs, keys and estimates; n ≤ 0
// lists all, like SnapshotAll.
func SnapshotRows(n int) SnapshotOption { return snapshotRows(max(n, 0)) }

// SnapshotAll lists every pending job, key and estimate: one sort of the
// pending jobs, for tests and tools rather than for a scrape.
func SnapshotAll() SnapshotOption { return snapshotRows(0) }

// Close stops the scheduler. New calls fail with ErrClosed at once; pending
// and running jobs still complete (paused groups are resumed for that), and
// Close returns nil when all have — except pending durable jobs (Enqueue),
// which are not started: they stay in the store for the next New on it. While it drains, the rules keep holding:
// deferred and rate-limited jobs wait for their timer, and a job whose time
// to live runs out expires as it would have (ErrExpired, JobExpired); a
// failed job in its retry backoff is retried as it would have been;
// periodic schedules stop (an occurrence under way completes). If
// ctx ends first, running jobs' contexts are cancelled, pending jobs are
// dropped (RunSync callers get ErrClosed), Close waits for the running
// functions to return and reports ctx.Err(). A function that ignores its
// context therefore delays Close. After Close returns, no goroutine of the
// scheduler remains. Calling Close again is safe. A Submit racing Close's
// last moment may return nil and still be refused: the job is then logged as
// dropped, never silently lost. Every job dropped unrun is answered to its
// caller (ErrClosed), logged, reported as JobDropped, and counted in the
// error of the first Close.
//
// What a graceful Close (a context that does not end) waits for: the running
// jobs, and the pending jobs that can still run. It drops (ErrClosed,
// JobDropped, counted in its error) what never can: jobs of a worker type
// that no registered slot takes, at once (no worker can register once Close
// is called); and RunSync calls nested in running jobs (called with the
// job's context or one derived from it) once every running job waits on
// such a call that is pending and no timer is left that could admit one —
// each job then holds the slot its nested call waits for, so nothing could
// ever run or end again. A job that waits on work in another way (a channel
// fed by a job it submitted, a nested call with a context not derived from
// its own) is not seen: give Close a deadline (ctx) for those. Close(ctx)
// always returns once ctx has ended and the running functions have returned
// from their cancelled contexts, and the final save to the store
// (WithStore) is waited for within ctx too.
//
// Close waits for the running jobs, so a job must not close its own
// scheduler: called with the job's context (or one derived from it) Close
// returns ErrCloseInJob at once and closes nothing. Called from inside a job
// with another context (context.Background(), or one with a deadline), it
// closes the scheduler and returns ErrCloseInJob as soon as the jobs still
// running are no more than the Close calls made from inside jobs — each may
// be waiting for its own job, which cannot end while it waits — instead of
// waiting for ever; the scheduler then stops by itself once those jobs
// return. (Close tells it is inside a job by its goroutine's stack, which
// does not say whose job: closing another scheduler from inside a job with
// a context not derived from the job's may therefore return ErrCloseInJob
// while that scheduler's last jobs still run.)
//
// In cluster mode Close leaves the cluster: a leader hands its lease over
// at once, and this instance lets the functions and handlers running here
// return (once ctx ends their contexts are cancelled), reports their ends,
// then answers every RunSync still waiting — nil when its function ran
// here and returned nil (its end not yet applied by the leader), else
// ErrClosed — and returns nil, ctx ended or not. Its
// pending RunSync and Submit jobs do not run; durable jobs stay in the
// database for the other instances.
func (s *Scheduler) Close(ctx context.Context) error {
	if err := s.checkCtx(ctx, ErrInvalidConfig, "Close"); err != nil {
		return err
	}
	return s.eng.close(ctx)
}

// Option configures New.
type Option interface{ apply(*options) }

type options struct {
	clock      clock.Clock
	logger     *zap.Logger
	limits     policy.Limits
	rand       *rand.Rand
	store      Store
	cluster    cluster.Backend
	clusterCfg cluster.Config
	maxPayload int
	retention  time.Duration
	policy     *Policy           // WithPolicy
	workloads  *policy.Workloads // its compiled workloads
	hier       *core.Hierarchy   // WithKeyTenant, WithKeyPath, WithTenantWeight
	err        error
}

func defaultOptions() options {
	return options{clock: clock.New(), logger: zap.NewNop(), limits: policy.DefaultLimits(), maxPayload: DefaultMaxPayload}
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// fail records the first invalid option; New returns it.
func (o *options) fail(err error) {
	if o.err == nil {
		o.err = err
	}
}

// WithClock sets the clock the scheduler reads and arms its timers on.
// Default: the wall clock. It drives everything time-dependent:
//
//   - costs: a job's measured run time, folded into the learned estimates;
//   - aging: how long a job has waited, hence its effective priority;
//   - queue timeouts (JobTypeConfig.QueueTimeout, WithQueueTimeout) and the
//     waits reported in events and snapshots;
//   - rate limits: token bucket refills (WithRateLimit);
//   - deferrals and retry backoff (the admission policy's Defer, WithRetry);
//   - periodic jobs (SubmitPeriodic) and their saved last runs;
//   - eviction of idle keys and estimates (WithIdleExpiry) and the store's
//     periodic saves (WithStore);
//   - the load signal's readings (WithLoadSignal's Every), which the
//     adaptive limit may follow (WithAdaptiveLimit).
//
// Tests pass a *clock.Mock and move it with Add (package fairschedtest does
// the set-up), or run in a testing/synctest bubble, where the wall clock is
// virtual.
func WithClock(c clock.Clock) Option {
	return optionFunc(func(o *options) {
		if c == nil {
			o.fail(policy.InvalidConfig("WithClock", "nil", "must not be nil"))
			return
		}
		o.clock = c
	})
}

// WithLogger sets the logger: decision records (tenant,
// tier, queue_depth, inflight, decision, reason_code, retry_delay_sec,
// attempt) at info level, admissions and completions at debug level,
// background job failures at error level. A job that starts to wait on
// tenant_limit, rate_limited, no_workers, worker_busy or overloaded is
// recorded once
// (decision defer) when it starts to wait. Default: zap.NewNop().
func WithLogger(l *zap.Logger) Option {
	return optionFunc(func(o *options) {
		if l == nil {
			o.fail(policy.InvalidConfig("WithLogger", "nil", "must not be nil"))
			return
		}
		o.logger = l
	})
}

// WithMaxConcurrency caps running jobs over all tiers. n must be positive.
// Default: unlimited (only tier and type caps apply).
func WithMaxConcurrency(n int) Option {
	return optionFunc(func(o *options) {
		if n < 1 {
			o.fail(policy.InvalidConfig("WithMaxConcurrency", n, "must be positive"))
			return
		}
		o.limits.MaxConcurrency = n
	})
}

// WithCostSmoothing sets the EMA factor α in (0, 1] of learned job costs:
// estimate = α·observed + (1−α)·estimate. Default 0.3.
func WithCostSmoothing(alpha float64) Option {
	return optionFunc(func(o *options) { o.limits.CostSmoothing = alpha })
}

// WithIdleExpiry sets how long the scheduler remembers an idle fairness
// key's accumulated cost and an unused cost estimate (and a stopped
// periodic schedule's last run): a client that comes back within d is
// still charged for its history; after d it starts afresh at the floor.
// Eviction runs every d/4, so an entry goes between d and 1.25·d after its
// last use. It bounds memory, not any job: jobs wait for QueueTimeout or
// WithQueueTimeout. Default 10m.
func WithIdleExpiry(d time.Duration) Option {
	return optionFunc(func(o *options) { o.limits.KeyTTL = d })
}

// WithMaxCostEstimates bounds the cost estimates the scheduler learns per
// (type, id) to n (default 100 000, about 15 MB): past it, a new id's
// estimate takes the place of the least recently used one, whose (type, id)
// starts again from its type's DefaultCost. Ids made fresh for every job (a
// request id, a timestamp) would otherwise keep an estimate each for as
// long as WithIdleExpiry's duration. n must not be negative; 0 is the
// default.
func WithMaxCostEstimates(n int) Option {
	return optionFunc(func(o *options) { o.limits.MaxCostEstimates = n })
}

// WithMaxIdleKeys bounds the idle fairness keys the scheduler remembers to
// n (default 100 000, about 80 MB): past it, a key that becomes idle (no
// job pending or running) pushes out the least recently used idle key,
// which is forgotten as WithIdleExpiry forgets an expired one — it starts
// again at the floor if it comes back. Keys made fresh for every request
// would otherwise be kept for the whole idle expiry. n must not be
// negative; 0 is the default.
func WithMaxIdleKeys(n int) Option {
	return optionFunc(func(o *options) { o.limits.MaxIdleKeys = n })
}

// ScoreConfig sets the coefficients of linear scoring (WithScoring).
//
// Fields, from policy.ScoreConfig:
//
//	PriorityWeight float64 // per priority unit; default 1024
//
//	AgeWeight float64 // per second waited; default 16
//
//	RarityBonus float64 // divided by the compatible free slots; default 500
//
//	OnDemandBonus float64 // for RunSync work; default 4096
//
//	OnDemandAgeWeight float64 // per second, on top of AgeWeight, for RunSync work; default 32
type ScoreConfig = policy.ScoreConfig

// MaxScoreWeight bounds every ScoreConfig weight and bonus, so that scores
// stay finite.
const MaxScoreWeight = policy.MaxScoreWeight

// Bounds of the inputs that enter cost arithmetic: a fairness key's weight
// (WithKeyWeight, SetKeyWeight) and a job's stated cost (WithTokens).
// Outside them the call fails with ErrInvalidConfig or ErrInvalidJob.
const (
	MinKeyWeight = policy.MinKeyWeight
	MaxKeyWeight = policy.MaxKeyWeight
	MaxTokens    = policy.MaxTokens
)

// MaxNameLen bounds, in bytes, every name a caller gives: a job type, a
// job id, a fairness key, a group, a conflict group, a worker id, a
// cluster's domain and instance. A name must also be valid UTF-8 without a
// NUL byte; one that is not is refused at the call (ErrInvalidJob for a
// job's, ErrInvalidConfig for a configuration's), in every mode, so that
// every key a store indexes fits.
const MaxNameLen = policy.MaxNameLen

// MaxTextLen bounds, in bytes, the free text the scheduler stores or sends
// to other instances — a failed attempt's error (DeadJob.LastError), an
// event's or a command's error in a cluster — cleaned first: invalid
// UTF-8 replaced by U+FFFD, NUL bytes removed, a longer text cut, ending
// in "…".
const MaxTextLen = policy.MaxTextLen

// JobClass is what a job's score depends on besides its age (see
// ScoreConfig.Crossover).
//
// Fields, from policy.JobClass:
//
//	Priority Priority
//
//	OnDemand bool
//
//	CompatibleSlots int
type JobClass = policy.JobClass

// WithScoring orders dispatch by a linear score instead of by effective
// priority: PriorityWeight·priority + AgeWeight·age, plus
// RarityBonus divided by the free slots that take the job's type (worker
// types), plus OnDemandBonus + OnDemandAgeWeight·age for RunSync work —
// age in whole seconds since arrival. The highest score goes first; ties go
// to the lower accumulated cost of the fairness key, then to the earlier
// arrival. Every cap, conflict, group allocation and limit still applies.
// Zero fields take the defaults (1024, 16/s, 500, 4096, 32/s); the score
// has its own aging term, so WithAging is refused alongside. The policy
// package doc gives the arithmetic; ScoreConfig.Crossover computes when one
// kind of job overtakes another. With scoring, types may have the
// business priority 0, whose tier has no cap of its own (WithTier may give
// it one); the other priorities still cap their tiers by their value unless
// WithPriorityMode(PriorityOrderOnly) makes every priority a pure order.
func WithScoring(cfg ScoreConfig) Option {
	return optionFunc(func(o *options) {
		c := cfg.WithDefaults()
		o.limits.Scoring = &c
	})
}

// WithAging turns priority aging on: a pending job's effective priority
// grows by cfg.Step every cfg.Interval once it has waited cfg.GracePeriod,
// up to cfg.MaxEffectivePriority, so lower tiers are never starved by a
// stream of higher-priority work. The effective priority orders dispatch; the
// base priority (the type's) still decides which tier's cap a job counts
// against. See the policy package for the arithmetic and AgingConfig.MaxWait
// for the bound it gives. Default: off.
func WithAging(cfg AgingConfig) Option {
	return optionFunc(func(o *options) { o.limits.Aging = &cfg })
}

// groups returns the group settings, creating them with default weight 1.
func (o *options) groups() *policy.GroupsConfig {
	if o.limits.Groups == nil {
		o.limits.Groups = &policy.GroupsConfig{DefaultWeight: 1, Groups: map[string]policy.GroupConfig{}}
	}
	return o.limits.Groups
}

// group returns the settings of one group, with the default weight unless
// set.
func (o *options) group(name string) policy.GroupConfig {
	g, ok := o.groups().Groups[name]
	if !ok {
		g.Weight = 0 // resolved to the default weight in New
	}
	return g
}

// WithGroupWeight gives a group a weight (at least 1): the capacity left
// after the groups' minimums is split among the groups with work in
// proportion to their weights, and a group's unused share goes to the
// others. Any group option splits the global cap among groups, so
// WithMaxConcurrency is then required. See the policy package for the
// allocation rule.
func WithGroupWeight(group string, weight int) Option {
	return optionFunc(func(o *options) {
		g := o.group(group)
		g.Weight = weight
		if weight < 1 {
			o.fail(policy.InvalidConfig(fmt.Sprintf("WithGroupWeight(%q)", group), weight, "must be at least 1"))
		}
		o.groups().Groups[group] = g
	})
}

// WithDefaultGroupWeight sets the weight of groups without their own (the
// jobs without a group included). Default 1.
func WithDefaultGroupWeight(weight int) Option {
	return optionFunc(func(o *options) { o.groups().DefaultWeight = weight })
}

// WithGroupMinSlots guarantees a group n slots while it has that much work.
// The minimums must add up to at most WithMaxConcurrency.
func WithGroupMinSlots(group string, n int) Option {
	return optionFunc(func(o *options) {
		g := o.group(group)
		g.MinSlots = n
		o.groups().Groups[group] = g
	})
}

// AdaptiveLimitConfig moves the global limit with job latency, or with a
// load signal (see WithAdaptiveLimit).
//
// Fields, from policy.AdaptiveLimitConfig:
//
//	Min, Max int
//
//	// Tolerance is the ratio above which a job counts as slow; default 1.5.
//	Tolerance float64
//
//	// Backoff multiplies the limit on a slow job; in (0, 1), default 0.9.
//	Backoff float64
//
//	// LoadTarget, when above 0, makes the limit follow the load signal
//	// (Limits.Load) instead of latency: a reading above it backs off, one
//	// at or below it grows the limit by one while the limit is in use.
//	// In (0, 1).
//	LoadTarget float64
type AdaptiveLimitConfig = policy.AdaptiveLimitConfig

// WithAdaptiveLimit lets the global limit move between cfg.Min and cfg.Max:
// a job that took more than Tolerance (default 1.5) times its learned cost
// shrinks the limit by Backoff (default 0.9, at least to Min); a job that
// finished within it while the limit was fully used grows it by one (at
// most to Max). It starts at WithMaxConcurrency's value (cfg.Max without
// one), which must lie within [Min, Max]. Group and tier shares are taken
// of the current limit; the snapshot's MaxConcurrency shows it. With
// cfg.LoadTarget the limit follows WithLoadSignal's readings instead of
// latency: each reading above the target multiplies it by Backoff, each at
// or below it adds one while the limit is in use.
func WithAdaptiveLimit(cfg AdaptiveLimitConfig) Option {
	return optionFunc(func(o *options) {
		a := cfg.WithDefaults()
		o.limits.Adaptive = &a
	})
}

// RateScope names what a rate limit counts: RateForType, RateForGroup,
// RateForKey.
//
// Fields, from policy.RateScope:
//
//	Kind RateScopeKind
//
//	Name string
type RateScope = policy.RateScope

// RateForType scopes a rate limit to the jobs of type t.
func RateForType(t JobType) RateScope { return RateScope{Kind: policy.RateType, Name: string(t)} }

// RateForGroup scopes a rate limit to the jobs of group g ("" for the jobs
// without one).
func RateForGroup(g string) RateScope { return RateScope{Kind: policy.RateGroup, Name: g} }

// RateForKey scopes a rate limit to the jobs of fairness key k.
func RateForKey(k string) RateScope { return RateScope{Kind: policy.RateKey, Name: k} }

// WithRateLimit caps how fast jobs of scope start: a token bucket
// (golang.org/x/time/rate, run on the scheduler's clock) of perSecond
// tokens a second holding at most burst. A job takes its tokens from each
// bucket that applies: its WithTokens cost in seconds, rounded up to a
// whole token, or 1 when it states none. A job whose bucket holds fewer
// waits (reason rate_limited) and its whole scope leaves dispatch until the
// bucket holds them — one timer for the earliest refill — so its slot goes
// to other work meanwhile, and smaller jobs of the scope do not pass it. A
// job larger than the burst waits for a full bucket and takes all of it:
// never refused, never starved; the tokens past the burst are not owed, so
// the next job waits only for its own from the empty bucket. A rate that is
// not positive and finite, a burst under 1 or a scope limited twice is
// ErrInvalidConfig.
func WithRateLimit(scope RateScope, perSecond float64, burst int) Option {
	return optionFunc(func(o *options) {
		o.limits.RateLimits = append(o.limits.RateLimits, policy.RateLimit{Scope: scope, PerSecond: perSecond, Burst: burst})
	})
}

// JobInfo is what an admission policy is told of a job about to start.
//
// Fields, from policy.JobInfo:
//
//	Type JobType
//
//	ID string
//
//	Key string
//
//	Group string
//
//	Priority Priority // base
//
//	Effective Priority // aged or inherited
//
//	// Waited is the time since submission; Attempt counts the policy's
//	// earlier deferrals of the job (0 the first time it is asked).
//	Waited time.Duration
//
//	Attempt int
//
//	// QueueDepth and Running describe the scheduler at that moment.
//	QueueDepth, Running int
type JobInfo = policy.JobInfo

// Decision is an admission policy's verdict: Admit, Deny or Defer.
type Decision = policy.Decision

// Admit lets the job start.
func Admit() Decision { return policy.Admit() }

// Deny drops the job: RunSync returns err (ErrDenied when nil), a
// background job is dropped, logged and reported (JobDenied).
func Deny(err error) Decision { return policy.Deny(err) }

// Defer keeps the job waiting (reason deferred) for d; the policy is asked
// again when d has passed and the job's turn comes, with JobInfo.Attempt
// one higher.
func Defer(d time.Duration) Decision { return policy.Defer(d) }

// WithAdmissionPolicy installs a policy asked at the moment each job would
// be admitted — every cap and conflict already checked — in the
// scheduler's goroutine: it must be quick and must not call the scheduler.
// A panic in it denies that job with an error wrapping ErrDenied; the
// scheduler carries on. Deferred jobs wait on one timer, for the earliest.
// Every denial and deferral is logged at info level as a decision record.
func WithAdmissionPolicy(p func(JobInfo) Decision) Option {
	return optionFunc(func(o *options) { o.limits.Admission = p })
}

// WithTier caps tier p (the jobs of types of priority p) and may reserve it
// slots, in place of the rule that a tier's value is its cap. Shares take
// a part of the global cap, which WithMaxConcurrency must then set:
// ⌊MinShare·C⌋ slots are reserved for it — no other tier holds them, unless
// LendIdle lends them while p has nothing waiting that could take them
// (with group weights, a job whose group is allocated no slot does not
// count) — and it runs at most ⌊BurstShare·C⌋ jobs (at least its
// reservation and 1). MaxRunning caps it absolutely besides (a
// max_inflight): the tier runs at most min(burst, MaxRunning) and reserves
// at most that; a tier with MaxRunning alone needs no global cap. Tiers
// without WithTier keep the value-as-cap rule (no cap at all with
// PriorityOrderOnly) and respect the reservations. A job kept out by its
// tier's cap, or by other tiers' reservations of the free slots, waits
// with reason tier_limit. Shares out of [0, 1], MinShare above
// BurstShare, MinShare without BurstShare, MinShares over 1 in total, a
// negative MaxRunning or a config that caps nothing are ErrInvalidConfig.
// A config that sets only Preempt or StarvationWindow (see ErrPreempted
// and docs/concepts.md) keeps the tier's default cap; a budget whose Max
// or Window is not positive, or a negative window, is ErrInvalidConfig.
func WithTier(p Priority, cfg TierConfig) Option {
	return optionFunc(func(o *options) {
		if o.limits.Tiers == nil {
			o.limits.Tiers = map[Priority]policy.TierConfig{}
		}
		o.limits.Tiers[p] = cfg
	})
}

// WithPriorityMode sets what a job type's Priority means. The default,
// PriorityValueIsCap: the value orders tiers and caps them
// (Priority(10) runs at most 10 jobs at once), so a priority is at least 1.
// PriorityOrderOnly: priorities from 0 up only order
// dispatch (and scoring), and a tier has a cap only where WithTier gives it
// one — a share of the global cap, an absolute MaxRunning, or both. A
// negative priority is ErrInvalidConfig in either mode, and so is priority
// 0 in the default mode without WithScoring (it would cap its tier at 0
// jobs). A mode that is not one of the constants is ErrInvalidConfig.
func WithPriorityMode(m PriorityMode) Option {
	return optionFunc(func(o *options) { o.limits.PriorityMode = m })
}

// WithMaxPending bounds the queue: a RunSync or Submit that finds n jobs
// pending returns at once with a *RefusalError matching ErrOverloaded
// (reason pool_overloaded) and queues nothing. 0, the default, is no bound.
// With any pending bound, Submit waits for the owner's verdict instead of
// returning as soon as the job is handed over.
func WithMaxPending(n int) Option {
	return optionFunc(func(o *options) { o.limits.MaxPending = n })
}

// WithTenantLimits bounds every fairness key (tenant), unless WithKeyLimits
// sets its own. While a key runs MaxRunning jobs its other jobs wait
// (reason tenant_limit, the headline before the group, tier, worker and
// global rules: it is the tenant's own) and the slots go to other keys. A RunSync or Submit whose key has
// MaxPending jobs pending returns at once with a *RefusalError matching
// ErrTenantLimit (reason tenant_limit), so a noisy tenant is turned away
// before it fills the queue; the key's bound is checked before
// WithMaxPending's.
func WithTenantLimits(l TenantLimits) Option {
	return optionFunc(func(o *options) { o.tenants().Default = l })
}

// WithKeyLimits sets the bounds of one fairness key, in place of
// WithTenantLimits'.
func WithKeyLimits(key string, l TenantLimits) Option {
	return optionFunc(func(o *options) {
		t := o.tenants()
		if t.Keys == nil {
			t.Keys = map[string]policy.TenantLimits{}
		}
		t.Keys[key] = l
	})
}

func (o *options) tenants() *policy.TenantsConfig {
	if o.limits.Tenants == nil {
		o.limits.Tenants = &policy.TenantsConfig{}
	}
	return o.limits.Tenants
}

// WithKeyWeight gives fairness key key a weight (default 1): admitting one
// of its jobs charges the job's cost divided by the weight, so keys that
// all have work waiting receive service, in cost, in proportion to their
// weights — a key of weight 2 twice that of a key of weight 1. A weight
// must lie within [MinKeyWeight, MaxKeyWeight] (ErrInvalidConfig from New).
func WithKeyWeight(key string, weight float64) Option {
	return optionFunc(func(o *options) {
		if o.limits.KeyWeights == nil {
			o.limits.KeyWeights = map[string]float64{}
		}
		o.limits.KeyWeights[key] = weight
	})
}

// WithGroupLimit caps a group at n running jobs, on top of its weighted
// share; even an urgent job of the group does not pass it.
func WithGroupLimit(group string, n int) Option {
	return optionFunc(func(o *options) {
		g := o.group(group)
		g.Limit = n
		o.groups().Groups[group] = g
	})
}

// SlotSpec is one slot of a worker: it runs one job at a time of any of
// Types, each registered with JobTypeConfig.RequiresWorker.
type SlotSpec struct{ Types []JobType }

// WorkerSpec is a worker and its slots.
type WorkerSpec struct {
	ID    string
	Slots []SlotSpec
}

// RegisterWorker adds a worker's slots. Jobs of a type that requires a
// worker run only on a free slot that takes the type — the one that takes
// the fewest types, keeping versatile slots for rarer work (earliest
// registered among equals). In cluster mode the worker is registered on
// this instance and joins the leader's index, which spans the instances:
// a durable job on its slots runs on this instance, a RunSync or Submit on
// its own (SlotFromContext names the slot either way); worker ids are
// unique across the cluster. It fails, changing nothing, with
// ErrDuplicateWorker for an ID already registered, ErrUnknownJobType for an
// unregistered type, and ErrInvalidConfig for an empty ID or one that is
// not a valid name (see MaxNameLen), no slot, a slot with no type or a
// type that does not require a worker.
func (s *Scheduler) RegisterWorker(w WorkerSpec) error {
	if err := s.check(); err != nil {
		return err
	}
	slots := make([][]JobType, len(w.Slots))
	for i, sl := range w.Slots {
		slots[i] = append([]JobType(nil), sl.Types...) // the caller may reuse its spec
	}
	return s.eng.registerWorker(w.ID, slots)
}

// UnregisterWorker removes a worker and all its slots at once: it stopped
// or crashed. The contexts of jobs running on its slots are cancelled with
// a cause matching ErrWorkerLost; when such a job returns an error it is
// wrapped with that cause. A durable job's attempt was then interrupted,
// not failed: it runs again on a slot that takes it whatever its retry
// policy, up to RetryPolicy.MaxInterruptions; any other job follows its
// retry policy (a job that returns nil succeeded all the same). Its slots free nothing when their
// jobs end. It fails with ErrUnknownWorker for an ID not registered.
func (s *Scheduler) UnregisterWorker(id string) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.eng.unregisterWorker(id)
}

// SlotFromContext returns the worker slot the job whose context ctx is (or
// derives from) runs on: the worker's ID and the slot's index in its spec.
// ok is false outside a job of a type that requires a worker.
func SlotFromContext(ctx context.Context) (worker string, slot int, ok bool) {
	ref, ok := messages.SlotOf(ctx)
	return ref.Worker, ref.Slot, ok
}
