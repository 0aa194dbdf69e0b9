package core

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"github.com/fairsched/fairsched/queue"
	"golang.org/x/time/rate"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/policy"
)

// refScheduler is the spec's algorithm written out as plainly as possible:
// slices scanned from end to end, a full sort of the pending jobs for every
// admission, counts recomputed from the running list. It shares no code
// with the core apart from the policy types, so the randomized comparison
// below checks the core's O(log n) index, its blocking and parking, the
// ledger and the estimate table against the spec's own words:
//
//	sort pending jobs by (-priority, accumulated_cost[fairness_key], arrival_time)
//	for each job in sorted order:
//	    skip if the tier runs int(priority) jobs, the type runs
//	    max_concurrency jobs, or a running job has the same job id and the
//	    same non-empty conflict group
//	    admit; accumulated_cost[key] += estimate or default_cost
//	(repeated until nothing is admissible or the global cap is reached)
//	on completion: estimate = α·elapsed + (1−α)·estimate
//
// Accumulated cost of a key that becomes active (its first job while it has
// none pending or running): the minimum accumulated cost over the active
// keys, or the last such minimum when no key is active (costmodel/doc.go:
// a key below it is advanced there, one above keeps its own). Idle keys and estimates unused for
// the TTL are forgotten by Evict.
type refScheduler struct {
	max     int
	alpha   float64
	ttl     time.Duration
	types   map[policy.JobType]policy.JobTypeConfig
	pending []*refJob // arrival order
	running []*refJob // admission order
	seq     uint64

	acc     map[string]time.Duration // accumulated cost of every known key
	jobs    map[string]int           // pending + running jobs per key
	keyUsed map[string]time.Time     // when each key last gained or lost a job
	lastMin time.Duration            // the minimum over active keys when last there were some

	est map[refEstKey]*refEstimate

	aging *policy.AgingConfig // nil: no aging

	// Groups (reference_groups_test.go): the weights, minimums and limits
	// as configured and changed at runtime (nil: no group weights), the
	// start of every current pause and the pauses that ended.
	groups   *policy.GroupsConfig
	pausedAt map[string]time.Time
	weights  map[string]float64 // fairness key weights (1 when absent)
	// maxPending and tenantPending bound the queue and each key's pending
	// jobs (0: no bound).
	maxPending   int
	shed         bool // fair shedding (reference_shed_test.go)
	tenants      *policy.TenantsConfig
	tiers        map[policy.Priority]policy.TierConfig
	admission    policy.AdmissionPolicy
	expired      []*refJob
	expiredTotal uint64
	buckets      map[policy.RateScope]*refBucket
	adaptive     *policy.AdaptiveLimitConfig
	denied       []refDenial
	pauses       map[string][]refPause
	borrowed     int // admissions while the job's group ran its allocation or more (urgent)
	lent         int // the same, while nothing could start within the allocations
	// slots are the worker slots in registration order
	// (reference_workers_test.go); scoring, when set, orders by score.
	slots   []*refSlot
	scoring *policy.ScoreConfig
	// orderOnly: priorities only order (PriorityOrderOnly); tiers without
	// a TierConfig have no cap.
	orderOnly bool
	// lending: within a dispatch, nothing could start within the groups'
	// allocations, so groups run up to their limits (work conservation).
	lending bool
	// rules: preemption and starvation windows (reference_preempt_test.go).
	rules *refRules
	// hier: hierarchical fair share (reference_hier_test.go); nil: one
	// level. cursor: where each tenant's next key joins, at the least.
	hier   *Hierarchy
	cursor map[string]time.Duration
	// laneTiers: the workload rules' tiers by lane label
	// (reference_workload_test.go); nil: no rules.
	laneTiers map[string]policy.Priority
}

type refJob struct {
	seq                uint64
	typ                policy.JobType
	id, key, group     string
	prio               policy.Priority
	floor              policy.Priority
	floored            bool
	tokens, estimate   time.Duration
	attempt            int
	deferredUntil      time.Time
	deadline           time.Time // zero: never expires
	submitted, started time.Time
	cost, keyCost      time.Duration
	onDemand           bool
	slot               *refSlot      // the worker slot it runs on
	shedCost           time.Duration // its claim on its key when submitted (reference_shed_test.go)
}

type refEstKey struct {
	typ policy.JobType
	id  string
}

type refEstimate struct {
	cost time.Duration
	used time.Time
}

func newRef(l policy.Limits) *refScheduler {
	var groups *policy.GroupsConfig
	if l.Groups != nil {
		groups = &policy.GroupsConfig{DefaultWeight: l.Groups.DefaultWeight, Groups: maps.Clone(l.Groups.Groups)}
	}
	return &refScheduler{
		groups:     groups,
		pausedAt:   map[string]time.Time{},
		weights:    maps.Clone(l.KeyWeights),
		maxPending: l.MaxPending,
		shed:       l.Shed != nil && l.MaxPending > 0,
		tenants:    l.Tenants,
		tiers:      l.Tiers,
		admission:  l.Admission,
		buckets:    refBuckets(l.RateLimits),
		adaptive:   refAdaptive(l.Adaptive),
		pauses:     map[string][]refPause{},
		aging:      l.Aging,
		scoring:    l.Scoring,
		orderOnly:  l.PriorityMode == policy.PriorityOrderOnly,
		max:        l.MaxConcurrency,
		alpha:      l.CostSmoothing,
		ttl:        l.KeyTTL,
		types:      map[policy.JobType]policy.JobTypeConfig{},
		acc:        map[string]time.Duration{},
		jobs:       map[string]int{},
		keyUsed:    map[string]time.Time{},
		est:        map[refEstKey]*refEstimate{},
		rules:      newRefRules(l.Tiers),
	}
}

// activeMin returns the minimum accumulated cost over the keys with jobs.
func (r *refScheduler) activeMin() (time.Duration, bool) {
	var m time.Duration
	found := false
	for k, n := range r.jobs {
		if n > 0 && (!found || r.acc[k] < m) {
			m, found = r.acc[k], true
		}
	}
	return m, found
}

// refusal returns why a submission of key is refused, or "": the key's
// pending bound first, then the queue's.
func (r *refScheduler) refusal(key string) policy.Reason {
	n := 0
	for _, j := range r.pending {
		if j.key == key {
			n++
		}
	}
	if limit := r.tenantLimit(key); limit > 0 && n >= limit {
		return policy.ReasonTenantLimit
	}
	if r.maxPending > 0 && len(r.pending) >= r.maxPending {
		return policy.ReasonPoolOverloaded
	}
	return ""
}

func (r *refScheduler) tenantLimits(key string) policy.TenantLimits {
	if r.tenants == nil {
		return policy.TenantLimits{}
	}
	if l, ok := r.tenants.Keys[key]; ok {
		return l
	}
	return r.tenants.Default
}

func (r *refScheduler) tenantLimit(key string) int        { return r.tenantLimits(key).MaxPending }
func (r *refScheduler) tenantRunningLimit(key string) int { return r.tenantLimits(key).MaxRunning }

func (r *refScheduler) submit(now time.Time, typ policy.JobType, id, key string) *refJob {
	return r.submitIn(now, typ, id, key, "")
}

func (r *refScheduler) submitIn(now time.Time, typ policy.JobType, id, key, group string) *refJob {
	return r.submitAt(now, typ, id, key, group, r.types[typ].Priority)
}

// submitAt submits a job that competes at tier prio.
func (r *refScheduler) submitAt(now time.Time, typ policy.JobType, id, key, group string, prio policy.Priority) *refJob {
	r.seq++
	j := &refJob{seq: r.seq, typ: typ, id: id, key: key, group: group, prio: prio, submitted: now}
	if r.jobs[key] == 0 {
		if m, ok := r.activeMin(); ok {
			r.lastMin = m
		}
		r.acc[key] = max(r.acc[key], r.lastMin) // advanced, never moved down
		r.stagger(key, typ)
	}
	r.jobs[key]++
	r.keyUsed[key] = now
	r.arrives(now, j)
	r.pending = append(r.pending, j)
	return j
}

func (r *refScheduler) leave(now time.Time, key string) {
	if r.jobs[key] == 1 {
		// The last minimum over active keys is the one when the last
		// key left: remember it at every departure.
		r.lastMin, _ = r.activeMin()
	}
	r.jobs[key]--
	r.keyUsed[key] = now
	if _, ok := r.activeMin(); !ok {
		r.lastMin = r.acc[key] // the last active key leaves: remember its cost
	}
}

func (r *refScheduler) countRunning(match func(*refJob) bool) int {
	n := 0
	for _, o := range r.running {
		if match(o) {
			n++
		}
	}
	return n
}

// blockers returns every rule that keeps j from starting now, narrowest
// first (nil when it may start): the job's own state (its group paused,
// deferred), its (conflict group, id), its type's cap and rate limit, its
// key's tenant limit and rate limit, its group's allocation and limit and
// rate limit, its tier's cap or the other tiers' reservations, the worker
// slots, the global cap. Each reason once.
func (r *refScheduler) blockers(j *refJob, now time.Time, alloc map[string]int) []policy.Reason {
	var out []policy.Reason
	add := func(hold bool, reason policy.Reason) {
		if hold && !slices.Contains(out, reason) {
			out = append(out, reason)
		}
	}
	short := func(s policy.RateScope) bool {
		b := r.buckets[s]
		return b != nil && (now.Before(b.until) || b.lim.TokensAt(now) < float64(refTokens(j, b)))
	}
	cfg := r.types[j.typ]
	full := r.max > 0 && len(r.running) >= r.max
	add(r.paused(j.group), policy.ReasonPaused)
	add(now.Before(j.deferredUntil), policy.ReasonDeferred)
	add(r.conflicts(j, now), policy.ReasonConflict)
	add(cfg.MaxConcurrency > 0 && r.countRunning(func(o *refJob) bool { return o.typ == j.typ }) >= cfg.MaxConcurrency, policy.ReasonTypeLimit)
	add(short(policy.RateScope{Kind: policy.RateType, Name: string(j.typ)}), policy.ReasonRateLimited)
	limit := r.tenantRunningLimit(j.key)
	add(limit > 0 && r.countRunning(func(o *refJob) bool { return o.key == j.key }) >= limit, policy.ReasonTenantLimit)
	add(short(policy.RateScope{Kind: policy.RateKey, Name: j.key}), policy.ReasonRateLimited)
	add(!r.paused(j.group) && r.groupBlocks(j, now, alloc), policy.ReasonGroupLimit)
	add(short(policy.RateScope{Kind: policy.RateGroup, Name: j.group}), policy.ReasonRateLimited)
	add(r.countRunning(func(o *refJob) bool { return o.prio == j.prio }) >= r.tierCap(j.prio) || !full && r.reserved(j.prio), policy.ReasonTierLimit)
	if w := r.workerReason(j); w != "" {
		add(true, w)
	}
	add(full, policy.ReasonGlobalLimit)
	return out
}

// conflicts reports whether j's (conflict group, id) holds it back: an
// exclusive job waits while any job of its group runs on its id; a shared
// one while an exclusive one does, or while an exclusive job of the group
// on the id that arrived before it is pending and waits for nothing of its
// own — its group is not paused, it is not deferred, a worker slot takes its
// type (writer preference).
func (r *refScheduler) conflicts(j *refJob, now time.Time) bool {
	cfg := r.types[j.typ]
	if cfg.ConflictGroup == "" {
		return false
	}
	same := func(o *refJob) bool { return o.id == j.id && r.types[o.typ].ConflictGroup == cfg.ConflictGroup }
	exclusive := func(o *refJob) bool { return same(o) && r.types[o.typ].ConflictMode == policy.ConflictExclusive }
	if cfg.ConflictMode == policy.ConflictExclusive {
		return r.countRunning(same) > 0
	}
	return r.countRunning(exclusive) > 0 || slices.ContainsFunc(r.pending, func(o *refJob) bool {
		return exclusive(o) && o.seq < j.seq && !r.paused(o.group) && !now.Before(o.deferredUntil) &&
			r.workerReason(o) != policy.ReasonNoWorkers
	})
}

// tierCap is a tier's cap: ⌊BurstShare·C⌋ (at least its reservation and 1)
// for a tier with shares, at most its MaxRunning when set; else its
// priority's value, or none (the largest int) when priorities only order
// or for priority 0.
func (r *refScheduler) tierCap(p policy.Priority) int {
	t, ok := r.tiers[p]
	if !ok || t.MinShare == 0 && t.BurstShare == 0 && t.MaxRunning == 0 { // none, or rules only
		if r.orderOnly || p == 0 {
			return math.MaxInt
		}
		return int(p)
	}
	c := math.MaxInt
	if t.MinShare != 0 || t.BurstShare != 0 {
		c = max(int(math.Floor(t.BurstShare*float64(r.max))), r.tierReserve(t), 1)
	}
	if t.MaxRunning > 0 {
		c = min(c, t.MaxRunning)
	}
	return c
}

// tierReserve is what a tier reserves: ⌊MinShare·C⌋, at most its
// MaxRunning when set.
func (r *refScheduler) tierReserve(t policy.TierConfig) int {
	n := int(math.Floor(t.MinShare * float64(r.max)))
	if t.MaxRunning > 0 {
		n = min(n, t.MaxRunning)
	}
	return n
}

// reserved: one more job of tier p would leave fewer free slots than the
// other tiers are still owed — each its reservation less what it runs,
// nothing for a tier that lends while it has no job waiting. With group
// weights, a job whose group is allocated no slot does not count as
// waiting: it could not take the slot kept for it.
func (r *refScheduler) reserved(p policy.Priority) bool {
	if len(r.tiers) == 0 || r.max == 0 {
		return false
	}
	alloc := r.allocation()
	owed := 0
	for q, t := range r.tiers {
		waiting := 0
		for _, o := range r.pending {
			if o.prio == q && (alloc == nil || alloc[o.group] > 0) {
				waiting++
			}
		}
		if q == p || t.LendIdle && waiting == 0 {
			continue
		}
		owed += max(0, r.tierReserve(t)-r.countRunning(func(o *refJob) bool { return o.prio == q }))
	}
	return len(r.running)+1+owed > r.max
}

// effective is the spec's aging formula, written out again here so the core
// is checked against it rather than against itself:
// min(base + ⌊(waited − grace)/interval⌋·step, ceiling) once waited > grace,
// and never below base. The clock stands still while the job's group is
// paused: waited is the time since submission less the time the group
// spent paused since then.
func (r *refScheduler) effective(j *refJob, now time.Time) policy.Priority {
	e := r.aged(j, now)
	if j.floored && j.floor > e {
		return j.floor // inherited: never below the submitting job's
	}
	return e
}

func (r *refScheduler) aged(j *refJob, now time.Time) policy.Priority {
	a := r.aging
	waited := now.Sub(j.submitted) - r.pausedDuring(j.group, j.submitted, now)
	if a == nil || waited <= a.GracePeriod || j.prio >= a.MaxEffectivePriority {
		return j.prio
	}
	step := a.Step
	if step == 0 {
		step = 1
	}
	e := j.prio + policy.Priority((waited-a.GracePeriod)/a.Interval)*step
	return min(e, a.MaxEffectivePriority)
}

// sorted returns the pending jobs in dispatch order: effective priority
// descending, accumulated cost of the key ascending, arrival ascending.
func (r *refScheduler) sorted(now time.Time) []*refJob {
	type entry struct {
		j     *refJob
		prio  policy.Priority
		score float64 // with scoring, which then replaces prio
		cost  time.Duration
	}
	es := make([]entry, len(r.pending))
	for i, j := range r.pending {
		es[i] = entry{j, r.effective(j, now), 0, r.acc[j.key]}
		if r.scoring != nil {
			es[i].prio, es[i].score = 0, r.score(j, now)
		}
	}
	slices.SortFunc(es, func(a, b entry) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(b.prio, a.prio), cmp.Compare(a.cost, b.cost), cmp.Compare(a.j.seq, b.j.seq))
	})
	s := make([]*refJob, len(es))
	for i, e := range es {
		s[i] = e.j
	}
	return s
}

func (r *refScheduler) dispatch(now time.Time) []*refJob {
	// Pending jobs whose deadline came expire first, earliest deadline
	// first (the order decides the last minimum cost when all keys leave).
	// A deadline moves back by the time the job's group was paused since
	// the job arrived, and does not come while the group is paused.
	deadline := func(j *refJob) time.Time {
		if r.paused(j.group) {
			return time.Unix(0, math.MaxInt64)
		}
		return j.deadline.Add(r.pausedDuring(j.group, j.submitted, now))
	}
	byDeadline := slices.Clone(r.pending)
	slices.SortStableFunc(byDeadline, func(a, b *refJob) int { return deadline(a).Compare(deadline(b)) })
	for _, j := range byDeadline {
		if !j.deadline.IsZero() && !deadline(j).After(now) {
			r.pending = slices.DeleteFunc(r.pending, func(o *refJob) bool { return o == j })
			r.leave(now, j.key)
			r.expired = append(r.expired, j)
			r.expiredTotal++
		}
	}
	var out []*refJob
	r.lending = false
	defer func() { r.lending = false }()
	for r.max == 0 || len(r.running) < r.max {
		alloc := r.allocation() // from scratch, every pass
		var next *refJob
		for _, j := range r.sorted(now) {
			reasons := r.blockers(j, now, alloc)
			if len(reasons) == 0 {
				next = j
				break
			}
			if len(reasons) == 1 && reasons[0] == policy.ReasonRateLimited { // only its tokens hold it
				r.blockBucket(j, now) // its turn came: the scope waits for its tokens
			}
		}
		if next == nil {
			// Nothing may start within the allocations: the groups may
			// run up to their limits for the rest of this dispatch.
			if r.groups != nil && !r.lending && len(r.pending) > 0 {
				r.lending = true
				continue
			}
			break
		}
		if r.rules != nil {
			next = r.starvedFirst(now, next, alloc)
			if len(r.blockers(next, now, alloc)) > 0 {
				continue // a starved tier's job had its turn, and its scope now waits: next's too
			}
		}
		if r.admission != nil && !r.ask(now, next) {
			continue
		}
		r.admitting(next)
		if r.groups != nil && r.groupRunning(next.group) >= alloc[next.group] {
			if r.lending {
				r.lent++
			} else {
				r.borrowed++
			}
		}
		r.pending = slices.DeleteFunc(r.pending, func(o *refJob) bool { return o == next })
		estimate := r.types[next.typ].DefaultCost
		if e := r.est[refEstKey{next.typ, next.id}]; e != nil {
			e.used = now
			estimate = e.cost
		}
		cost := estimate
		if next.tokens > 0 {
			cost = next.tokens // stated by the submitter
		}
		w, ok := r.weights[next.key]
		if !ok {
			w = 1
		}
		if r.hier != nil {
			w = r.hierShare(next.key, w)
		}
		// cost / weight, rounded, at least 1 ns: written out again here.
		charge := time.Duration(math.Round(float64(cost) / w))
		if charge == 0 && cost > 0 {
			charge = 1
		}
		r.acc[next.key] += charge
		next.estimate = estimate
		for _, b := range r.bucketsOf(next) {
			b.lim.AllowN(now, refTokens(next, b))
		}
		next.cost, next.keyCost, next.started = cost, r.acc[next.key], now
		r.takeSlot(next)
		r.running = append(r.running, next)
		out = append(out, next)
		if r.rules != nil {
			r.rules.lastAdmit[next.prio] = now
		}
	}
	if r.rules != nil {
		r.lending = false // a preemption is judged within the allocations
		r.preempt(now)
	}
	return out
}

func (r *refScheduler) finish(now time.Time, j *refJob) Completion {
	inUse := len(r.running) >= r.max
	r.running = slices.DeleteFunc(r.running, func(o *refJob) bool { return o == j })
	r.freeSlot(j)
	elapsed := now.Sub(j.started)
	if a := r.adaptive; a != nil {
		// AIMD on elapsed / estimate at admission, written out again.
		if j.estimate > 0 && float64(elapsed) > a.Tolerance*float64(j.estimate) {
			r.max = max(a.Min, int(math.Floor(float64(r.max)*a.Backoff)))
		} else if inUse {
			r.max = min(a.Max, r.max+1)
		}
	}
	if r.preemptedEnd(j) { // a cut-short attempt: the estimate stays
		r.leave(now, j.key)
		return Completion{Elapsed: elapsed, Estimate: j.estimate, Preempted: true}
	}
	k := refEstKey{j.typ, j.id}
	prior := j.estimate // the estimate at admission, if it expired since
	if e := r.est[k]; e != nil {
		prior = e.cost
	}
	next := time.Duration(math.Round(r.alpha*float64(elapsed) + (1-r.alpha)*float64(prior)))
	r.est[k] = &refEstimate{cost: next, used: now}
	r.leave(now, j.key)
	return Completion{Elapsed: elapsed, Estimate: next}
}

func (r *refScheduler) withdraw(now time.Time, j *refJob) bool {
	if !slices.Contains(r.pending, j) {
		return false
	}
	r.pending = slices.DeleteFunc(r.pending, func(o *refJob) bool { return o == j })
	r.leave(now, j.key)
	return true
}

func (r *refScheduler) withdrawAll(now time.Time) []*refJob {
	out := slices.Clone(r.pending)
	for _, j := range out {
		r.withdraw(now, j)
	}
	return out
}

func (r *refScheduler) evict(now time.Time) (keys, estimates int) {
	for k := range r.acc {
		if r.jobs[k] == 0 && now.Sub(r.keyUsed[k]) >= r.ttl {
			delete(r.acc, k)
			delete(r.jobs, k)
			delete(r.keyUsed, k)
			keys++
		}
	}
	for k, e := range r.est {
		if now.Sub(e.used) >= r.ttl {
			delete(r.est, k)
			estimates++
		}
	}
	return keys, estimates
}

// snapshot builds the Snapshot the core must report.
func (r *refScheduler) snapshot(now time.Time) Snapshot {
	s := Snapshot{
		Time:            now,
		MaxConcurrency:  r.max,
		Running:         []RunningJob{},
		Pending:         []PendingJob{},
		AccumulatedCost: map[string]time.Duration{},
		CostEstimates:   []CostEstimate{},
		RunningByTier:   map[policy.Priority]int{},
		RunningByType:   map[policy.JobType]int{},
		Types:           map[policy.JobType]policy.JobTypeConfig{},
		Aging:           r.aging,
		KeyWeights:      refKeyWeights(r.weights),
		Tiers:           maps.Clone(r.tiers),
		PriorityMode:    map[bool]policy.PriorityMode{true: policy.PriorityOrderOnly}[r.orderOnly],
		Adaptive:        refAdaptive(r.adaptive),
		Expired:         r.expiredTotal,
		Groups:          r.groupSnapshots(),
		Workers:         r.workerSnapshots(),
	}
	for _, j := range r.running {
		s.Running = append(s.Running, RunningJob{
			Type: j.typ, ID: j.id, FairnessKey: j.key, Group: j.group, Priority: j.prio, EffectivePriority: r.effective(j, j.started),
			Submitted: j.submitted, Started: j.started, EstimatedCost: j.cost,
		})
		if j.slot != nil {
			s.Running[len(s.Running)-1].Worker, s.Running[len(s.Running)-1].Slot = j.slot.worker, j.slot.index
		}
		s.RunningByTier[j.prio]++
		s.RunningByType[j.typ]++
	}
	alloc := r.allocation()
	for _, j := range r.sorted(now) {
		pj := PendingJob{
			Type: j.typ, ID: j.id, FairnessKey: j.key, Group: j.group, Priority: j.prio, EffectivePriority: r.effective(j, now),
			Submitted: j.submitted, Reasons: r.blockers(j, now, alloc),
		}
		if len(pj.Reasons) > 0 {
			pj.Reason = pj.Reasons[0]
		}
		if r.scoring != nil {
			pj.Score = r.score(j, now)
		}
		if j.floored {
			floor := j.floor
			pj.InheritedPriority = &floor
		}
		s.Pending = append(s.Pending, pj)
	}
	for k, v := range r.acc {
		s.AccumulatedCost[k] = v
	}
	for k, e := range r.est {
		s.CostEstimates = append(s.CostEstimates, CostEstimate{Type: k.typ, ID: k.id, Cost: e.cost})
	}
	slices.SortFunc(s.CostEstimates, func(a, b CostEstimate) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.ID, b.ID))
	})
	for t, cfg := range r.types {
		s.Types[t] = cfg
	}
	return s
}

// diffOf returns "" when want and got are equal, else their cmp.Diff. The
// equal fast path keeps the comparison of every step cheap; cmp.Diff decides
// (and explains) only when it fails.
func diffOf[T any](want, got T, equal func(T, T) bool) string {
	if equal(want, got) {
		return ""
	}
	return gocmp.Diff(want, got)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pendingEqual compares two pending rows, the inherited priority by value.
func pendingEqual(a, b PendingJob) bool {
	pa, pb := a.InheritedPriority, b.InheritedPriority
	if (pa == nil) != (pb == nil) || pa != nil && *pa != *pb {
		return false
	}
	return slices.Equal(a.Reasons, b.Reasons) && a.Type == b.Type && a.ID == b.ID && a.FairnessKey == b.FairnessKey &&
		a.Group == b.Group && a.Priority == b.Priority && a.EffectivePriority == b.EffectivePriority &&
		a.Submitted == b.Submitted && a.Reason == b.Reason && a.Score == b.Score
}

// snapshotsEqual is a fast, exact equality of two snapshots. Groups must
// agree on nil (no group to list) as well.
func snapshotsEqual(a, b Snapshot) bool {
	return a.Time == b.Time && a.MaxConcurrency == b.MaxConcurrency &&
		slices.Equal(a.Running, b.Running) && slices.EqualFunc(a.Pending, b.Pending, pendingEqual) &&
		maps.Equal(a.KeyWeights, b.KeyWeights) && (a.KeyWeights == nil) == (b.KeyWeights == nil) &&
		maps.Equal(a.Tiers, b.Tiers) && a.PriorityMode == b.PriorityMode &&
		(a.Adaptive == nil) == (b.Adaptive == nil) && (a.Adaptive == nil || *a.Adaptive == *b.Adaptive) &&
		maps.Equal(a.AccumulatedCost, b.AccumulatedCost) && slices.Equal(a.CostEstimates, b.CostEstimates) &&
		maps.Equal(a.RunningByTier, b.RunningByTier) && maps.Equal(a.RunningByType, b.RunningByType) &&
		maps.Equal(a.Types, b.Types) &&
		(a.Aging == nil) == (b.Aging == nil) && (a.Aging == nil || *a.Aging == *b.Aging) &&
		(a.Groups == nil) == (b.Groups == nil) && slices.Equal(a.Groups, b.Groups) &&
		a.EventsLost == b.EventsLost && a.Expired == b.Expired && workersEqual(a.Workers, b.Workers)
}

// admission is what the comparison checks of one admitted or running job.
type admission struct {
	Seq                 uint64
	Type                policy.JobType
	ID, Key, Group      string
	Priority, Effective policy.Priority
	Submitted, Started  time.Time
	Cost, KeyCost       time.Duration
	Slot                string // worker/index, "" for a type without workers
}

func (a admission) String() string {
	return fmt.Sprintf("#%d %s/%s@%q group=%q p=%d/%d submitted=+%v started=+%v cost=%v keycost=%v slot=%q",
		a.Seq, a.Type, a.ID, a.Key, a.Group, a.Priority, a.Effective, a.Submitted.Sub(t0), a.Started.Sub(t0), a.Cost, a.KeyCost, a.Slot)
}

func coreAdmissions(c *Core, js []*Job) []admission {
	out := []admission{}
	for _, j := range js {
		a := admission{j.Seq, j.Type, j.ID, j.Key, j.Group, j.Priority(), j.Effective, submittedAt(c, j), j.Started, j.Cost, j.KeyCost, ""}
		if j.Worker != nil {
			a.Slot = fmt.Sprintf("%s/%d", j.Worker.Worker, j.Worker.Index)
		}
		out = append(out, a)
	}
	return out
}

func (r *refScheduler) admissions(js []*refJob) []admission {
	out := []admission{}
	for _, j := range js {
		a := admission{j.seq, j.typ, j.id, j.key, j.group, j.prio, r.effective(j, j.started), j.submitted, j.started, j.cost, j.keyCost, ""}
		if j.slot != nil {
			a.Slot = fmt.Sprintf("%s/%d", j.slot.worker, j.slot.index)
		}
		out = append(out, a)
	}
	return out
}

func seqs[T any](js []T, seq func(T) uint64) []uint64 {
	out := []uint64{}
	for _, j := range js {
		out = append(out, seq(j))
	}
	return out
}

// refTypes are the job types of the comparison: two tiers of two types and
// a tier of one, type caps from none to 1, two conflict groups — one with
// shared and exclusive types — and a type without one, so that every limit
// binds often.
var refTypes = []typeDef{
	{"clone", policy.JobTypeConfig{DefaultCost: 10 * time.Millisecond, MaxConcurrency: 2, ConflictGroup: "git", ConflictMode: policy.ConflictShared, Priority: 4}},
	{"pull", policy.JobTypeConfig{DefaultCost: 3 * time.Millisecond, ConflictGroup: "git", ConflictMode: policy.ConflictShared, Priority: 4}},
	{"repack", policy.JobTypeConfig{DefaultCost: 20 * time.Millisecond, MaxConcurrency: 1, ConflictGroup: "git", Priority: 2}},
	{"vacuum", policy.JobTypeConfig{DefaultCost: 7 * time.Millisecond, MaxConcurrency: 2, ConflictGroup: "db", Priority: 2}},
	// No conflict group, no type cap: jobs of the same (type, id) run side
	// by side, so one may finish after another updated their estimate.
	{"snap", policy.JobTypeConfig{DefaultCost: 5 * time.Millisecond, Priority: 3}},
}

// refRun holds one seeded run of the comparison.
type refRun struct {
	t    *testing.T
	seed uint64
	rng  *rand.Rand
	now  time.Time
	c    *Core
	ref  *refScheduler
	jobs map[uint64]*Job // the core's jobs by Seq
	log  []func() string // operations so far, formatted only on failure
	keys []string        // the fairness keys jobs draw from
	long bool            // no WithdrawAll: let the queue grow

	// grouped: jobs draw a group from refGroupNames and one operation in
	// ten is a runtime group operation (reference_groups_test.go).
	grouped bool
	// deniedGroups are the groups a denial in this operation's dispatch
	// may have drained.
	deniedGroups map[string]bool
	// requeuedGroups are the groups of victims this operation ended and
	// requeued whose end drained them for an instant.
	requeuedGroups map[string]bool
	inherit        bool           // a third of the jobs carry a priority floor
	hasWorkers     bool           // worker types; workers join and leave
	workers        int            // workers registered so far, for their IDs
	scoring        bool           // a third of the jobs are on-demand
	timeScale      time.Duration  // multiplies the time steps
	bounded        bool           // the queue and each key's pending jobs are bounded
	weighted       bool           // keys have weights, a third of the jobs tokens
	expiring       bool           // jobs expire while pending
	rated          bool           // rate limits: a third of the jobs state whole-second tokens
	reported       map[string]int // each group's slots as the allocation changes told
	header         string         // the run's settings, for failures
	allocOp        allocOp        // the operation whose allocation changes are due

	// What the run exercised, summed over all seeds.
	stats *refStats
}

type refStats struct {
	ops, admitted, finished, withdrawn, evictedKeys, evictedEstimates int
	agedAdmissions                                                    int // admitted above their base priority
	refused                                                           int // submissions refused by a pending bound
	shed                                                              int // pending jobs shed for a newcomer (WithShedding)
	denied                                                            int // jobs the admission policy denied
	expired                                                           int // jobs that expired pending
	reasons                                                           map[policy.Reason]int

	// Groups: admissions while the group ran its allocation or more (urgent
	// borrowing), allocation changes the core reported, pauses, weight
	// changes accepted and refused (the refusals changed nothing).
	borrowed, allocChanges, pauses, weightChanges, invalidWeights int
	// lent: admissions past the group's allocation because nothing could
	// start within the allocations (work conservation).
	lent int

	lost int // jobs running on a worker when it was unregistered
	// preempted: victims chosen; starved: the most admissions a
	// starvation window gave in one seed (tier rules).
	preempted int
	starved   uint64
}

func (run *refRun) fail(op int, format string, args ...any) {
	run.t.Helper()
	var last []string
	for _, f := range run.log[max(0, len(run.log)-25):] {
		last = append(last, f())
	}
	run.t.Fatalf("seed %d, op %d: %s\n%slast operations:\n  %s",
		run.seed, op, fmt.Sprintf(format, args...), run.header+run.groupState(), strings.Join(last, "\n  "))
}

// logf records an operation; it is formatted only if the run fails.
func (run *refRun) logf(format string, args ...any) {
	now := run.now
	run.log = append(run.log, func() string { return fmt.Sprintf("+%v ", now.Sub(t0)) + fmt.Sprintf(format, args...) })
}

func (run *refRun) dispatch(op int) {
	got := coreAdmissions(run.c, run.c.Dispatch(run.now, nil))
	admitted := run.ref.dispatch(run.now)
	for _, rj := range admitted {
		if run.ref.effective(rj, run.now) > rj.prio {
			run.stats.agedAdmissions++
		}
	}
	want := run.ref.admissions(admitted)
	run.logf("dispatch -> %v", want)
	// Each rate limit's scope waits until the same time in both: the
	// tokens of the job whose turn found its bucket short.
	for sc, b := range run.ref.buckets {
		cb := run.c.buckets[sc]
		if waits := run.now.Before(b.until); waits != cb.blocked || waits && !b.until.Equal(cb.until) {
			run.fail(op, "rate limit %v: the reference waits until %v (%v), the core blocked=%v until %v",
				sc, b.until.Sub(t0), waits, cb.blocked, cb.until.Sub(t0))
		}
	}
	run.stats.borrowed += run.ref.borrowed
	run.ref.borrowed = 0
	run.stats.lent += run.ref.lent
	run.ref.lent = 0
	if diff := diffOf(want, got, slices.Equal); diff != "" {
		run.fail(op, "Dispatch admitted (-ref +core):\n%s", diff)
	}
	run.comparePreempted(op)
	run.stats.admitted += len(got)
	var gotDenied, wantDenied []string
	for _, d := range run.c.TakeDenied() {
		gotDenied = append(gotDenied, fmt.Sprintf("#%d %v panicked=%v", d.Job.Seq, d.Err, d.Panicked))
	}
	for _, d := range run.ref.denied {
		wantDenied = append(wantDenied, fmt.Sprintf("#%d %v panicked=%v", d.j.seq, d.err, d.panicked))
	}
	for _, d := range run.ref.denied {
		run.deniedGroups[d.j.group] = true
	}
	run.ref.denied = run.ref.denied[:0]
	var gotExpired, wantExpired []uint64
	for _, j := range run.c.TakeExpired() {
		gotExpired = append(gotExpired, j.Seq)
	}
	for _, j := range run.ref.expired {
		wantExpired = append(wantExpired, j.seq)
		run.deniedGroups[j.group] = true // an expiry, like a denial, may drain its group
	}
	run.ref.expired = run.ref.expired[:0]
	slices.Sort(gotExpired)
	slices.Sort(wantExpired)
	if diff := diffOf(wantExpired, gotExpired, slices.Equal); diff != "" {
		run.fail(op, "Dispatch expired (-ref +core):\n%s", diff)
	}
	run.stats.expired += len(gotExpired)
	if diff := diffOf(wantDenied, gotDenied, slices.Equal); diff != "" {
		run.fail(op, "Dispatch denied (-ref +core):\n%s", diff)
	}
	run.stats.denied += len(gotDenied)
}

// check compares after every operation the accumulated costs and the
// counts of pending and running jobs, and after every eighth (sixteenth in
// long runs) and when full is set the running jobs in
// admission order and the whole snapshot: pending order and reasons,
// estimates, per-tier and per-type counts. dispatched says whether Dispatch
// ran since the last event.
func (run *refRun) check(op int, dispatched, full bool) {
	if run.grouped {
		run.checkGroups(op)
	}
	for k, want := range run.ref.acc {
		if got := run.c.KeyCost(k); got != want {
			run.fail(op, "KeyCost(%q) = %v, want %v", k, got, want)
		}
	}
	if got, want := run.c.ledger.Len(), len(run.ref.acc); got != want {
		run.fail(op, "ledger holds %d keys, want %d: %v", got, want, run.c.ledger.Costs())
	}
	if got, want := run.c.Pending(), len(run.ref.pending); got != want {
		run.fail(op, "Pending = %d, want %d", got, want)
	}
	if got, want := run.c.RunningCount(), len(run.ref.running); got != want {
		run.fail(op, "RunningCount = %d, want %d", got, want)
	}
	if got, want := run.c.Idle(), len(run.ref.pending)+len(run.ref.running) == 0; got != want {
		run.fail(op, "Idle = %v, want %v", got, want)
	}
	if every := 8 + 8*b2i(run.long); !full && op%every != 0 {
		return
	}
	if diff := diffOf(run.ref.admissions(run.ref.running), coreAdmissions(run.c, run.c.Running()), slices.Equal); diff != "" {
		run.fail(op, "running jobs in admission order (-ref +core):\n%s", diff)
	}
	s := run.c.Snapshot(run.now)
	if diff := diffOf(run.ref.snapshot(run.now), s, snapshotsEqual); diff != "" {
		run.fail(op, "Snapshot (-ref +core):\n%s", diff)
	}
	for _, p := range s.Pending {
		if dispatched {
			for _, r := range p.Reasons { // every rule seen, not just headlines
				run.stats.reasons[r]++
			}
		}
	}
}

func (run *refRun) step(op int) {
	r := run.rng
	run.now = run.now.Add(time.Duration(r.IntN(21)) * 250 * time.Microsecond * run.timeScale)
	switch {
	case run.hasWorkers && r.IntN(8) == 0:
		run.workerOp(op)
	case run.grouped && r.IntN(10) == 0:
		run.groupOp(op)
	case run.weighted && r.IntN(20) == 0:
		// A runtime weight change: from the next admission on.
		key := run.keys[r.IntN(len(run.keys))]
		w := refWeights[r.IntN(len(refWeights))]
		if r.IntN(4) == 0 {
			w = 0 // back to the default
		}
		run.logf("key weight %q = %v", key, w)
		if err := run.c.SetKeyWeight(key, w); err != nil {
			run.fail(op, "SetKeyWeight: %v", err)
		}
		if w == 0 {
			delete(run.ref.weights, key)
		} else {
			if run.ref.weights == nil {
				run.ref.weights = map[string]float64{}
			}
			run.ref.weights[key] = w
		}
	case !run.event(op):
		return
	}
	// Usually dispatch after every event; sometimes let events pile up.
	dispatched := r.IntN(8) != 0
	if dispatched {
		run.dispatch(op)
	}
	run.check(op, dispatched, false)
}

// event runs one job event on both sides: a submission, a finish, a
// withdrawal, an eviction, a withdrawal of all pending jobs, or only time
// passing. It reports false when there was no job to withdraw: the step
// ends there.
func (run *refRun) event(op int) bool {
	r := run.rng
	switch x := r.IntN(100); {
	case x < 45 || x < 75 && len(run.ref.running) == 0:
		td := refTypes[r.IntN(len(refTypes))]
		id := fmt.Sprint("r", r.IntN(3))
		key := run.keys[r.IntN(len(run.keys))]
		group := ""
		if run.grouped {
			group = refGroupNames[r.IntN(len(refGroupNames))]
		}
		j := &Job{Job: queue.Job{Type: td.name, ID: id, Key: key, OnDemand: run.scoring && r.IntN(3) == 0}, Group: group}
		if run.inherit && r.IntN(3) == 0 {
			j.Floor, j.Floored = policy.Priority(r.IntN(9)), true
		}
		prio := run.ref.types[td.name].Priority
		if run.ref.laneTiers != nil {
			if lane := run.labelled(j); !j.Floored {
				prio = run.ref.tierOf(td.name, lane)
			}
		}
		if run.weighted && r.IntN(3) == 0 {
			j.SetTokens(time.Duration(1+r.IntN(20)) * time.Millisecond * run.timeScale)
		}
		if run.rated && r.IntN(3) == 0 {
			j.SetTokens(time.Duration(1+r.IntN(12)) * 250 * time.Millisecond) // 1 to 3 tokens
		}
		if run.expiring && r.IntN(3) == 0 {
			j.SetTTL(time.Duration(1+r.IntN(8)) * time.Millisecond * run.timeScale)
		}
		shedCost := run.ref.shedCostOf(td.name, id, key, j.Tokens())
		want := run.ref.refusal(key)
		if want == policy.ReasonPoolOverloaded && run.ref.shed {
			if v := run.ref.shedVictim(key, shedCost); v != nil {
				run.ref.shedJob(run.now, v)
				run.deniedGroups[v.group] = true // a shed job, like a denial, may drain its group
				run.logf("shed #%d for %s/%s@%q", v.seq, td.name, id, key)
				run.stats.shed++
				want = ""
			}
		}
		err := run.c.Submit(run.now, j)
		if want != "" || err != nil {
			var re *policy.RefusalError
			if !errors.As(err, &re) || re.Reason != want {
				run.fail(op, "Submit %s/%s@%q = %v; want refusal %q", td.name, id, key, err, want)
			}
			run.logf("refused %s/%s@%q: %s", td.name, id, key, want)
			run.stats.refused++
			return true
		}
		rj := run.ref.submitAt(run.now, td.name, id, key, group, prio)
		rj.floor, rj.floored, rj.tokens, rj.onDemand = j.Floor, j.Floored, j.Tokens(), j.OnDemand
		rj.shedCost = shedCost
		if ttl := cmp.Or(j.TTL(), run.ref.types[td.name].QueueTimeout); ttl > 0 {
			rj.deadline = run.now.Add(ttl)
		}
		run.allocOp = allocOp{kind: "event", group: group}
		run.logf("submit #%d %s/%s@%q group %q", rj.seq, td.name, id, key, group)
		if j.Seq != rj.seq {
			run.fail(op, "Submit gave Seq %d, want %d", j.Seq, rj.seq)
		}
		run.jobs[j.Seq] = j
	case x < 75:
		rj := run.ref.running[r.IntN(len(run.ref.running))]
		run.logf("finish #%d", rj.seq)
		run.allocOp = allocOp{kind: "event", group: rj.group}
		got := run.c.Finish(run.now, run.jobs[rj.seq])
		if diff := diffOf(run.ref.finish(run.now, rj), got, func(a, b Completion) bool { return a == b }); diff != "" {
			run.fail(op, "Finish #%d completion (-ref +core):\n%s", rj.seq, diff)
		}
		run.requeuePreempted(rj, got)
		run.stats.finished++
	case x < 87:
		// Withdraw a pending job (or, now and then, a running one: refused).
		var rj *refJob
		if len(run.ref.pending) > 0 && x < 85 {
			rj = run.ref.pending[r.IntN(len(run.ref.pending))]
		} else if len(run.ref.running) > 0 {
			rj = run.ref.running[r.IntN(len(run.ref.running))]
		} else {
			return false
		}
		run.logf("withdraw #%d", rj.seq)
		run.allocOp = allocOp{kind: "event", group: rj.group}
		want := run.ref.withdraw(run.now, rj)
		if got := run.c.Withdraw(run.now, run.jobs[rj.seq]); got != want {
			run.fail(op, "Withdraw #%d = %v, want %v", rj.seq, got, want)
		}
		if want {
			run.stats.withdrawn++
		}
	case x < 95:
		run.logf("evict")
		wk, we := run.ref.evict(run.now)
		gk, ge := run.c.Evict(run.now)
		if gk != wk || ge != we {
			run.fail(op, "Evict = (%d keys, %d estimates), want (%d, %d)", gk, ge, wk, we)
		}
		run.stats.evictedKeys += gk
		run.stats.evictedEstimates += ge
	case x < 96 && !run.long:
		run.logf("withdraw all")
		want := seqs(run.ref.withdrawAll(run.now), func(j *refJob) uint64 { return j.seq })
		got := seqs(run.c.WithdrawAll(run.now), func(j *Job) uint64 { return j.Seq })
		if diff := diffOf(want, got, slices.Equal); diff != "" {
			run.fail(op, "WithdrawAll (-ref +core):\n%s", diff)
		}
	default:
		run.logf("tick")
	}
	return true
}

// TestReferenceMatchesCore drives the core and the reference with the same
// seeded random operations — submissions of random types, ids and keys,
// finishes of random running jobs after random time steps, withdrawals,
// evictions — and requires after every operation the same admissions in
// the same order with the same costs, the same running jobs, the same
// accumulated costs and the same snapshot (pending order and reasons,
// learned estimates). It is the proof that the core's O(log n) index makes
// the decisions of the spec's sort-everything algorithm.
func TestReferenceMatchesCore(t *testing.T) {
	t.Run("short", func(t *testing.T) {
		runReference(t, 300, 300, []string{"", "a", "b", "c"}, false, nil)
	})
	// Aging on, on the scale of the time steps: lower tiers overtake higher
	// ones as they wait, lanes move up bands by promotion and by head change.
	t.Run("aging", func(t *testing.T) {
		aging := &policy.AgingConfig{GracePeriod: 2 * time.Millisecond, Interval: time.Millisecond, Step: 1, MaxEffectivePriority: 6}
		runReference(t, 200, 300, []string{"", "a", "b", "c"}, false, aging)
	})
	t.Run("aging-long", func(t *testing.T) {
		aging := &policy.AgingConfig{GracePeriod: 0, Interval: 3 * time.Millisecond, Step: 2, MaxEffectivePriority: 5}
		runReference(t, 3, 2000, []string{"", "", "", "a"}, true, aging)
	})
	// A few long runs on two keys, never emptied by WithdrawAll: lanes hold
	// hundreds of jobs, so the queue compacts its FIFOs under admissions,
	// parks and withdrawals.
	t.Run("long", func(t *testing.T) {
		runReference(t, 3, 2000, []string{"", "", "", "a"}, true, nil)
	})
	// Groups (reference_groups_test.go): jobs in groups, random weights,
	// minimums and limits, pauses, resumes and weight changes at runtime.
	groupAging := &policy.AgingConfig{GracePeriod: 2 * time.Millisecond, Interval: 2 * time.Millisecond, Step: 1, MaxEffectivePriority: 6, UrgentThreshold: 5}
	t.Run("groups", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 80, ops: 300, keys: []string{"", "a", "b", "c"}, grouped: true, groups: randomGroups})
	})
	// Aging with an urgent threshold: urgent jobs borrow past their
	// group's allocation, never past its limit; paused groups' jobs do not
	// age.
	t.Run("groups-aging", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 120, ops: 300, keys: []string{"", "a", "b", "c"}, grouped: true, groups: randomGroups, aging: groupAging})
	})
	t.Run("groups-aging-long", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 2, ops: 2000, keys: []string{"", "", "", "a"}, long: true, grouped: true, groups: randomGroups, aging: groupAging})
	})
	// Inherited priorities (InheritPriority): floors order jobs across
	// levels without aging, and under aging, groups and urgency.
	t.Run("inherit", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 100, ops: 300, keys: []string{"", "a", "b", "c"}, inherit: true})
	})
	t.Run("inherit-aging-groups", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 120, ops: 300, keys: []string{"", "a", "b", "c"}, grouped: true, groups: randomGroups, aging: groupAging, inherit: true})
	})
	// Bounds on the queue and on each key's pending jobs: refusals.
	t.Run("bounded", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 100, ops: 300, keys: []string{"", "a", "b", "c"}, bounded: true, weighted: true})
	})
	// Tenant bounds with groups (held for the key or for the group, paused),
	// aging and urgency.
	t.Run("tenants-groups-aging", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 120, ops: 300, keys: []string{"", "a", "b", "c"}, bounded: true, grouped: true, groups: randomGroups, aging: groupAging})
	})
	// Expiry: TTLs and a type's QueueTimeout, alone and with every feature.
	t.Run("expiry", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 120, ops: 300, keys: []string{"", "a", "b", "c"}, expiring: true})
	})
	t.Run("expiry-everything", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 100, ops: 300, keys: []string{"", "a", "b", "c"}, expiring: true, adaptive: true, rated: true, policy: true, tiered: true, bounded: true, weighted: true, grouped: true, groups: randomGroups, aging: groupAging, inherit: true})
	})
	// The adaptive limit, alone and with every feature (groups' and tiers'
	// shares are taken of the moving limit).
	t.Run("adaptive", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 120, ops: 300, keys: []string{"", "a", "b", "c"}, adaptive: true})
	})
	t.Run("adaptive-everything", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 100, ops: 300, keys: []string{"", "a", "b", "c"}, adaptive: true, rated: true, policy: true, tiered: true, bounded: true, weighted: true, grouped: true, groups: randomGroups, aging: groupAging, inherit: true})
	})
	// Rate limits on types, groups and keys.
	t.Run("rate-limits", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 150, ops: 300, keys: []string{"", "a", "b", "c"}, rated: true, grouped: true})
	})
	t.Run("rate-limits-everything", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 100, ops: 300, keys: []string{"", "a", "b", "c"}, rated: true, policy: true, tiered: true, bounded: true, weighted: true, grouped: true, groups: randomGroups, aging: groupAging, inherit: true})
	})
	// An admission policy that defers, denies and panics.
	t.Run("admission-policy", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 100, ops: 300, keys: []string{"", "a", "b", "c"}, policy: true})
	})
	t.Run("admission-policy-everything", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 100, ops: 300, keys: []string{"", "a", "b", "c"}, policy: true, tiered: true, bounded: true, weighted: true, grouped: true, groups: randomGroups, aging: groupAging, inherit: true})
	})
	// Tier shares: reserved slots, burst caps, lending while idle.
	t.Run("tiers", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 150, ops: 300, keys: []string{"", "a", "b", "c"}, tiered: true})
	})
	t.Run("tiers-everything", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 120, ops: 300, keys: []string{"", "a", "b", "c"}, tiered: true, bounded: true, weighted: true, grouped: true, groups: randomGroups, aging: groupAging, inherit: true})
	})
	// Fairness key weights (cost / weight charged) and stated tokens.
	t.Run("weights-tokens", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 100, ops: 300, keys: []string{"", "a", "b", "c"}, weighted: true})
	})
	// Groups without weights: pauses only (and weight changes refused).
	t.Run("groups-unweighted", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 30, ops: 300, keys: []string{"", "a", "b", "c"}, grouped: true, aging: groupAging})
	})
	// Worker slots (reference_workers_test.go): three types run only on
	// slots of workers that join and leave, their running jobs lost.
	t.Run("workers", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 150, ops: 300, keys: []string{"", "a", "b", "c"}, workers: true})
	})
	// Linear scoring: on-demand jobs, rarity from free slots, floors; time
	// steps of up to 5s so ages in whole seconds grow.
	t.Run("scoring", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 120, ops: 300, keys: []string{"", "a", "b", "c"}, scoring: true, inherit: true})
	})
	t.Run("workers-scoring", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 150, ops: 300, keys: []string{"", "a", "b", "c"}, workers: true, scoring: true})
	})
	// Priorities that only order (specs 3 and 5): priority 0, tiers
	// without a cap, absolute tier caps.
	t.Run("order-only", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 150, ops: 300, keys: []string{"", "a", "b", "c"}, orderOnly: true})
	})
	t.Run("order-only-tiered", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 150, ops: 300, keys: []string{"", "a", "b", "c"}, orderOnly: true, tiered: true, rated: true, weighted: true})
	})
	t.Run("order-only-scoring-everything", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 100, ops: 300, keys: []string{"", "a", "b", "c"}, orderOnly: true, workers: true, scoring: true, expiring: true, adaptive: true, rated: true, policy: true, tiered: true, bounded: true, weighted: true, grouped: true, groups: randomGroups, inherit: true})
	})
	// Preemption and starvation windows (reference_preempt_test.go), alone,
	// with tier shares, and with tenants, weights and TTLs.
	t.Run("tier-rules", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 150, ops: 300, keys: []string{"", "a", "b", "c"}, tierRules: true})
	})
	t.Run("tier-rules-shares", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 150, ops: 300, keys: []string{"", "a", "b", "c"}, tierRules: true, tiered: true, bounded: true, weighted: true, expiring: true})
	})
	// With groups: a preemption is judged within the groups' allocations
	// (a slot lent for one Dispatch is not counted on).
	t.Run("tier-rules-groups", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 150, ops: 300, keys: []string{"", "a", "b", "c"}, tierRules: true, grouped: true, groups: randomGroups})
	})
	// Hierarchical fair share: tenants over the keys, with key weights
	// changed at run time, and with every feature.
	// Workload rules put labelled jobs in tiers other than their types':
	// alone, with tier shares and caps, with preemption and starvation
	// windows, and beside inherited priorities (which override them).
	t.Run("workload-tiers", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 150, ops: 300, keys: []string{"", "a", "b", "c"}, labelled: true})
	})
	t.Run("workload-tiers-shares", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 150, ops: 300, keys: []string{"", "a", "b", "c"}, labelled: true, tiered: true, inherit: true})
	})
	t.Run("workload-tiers-rules", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 150, ops: 300, keys: []string{"", "a", "b", "c"}, labelled: true, tierRules: true, tiered: true, inherit: true, bounded: true, weighted: true, expiring: true})
	})
	t.Run("workload-tiers-rules-groups", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 150, ops: 300, keys: []string{"", "a", "b", "c"}, labelled: true, tierRules: true, grouped: true, groups: randomGroups})
	})
	// The tier rules and the workload rules beside every other feature:
	// preemptions judged under pauses, urgency, rate limits, policies and
	// TTLs, and lanes held for their groups as allocations move.
	t.Run("tier-rules-everything", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 120, ops: 300, keys: []string{"", "a", "b", "c"}, tierRules: true, expiring: true, adaptive: true, rated: true, policy: true, tiered: true, bounded: true, weighted: true, grouped: true, groups: randomGroups, aging: groupAging, inherit: true})
	})
	t.Run("workload-tiers-rules-groups-everything", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 120, ops: 300, keys: []string{"", "a", "b", "c"}, labelled: true, tierRules: true, grouped: true, groups: randomGroups, tiered: true, inherit: true, bounded: true, weighted: true, expiring: true})
	})
	t.Run("hierarchy", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 150, ops: 300, keys: []string{"", "a", "b", "c"}, hier: true, weighted: true})
	})
	// Every key its own tenant (weight 1) is one level: the order is the
	// one-level reference's, with every feature but key weights (under a
	// hierarchy those split a tenant's share, not the whole).
	t.Run("hierarchy-one-level", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 150, ops: 300, keys: []string{"", "a", "b", "c"}, hierOwn: true, expiring: true, adaptive: true, rated: true, policy: true, tiered: true, bounded: true, grouped: true, groups: randomGroups, aging: groupAging, inherit: true})
	})
	t.Run("hierarchy-everything", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 100, ops: 300, keys: []string{"", "a", "b", "c"}, hier: true, expiring: true, adaptive: true, rated: true, policy: true, tiered: true, bounded: true, weighted: true, grouped: true, groups: randomGroups, aging: groupAging, inherit: true})
	})
	t.Run("workers-scoring-everything", func(t *testing.T) {
		runReferenceWith(t, refOptions{seeds: 100, ops: 300, keys: []string{"", "a", "b", "c"}, workers: true, scoring: true, expiring: true, adaptive: true, rated: true, policy: true, tiered: true, bounded: true, weighted: true, grouped: true, groups: randomGroups, inherit: true})
	})
}

func runReference(t *testing.T, seeds uint64, ops int, keys []string, long bool, aging *policy.AgingConfig) {
	runReferenceWith(t, refOptions{seeds: seeds, ops: ops, keys: keys, long: long, aging: aging})
}

// refOptions configure the runs of one subtest.
type refOptions struct {
	seeds uint64
	ops   int
	keys  []string
	long  bool
	aging *policy.AgingConfig
	// grouped: jobs in groups, runtime group operations. groups, when set,
	// configures group weights for a seed (MaxConcurrency is then never 0).
	grouped bool
	groups  func(rng *rand.Rand, maxConcurrency int) *policy.GroupsConfig
	// inherit: a third of the jobs inherit a random priority (a floor),
	// below, between and above the base priorities and the aging ceiling.
	inherit bool
	// weighted: random fairness key weights, changed at run time now and
	// then; a third of the jobs state their tokens.
	weighted bool
	// bounded: random bounds on the queue and on each key's pending jobs.
	bounded bool
	// tiered: random tier shares (reserved, burst, lending) of the global
	// cap over the reference's tiers 2, 3 and 4.
	tiered bool
	// policy: refPolicy defers, denies and panics on some jobs.
	policy bool
	// rated: rate limits on a type, a group and a key; a third of the jobs
	// state tokens of up to 3s, so that they take up to 3 tokens of a
	// bucket (at most its burst).
	rated bool
	// orderOnly: PriorityOrderOnly; repack has priority 0, and tier 0 may
	// have an absolute cap (TierConfig.MaxRunning).
	orderOnly bool
	// workers: clone, snap and vacuum require worker slots; scoring: linear
	// scoring with a third of the jobs on-demand.
	workers, scoring bool
	// adaptive: the global limit moves with elapsed / estimate.
	adaptive bool
	// expiring: a third of the jobs have a TTL, pulls a type default.
	expiring bool
	// tierRules: tier 4 preempts tier 2's jobs (and on some seeds snap's),
	// tiers 4 and 3 may have starvation windows.
	tierRules bool
	// hier: tenants over the keys (refHierarchy), random tenant weights;
	// hierOwn: every key its own tenant in the core, against the
	// reference's one level.
	hier, hierOwn bool
	// labelled: jobs carry a lane label, and workload rules put two lanes
	// in tiers of their own (reference_workload_test.go).
	labelled bool
}

func refKeyWeights(w map[string]float64) map[string]float64 {
	if len(w) == 0 {
		return nil
	}
	return maps.Clone(w)
}

func refAdaptive(a *policy.AdaptiveLimitConfig) *policy.AdaptiveLimitConfig {
	if a == nil {
		return nil
	}
	c := a.WithDefaults()
	return &c
}

// refBucket is a rate limit's token bucket and, once a job whose turn came
// found it short, the time until which its whole scope waits.
type refBucket struct {
	lim   *rate.Limiter
	until time.Time
}

func refBuckets(limits []policy.RateLimit) map[policy.RateScope]*refBucket {
	out := map[policy.RateScope]*refBucket{}
	for _, l := range limits {
		out[l.Scope] = &refBucket{lim: rate.NewLimiter(rate.Limit(l.PerSecond), l.Burst)}
	}
	return out
}

// refTokens is what j takes from b (spec 4): its stated tokens in seconds,
// rounded up, or 1; never more than the burst.
func refTokens(j *refJob, b *refBucket) int {
	n := 1
	if j.tokens > 0 {
		n = int(math.Ceil(j.tokens.Seconds()))
	}
	return min(n, b.lim.Burst())
}

// shortBucket returns the first of j's buckets (type, group, key) that
// keeps it waiting: its scope waits for a refill, or it holds fewer than
// j's tokens.
func (r *refScheduler) shortBucket(j *refJob, now time.Time) *refBucket {
	for _, b := range r.bucketsOf(j) {
		if now.Before(b.until) || b.lim.TokensAt(now) < float64(refTokens(j, b)) {
			return b
		}
	}
	return nil
}

// blockBucket: j would start but for its buckets. Unless a scope of j's
// already waits (j then waits with it), the first bucket short of j's
// tokens waits until it holds them — the time rounded down to the
// nanosecond, at least 1ns, at most the largest Duration — so that smaller
// jobs of the scope do not pass j.
func (r *refScheduler) blockBucket(j *refJob, now time.Time) {
	for _, b := range r.bucketsOf(j) {
		if now.Before(b.until) {
			return
		}
	}
	b := r.shortBucket(j, now)
	secs := (float64(refTokens(j, b)) - b.lim.TokensAt(now)) / float64(b.lim.Limit())
	wait := time.Duration(math.MaxInt64)
	if ns := math.Floor(secs * 1e9); ns < math.MaxInt64 {
		wait = max(time.Duration(ns), 1)
	}
	b.until = now.Add(wait)
}

// bucketsOf returns the rate limiters of j's type, group and key.
func (r *refScheduler) bucketsOf(j *refJob) []*refBucket {
	var out []*refBucket
	for _, s := range []policy.RateScope{{Kind: policy.RateType, Name: string(j.typ)}, {Kind: policy.RateGroup, Name: j.group}, {Kind: policy.RateKey, Name: j.key}} {
		if b := r.buckets[s]; b != nil {
			out = append(out, b)
		}
	}
	return out
}

// refDenial is a job the reference's policy denied.
type refDenial struct {
	j        *refJob
	err      error
	panicked bool
}

var errRefDenied = errors.New("ref: no clones of r2 for c")

// refPolicy is the admission policy of the policy runs, a function of what
// it is told only: r0 of a keyed client is deferred twice (0.5ms, then
// 1ms), r2 of key c is denied, vacuum r1 makes the policy panic once per
// job (it is then denied), and a job asked with 6 or more pending is
// deferred once.
func refPolicy(info policy.JobInfo) policy.Decision {
	switch {
	case info.ID == "r0" && info.Key != "" && info.Attempt < 2:
		return policy.Defer(time.Duration(1+info.Attempt) * 500 * time.Microsecond)
	case info.ID == "r2" && info.Key == "c":
		return policy.Deny(errRefDenied)
	case info.ID == "r1" && info.Type == "vacuum":
		panic("policy bug")
	case info.QueueDepth >= 6 && info.Attempt == 0:
		return policy.Defer(250 * time.Microsecond)
	}
	return policy.Admit()
}

// ask runs the policy on next, written out again: a panic denies.
func (r *refScheduler) ask(now time.Time, next *refJob) (ok bool) {
	info := policy.JobInfo{Type: next.typ, ID: next.id, Key: next.key, Group: next.group, Priority: next.prio,
		Effective: r.effective(next, now), Waited: now.Sub(next.submitted), Attempt: next.attempt,
		QueueDepth: len(r.pending), Running: len(r.running)}
	var d policy.Decision
	panicked := false
	func() {
		defer func() {
			if v := recover(); v != nil {
				d, panicked = policy.Deny(fmt.Errorf("%w: the admission policy panicked: %v", policy.ErrDenied, v)), true
			}
		}()
		d = r.admission(info)
	}()
	if err, denied := d.Denied(); denied {
		r.pending = slices.DeleteFunc(r.pending, func(o *refJob) bool { return o == next })
		r.leave(now, next.key)
		r.denied = append(r.denied, refDenial{next, err, panicked})
		return false
	}
	if delay, deferred := d.Deferred(); deferred {
		next.attempt++
		next.deferredUntil = now.Add(delay)
		return false
	}
	return true
}

// refWeights are the fairness key weights the weighted runs draw from.
var refWeights = []float64{0.5, 1, 1, 2, 3, 0.3}

// refScale multiplies the seeds of every differential subtest: a soak run
// is go test ./core -run TestReferenceMatchesCore -ref.scale=50.
var refScale = flag.Uint64("ref.scale", 1, "multiply the seeds of TestReferenceMatchesCore")

func runReferenceWith(t *testing.T, o refOptions) {
	seeds, ops, long, aging := o.seeds**refScale, o.ops, o.long, o.aging
	if testing.Short() && seeds >= 40 {
		// make test's quick pass: an eighth of the seeds (enough for each
		// subtest's coverage checks); make check's -race run takes them all.
		seeds /= 8
	}
	stats := &refStats{reasons: map[policy.Reason]int{}}
	for seed := range seeds {
		l := policy.DefaultLimits()
		l.MaxConcurrency = []int{0, 3, 5, 8}[seed%4]
		if seed%5 == 4 {
			l.CostSmoothing = 1
		}
		scale := time.Duration(1)
		if o.scoring {
			scale = 1000 // steps of up to 5s: scores count whole seconds
			sc := policy.ScoreConfig{}.WithDefaults()
			l.Scoring = &sc
		}
		l.KeyTTL = 30 * time.Millisecond * scale
		l.Aging = aging
		if o.bounded {
			brng := rand.New(rand.NewPCG(seed, 0xb0d))
			l.MaxPending = []int{0, 4, 7, 12}[brng.IntN(4)]
			pending := []int{0, 2, 3}[brng.IntN(3)]
			running := []int{0, 1, 2}[brng.IntN(3)]
			if pending > 0 || running > 0 {
				l.Tenants = &policy.TenantsConfig{Default: policy.TenantLimits{MaxPending: pending, MaxRunning: running},
					Keys: map[string]policy.TenantLimits{"": {MaxPending: pending + 2, MaxRunning: running * 2}}}
			}
			if l.MaxPending > 0 && brng.IntN(2) == 0 {
				l.Shed = &policy.ShedConfig{}
			}
		}
		if o.policy {
			l.Admission = refPolicy
		}
		if o.rated {
			rrng := rand.New(rand.NewPCG(seed, 0x2a7e))
			for _, s := range []policy.RateScope{{Kind: policy.RateType, Name: "clone"}, {Kind: policy.RateType, Name: "snap"},
				{Kind: policy.RateGroup, Name: "g1"}, {Kind: policy.RateGroup, Name: ""}, {Kind: policy.RateKey, Name: "a"}, {Kind: policy.RateKey, Name: ""}} {
				if rrng.IntN(2) == 0 {
					l.RateLimits = append(l.RateLimits, policy.RateLimit{Scope: s,
						PerSecond: []float64{100, 200, 400, 1000}[rrng.IntN(4)] / float64(scale), Burst: 1 + rrng.IntN(3)})
				}
			}
		}
		if o.tiered {
			trng := rand.New(rand.NewPCG(seed, 0x7e4))
			l.MaxConcurrency = []int{3, 5, 8, 10}[seed%4]
			l.Tiers = map[policy.Priority]policy.TierConfig{}
			// Reservations leave a fifth unreserved, so every tier can run
			// (a tier's jobs wait forever when the others reserve all, and
			// lend nothing).
			left := 0.8
			for _, p := range []policy.Priority{4, 3, 2} {
				if trng.IntN(4) == 0 {
					continue // this tier keeps "value = cap"
				}
				minShare := math.Round(trng.Float64()*left*10) / 10
				left -= minShare
				burst := min(1, minShare+math.Round(trng.Float64()*10)/10)
				if burst == 0 {
					burst = 0.1
				}
				l.Tiers[p] = policy.TierConfig{MinShare: minShare, BurstShare: burst, LendIdle: trng.IntN(2) == 0}
			}
			if trng.IntN(3) == 0 && left >= 0.1 {
				// A tier no registered type has: its reservation counts all
				// the same (unless lent).
				l.Tiers[7] = policy.TierConfig{MinShare: 0.1, BurstShare: 0.2, LendIdle: trng.IntN(2) == 0}
			}
			// Absolute caps (spec 5's max_inflight) beside the shares, some
			// below the reservation, from their own stream.
			mrng := rand.New(rand.NewPCG(seed, 0x3a7))
			for _, p := range slices.Sorted(maps.Keys(l.Tiers)) {
				if t := l.Tiers[p]; mrng.IntN(3) == 0 {
					t.MaxRunning = 1 + mrng.IntN(3)
					l.Tiers[p] = t
				}
			}
		}
		if o.orderOnly {
			// Priorities only order; repack has priority 0, and tier 0 a
			// cap of its own (MaxRunning alone: no global cap needed) on
			// half the seeds.
			l.PriorityMode = policy.PriorityOrderOnly
			if orng := rand.New(rand.NewPCG(seed, 0x0d3)); orng.IntN(2) == 0 {
				if l.Tiers == nil {
					l.Tiers = map[policy.Priority]policy.TierConfig{}
				}
				l.Tiers[0] = policy.TierConfig{MaxRunning: 1 + orng.IntN(2)}
			}
		}
		if o.tierRules {
			if l.MaxConcurrency == 0 {
				l.MaxConcurrency = 4 // preemption needs a cap that fills
			}
			l.Tiers = refTierRules(rand.New(rand.NewPCG(seed, 0x9ee)), l.Tiers)
		}
		if o.adaptive {
			arng := rand.New(rand.NewPCG(seed, 0xada))
			a := &policy.AdaptiveLimitConfig{Min: 1 + arng.IntN(2), Max: 6 + arng.IntN(5),
				Tolerance: []float64{1.1, 1.5, 2}[arng.IntN(3)], Backoff: []float64{0.5, 0.8}[arng.IntN(2)]}
			if l.MaxConcurrency == 0 {
				l.MaxConcurrency = 4
			}
			l.MaxConcurrency = min(max(l.MaxConcurrency, a.Min), a.Max) // the starting limit
			l.Adaptive = a
		}
		if o.weighted {
			wrng := rand.New(rand.NewPCG(seed, 0x3e1))
			l.KeyWeights = map[string]float64{}
			for _, k := range o.keys {
				if w := refWeights[wrng.IntN(len(refWeights))]; w != 1 {
					l.KeyWeights[k] = w
				}
			}
		}
		rng := rand.New(rand.NewPCG(seed, 0x5eed))
		if o.groups != nil {
			if l.MaxConcurrency == 0 {
				l.MaxConcurrency = 4
			}
			l.Groups = o.groups(rand.New(rand.NewPCG(seed, 0x9e0)), l.MaxConcurrency)
		}
		if err := l.Validate(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		run := &refRun{
			t: t, seed: seed, rng: rng,
			now: t0, c: New(l), ref: newRef(l), jobs: map[uint64]*Job{}, keys: o.keys, long: long, stats: stats,
			grouped: o.grouped, inherit: o.inherit, deniedGroups: map[string]bool{}, weighted: o.weighted, bounded: o.bounded, expiring: o.expiring, reported: map[string]int{},
			hasWorkers: o.workers, scoring: o.scoring, timeScale: scale, rated: o.rated,
		}
		if l.Groups != nil {
			run.header = fmt.Sprintf("max concurrency %d, groups %+v\n", l.MaxConcurrency, *l.Groups)
		}
		if o.hier {
			h := refHierarchy(seed)
			if err := run.c.SetHierarchy(h); err != nil {
				t.Fatal(err)
			}
			run.ref.hier = &h
		}
		if o.labelled {
			run.ref.laneTiers = refLaneTiers(seed)
			run.c.SetWorkloads(refWorkloads(t, run.ref.laneTiers))
		}
		if o.hierOwn {
			if err := run.c.SetHierarchy(Hierarchy{TenantOf: func(string) string { return "" }}); err != nil {
				t.Fatal(err)
			}
		}
		for _, td := range refTypes {
			cfg := td.cfg
			cfg.DefaultCost *= scale
			if o.expiring && td.name == "pull" {
				cfg.QueueTimeout = 6 * time.Millisecond * scale // the type's default TTL
			}
			cfg.RequiresWorker = o.workers && slices.Contains(refWorkerTypes, td.name)
			if o.orderOnly && td.name == "repack" {
				cfg.Priority = 0
			}
			cfg.Preemptible = o.tierRules && (cfg.Priority == 2 || td.name == "snap" && seed%3 == 0)
			if err := run.c.RegisterType(td.name, cfg); err != nil {
				t.Fatal(err)
			}
			run.ref.types[td.name] = cfg
		}
		for op := range ops {
			run.step(op)
			stats.ops++
		}
		// Drain: resume the paused groups, then finish everything, in random
		// order, dispatching as we go.
		run.dispatch(ops)
		run.check(ops, true, true)
		op := ops + 1
		for _, g := range slices.Sorted(maps.Keys(run.ref.pausedAt)) {
			run.logf("drain resume %q", g)
			if err := run.c.ResumeGroup(run.now, g); err != nil {
				run.fail(op, "ResumeGroup(%q): %v", g, err)
			}
			run.ref.resume(run.now, g)
			run.allocOp = allocOp{kind: "pause"}
			run.dispatch(op)
			run.check(op, true, false)
			op++
		}
		if run.hasWorkers {
			// A worker for every worker type, so that their jobs drain.
			run.logf("drain register worker")
			if err := run.c.RegisterWorker(run.now, "drain", [][]policy.JobType{refWorkerTypes}); err != nil {
				run.fail(op, "RegisterWorker(drain): %v", err)
			}
			run.ref.register("drain", [][]policy.JobType{refWorkerTypes})
			run.dispatch(op)
			run.check(op, true, false)
			op++
		}
		for ; len(run.ref.running) > 0 || len(run.ref.pending) > 0; op++ {
			run.now = run.now.Add(time.Millisecond * run.timeScale)
			if len(run.ref.running) == 0 { // only deferred jobs wait: let time pass
				run.logf("drain wait")
				run.allocOp = allocOp{kind: "bulk"}
				run.dispatch(op)
				run.check(op, true, false)
				if op > ops+10000 {
					var held []string
					for _, p := range run.ref.snapshot(run.now).Pending {
						held = append(held, fmt.Sprintf("%s/%s key %q group %q: %v", p.Type, p.ID, p.FairnessKey, p.Group, p.Reasons))
					}
					t.Fatalf("seed %d: jobs never drain: %d pending:\n  %s", seed, len(run.ref.pending), strings.Join(held, "\n  "))
				}
				continue
			}
			if op > ops+100000 { // every finish a victim's: preemption churns
				run.fail(op, "jobs never drain: %d running, %d pending", len(run.ref.running), len(run.ref.pending))
			}
			rj := run.ref.running[run.rng.IntN(len(run.ref.running))]
			run.logf("drain finish #%d", rj.seq)
			run.allocOp = allocOp{kind: "event", group: rj.group}
			got := run.c.Finish(run.now, run.jobs[rj.seq])
			if diff := diffOf(run.ref.finish(run.now, rj), got, func(a, b Completion) bool { return a == b }); diff != "" {
				run.fail(op, "Finish #%d completion (-ref +core):\n%s", rj.seq, diff)
			}
			run.requeuePreempted(rj, got)
			run.dispatch(op)
			run.check(op, true, false)
		}
		run.check(op, true, true)
		if !run.c.Idle() || len(run.ref.pending) != 0 {
			t.Fatalf("seed %d: not idle after draining: core pending %d, ref pending %d", seed, run.c.Pending(), len(run.ref.pending))
		}
	}
	// The workload must exercise what it claims to check.
	t.Logf("%+v", *stats)
	// (Keys are never idle long in the long runs.)
	minAdmitted := int(seeds) * ops / 4
	if o.policy || o.bounded {
		minAdmitted = int(seeds) * ops / 6 // refusals and denials take their share
	}
	if stats.admitted < minAdmitted || stats.withdrawn == 0 || stats.evictedKeys == 0 && !long || stats.evictedEstimates == 0 {
		t.Errorf("workload too thin: %+v", *stats)
	}
	for _, reason := range []policy.Reason{policy.ReasonGlobalLimit, policy.ReasonTierLimit, policy.ReasonTypeLimit, policy.ReasonConflict} {
		if stats.reasons[reason] == 0 {
			t.Errorf("no pending job ever waited for %s", reason)
		}
	}
	if o.workers {
		t.Logf("%d jobs lost with their worker", stats.lost)
		if stats.lost == 0 || stats.reasons[policy.ReasonNoWorkers] == 0 || stats.reasons[policy.ReasonWorkerBusy] == 0 {
			t.Errorf("workers on, yet lost %d, waited for no_workers %d, worker_busy %d times",
				stats.lost, stats.reasons[policy.ReasonNoWorkers], stats.reasons[policy.ReasonWorkerBusy])
		}
	}
	if o.expiring && stats.expired == 0 {
		t.Error("TTLs on, yet no job expired")
	}
	if o.rated && stats.reasons[policy.ReasonRateLimited] == 0 {
		t.Error("rate limits on, yet no job waited for a token")
	}
	if o.policy && stats.denied == 0 {
		t.Error("admission policy on, yet no job was denied")
	}
	if o.policy && stats.reasons[policy.ReasonDeferred] == 0 {
		t.Error("admission policy on, yet no job waited deferred")
	}
	if o.bounded {
		t.Logf("%d submissions refused, %d pending jobs shed", stats.refused, stats.shed)
		if stats.refused == 0 {
			t.Error("pending bounds on, yet no submission was refused")
		}
		if stats.shed == 0 {
			t.Error("pending bounds on, yet no job was shed")
		}
		if stats.reasons[policy.ReasonTenantLimit] == 0 {
			t.Error("running bounds on, yet no job waited for its tenant")
		}
	}
	if aging != nil && stats.agedAdmissions == 0 {
		t.Error("aging on, yet no job was admitted above its base priority")
	}
	if stats.reasons[""] != 0 {
		t.Errorf("%d pending jobs had no reason to wait after a Dispatch", stats.reasons[""])
	}
	if o.grouped {
		checkGroupStats(t, o, stats)
	}
	if o.tierRules && (stats.preempted == 0 || stats.starved == 0) {
		t.Errorf("tier rules on, yet %d jobs preempted, at most %d admissions by a window", stats.preempted, stats.starved)
	}
}
