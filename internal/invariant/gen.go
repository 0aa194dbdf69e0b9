// Package invariant is a randomized simulation that drives the real
// *fairsched.Scheduler in virtual time (a mock clock inside a
// testing/synctest bubble) through seeded workloads over every feature, and
// checks the scheduler's invariants at every step: caps of every kind,
// conflict exclusion, one job per worker slot, work conservation (a pending
// job always waits for a reason that holds), exactly-once attempts and
// typed outcomes, weighted fair service and the aging bound.
//
// Run plays one seed; the root package's invariant_test.go runs many. Like
// the scheduler, the simulation has one owner of its state, the driver: the
// scheduler's goroutines (attempts, RunSync callers, Close) report what they
// see to it over a channel and wait until it has recorded it.
package invariant

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/fairsched/fairsched"
)

// Mode is a family of workloads.
type Mode uint8

const (
	// Chaos mixes every feature; it checks the safety invariants (caps,
	// conflicts, slots, reasons, outcomes), which hold whatever the mix.
	Chaos Mode = iota
	// Fairness saturates two weighted fairness keys at one priority and
	// checks that their weighted accumulated costs never drift apart by
	// more than one job's weighted cost.
	Fairness
	// Aging keeps the global cap saturated with a stream of fresh
	// high-priority work and checks that every job starts within
	// AgingConfig.MaxWait(base) plus one job duration — or, on half the
	// seeds, that a starvation window of the stream's tier starts each
	// low-priority job within the window plus one job duration, the
	// stream preempting low-priority jobs within its budget on half of
	// those (tier_rules.go).
	Aging
)

func (m Mode) String() string {
	switch m {
	case Fairness:
		return "fairness"
	case Aging:
		return "aging"
	}
	return "chaos"
}

// ModeFor is the workload family of a seed: three in five are chaos.
func ModeFor(seed uint64) Mode {
	switch seed % 5 {
	case 3:
		return Fairness
	case 4:
		return Aging
	}
	return Chaos
}

// tick is the granularity of every generated time: many events coincide.
const tick = 250 * time.Millisecond

type outcome uint8

const (
	outOK        outcome = iota
	outFail              // returns an error wrapping errAttempt: retried per policy
	outPermanent         // returns fairsched.Permanent(error wrapping errAttempt)
	outPanic             // panics: a *PanicError, never retried
	outCtx               // not planned: the job's context ended first
)

func (o outcome) String() string {
	return [...]string{"ok", "fail", "permanent", "panic", "ctx"}[o]
}

type attemptSpec struct {
	dur time.Duration
	out outcome
}

type typeSpec struct {
	name fairsched.JobType
	cfg  fairsched.JobTypeConfig
}

// jobSpec is one RunSync or Submit call, planned in full.
type jobSpec struct {
	idx      int
	at       time.Duration // arrival, from the start
	typ      int
	id       string
	key      string // RunSync's key; for Submit the WithFairnessKey key ("" none)
	fg       bool
	group    string
	ttl      time.Duration // WithQueueTimeout, 0 none
	retry    *fairsched.RetryPolicy
	tokens   time.Duration
	cancelAt time.Duration // fg: the caller cancels its context then; <0 never
	deny     bool          // the admission policy denies it (marker in id)
	deferred bool          // the admission policy defers it once (marker in id)
	attempts []attemptSpec
	respawn  bool // aging mode: a fresh copy arrives when it ends
	// supersede: a Submit with Supersede(), on a shared id, so that it
	// replaces a pending (or backing-off) job of its (type, id).
	supersede bool
	lane      string // its "lane" label (workloads.go), "" none
}

type opKind uint8

const (
	opRegister opKind = iota
	opUnregister
	opPause
	opResume
	opGroupWeight
	opResetGroupWeights
	opKeyWeight
	opPeriodicStart
	opPeriodicStop
	opClose
)

type opSpec struct {
	at     time.Duration
	kind   opKind
	worker fairsched.WorkerSpec // opRegister
	name   string               // worker id, group, key
	weight float64
	per    int           // periodic index
	abort  time.Duration // opClose: <0 graceful, else the Close context ends this long after
}

type rateSpec struct {
	kind   byte // 't', 'g', 'k'
	name   string
	perSec float64
	burst  int
}

type periodicSpec struct {
	idx   int
	typ   int
	id    string
	every time.Duration
	key   string
	group string
}

// config is a scheduler configuration, the options New gets.
type config struct {
	mode       Mode
	maxConc    int // 0: unlimited
	types      []typeSpec
	tiers      map[fairsched.Priority]fairsched.TierConfig
	orderOnly  bool // WithPriorityMode(PriorityOrderOnly): priorities from 0, caps only by WithTier
	groupsOn   bool
	groupNames []string // the groups jobs use ("" included)
	groupCfg   map[string][3]int
	aging      *fairsched.AgingConfig
	scoring    bool
	tenants    *fairsched.TenantLimits
	keyLimits  map[string]fairsched.TenantLimits
	maxPending int
	shed       bool // WithShedding, with maxPending
	rates      []rateSpec
	keyWeights map[string]float64
	policy     bool
	deferDelay time.Duration
	keys       []string
	idPool     []string // ids shared by conflict and coalescing types
	dmax       time.Duration
	queued     int // aging mode: the stream's backlog beyond the cap
	// window and preempt: aging mode's tier rules of the stream's tier
	// (instead of aging).
	window  time.Duration
	preempt *fairsched.PreemptBudget
	// tenantWeights: fairness mode's tenants (hier.go); nil: one level.
	tenantWeights map[string]float64
	// lanes: the workload rules' tiers by lane label (workloads.go); nil:
	// no rules.
	lanes map[string]fairsched.Priority
}

func (c *config) options() []fairsched.Option {
	var o []fairsched.Option
	if c.maxConc > 0 {
		o = append(o, fairsched.WithMaxConcurrency(c.maxConc))
	}
	for _, p := range sortedKeys(c.tiers) {
		o = append(o, fairsched.WithTier(p, c.tiers[p]))
	}
	if c.orderOnly {
		o = append(o, fairsched.WithPriorityMode(fairsched.PriorityOrderOnly))
	}
	if c.groupsOn {
		for _, g := range sortedKeys(c.groupCfg) {
			v := c.groupCfg[g]
			o = append(o, fairsched.WithGroupWeight(g, v[0]))
			if v[1] > 0 {
				o = append(o, fairsched.WithGroupMinSlots(g, v[1]))
			}
			if v[2] > 0 {
				o = append(o, fairsched.WithGroupLimit(g, v[2]))
			}
		}
	}
	if c.aging != nil {
		o = append(o, fairsched.WithAging(*c.aging))
	}
	if c.scoring {
		o = append(o, fairsched.WithScoring(fairsched.ScoreConfig{}))
	}
	if c.tenants != nil {
		o = append(o, fairsched.WithTenantLimits(*c.tenants))
	}
	for _, k := range sortedKeys(c.keyLimits) {
		o = append(o, fairsched.WithKeyLimits(k, c.keyLimits[k]))
	}
	if c.maxPending > 0 {
		o = append(o, fairsched.WithMaxPending(c.maxPending))
		if c.shed {
			o = append(o, fairsched.WithShedding())
		}
	}
	for _, r := range c.rates {
		o = append(o, fairsched.WithRateLimit(r.scope(), r.perSec, r.burst))
	}
	for _, k := range sortedKeys(c.keyWeights) {
		o = append(o, fairsched.WithKeyWeight(k, c.keyWeights[k]))
	}
	o = append(o, c.hierOptions()...)
	o = append(o, c.workloadPolicy()...)
	if c.policy {
		d := c.deferDelay
		o = append(o, fairsched.WithAdmissionPolicy(func(info fairsched.JobInfo) fairsched.Decision {
			switch {
			case strings.HasSuffix(info.ID, denyMark):
				return fairsched.Deny(nil)
			case strings.HasSuffix(info.ID, deferMark) && info.Attempt == 0:
				return fairsched.Defer(d)
			}
			return fairsched.Admit()
		}))
	}
	return o
}

func (r rateSpec) scope() fairsched.RateScope {
	switch r.kind {
	case 't':
		return fairsched.RateForType(fairsched.JobType(r.name))
	case 'g':
		return fairsched.RateForGroup(r.name)
	}
	return fairsched.RateForKey(r.name)
}

// The admission policy's markers: a job id ending in denyMark is denied, one
// ending in deferMark deferred once.
const (
	denyMark  = "~deny"
	deferMark = "~defer"
)

// String summarises the configuration for a failure report.
func (c *config) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mode=%s cap=%d", c.mode, c.maxConc)
	for _, t := range c.types {
		f := t.cfg
		fmt.Fprintf(&b, "\n  type %s: prio=%d max=%d conflict=%q/%v cost=%v", t.name, f.Priority, f.MaxConcurrency, f.ConflictGroup, f.ConflictMode, f.DefaultCost)
		if f.QueueTimeout > 0 {
			fmt.Fprintf(&b, " queueTimeout=%v", f.QueueTimeout)
		}
		if f.Retry.MaxAttempts > 0 {
			fmt.Fprintf(&b, " retry=%+v", f.Retry)
		}
		if f.Coalesce {
			b.WriteString(" coalesce")
		}
		if f.RequiresWorker {
			b.WriteString(" requiresWorker")
		}
	}
	if c.orderOnly {
		fmt.Fprintf(&b, "\n  priorities only order")
	}
	if c.lanes != nil {
		fmt.Fprintf(&b, "\n  workload tiers by lane=%v", c.lanes)
	}
	if len(c.tiers) > 0 {
		fmt.Fprintf(&b, "\n  tiers=%v", c.tiers)
	}
	if c.groupsOn {
		fmt.Fprintf(&b, "\n  groups (weight,min,limit)=%v", c.groupCfg)
	}
	if c.aging != nil {
		fmt.Fprintf(&b, "\n  aging=%+v", *c.aging)
	}
	if c.scoring {
		b.WriteString("\n  scoring")
	}
	if c.tenants != nil {
		fmt.Fprintf(&b, "\n  tenants=%+v keyLimits=%v", *c.tenants, c.keyLimits)
	}
	if c.maxPending > 0 {
		fmt.Fprintf(&b, "\n  maxPending=%d shed=%v", c.maxPending, c.shed)
	}
	if len(c.rates) > 0 {
		fmt.Fprintf(&b, "\n  rates=%+v", c.rates)
	}
	if len(c.keyWeights) > 0 {
		fmt.Fprintf(&b, "\n  keyWeights=%v", c.keyWeights)
	}
	if c.tenantWeights != nil {
		fmt.Fprintf(&b, "\n  tenants by key path, weights %v", c.tenantWeights)
	}
	if c.policy {
		fmt.Fprintf(&b, "\n  admission policy (defer %v)", c.deferDelay)
	}
	if c.window > 0 {
		fmt.Fprintf(&b, "\n  starvation window %v, preemption budget %+v", c.window, c.preempt)
	}
	return b.String()
}

// gen draws configurations and workloads from one seed.
type gen struct {
	r *rand.Rand
	// sup draws the Supersede calls apart from r, so adding them left every
	// seed's other calls as they were.
	sup     *rand.Rand
	lanes   *rand.Rand // draws the jobs' lanes, nil without rules
	cfg     *config
	jobs    int // jobs generated so far
	workers int // worker ids handed out
	// live is the generator's model of the registered workers, in order.
	live      []fairsched.WorkerSpec
	periodics []periodicSpec
	soak      bool
}

func newGen(seed uint64, mode Mode, soak bool) *gen {
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x5eed_1a7e_f00d_cafe)), sup: rand.New(rand.NewPCG(seed, 0x5c9e_25ed_e000_0001)), soak: soak}
	switch mode {
	case Fairness:
		g.cfg = g.fairnessConfig()
	case Aging:
		g.cfg = g.agingConfig()
	default:
		g.cfg = g.chaosConfig()
		g.lanes = drawLanes(seed, g.cfg)
	}
	return g
}

func (g *gen) intn(n int) int { return g.r.IntN(n) }

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// ticks returns a duration of lo..hi ticks.
func (g *gen) ticks(lo, hi int) time.Duration { return time.Duration(lo+g.intn(hi-lo+1)) * tick }

func (g *gen) pick(xs []string) string { return xs[g.intn(len(xs))] }

func (g *gen) chaosConfig() *config {
	c := &config{mode: Chaos, keys: []string{"k0", "k1", "k2", "k3"}, dmax: 6 * time.Second}
	c.idPool = []string{"r0", "r1", "r2", "r3"}
	c.groupsOn = g.chance(0.35)
	c.tiers = map[fairsched.Priority]fairsched.TierConfig{}
	useTiers := g.chance(0.25)
	if c.groupsOn || useTiers || g.chance(0.85) {
		c.maxConc = 2 + g.intn(7)
	}
	// Priorities: a few distinct values so tiers fill and compete.
	prios := []fairsched.Priority{1 + fairsched.Priority(g.intn(3)), 2 + fairsched.Priority(g.intn(4)), 4 + fairsched.Priority(g.intn(5))}
	// Priorities that only order (specs 3 and 5): the lowest may be 0, and
	// tiers are capped only by WithTier, some by MaxRunning alone.
	c.orderOnly = g.chance(0.25)
	if c.orderOnly {
		prios[0] = fairsched.Priority(g.intn(2))
	}
	nTypes := 2 + g.intn(4)
	anyWorker := false
	for i := range nTypes {
		cfg := fairsched.JobTypeConfig{
			DefaultCost: g.ticks(2, 16),
			Priority:    prios[g.intn(len(prios))],
		}
		if g.chance(0.4) {
			cfg.MaxConcurrency = 1 + g.intn(3)
		}
		if g.chance(0.45) {
			cfg.ConflictGroup = fairsched.ConflictGroup([]string{"git", "db"}[g.intn(2)])
			if g.chance(0.5) {
				cfg.ConflictMode = fairsched.ConflictShared
			}
		}
		if g.chance(0.15) {
			cfg.QueueTimeout = g.ticks(20, 120)
		}
		if g.chance(0.25) {
			cfg.Retry = g.retryPolicy()
		}
		if g.chance(0.15) {
			cfg.Coalesce = true
		}
		if g.chance(0.3) {
			cfg.RequiresWorker = true
			anyWorker = true
		}
		c.types = append(c.types, typeSpec{name: fairsched.JobType(fmt.Sprintf("t%d", i)), cfg: cfg})
	}
	if anyWorker && !slices.ContainsFunc(c.types, func(t typeSpec) bool { return !t.cfg.RequiresWorker }) {
		c.types[0].cfg.RequiresWorker = false
	}
	if useTiers && c.maxConc > 0 {
		total := 0.0
		for _, p := range prios {
			if g.chance(0.6) {
				min := []float64{0, 0.2, 0.25, 0.5}[g.intn(4)]
				if total+min > 1 {
					min = 0
				}
				total += min
				burst := max(min, []float64{0.25, 0.5, 0.75, 1}[g.intn(4)])
				c.tiers[p] = fairsched.TierConfig{MinShare: min, BurstShare: burst, LendIdle: g.chance(0.5)}
			}
		}
	}
	for _, p := range prios {
		// An absolute cap (spec 5's max_inflight): beside shares, or alone,
		// which needs no global cap.
		if t, ok := c.tiers[p]; ok && g.chance(0.4) || !ok && (c.orderOnly || useTiers) && g.chance(0.3) {
			t.MaxRunning = 1 + g.intn(3)
			c.tiers[p] = t
		}
	}
	// Reservations that are never lent must leave every other tier in use a
	// slot, or its jobs could never run (and a graceful Close never return).
	for _, q := range prios {
		for {
			owed, lender, found := 0, fairsched.Priority(0), false
			for _, p := range sortedKeys(c.tiers) {
				if t := c.tiers[p]; p != q && !t.LendIdle {
					owed += int(t.MinShare * float64(c.maxConc))
					lender, found = p, true
				}
			}
			if owed < c.maxConc || !found {
				break
			}
			t := c.tiers[lender]
			t.LendIdle = true
			c.tiers[lender] = t
		}
	}
	c.groupNames = []string{""}
	if c.groupsOn || g.chance(0.3) {
		c.groupNames = append(c.groupNames, "ga", "gb", "gc")
	}
	if c.groupsOn {
		c.groupCfg = map[string][3]int{}
		mins := 0
		for _, name := range c.groupNames {
			w := 1 + g.intn(4)
			min, limit := 0, 0
			if g.chance(0.3) && mins < c.maxConc {
				min = 1
				mins++
			}
			if g.chance(0.3) {
				limit = max(min, 1+g.intn(c.maxConc))
			}
			c.groupCfg[name] = [3]int{w, min, limit}
		}
	}
	switch x := g.r.Float64(); {
	case x < 0.3:
		c.aging = &fairsched.AgingConfig{
			GracePeriod:          g.ticks(0, 20),
			Interval:             g.ticks(4, 20),
			Step:                 fairsched.Priority(g.intn(3)),
			MaxEffectivePriority: 6 + fairsched.Priority(g.intn(6)),
		}
		if c.groupsOn && g.chance(0.5) {
			c.aging.UrgentThreshold = c.aging.MaxEffectivePriority - fairsched.Priority(g.intn(2))
		}
	case x < 0.5:
		c.scoring = true
	}
	if g.chance(0.3) {
		c.tenants = &fairsched.TenantLimits{MaxRunning: g.intn(4)}
		if g.chance(0.5) {
			c.tenants.MaxPending = 3 + g.intn(10)
		}
		if g.chance(0.5) {
			c.keyLimits = map[string]fairsched.TenantLimits{g.pick(c.keys): {MaxRunning: 1 + g.intn(2), MaxPending: g.intn(6)}}
		}
	}
	if g.chance(0.1) {
		c.maxPending = 10 + g.intn(30)
		c.shed = c.maxPending%2 == 1 // from the same draw: the seeds' other choices stay as they were
	}
	if g.chance(0.25) {
		seen := map[string]bool{}
		for range 1 + g.intn(2) {
			r := rateSpec{perSec: []float64{0.25, 0.5, 1, 2, 4}[g.intn(5)], burst: 1 + g.intn(3)}
			switch g.intn(3) {
			case 0:
				r.kind, r.name = 't', string(c.types[g.intn(len(c.types))].name)
			case 1:
				r.kind, r.name = 'g', g.pick(c.groupNames)
			default:
				r.kind, r.name = 'k', g.pick(append([]string{""}, c.keys...))
			}
			if s := string(r.kind) + r.name; !seen[s] {
				seen[s] = true
				c.rates = append(c.rates, r)
			}
		}
	}
	if g.chance(0.35) {
		c.keyWeights = map[string]float64{}
		for _, k := range c.keys {
			if g.chance(0.5) {
				c.keyWeights[k] = []float64{0.5, 2, 3, 1.5}[g.intn(4)]
			}
		}
	}
	if g.chance(0.15) {
		c.policy = true
		c.deferDelay = g.ticks(1, 12)
	}
	return c
}

func (g *gen) retryPolicy() fairsched.RetryPolicy {
	min := g.ticks(1, 8)
	return fairsched.RetryPolicy{
		MaxAttempts: 2 + g.intn(2),
		MinBackoff:  min,
		MaxBackoff:  min * time.Duration(1+g.intn(4)),
		Jitter:      []float64{0, 0, 0.25, 0.5}[g.intn(4)],
	}
}

// maxAttempts is the number of attempts job j may make.
func (c *config) maxAttempts(j *jobSpec) int {
	if j.retry != nil {
		return max(1, j.retry.MaxAttempts)
	}
	return max(1, c.types[j.typ].cfg.Retry.MaxAttempts)
}

// retryOf is the retry policy job j follows.
func (c *config) retryOf(j *jobSpec) fairsched.RetryPolicy {
	if j.retry != nil {
		return *j.retry
	}
	return c.types[j.typ].cfg.Retry
}

// ttlOf is the time job j may stay pending (0: no limit).
func (c *config) ttlOf(j *jobSpec) time.Duration {
	if j.ttl > 0 {
		return j.ttl
	}
	return c.types[j.typ].cfg.QueueTimeout
}

// workerTypes lists the types that need a worker slot.
func (c *config) workerTypes() []fairsched.JobType {
	var out []fairsched.JobType
	for _, t := range c.types {
		if t.cfg.RequiresWorker {
			out = append(out, t.name)
		}
	}
	return out
}

// newWorker draws a worker over the worker types.
func (g *gen) newWorker(all bool) fairsched.WorkerSpec {
	wt := g.cfg.workerTypes()
	g.workers++
	w := fairsched.WorkerSpec{ID: fmt.Sprintf("w%d", g.workers)}
	for range 1 + g.intn(3) {
		var types []fairsched.JobType
		if all {
			types = slices.Clone(wt)
		} else {
			for _, t := range wt {
				if g.chance(0.5) {
					types = append(types, t)
				}
			}
			if len(types) == 0 {
				types = []fairsched.JobType{wt[g.intn(len(wt))]}
			}
		}
		w.Slots = append(w.Slots, fairsched.SlotSpec{Types: types})
	}
	return w
}

// covered reports whether the live workers take every worker type.
func (g *gen) covered() bool {
	for _, t := range g.cfg.workerTypes() {
		ok := false
		for _, w := range g.live {
			for _, s := range w.Slots {
				ok = ok || slices.Contains(s.Types, t)
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// attempts plans up to n attempts: most succeed, some fail.
func (g *gen) attempts(n int, maxTicks int) []attemptSpec {
	out := make([]attemptSpec, n)
	for i := range out {
		out[i].dur = g.ticks(0, maxTicks)
		switch x := g.r.Float64(); {
		case x < 0.62:
			out[i].out = outOK
		case x < 0.92:
			out[i].out = outFail
		case x < 0.97:
			out[i].out = outPermanent
		default:
			out[i].out = outPanic
		}
	}
	return out
}

// chaosChunk draws n jobs and the operations among them, arriving from
// start on; it returns them sorted, and the chunk's end.
func (g *gen) chaosChunk(start time.Duration, n int) ([]*jobSpec, []opSpec, time.Duration) {
	c := g.cfg
	// Offered work ≈ 1–2.5× capacity over the chunk: queues build and drain.
	slots := c.maxConc
	if slots == 0 {
		slots = 6
	}
	load := 1 + 1.5*g.r.Float64()
	if g.soak {
		load = 0.7 + 0.4*g.r.Float64() // about the capacity: most jobs run
	}
	horizon := time.Duration(float64(n)*3.2/float64(slots)/load*float64(time.Second)).Truncate(tick) + 4*tick
	bursts := 1 + g.intn(4)
	var jobs []*jobSpec
	for range n {
		j := &jobSpec{idx: g.jobs, typ: g.intn(len(c.types)), cancelAt: -1}
		g.jobs++
		// Arrivals cluster around a few burst instants.
		if g.chance(0.5) {
			b := time.Duration(g.intn(bursts)) * horizon / time.Duration(bursts)
			j.at = start + b.Truncate(tick) + g.ticks(0, 4)
		} else {
			j.at = start + time.Duration(g.r.Int64N(int64(horizon/tick)))*tick
		}
		t := c.types[j.typ].cfg
		j.id = fmt.Sprintf("j%d", j.idx)
		if t.ConflictGroup != "" || t.Coalesce || g.chance(0.15) {
			j.id = g.pick(c.idPool) // shared: conflicts, coalescing, learned costs
		}
		j.fg = g.chance(0.6)
		if j.fg || g.chance(0.5) {
			j.key = g.pick(c.keys)
		}
		j.group = g.pick(c.groupNames)
		if g.chance(0.12) {
			j.ttl = g.ticks(4, 80)
		}
		if g.chance(0.1) {
			r := g.retryPolicy()
			j.retry = &r
		}
		if g.chance(0.15) {
			j.tokens = g.ticks(1, 20)
		}
		if j.fg && g.chance(0.15) {
			j.cancelAt = j.at + g.ticks(0, 40)
		}
		if c.policy && !t.Coalesce && !strings.HasPrefix(j.id, "r") {
			switch x := g.r.Float64(); {
			case x < 0.1:
				j.deny = true
				j.id += denyMark
			case x < 0.3:
				j.deferred = true
				j.id += deferMark
			}
		}
		j.attempts = g.attempts(c.maxAttempts(j), int(c.dmax/tick))
		g.maybeSupersede(c, j)
		g.lane(j)
		jobs = append(jobs, j)
	}
	end := start + horizon + c.dmax
	var ops []opSpec
	at := func() time.Duration { return start + time.Duration(g.r.Int64N(int64(horizon/tick)+1))*tick }
	if len(c.workerTypes()) > 0 {
		if len(g.live) == 0 {
			w := g.newWorker(false)
			g.live = append(g.live, w)
			ops = append(ops, opSpec{at: start, kind: opRegister, worker: w})
		}
		// Workers come and go while jobs run on them.
		var times []time.Duration
		for range g.intn(5) {
			times = append(times, at())
		}
		slices.Sort(times)
		for _, t := range times {
			if len(g.live) > 4 || len(g.live) > 0 && g.chance(0.45) { // a few workers at a time
				i := g.intn(len(g.live))
				ops = append(ops, opSpec{at: t, kind: opUnregister, name: g.live[i].ID})
				g.live = slices.Delete(g.live, i, i+1)
			} else {
				w := g.newWorker(false)
				g.live = append(g.live, w)
				ops = append(ops, opSpec{at: t, kind: opRegister, worker: w})
			}
		}
		if !g.covered() { // every worker type has a slot by the chunk's end
			w := g.newWorker(true)
			g.live = append(g.live, w)
			ops = append(ops, opSpec{at: end, kind: opRegister, worker: w})
		}
	}
	if len(c.groupNames) > 1 {
		for range g.intn(3) {
			grp := g.pick(c.groupNames[1:]) // the group "" cannot be paused
			t := at()
			ops = append(ops, opSpec{at: t, kind: opPause, name: grp}, opSpec{at: t + g.ticks(1, 60), kind: opResume, name: grp})
		}
	}
	if c.groupsOn {
		for range g.intn(3) {
			if g.chance(0.2) {
				ops = append(ops, opSpec{at: at(), kind: opResetGroupWeights})
			} else {
				ops = append(ops, opSpec{at: at(), kind: opGroupWeight, name: g.pick(c.groupNames), weight: float64(g.intn(5))})
			}
		}
	}
	if len(c.keyWeights) > 0 || g.chance(0.2) {
		for range g.intn(3) {
			ops = append(ops, opSpec{at: at(), kind: opKeyWeight, name: g.pick(c.keys), weight: []float64{0, 0.5, 1, 2, 4}[g.intn(5)]})
		}
	}
	if g.chance(0.3) {
		var types []int
		for i, t := range c.types {
			if !t.cfg.Coalesce {
				types = append(types, i)
			}
		}
		if len(types) > 0 {
			p := periodicSpec{idx: len(g.periodics), typ: types[g.intn(len(types))], every: g.ticks(4, 40)}
			p.id = fmt.Sprintf("per%d", p.idx)
			if g.chance(0.5) {
				p.key = g.pick(c.keys)
			}
			p.group = g.pick(c.groupNames)
			g.periodics = append(g.periodics, p)
			t := at()
			ops = append(ops, opSpec{at: t, kind: opPeriodicStart, per: p.idx}, opSpec{at: t + g.ticks(4, 200), kind: opPeriodicStop, per: p.idx})
		}
	}
	sortJobs(jobs)
	sortOps(ops)
	return jobs, ops, end
}

// closeOps returns the Close at the end of a run, and a few calls that race
// it or come after it.
func (g *gen) closeOps(at time.Duration) ([]*jobSpec, opSpec) {
	op := opSpec{at: at, kind: opClose, abort: -1}
	if g.cfg.mode == Chaos && g.chance(0.3) {
		op.abort = g.ticks(0, 40)
	}
	var late []*jobSpec
	if g.cfg.mode == Chaos {
		for range g.intn(4) {
			j := &jobSpec{idx: g.jobs, typ: g.intn(len(g.cfg.types)), cancelAt: -1, fg: g.chance(0.5), at: at + g.ticks(0, 4)}
			g.jobs++
			j.id = fmt.Sprintf("j%d", j.idx)
			if j.fg {
				j.key = g.pick(g.cfg.keys)
			}
			j.attempts = g.attempts(g.cfg.maxAttempts(j), int(g.cfg.dmax/tick))
			g.lane(j)
			late = append(late, j)
		}
	}
	return late, op
}

// fairnessConfig: two saturated keys of different weights at one priority,
// with nothing that orders them but their accumulated cost.
func (g *gen) fairnessConfig() *config {
	c := &config{mode: Fairness, keys: []string{"ka", "kb"}, dmax: g.ticks(4, 20)}
	c.maxConc = 1 + g.intn(4)
	cfg := fairsched.JobTypeConfig{DefaultCost: g.ticks(2, 12), Priority: fairsched.Priority(c.maxConc + g.intn(4))}
	if g.chance(0.3) {
		cfg.MaxConcurrency = 1 + g.intn(c.maxConc)
	}
	c.types = []typeSpec{{name: "fair", cfg: cfg}}
	ws := []float64{0.5, 1, 2, 3, 1.5}
	c.keyWeights = map[string]float64{"ka": ws[g.intn(len(ws))], "kb": ws[g.intn(len(ws))]}
	c.idPool = []string{"a", "b", "c", "d", "e"}
	c.groupNames = []string{""}
	g.hierarchy(c)
	return c
}

// fairnessJobs: a backlog for each key, the second arriving a little later.
func (g *gen) fairnessJobs() []*jobSpec {
	c := g.cfg
	var jobs []*jobSpec
	for k, key := range c.keys {
		fg := g.chance(0.5)
		delay := time.Duration(0)
		if k == 1 {
			delay = g.ticks(0, 20)
		}
		for range 15 + g.intn(30) {
			j := &jobSpec{idx: g.jobs, key: key, fg: fg, at: delay, cancelAt: -1, id: g.pick(c.idPool)}
			g.jobs++
			if g.chance(0.25) {
				j.tokens = g.ticks(1, int(c.dmax/tick))
			}
			j.attempts = []attemptSpec{{dur: g.ticks(1, int(c.dmax/tick))}}
			jobs = append(jobs, j)
		}
	}
	sortJobs(jobs)
	return jobs
}

// agingConfig: a low-priority type under a saturating stream of fresh
// high-priority work, only the global cap binding either.
func (g *gen) agingConfig() *config {
	c := &config{mode: Aging, keys: []string{"hi", "lo"}, dmax: g.ticks(4, 20)}
	c.maxConc = 2 + g.intn(3)
	pl := fairsched.Priority(c.maxConc + g.intn(3))
	ph := pl + 1 + fairsched.Priority(g.intn(4))
	c.types = []typeSpec{
		{name: "hi", cfg: fairsched.JobTypeConfig{DefaultCost: g.ticks(2, 12), Priority: ph}},
		{name: "lo", cfg: fairsched.JobTypeConfig{DefaultCost: g.ticks(2, 12), Priority: pl}},
	}
	if g.chance(0.5) {
		c.types[0].cfg.ConflictGroup = "x" // conflicts among the stream only
	}
	// Fresh stream jobs never wait long enough to age: the grace period
	// exceeds their longest wait (queue of at most maxConc ahead).
	queued := 1 + g.intn(c.maxConc)
	c.aging = &fairsched.AgingConfig{
		GracePeriod:          time.Duration(queued+4) * c.dmax,
		Interval:             g.ticks(4, 40),
		Step:                 fairsched.Priority(1 + g.intn(2)),
		MaxEffectivePriority: ph + 1 + fairsched.Priority(g.intn(2)),
	}
	c.queued = queued
	c.groupNames = []string{""}
	g.tierRules(c, ph)
	return c
}

// agingJobs: the stream's initial backlog (each of its jobs respawns when it
// ends), and low-priority jobs spaced so that one waits at a time.
func (g *gen) agingJobs() ([]*jobSpec, time.Duration) {
	c := g.cfg
	var jobs []*jobSpec
	for range c.maxConc + c.queued {
		jobs = append(jobs, g.streamJob(0))
	}
	bound, _ := c.waitBound(&c.types[1])
	at := g.ticks(0, 20)
	for range 2 + g.intn(4) {
		j := &jobSpec{idx: g.jobs, typ: 1, key: "lo", fg: g.chance(0.5), at: at, cancelAt: -1, id: fmt.Sprintf("lo%d", g.jobs)}
		g.jobs++
		j.attempts = []attemptSpec{{dur: g.ticks(0, int(c.dmax/tick))}}
		jobs = append(jobs, j)
		at += bound + g.ticks(4, 40)
	}
	sortJobs(jobs)
	return jobs, at
}

// streamJob is one job of the aging mode's high-priority stream.
func (g *gen) streamJob(at time.Duration) *jobSpec {
	j := &jobSpec{idx: g.jobs, typ: 0, key: "hi", fg: g.chance(0.5), at: at, cancelAt: -1, respawn: true}
	j.id = fmt.Sprintf("h%d", g.intn(4))
	g.jobs++
	j.attempts = []attemptSpec{{dur: g.ticks(1, int(g.cfg.dmax/tick))}}
	return j
}

// maybeSupersede makes some background jobs of types that do not coalesce
// Supersede calls on a shared id (unless the policy's marker names them).
func (g *gen) maybeSupersede(c *config, j *jobSpec) {
	if j.fg || c.types[j.typ].cfg.Coalesce || j.deny || j.deferred || g.sup.Float64() >= 0.2 {
		return
	}
	j.supersede = true
	if !strings.HasPrefix(j.id, "r") {
		j.id = c.idPool[g.sup.IntN(len(c.idPool))]
	}
}

func sortJobs(jobs []*jobSpec) {
	slices.SortStableFunc(jobs, func(a, b *jobSpec) int {
		if a.at != b.at {
			return cmpDur(a.at, b.at)
		}
		return a.idx - b.idx
	})
}

func sortOps(ops []opSpec) {
	slices.SortStableFunc(ops, func(a, b opSpec) int { return cmpDur(a.at, b.at) })
}

func cmpDur(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func sortedKeys[K ~string | ~int, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// String describes job j as a call.
func (j *jobSpec) String(c *config) string {
	var b strings.Builder
	call := "Submit"
	if j.fg {
		call = "RunSync"
	}
	fmt.Fprintf(&b, "at %v: j%d %s(%s, %q, key %q", j.at, j.idx, call, c.types[j.typ].name, j.id, j.key)
	if j.group != "" {
		fmt.Fprintf(&b, ", InGroup(%q)", j.group)
	}
	if j.ttl > 0 {
		fmt.Fprintf(&b, ", WithQueueTimeout(%v)", j.ttl)
	}
	if j.retry != nil {
		fmt.Fprintf(&b, ", WithRetry(%+v)", *j.retry)
	}
	if j.tokens > 0 {
		fmt.Fprintf(&b, ", WithTokens(%v)", j.tokens)
	}
	if j.supersede {
		b.WriteString(", Supersede()")
	}
	b.WriteString(")")
	if j.cancelAt >= 0 {
		fmt.Fprintf(&b, " cancelled at %v", j.cancelAt)
	}
	fmt.Fprintf(&b, " attempts %v", j.attempts)
	return b.String()
}

func (a attemptSpec) String() string { return fmt.Sprintf("%v:%v", a.dur, a.out) }

// String describes operation op.
func (op opSpec) String() string {
	names := [...]string{"RegisterWorker", "UnregisterWorker", "PauseGroup", "ResumeGroup", "SetGroupWeight",
		"ResetGroupWeights", "SetKeyWeight", "SubmitPeriodic", "stop periodic", "Close"}
	switch op.kind {
	case opRegister:
		return fmt.Sprintf("at %v: RegisterWorker(%s %v)", op.at, op.worker.ID, op.worker.Slots)
	case opGroupWeight, opKeyWeight:
		return fmt.Sprintf("at %v: %s(%q, %v)", op.at, names[op.kind], op.name, op.weight)
	case opPeriodicStart, opPeriodicStop:
		return fmt.Sprintf("at %v: %s per%d", op.at, names[op.kind], op.per)
	case opClose:
		return fmt.Sprintf("at %v: Close (abort after %v)", op.at, op.abort)
	}
	return fmt.Sprintf("at %v: %s(%q)", op.at, names[op.kind], op.name)
}
