package core

import (
	"cmp"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/fairsched/fairsched/policy"
)

// The tier rules in the reference, written out plainly: every decision
// recomputed from the pending and running lists.
//
//	starvation window w of tier p: when the job to admit is of tier p and a
//	lower tier q has pending jobs and has gone w without an admission
//	(since its last admission, or since it last started to have pending
//	jobs, whichever is later; the earliest such q, the lowest on a tie),
//	admit instead q's first job in dispatch order that may start (a job
//	of q passed over that waits only on its tokens has had its turn: its
//	scope waits for them, as in dispatch).
//
//	preemption, after each dispatch, for each preempting tier p, highest
//	first, with no victim of its own still running: take p's first job in
//	dispatch order that waits on nothing but the slots (the global cap or
//	a tier limit) — a job passed over that waits only on its tokens besides
//	has had its turn: its scope waits for them, as in dispatch; among the
//	running jobs below p of preemptible types not chosen already, of an
//	effective priority below the job's (else, waiting again, it could take
//	the slot back), those whose absence (the job waiting again) would let
//	it start; of them the lowest tier, then the latest admitted; chosen if
//	fewer than Max preemptions of p fall within the last Window.
type refRules struct {
	preempt map[policy.Priority]policy.PreemptBudget
	windows map[policy.Priority]time.Duration
	// used are each preempting tier's preemption times; victim its
	// victim still running.
	used   map[policy.Priority][]time.Time
	victim map[policy.Priority]*refJob
	// lastAdmit and workSince per tier: its last admission, and when it
	// last went from no pending job to one.
	lastAdmit, workSince map[policy.Priority]time.Time
	chosen               []*refJob // victims of the last dispatch
	// starvedAdmits counts the admissions a window gave: a job it picked
	// that the admission policy then defers or denies is not one.
	starvedAdmits int
	picked        *refJob
}

func newRefRules(tiers map[policy.Priority]policy.TierConfig) *refRules {
	r := &refRules{preempt: map[policy.Priority]policy.PreemptBudget{}, windows: map[policy.Priority]time.Duration{},
		used: map[policy.Priority][]time.Time{}, victim: map[policy.Priority]*refJob{},
		lastAdmit: map[policy.Priority]time.Time{}, workSince: map[policy.Priority]time.Time{}}
	for p, t := range tiers {
		if t.Preempt != nil {
			r.preempt[p] = *t.Preempt
		}
		if t.StarvationWindow > 0 {
			r.windows[p] = t.StarvationWindow
		}
	}
	if len(r.preempt)+len(r.windows) == 0 {
		return nil
	}
	return r
}

// arrives notes that j joins the pending jobs at now.
func (r *refScheduler) arrives(now time.Time, j *refJob) {
	if r.rules != nil && !slices.ContainsFunc(r.pending, func(o *refJob) bool { return o.prio == j.prio }) {
		r.rules.workSince[j.prio] = now
	}
}

// starvedFirst returns the job to admit instead of next, or next.
func (r *refScheduler) starvedFirst(now time.Time, next *refJob, alloc map[string]int) *refJob {
	r.rules.picked = nil
	w, ok := r.rules.windows[next.prio]
	if !ok {
		return next
	}
	var tiers []policy.Priority
	for _, j := range r.pending {
		if j.prio < next.prio && !slices.Contains(tiers, j.prio) {
			tiers = append(tiers, j.prio)
		}
	}
	slices.Sort(tiers)
	var starved *policy.Priority
	var since time.Time
	for _, q := range tiers {
		s := r.rules.lastAdmit[q]
		if ws := r.rules.workSince[q]; ws.After(s) {
			s = ws
		}
		if now.Sub(s) >= w && (starved == nil || s.Before(since)) {
			starved, since = &q, s
		}
	}
	if starved == nil {
		return next
	}
	for _, j := range r.sorted(now) {
		if j.prio != *starved {
			continue
		}
		reasons := r.blockers(j, now, alloc)
		if len(reasons) == 0 {
			r.rules.picked = j
			return j
		}
		if len(reasons) == 1 && reasons[0] == policy.ReasonRateLimited {
			r.blockBucket(j, now) // its turn came, as in dispatch
		}
	}
	return next
}

// admitting counts j's admission if a starvation window picked it.
func (r *refScheduler) admitting(j *refJob) {
	if r.rules != nil && r.rules.picked == j {
		r.rules.starvedAdmits++
	}
}

// preempt chooses the victims of the preempting tiers (r.rules.chosen).
func (r *refScheduler) preempt(now time.Time) {
	for _, p := range slices.Backward(slices.Sorted(maps.Keys(r.rules.preempt))) {
		if r.rules.victim[p] != nil {
			continue
		}
		cand := r.slotsOnly(now, p)
		if cand == nil {
			continue
		}
		var victim *refJob
		for _, v := range r.running {
			if v.prio >= p || !r.types[v.typ].Preemptible || v.onDemand || r.isVictim(v) || r.effective(v, now) >= r.effective(cand, now) || !r.freedBy(now, cand, v) {
				continue
			}
			if victim == nil || v.prio <= victim.prio {
				victim = v // running is in admission order: the latest wins ties
			}
		}
		if victim == nil {
			continue
		}
		b, recent := r.rules.preempt[p], 0
		for _, t := range r.rules.used[p] {
			if t.After(now.Add(-b.Window)) {
				recent++
			}
		}
		if recent >= b.Max {
			continue
		}
		r.rules.used[p] = append(r.rules.used[p], now)
		r.rules.victim[p] = victim
		r.rules.chosen = append(r.rules.chosen, victim)
	}
}

// slotsOnly returns tier p's first pending job in dispatch order that
// waits on nothing but the global cap or a tier limit.
func (r *refScheduler) slotsOnly(now time.Time, p policy.Priority) *refJob {
	alloc := r.allocation()
	for _, j := range r.sorted(now) {
		if j.prio != p {
			continue
		}
		others := slices.DeleteFunc(r.blockers(j, now, alloc), func(x policy.Reason) bool {
			return x == policy.ReasonGlobalLimit || x == policy.ReasonTierLimit
		})
		switch {
		case len(others) == 0:
			return j
		case len(others) == 1 && others[0] == policy.ReasonRateLimited:
			r.blockBucket(j, now) // its turn came, as in dispatch: its scope waits
		}
	}
	return nil
}

// freedBy reports whether cand could start if v were not running but
// waiting again.
func (r *refScheduler) freedBy(now time.Time, cand, v *refJob) bool {
	running, pending := r.running, r.pending
	defer func() { r.running, r.pending = running, pending }()
	r.running = slices.DeleteFunc(slices.Clone(running), func(o *refJob) bool { return o == v })
	r.pending = append(slices.Clone(pending), v)
	return len(r.blockers(cand, now, r.allocation())) == 0
}

func (r *refScheduler) isVictim(j *refJob) bool {
	for _, v := range r.rules.victim {
		if v == j {
			return true
		}
	}
	return false
}

// preemptedEnd ends victim j's preemption, reporting whether it was one.
func (r *refScheduler) preemptedEnd(j *refJob) bool {
	if r.rules == nil {
		return false
	}
	for p, v := range r.rules.victim {
		if v == j {
			delete(r.rules.victim, p)
			return true
		}
	}
	return false
}

// requeue returns preempted job j to the pending jobs at now: its key
// becomes active again as on a submission, the job keeps its arrival.
func (r *refScheduler) requeue(now time.Time, j *refJob) {
	if r.jobs[j.key] == 0 {
		if m, ok := r.activeMin(); ok {
			r.lastMin = m
		}
		r.acc[j.key] = max(r.acc[j.key], r.lastMin)
		r.stagger(j.key, j.typ)
	}
	r.jobs[j.key]++
	r.keyUsed[j.key] = now
	r.arrives(now, j)
	i, _ := slices.BinarySearchFunc(r.pending, j.seq, func(o *refJob, seq uint64) int { return cmp.Compare(o.seq, seq) })
	r.pending = slices.Insert(r.pending, i, j) // the list stays in arrival order
}

// refTierRules configures the tier rules of a seed over the reference's
// tiers (4, 3, 2): tier 4 preempts, tiers 4 and 3 may have windows, tier 2
// types (and snap, tier 3, on some seeds) are preemptible.
func refTierRules(rng *rand.Rand, tiers map[policy.Priority]policy.TierConfig) map[policy.Priority]policy.TierConfig {
	if tiers == nil {
		tiers = map[policy.Priority]policy.TierConfig{}
	}
	t4 := tiers[4]
	t4.Preempt = &policy.PreemptBudget{Max: 1 + rng.IntN(3), Window: time.Duration(1+rng.IntN(8)) * time.Millisecond}
	if rng.IntN(2) == 0 {
		t4.StarvationWindow = time.Duration(1+rng.IntN(6)) * time.Millisecond
	}
	tiers[4] = t4
	if rng.IntN(2) == 0 {
		t3 := tiers[3]
		t3.StarvationWindow = time.Duration(1+rng.IntN(6)) * time.Millisecond
		tiers[3] = t3
	}
	return tiers
}

// comparePreempted checks the victims the last dispatch chose.
func (run *refRun) comparePreempted(op int) {
	var got, want []uint64
	for _, j := range run.c.TakePreempted() {
		got = append(got, j.Seq)
	}
	if run.ref.rules != nil {
		for _, j := range run.ref.rules.chosen {
			want = append(want, j.seq)
		}
		run.ref.rules.chosen = run.ref.rules.chosen[:0]
	}
	run.logf("preempted %v", want)
	if !slices.Equal(got, want) {
		run.fail(op, "preempted (ref %v, core %v)", want, got)
	}
	run.stats.preempted += len(got)
	if run.ref.rules == nil {
		return
	}
	preemptions, windowed := run.c.TierRuleCounts()
	used := 0
	for _, ts := range run.ref.rules.used {
		used += len(ts)
	}
	if int(preemptions) != used || int(windowed) != run.ref.rules.starvedAdmits {
		run.fail(op, "TierRuleCounts = %d preemptions, %d window admissions; the reference %d, %d",
			preemptions, windowed, used, run.ref.rules.starvedAdmits)
	}
	run.stats.starved = max(run.stats.starved, windowed) // some seed had one
}

// requeuePreempted returns rj, which just finished, to both queues if it
// was a victim (Completion.Preempted, compared already).
func (run *refRun) requeuePreempted(rj *refJob, done Completion) {
	if !done.Preempted {
		return
	}
	run.logf("requeue #%d", rj.seq)
	if run.requeuedGroups == nil {
		run.requeuedGroups = map[string]bool{}
	}
	// Its end drained the group for an instant only if nothing else of
	// the group runs or waits.
	run.requeuedGroups[rj.group] = run.requeuedGroups[rj.group] || run.ref.demand(rj.group) == 0
	run.c.Requeue(run.now, run.jobs[rj.seq])
	run.ref.requeue(run.now, rj)
}
