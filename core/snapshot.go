package core

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/fairsched/fairsched/costmodel"
	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/queue"
)

// Snapshot is a deep copy of the scheduler's state at one instant. It shares
// nothing with the scheduler and serialises to JSON.
type Snapshot struct {
	Time time.Time `json:"time"`
	// MaxConcurrency is the global cap; 0 means unlimited.
	MaxConcurrency int `json:"max_concurrency"`
	// Running jobs in admission order. In cluster mode a job is running
	// from its admission by the leader: some may not yet be placed on an
	// instance (their Instance is empty until they are).
	Running []RunningJob `json:"running"`
	// Pending jobs in rank order — effective priority (or score), then the
	// key's accumulated cost, then arrival: the order dispatch considers
	// them in. Dispatch skips every job a rule holds (PendingJob.Reasons),
	// so this is not the order in which they will start.
	Pending []PendingJob `json:"pending"`
	// AccumulatedCost per fairness key ("" is background work): the sum of
	// the key's charges, each a job's cost divided by the key's weight.
	AccumulatedCost map[string]time.Duration `json:"accumulated_cost"`
	// Adaptive is the adaptive limit's configuration; MaxConcurrency is its
	// current limit.
	Adaptive *policy.AdaptiveLimitConfig `json:"adaptive_limit,omitempty"`
	// Load is the load signal's last reading and settings; nil without
	// one.
	Load *LoadSnapshot `json:"load,omitempty"`
	// Tiers are the tier shares and caps (WithTier), by priority.
	Tiers map[policy.Priority]policy.TierConfig `json:"tiers,omitempty"`
	// PriorityMode says whether a priority's value caps its tier (the
	// default, omitted) or priorities only order.
	PriorityMode policy.PriorityMode `json:"priority_mode,omitempty"`
	// KeyWeights are the fairness keys with a weight other than 1.
	KeyWeights map[string]float64 `json:"key_weights,omitempty"`
	// CostEstimates are the learned costs, by type then id.
	CostEstimates []CostEstimate                          `json:"cost_estimates"`
	RunningByTier map[policy.Priority]int                 `json:"running_by_tier"`
	RunningByType map[policy.JobType]int                  `json:"running_by_type"`
	Types         map[policy.JobType]policy.JobTypeConfig `json:"types"`
	// Aging is the aging configuration; nil when aging is off.
	Aging *policy.AgingConfig `json:"aging,omitempty"`
	// AgingRises counts, by type, every rise of a waiting job's effective
	// priority by aging since the start: each job's every step, the jobs
	// still waiting included (JobAged reports only a lane's head). It never
	// decreases and never counts a rise twice; with more than 65 536 jobs
	// waiting, their rises are brought up to date round robin, that many per
	// snapshot, so it may lag. Nil without aging or before
	// the first rise.
	AgingRises map[policy.JobType]uint64 `json:"aging_rises,omitempty"`
	// Groups lists the groups with jobs, paused or holding slots, by name.
	Groups []GroupSnapshot `json:"groups,omitempty"`
	// Cluster, in cluster mode, is the instance's view of its cluster.
	Cluster *ClusterSnapshot `json:"cluster,omitempty"`
	// EventsLost counts the events dropped since the start because a
	// subscriber's channel (Subscribe) was full, once per subscriber that
	// missed one. In cluster mode, this instance's subscribers' losses, and
	// on the leader those of its scheduler's publisher too.
	EventsLost uint64 `json:"events_lost"`
	// Workers are the registered workers and their slots, in registration
	// order.
	Workers []WorkerSnapshot `json:"workers,omitempty"`
	// Expired counts the jobs that expired pending since the start.
	Expired uint64 `json:"expired"`
	// PendingTotal, KeysTotal and EstimatesTotal count every pending job,
	// fairness key and cost estimate. A bounded snapshot (the default of
	// Scheduler.Snapshot) lists fewer: the first pending jobs in rank
	// order, the keys of the listed jobs, the most recently used
	// estimates.
	PendingTotal   int `json:"pending_total"`
	KeysTotal      int `json:"keys_total"`
	EstimatesTotal int `json:"estimates_total"`
	// Tenants are the tenants of hierarchical fair share with jobs pending
	// or running, by name; nil with one level. A bounded snapshot with
	// more tenants than rows lists those of its listed pending jobs and of
	// the running ones; TenantsTotal counts them all.
	Tenants      []TenantSnapshot `json:"tenants,omitempty"`
	TenantsTotal int              `json:"tenants_total,omitempty"`
}

// RunningJob is one running job in a Snapshot.
type RunningJob struct {
	Type        policy.JobType `json:"type"`
	ID          string         `json:"id"`
	FairnessKey string         `json:"fairness_key"`
	Group       string         `json:"group,omitempty"`
	// Priority is the base priority, the tier the job counts against;
	// EffectivePriority the priority it was admitted at.
	Priority          policy.Priority `json:"priority"`
	EffectivePriority policy.Priority `json:"effective_priority"`
	Submitted         time.Time       `json:"submitted"`
	Started           time.Time       `json:"started"`
	// EstimatedCost is what admission charged to the key.
	EstimatedCost time.Duration `json:"estimated_cost"`
	// Worker and Slot name the worker slot the job runs on (types with
	// RequiresWorker); Worker is empty otherwise.
	Worker string `json:"worker,omitempty"`
	Slot   int    `json:"slot,omitempty"`
	// Instance, in cluster mode, is the instance the job was granted to;
	// empty while the leader has admitted it but not yet placed it.
	Instance string `json:"instance,omitempty"`
}

// ClusterSnapshot is an instance's view of its cluster (cluster mode).
type ClusterSnapshot struct {
	Domain   string `json:"domain"`
	Instance string `json:"instance"`
	// Incarnation is this process's identity in the domain: Instance,
	// "#" and a random suffix, new at each start.
	Incarnation string `json:"incarnation,omitempty"`
	// Leader names the instance that holds the domain's lease under Epoch
	// ("" when unknown), LeaderIncarnation which incarnation of it;
	// Leading says whether it is this one. Only the leader's snapshot
	// lists jobs and Instances: it is the one that decides.
	Leader            string `json:"leader"`
	LeaderIncarnation string `json:"leader_incarnation,omitempty"`
	Epoch             int64  `json:"epoch"`
	Leading           bool   `json:"leading"`
	// Instances are the instances the leader counts, by incarnation.
	Instances []InstanceSnapshot `json:"instances,omitempty"`
}

// InstanceSnapshot is one instance of a cluster as its leader counts it.
type InstanceSnapshot struct {
	// ID is its configured name, Incarnation its process's identity: a
	// name restarted shows twice until the leader has declared its
	// earlier incarnation lost.
	ID          string `json:"id"`
	Incarnation string `json:"incarnation,omitempty"`
	// Slots is how many durable jobs it runs at once, Types the types it
	// has handlers for, Running the durable jobs granted to it running.
	Slots   int      `json:"slots"`
	Types   []string `json:"types"`
	Running int      `json:"running"`
	// Subscribed: it has subscribers to the domain's events (the leader
	// publishes them only while some instance has).
	Subscribed bool `json:"subscribed,omitempty"`
}

// PendingJob is one waiting job in a Snapshot.
type PendingJob struct {
	Type        policy.JobType `json:"type"`
	ID          string         `json:"id"`
	FairnessKey string         `json:"fairness_key"`
	Group       string         `json:"group,omitempty"`
	// Priority is the base priority, the tier the job counts against;
	// EffectivePriority the priority it competes at now (aging, inherited
	// priority); InheritedPriority the floor it inherited, if any.
	Priority          policy.Priority  `json:"priority"`
	EffectivePriority policy.Priority  `json:"effective_priority"`
	InheritedPriority *policy.Priority `json:"inherited_priority,omitempty"`
	Submitted         time.Time        `json:"submitted"`
	// Reasons lists every rule that holds the job now, narrowest first:
	// the job's own state (paused, backoff, scheduled, deferred; a durable
	// job without a handler, no_handler, alone), its (conflict group, id),
	// its type, its fairness key, its group, its tier, the workers, the
	// load signal, the global cap (the policy package's doc lists them in
	// order). Empty when nothing holds it: it starts at the next dispatch.
	Reasons []policy.Reason `json:"reasons,omitempty"`
	// Reason is the headline: Reasons[0], the narrowest rule — the one to
	// look at first, since lifting a broader one (a bigger global cap)
	// would not start the job while it holds. "" when nothing holds it.
	Reason policy.Reason `json:"reason"`
	// Score is the job's linear score now (WithScoring), 0 without.
	Score float64 `json:"score,omitempty"`
	// Blockers name what holds the job under Reason (Explanation).
	Blockers []Blocker `json:"blockers,omitempty"`
	// Estimate is when the job is expected to start; nil when it is
	// beyond the first EstimateBound jobs in the order dispatch plays
	// them.
	Estimate *StartEstimate `json:"estimate,omitempty"`
	// History and HistoryDropped are what it has waited on
	// (Explanation).
	History        []WaitNote `json:"history,omitempty"`
	HistoryDropped int        `json:"history_dropped,omitempty"`
}

// CostEstimate is the learned cost of one (type, id).
type CostEstimate struct {
	Type policy.JobType `json:"type"`
	ID   string         `json:"id"`
	Cost time.Duration  `json:"cost"`
}

// Snapshot copies the whole state out. It costs O(n log n) in pending jobs
// and copies every key and estimate: it is for inspection, not for the
// dispatch path; SnapshotRows bounds it.
func (c *Core) Snapshot(now time.Time) Snapshot { return c.SnapshotRows(now, 0) }

// SnapshotRows copies the state out with at most rows pending jobs — the
// first in rank order — the accumulated costs of every key, or of the keys
// of the listed pending and running jobs when there are more than rows
// keys, and the rows most recently used estimates;
// rows ≤ 0 copies everything. The totals count what was left out. It costs
// O(lanes + rows log lanes), and O(rows) rows' worth
// of reasons: it merges the lanes (queue.Top) rather than sorting every
// job.
func (c *Core) SnapshotRows(now time.Time, rows int) Snapshot {
	all := rows <= 0
	s := Snapshot{
		Time:           now,
		MaxConcurrency: c.limits.MaxConcurrency,
		Running:        make([]RunningJob, 0, len(c.running)),
		PendingTotal:   c.queue.Len(),
		KeysTotal:      c.ledger.Len(),
		EstimatesTotal: c.estimates.Len(),
		Expired:        c.expiredTotal,
		KeyWeights:     keyWeights(c.limits.KeyWeights),
		Tiers:          maps.Clone(c.limits.Tiers),
		PriorityMode:   c.limits.PriorityMode,
		Adaptive:       copyAdaptive(c.limits.Adaptive),
		Load:           c.loadSnapshot(),

		RunningByTier: c.usage.ByTier(),
		RunningByType: c.usage.ByType(),
		Types:         c.Types(),
		Aging:         copyAging(c.limits.Aging),
		Groups:        c.groupSnapshots(),
		Workers:       c.workerSnapshots(),
	}
	c.queue.At(now) // its location is the clock's: TimeOf
	for _, j := range c.Running() {
		s.Running = append(s.Running, RunningJob{
			Type: j.Type, ID: j.ID, FairnessKey: j.Key, Group: j.Group, Priority: j.Priority(), EffectivePriority: j.Effective,
			Submitted: c.queue.TimeOf(j.Submitted), Started: j.Started, EstimatedCost: j.Cost,
		})
		if w := j.Worker; w != nil {
			s.Running[len(s.Running)-1].Worker, s.Running[len(s.Running)-1].Slot = w.Worker, w.Index
		}
	}
	s.AgingRises = c.AgingRises()
	pending := c.ranked(rows)
	s.Pending = make([]PendingJob, 0, len(pending))
	if all || c.ledger.Len() <= rows {
		s.AccumulatedCost = c.ledger.Costs()
	} else {
		s.AccumulatedCost = map[string]time.Duration{}
		for _, j := range c.running {
			s.AccumulatedCost[j.Key] = c.ledger.Cost(j.Key)
		}
		for _, j := range pending {
			s.AccumulatedCost[j.Key] = c.ledger.Cost(j.Key)
		}
	}
	if all {
		s.CostEstimates = c.Estimates()
	} else {
		s.CostEstimates = c.recentEstimates(rows)
	}
	s.Tenants, s.TenantsTotal = c.tenantSnapshots(pending, rows, all)
	starts := c.startsOf(now, EstimateBound) // whatever the rows: a row's estimate is the same in every snapshot
	h := &holders{c: c}
	for _, j := range pending {
		pj := PendingJob{
			Type: j.Type, ID: j.ID, FairnessKey: j.Key, Group: j.Group, Priority: j.Priority(),
			EffectivePriority: c.queue.Effective(&j.Job, j.Priority()),
			Submitted:         c.queue.TimeOf(j.Submitted),
		}
		if pj.Reasons = c.reasons(now, j, nil); len(pj.Reasons) > 0 {
			pj.Reason = pj.Reasons[0]
			pj.Blockers = h.of(j, pj.Reason)
			c.noteWait(now, j, pj.Reason)
		}
		if e, ok := starts[j]; ok {
			pj.Estimate = &e
		}
		pj.History, pj.HistoryDropped = waitHistoryOf(j)
		pj.Score, _ = c.queue.Score(&j.Job, j.Priority())
		if j.Floored {
			floor := j.Floor // a copy: the snapshot shares nothing
			pj.InheritedPriority = &floor
		}
		s.Pending = append(s.Pending, pj)
	}
	return s
}

// ranked returns the pending jobs in rank order — effective priority (or
// score) descending, the key's accumulated cost, arrival — only the first
// rows of them when rows > 0 (queue.Top merges the lanes: a lane's jobs are
// in rank order already).
func (c *Core) ranked(rows int) []*Job {
	rank := func(qj *queue.Job) queue.Rank {
		j := jobOf(qj)
		// With scoring the score orders (the priority is part of it), else
		// the effective priority.
		p, scored := c.queue.Score(qj, j.Priority())
		if !scored {
			p = float64(c.queue.Effective(qj, j.Priority()))
		}
		return queue.Rank{Prio: p, Cost: c.queue.KeyCost(qj), Seq: j.Seq}
	}
	n := rows
	if n <= 0 {
		n = c.queue.Len()
	}
	top := c.queue.Top(n, rank)
	out := make([]*Job, len(top))
	for i, qj := range top {
		out[i] = jobOf(qj)
	}
	return out
}

// recentEstimates returns the rows most recently used estimates, by type
// then id.
func (c *Core) recentEstimates(rows int) []CostEstimate {
	out := make([]CostEstimate, 0, min(rows, c.estimates.Len()))
	c.estimates.EachRecent(rows, func(k costmodel.EstimateKey, cost time.Duration) {
		out = append(out, CostEstimate{Type: policy.JobType(k.Type), ID: k.ID, Cost: cost})
	})
	slices.SortFunc(out, func(a, b CostEstimate) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// reasons appends to buf every rule that keeps pending job j waiting at
// now, narrowest first, each reason once; the first is the headline
// (PendingJob.Reason). The order, from the job outwards:
//
//  1. the job's own state: paused (its group is paused: nothing else
//     matters until it resumes, and its aging stands still), backoff,
//     deferred;
//  2. its (conflict group, id): conflict;
//  3. its type: type_limit, then the type's rate limit (rate_limited);
//  4. its fairness key: tenant_limit, then the key's rate limit;
//  5. its group: group_limit (allocation or limit; not while paused — a
//     paused group is allocated nothing for that reason alone), then the
//     group's rate limit;
//  6. its tier: tier_limit — the tier runs its cap, or the free slots
//     (there are some) are owed to other tiers' reservations;
//  7. the workers: no_workers, worker_busy;
//  8. the load signal (overloaded, with OverloadDefer), then the global
//     cap: global_limit.
//
// A rate limit counts with the scope it limits, so rate_limited sits where
// its narrowest short bucket is. Each check is O(1) (the reservations
// O(tiers)): the snapshot stays O(n log n).
func (c *Core) reasons(now time.Time, j *Job, buf []policy.Reason) []policy.Reason {
	add := func(r policy.Reason) {
		if !slices.Contains(buf, r) {
			buf = append(buf, r)
		}
	}
	rate := func(kind policy.RateScopeKind) {
		for _, b := range j.bucketList() { // the tokens at now, dispatched or not
			if b.scope.Kind == kind && b.short(now, j) {
				add(policy.ReasonRateLimited)
			}
		}
	}
	if j.Job.Group.Paused() {
		add(policy.ReasonPaused)
	}
	switch {
	case j.Job.InBackoff():
		add(policy.ReasonBackoff)
	case j.Job.Deferred() && j.Rare != nil && j.NotBefore.After(now):
		add(policy.ReasonScheduled)
	case j.Job.Deferred():
		add(policy.ReasonDeferred)
	}
	if c.conflictBlocks(j) {
		add(policy.ReasonConflict)
	}
	if j.slot.TypeFull() {
		add(policy.ReasonTypeLimit)
	}
	rate(policy.RateType)
	if c.tenantBlocks(j) {
		add(policy.ReasonTenantLimit)
	}
	rate(policy.RateKey)
	if !j.Job.Group.Paused() && c.allocationBlocks(j) { // a paused group's allocation is 0 for its pause

		add(policy.ReasonGroupLimit)
	}
	rate(policy.RateGroup)
	if c.usage.TierFull(j.Priority()) || !c.usage.GlobalFull() && c.usage.Reserved(j.Priority()) {
		add(policy.ReasonTierLimit)
	}
	if w := c.workerReason(j.slot); w != "" {
		add(w)
	}
	if c.load.holding {
		add(policy.ReasonOverloaded)
	}
	if c.usage.GlobalFull() {
		add(policy.ReasonGlobalLimit)
	}
	if c.noOwnerSlot(j) {
		add(policy.ReasonNoFreeSlot)
	}
	return buf
}

func copyAging(a *policy.AgingConfig) *policy.AgingConfig {
	if a == nil {
		return nil
	}
	c := *a
	return &c
}

func keyWeights(w map[string]float64) map[string]float64 {
	if len(w) == 0 {
		return nil
	}
	return maps.Clone(w)
}

func copyAdaptive(a *policy.AdaptiveLimitConfig) *policy.AdaptiveLimitConfig {
	if a == nil {
		return nil
	}
	c := *a
	return &c
}
