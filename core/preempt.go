package core

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/fairsched/fairsched/policy"
)

// Tier rules: preemption and starvation windows (policy.TierConfig's
// Preempt and StarvationWindow). Both are decided here; the owner only
// carries them out (cancels the victims TakePreempted names, requeues
// them with Requeue once they end).
//
// Preemption. At the end of Dispatch, for each tier that preempts
// (highest first) with no preemption of its own still in flight: its next
// job not held back by its key, group, a conflict or a rate limit (those
// are held, parked or wait for their tokens as Dispatch would) must wait
// only because of the slots — the global cap or another tier's
// reservation — and not on its tier's cap. Then the running background
// job of the lowest tier below it whose type is Preemptible, of an
// effective priority below the waiting job's (else, waiting again, it
// could take the slot back and be preempted again), the most recently
// admitted first (least work lost), and whose slot would let the waiting
// job start (policy.Usage.FreedFor), is chosen, if the tier's budget has
// room. A budget spent sets a wake-up for when it has room again
// (NextWake): the core's one timer. A tier has at most one
// preemption in flight, so a victim slow to return is not followed by
// another for the same waiting job.
//
// Starvation window. A tier with a window that is about to take a slot
// gives it instead to the lower tier that has waited the longest past
// that window without an admission (the time since its last admission, or
// since it last started to have work). The rule acts only when a slot is
// being given, so it needs no timer: a slot frees at a Finish, which the
// owner follows with Dispatch. (A window changes who gets a free slot; a
// lower tier with a free slot it may take is admitted anyway.)
//
// Cost with neither configured: Core.rules is nil, and the hot path pays
// a nil check per Submit, admission and Dispatch, and Finish one read of
// the Running record it already holds; no allocation, and a pending Job
// is no larger (the preempting tier is kept in Running). Per tier the core keeps a count of
// pending jobs and a time; the check is O(tiers) per admission of a tier
// with a window, and nothing at all when no tier has one.

// DecisionPreempt records that Dispatch chose a running job for
// preemption (reason CodePreempted); its requeue is a defer record with the
// same code.
const DecisionPreempt DecisionKind = "preempt"

// Reason codes of the tier rules.
const (
	CodePreempted = "preempted"         // a higher tier preempted the job
	CodeStarved   = "starvation_window" // admitted ahead of a higher tier past its window
)

// tierRules holds the state of the tier rules; a Core without any has none.
type tierRules struct {
	preemptors []*preemptor // by priority, highest first
	windows    map[policy.Priority]time.Duration
	tiers      []*tierWait // by priority, lowest first
	byPrio     map[policy.Priority]*tierWait
	victims    []*Job // chosen since the last TakePreempted
	wake       time.Time
	hasWake    bool
	picked     *Job // the job last admitted by a starvation window
	// preemptible counts the registered types that are: without one no
	// preemption is looked for.
	preemptible int
	// preemptions and windowAdmits count the preemptions and the admissions a
	// window gave, for metrics.
	preemptions, windowAdmits uint64
}

// preemptor is a tier that preempts, with its budget's recent uses.
type preemptor struct {
	p        policy.Priority
	budget   policy.PreemptBudget
	used     []time.Time // the last Max preemptions, oldest at next
	next     int
	inflight int // chosen victims that have not ended yet
}

// tierWait is what a starvation window needs of a tier: how many of its
// jobs wait and since when it has gone without an admission.
type tierWait struct {
	p       policy.Priority
	pending int
	since   time.Time
}

// newTierRules returns the rules of the tiers, or nil when none has any.
func newTierRules(tiers map[policy.Priority]policy.TierConfig) *tierRules {
	var r *tierRules
	for _, p := range slices.Sorted(maps.Keys(tiers)) {
		t := tiers[p]
		if !t.HasRules() {
			continue
		}
		if r == nil {
			r = &tierRules{windows: map[policy.Priority]time.Duration{}, byPrio: map[policy.Priority]*tierWait{}}
		}
		if t.Preempt != nil {
			r.preemptors = append(r.preemptors, &preemptor{p: p, budget: *t.Preempt})
		}
		if t.StarvationWindow > 0 {
			r.windows[p] = t.StarvationWindow
		}
	}
	if r != nil {
		slices.Reverse(r.preemptors)
	}
	return r
}

// allowed reports whether the budget has room at now, and else when it will.
func (pr *preemptor) allowed(now time.Time) (bool, time.Time) {
	if len(pr.used) < pr.budget.Max {
		return true, time.Time{}
	}
	back := pr.used[pr.next].Add(pr.budget.Window)
	return !now.Before(back), back
}

// use spends one preemption of the budget at now.
func (pr *preemptor) use(now time.Time) {
	if len(pr.used) < pr.budget.Max {
		pr.used = append(pr.used, now)
		return
	}
	pr.used[pr.next] = now
	pr.next = (pr.next + 1) % len(pr.used)
}

// wait returns the starvation record of tier p, made the first time.
func (r *tierRules) wait(p policy.Priority) *tierWait {
	w := r.byPrio[p]
	if w == nil {
		w = &tierWait{p: p}
		r.byPrio[p] = w
		i, _ := slices.BinarySearchFunc(r.tiers, p, func(t *tierWait, p policy.Priority) int { return cmp.Compare(t.p, p) })
		r.tiers = slices.Insert(r.tiers, i, w)
	}
	return w
}

// joins counts a job of tier p into (delta 1) or out of (-1) the queue
// unrun; a tier that starts to have work starts its window at now.
func (r *tierRules) joins(now time.Time, p policy.Priority, delta int) {
	if len(r.windows) == 0 {
		return
	}
	w := r.wait(p)
	if w.pending == 0 && delta > 0 {
		w.since = now
	}
	w.pending += delta
}

// admitted counts job j of tier p out of the queue at its admission.
func (r *tierRules) admitted(now time.Time, j *Job) {
	if len(r.windows) == 0 {
		return
	}
	w := r.wait(j.Priority())
	w.pending--
	w.since = now
}

// starved returns the lower tier than p that has gone longest past p's
// window without an admission while it had work, or nil.
func (r *tierRules) starved(now time.Time, p policy.Priority) *tierWait {
	window, ok := r.windows[p]
	if !ok {
		return nil
	}
	var best *tierWait
	for _, w := range r.tiers {
		if w.p >= p {
			break
		}
		if w.pending > 0 && now.Sub(w.since) >= window && (best == nil || w.since.Before(best.since)) {
			best = w
		}
	}
	return best
}

// starvedFirst returns the job to admit in place of j, which Dispatch
// found best and free to start: the next job of a tier starved past the
// window of j's tier, when that tier may take a slot now, else j. Dispatch
// applies the checks of every job to it (holdsBack).
func (c *Core) starvedFirst(now time.Time, j *Job) *Job {
	c.rules.picked = nil // what an earlier pass picked and did not admit
	w := c.rules.starved(now, j.Priority())
	if w == nil || c.queue.TierBlocked(w.p) {
		return j
	}
	qj := c.queue.BestOf(w.p)
	if qj == nil {
		return j
	}
	s := jobOf(qj)
	c.rules.picked = s
	return s
}

// holdsBack applies to j, the next job of its lane, the checks Dispatch
// applies to every job before it asks the admission policy, and reports
// whether one holds it back: its lane is held or the job parked, as
// Dispatch does, so that the next look finds the next job.
func (c *Core) holdsBack(now time.Time, j *Job) bool {
	switch {
	case c.tenantBlocks(j):
		c.queue.HoldForKey(&j.Job)
		c.startsWaiting(now, j, policy.ReasonTenantLimit, 0)
	case c.groupBlocks(j):
		c.queue.Hold(&j.Job)
	case c.conflictBlocks(j):
		c.park(j)
	default:
		return c.buckets != nil && c.rateHolds(now, j)
	}
	return true
}

// rateHolds blocks j's empty bucket, if any, as Dispatch does, and reports
// whether there was one.
func (c *Core) rateHolds(now time.Time, j *Job) bool {
	b := c.emptyBucket(now, j)
	if b == nil {
		return false
	}
	c.block(now, b, &j.Job)
	c.startsWaiting(now, j, policy.ReasonRateLimited, b.until.Sub(now))
	return true
}

// admitCode is the reason code of j's admission record: CodeStarved when
// a starvation window chose it.
func (c *Core) admitCode(j *Job) string {
	if c.rules == nil || c.rules.picked != j {
		return ""
	}
	c.rules.picked = nil
	c.rules.windowAdmits++
	return CodeStarved
}

// preempt chooses the victims of the tiers that preempt (see above).
func (c *Core) preempt(now time.Time) {
	r := c.rules
	r.hasWake = false
	if r.preemptible == 0 {
		return
	}
	for _, pr := range r.preemptors {
		if pr.inflight > 0 {
			continue
		}
		j := c.preemptCandidate(now, pr.p)
		if j == nil {
			continue
		}
		v := c.victimFor(pr.p, j)
		if v == nil {
			continue
		}
		if ok, back := pr.allowed(now); !ok {
			if !r.hasWake || back.Before(r.wake) {
				r.wake, r.hasWake = back, true
			}
			continue
		}
		pr.use(now)
		pr.inflight++
		v.preemptBy = pr
		r.victims = append(r.victims, v)
		r.preemptions++
		c.record(now, v, DecisionPreempt, CodePreempted, 0)
	}
}

// preemptCandidate returns the next job of tier p when it waits only for a
// slot that a lower tier's running job could free, else nil. A job its
// key, group, conflict or rate limit holds back is held, parked or waits
// for its tokens on the way, as Dispatch would hold it once the slot is
// free, and the next one is looked at: the job the freed slot would go to.
func (c *Core) preemptCandidate(now time.Time, p policy.Priority) *Job {
	for {
		qj := c.queue.BestOf(p)
		if qj == nil {
			return nil
		}
		j := jobOf(qj)
		switch {
		case c.holdsBack(now, j):
			continue
		case c.usage.Blocker(j.slot, j.ID) != policy.ReasonGlobalLimit:
			return nil // it may start, or waits on its own tier's cap
		}
		return j
	}
}

// victimFor returns the running job to preempt for cand, a job of tier p:
// of the lowest tier below p, a Preemptible background job not already
// being preempted, the most recently admitted, whose slot tier p could
// take. A job whose effective priority (inherited or aged) is not below
// cand's is passed over: waiting again, it could take the slot back
// first, and be preempted again, for ever. O(running jobs); it runs only
// when a preempting tier's job waits.
func (c *Core) victimFor(p policy.Priority, cand *Job) *Job {
	var best *Job
	candEff := c.queue.Effective(&cand.Job, cand.Priority())
	for _, r := range c.running {
		q := r.Priority()
		if q >= p || !r.slot.Config.Preemptible || r.OnDemand || r.isRun || r.preemptBy != nil {
			continue
		}
		if c.queue.Effective(&r.Job, q) >= candEff {
			continue
		}
		if best != nil && (q > best.Priority() || q == best.Priority() && r.admitted < best.admitted) {
			continue
		}
		if c.usage.FreedFor(p, q, c.countsWaiting(r)) {
			best = r
		}
	}
	return best
}

// countsWaiting reports whether running job j, waiting again, would count
// among its tier's waiting jobs: not while its group is allocated no slot
// (countWaiting).
func (c *Core) countsWaiting(j *Job) bool {
	return c.limits.Groups == nil || j.grp().alloc > 0
}

// preemptEnded counts the end of victim j, whose preemption is over.
func (c *Core) preemptEnded(j *Job) {
	j.preemptBy.inflight--
	j.preemptBy = nil
}

// TakePreempted returns the running jobs chosen for preemption since the
// last call: the owner cancels each with cause policy.ErrPreempted and,
// when it ends (Completion.Preempted), returns it with Requeue. The slice
// is reused: use it before the next call into the core.
func (c *Core) TakePreempted() []*Job {
	if c.rules == nil {
		return nil
	}
	out := c.rules.victims
	c.rules.victims = c.rules.victims[:0]
	return out
}

// Requeue returns j, a preempted job that Finish just recorded, to the
// queue at the head of its lane (it keeps its arrival): the attempt counts
// as no failure and its next admission follows at the next Dispatch.
func (c *Core) Requeue(now time.Time, j *Job) {
	c.requeue(now, j, now)
	j.setWaiting("")
	c.record(now, j, DecisionDefer, CodePreempted, 0)
}

// TierRuleCounts returns the preemptions chosen and the admissions given
// by starvation windows so far.
func (c *Core) TierRuleCounts() (preemptions, starved uint64) {
	if c.rules == nil {
		return 0, 0
	}
	return c.rules.preemptions, c.rules.windowAdmits
}

// ruleWake returns the tier rules' wake-up: when a spent budget has room
// again for a job that still waits.
func (c *Core) ruleWake() (time.Time, bool) {
	if c.rules == nil {
		return time.Time{}, false
	}
	return c.rules.wake, c.rules.hasWake
}

// PreemptedBy is the tier that chose running job j for preemption, 0
// when none did.
func (j *Job) PreemptedBy() policy.Priority {
	if j.Running == nil || j.preemptBy == nil {
		return 0
	}
	return j.preemptBy.p
}
