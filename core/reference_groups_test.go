package core

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fairsched/fairsched/policy"
)

// The reference's groups, written from issue 3 as naively as the rest of
// refScheduler: nothing is kept incrementally. Demand and running counts
// are recounted from the job lists, the allocation is computed from scratch
// by policy.AllocateSlots at every dispatch pass (the core recomputes it
// only when a group's demand crosses what it holds, and after weight
// changes, pauses and resumes: the comparison checks that this is enough),
// and a job's aging clock subtracts the pauses of its group that overlap
// its wait, interval by interval.
//
//	demand(g)  = pending(g) + running(g), 0 while g is paused
//	alloc      = AllocateSlots(MaxConcurrency, groups with demand > 0, by name)
//	g admits j iff running(g) < alloc(g) and (limit(g) = 0 or running(g) < limit(g)),
//	           or j is urgent (effective ≥ UrgentThreshold > 0) and
//	           (limit(g) = 0 or running(g) < limit(g))
//	waited(j)  = now − submitted(j) − |pauses of g ∩ [submitted(j), now]|

// refPause is one ended pause of a group.
type refPause struct{ from, to time.Time }

func (r *refScheduler) paused(g string) bool {
	_, ok := r.pausedAt[g]
	return ok
}

// pausedDuring returns how long group g was paused within [from, to].
func (r *refScheduler) pausedDuring(g string, from, to time.Time) time.Duration {
	ps := r.pauses[g]
	if at, ok := r.pausedAt[g]; ok {
		ps = append(slices.Clip(ps), refPause{at, to})
	}
	var d time.Duration
	for _, p := range ps {
		lo, hi := p.from, p.to
		if lo.Before(from) {
			lo = from
		}
		if hi.After(to) {
			hi = to
		}
		if hi.After(lo) {
			d += hi.Sub(lo)
		}
	}
	return d
}

func (r *refScheduler) groupRunning(g string) int {
	return r.countRunning(func(o *refJob) bool { return o.group == g })
}

func (r *refScheduler) groupPending(g string) int {
	n := 0
	for _, o := range r.pending {
		if o.group == g {
			n++
		}
	}
	return n
}

func (r *refScheduler) demand(g string) int {
	if r.paused(g) {
		return 0
	}
	return r.groupPending(g) + r.groupRunning(g)
}

// groupNames returns the groups that have jobs or are paused, by name.
func (r *refScheduler) groupNames() []string {
	var names []string
	for _, js := range [][]*refJob{r.pending, r.running} {
		for _, j := range js {
			names = append(names, j.group)
		}
	}
	for g := range r.pausedAt {
		names = append(names, g)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// allocation splits the global cap among the groups with demand; nil
// without group weights.
func (r *refScheduler) allocation() map[string]int {
	if r.groups == nil {
		return nil
	}
	var shares []policy.GroupShare
	for _, g := range r.groupNames() {
		if d := r.demand(g); d > 0 {
			cfg := r.groups.Config(g)
			shares = append(shares, policy.GroupShare{Name: g, Weight: cfg.Weight, MinSlots: cfg.MinSlots, Limit: cfg.Limit, Demand: d})
		}
	}
	alloc := map[string]int{}
	for i, n := range policy.AllocateSlots(r.max, shares) {
		alloc[shares[i].Name] = n
	}
	return alloc
}

// groupBlocks reports whether j's group keeps it waiting.
func (r *refScheduler) groupBlocks(j *refJob, now time.Time, alloc map[string]int) bool {
	if r.groups == nil {
		return false
	}
	running, limit := r.groupRunning(j.group), r.groups.Config(j.group).Limit
	underLimit := limit == 0 || running < limit
	if (r.lending || running < alloc[j.group]) && underLimit {
		return false
	}
	if r.aging != nil && r.aging.UrgentThreshold > 0 && r.effective(j, now) >= r.aging.UrgentThreshold {
		return !underLimit
	}
	return true
}

var errRef = errors.New("refused")

func (r *refScheduler) pause(now time.Time, g string) error {
	if g == "" {
		return errRef
	}
	if !r.paused(g) {
		r.pausedAt[g] = now
	}
	return nil
}

func (r *refScheduler) resume(now time.Time, g string) error {
	if g == "" {
		return errRef
	}
	if at, ok := r.pausedAt[g]; ok {
		r.pauses[g] = append(r.pauses[g], refPause{at, now})
		delete(r.pausedAt, g)
	}
	return nil
}

// setGroupWeight: 0 restores the default weight, below 0 is refused.
func (r *refScheduler) setGroupWeight(g string, weight int) error {
	if r.groups == nil || weight < 0 {
		return errRef
	}
	cfg := r.groups.Config(g)
	cfg.Weight = weight
	if weight == 0 {
		cfg.Weight = r.groups.DefaultWeight
	}
	r.groups.Groups[g] = cfg
	return nil
}

func (r *refScheduler) resetGroupWeights() error {
	if r.groups == nil {
		return errRef
	}
	for g, cfg := range r.groups.Groups {
		cfg.Weight = r.groups.DefaultWeight
		r.groups.Groups[g] = cfg
	}
	return nil
}

// groupSnapshots lists the groups with jobs, paused or holding slots, by
// name; "" only with group weights; nil when there is none.
func (r *refScheduler) groupSnapshots() []GroupSnapshot {
	alloc := r.allocation()
	var out []GroupSnapshot
	for _, g := range r.groupNames() {
		gs := GroupSnapshot{Name: g, Allocation: alloc[g], Running: r.groupRunning(g), Pending: r.groupPending(g), Paused: r.paused(g)}
		if gs.Running+gs.Pending == 0 && !gs.Paused && gs.Allocation == 0 || g == "" && r.groups == nil {
			continue
		}
		if r.groups != nil {
			cfg := r.groups.Config(g)
			gs.Weight, gs.MinSlots, gs.Limit = cfg.Weight, cfg.MinSlots, cfg.Limit
		}
		out = append(out, gs)
	}
	return out
}

// refGroupNames are the groups jobs draw from ("" is no group, drawn more
// often); refPauseNames those the runs pause, resume and reweight: g4 never
// has jobs, "" may not be paused.
var (
	refGroupNames = []string{"", "", "g1", "g1", "g2", "g3"}
	refPauseNames = []string{"g1", "g2", "g3", "g3", "g4", ""}
)

// randomGroups returns group settings for capacity max: weights 1 to 4,
// some minimums, some limits, some groups left at the default weight.
func randomGroups(rng *rand.Rand, max int) *policy.GroupsConfig {
	gc := &policy.GroupsConfig{DefaultWeight: 1 + rng.IntN(4)/3, Groups: map[string]policy.GroupConfig{}}
	mins := 0
	for _, g := range []string{"g1", "g2", "g3", ""} {
		if rng.IntN(4) == 0 {
			continue // the default weight
		}
		cfg := policy.GroupConfig{Weight: 1 + rng.IntN(4)}
		if rng.IntN(2) == 0 {
			cfg.Limit = 1 + rng.IntN(3)
		}
		if rng.IntN(3) == 0 && mins < max {
			cfg.MinSlots = 1 + rng.IntN(min(2, max-mins))
			if cfg.Limit > 0 {
				cfg.MinSlots = min(cfg.MinSlots, cfg.Limit)
			}
			mins += cfg.MinSlots
		}
		gc.Groups[g] = cfg
	}
	return gc
}

// allocOp is what the last operation was, for the reasons of the
// allocation changes it caused.
type allocOp struct {
	kind  string // "weight", "pause" (every change a rebalance), "event" (a job of group came or went), "bulk"
	group string
}

// groupOp runs one runtime group operation on both sides: a pause, a
// resume, a weight change (valid or not) or a reset of the weights.
func (run *refRun) groupOp(op int) {
	r := run.rng
	g := refPauseNames[r.IntN(len(refPauseNames))]
	var want, got error
	switch x := r.IntN(100); {
	case x < 20:
		run.logf("pause %q", g)
		want, got = run.ref.pause(run.now, g), run.c.PauseGroup(run.now, g)
		run.allocOp = allocOp{kind: "pause"}
		run.stats.pauses++
	case x < 60:
		run.logf("resume %q", g)
		want, got = run.ref.resume(run.now, g), run.c.ResumeGroup(run.now, g)
		run.allocOp = allocOp{kind: "pause"}
	case x < 92:
		w := r.IntN(8) - 3 // -3 to 4: below 0 is refused, 0 is the default
		run.logf("set weight %q %d", g, w)
		want, got = run.ref.setGroupWeight(g, w), run.c.SetGroupWeight(run.now, g, w)
		run.allocOp = allocOp{kind: "weight"}
		if want != nil {
			run.stats.invalidWeights++
		} else {
			run.stats.weightChanges++
		}
	default:
		run.logf("reset weights")
		want, got = run.ref.resetGroupWeights(), run.c.ResetGroupWeights(run.now)
		run.allocOp = allocOp{kind: "weight"}
	}
	if (want == nil) != (got == nil) {
		run.fail(op, "core returned error %v, want error: %v", got, want != nil)
	}
	if got != nil && !errors.Is(got, policy.ErrInvalidConfig) {
		run.fail(op, "error %v does not wrap ErrInvalidConfig", got)
	}
	// The settings after the call, refused or not, are the reference's.
	if w, g := run.ref.groups, run.c.limits.Groups; (w == nil) != (g == nil) ||
		w != nil && (w.DefaultWeight != g.DefaultWeight || !maps.Equal(w.Groups, g.Groups)) {
		run.fail(op, "group settings %+v, want %+v", g, w)
	}
}

// checkGroups compares after every operation each group's allocation in the
// core with the reference's, computed from scratch, and the allocation
// changes the core reported with the difference.
func (run *refRun) checkGroups(op int) {
	want := run.ref.allocation()
	for name, g := range run.c.groups {
		if g.alloc != want[name] {
			run.fail(op, "group %q holds %d slots, want %d (all: %v)", name, g.alloc, want[name], want)
		}
	}
	for name, n := range want {
		if g := run.c.groups[name]; g == nil && n > 0 {
			run.fail(op, "group %q unknown to the core, want %d slots", name, n)
		}
	}
	for _, ch := range run.c.TakeAllocationChanges() {
		run.stats.allocChanges++
		if prev := run.reported[ch.Group]; ch.Previous != prev {
			run.fail(op, "allocation change %+v: previous %d reported before", ch, prev)
		}
		run.reported[ch.Group] = ch.New
		var why string
		switch a := run.allocOp; a.kind {
		case "weight":
			why = AllocWeightChange
		case "pause":
			why = AllocRebalance
		case "event":
			// The operation's group, or one a denial emptied, drains to 0.
			why = AllocRebalance
			if ch.New == 0 && (run.ref.demand(ch.Group) == 0 && (ch.Group == a.group || run.deniedGroups[ch.Group]) || run.requeuedGroups[ch.Group]) {
				why = AllocGroupDrained
			}
		default:
			if ch.Reason == AllocGroupDrained {
				why = ch.Reason
			} else {
				why = AllocRebalance
			}
		}
		// A denial in the operation's dispatch is a demand change of its
		// own: it may rebalance or drain groups after the operation did.
		denialMoved := len(run.deniedGroups) > 0 && (ch.Reason == AllocRebalance ||
			ch.Reason == AllocGroupDrained && ch.New == 0 && run.deniedGroups[ch.Group])
		if ch.Reason != why && !denialMoved {
			run.fail(op, "allocation change %+v after a %q operation: reason %q, want %q", ch, run.allocOp.kind, ch.Reason, why)
		}
	}
	for name, n := range run.reported {
		if n != want[name] {
			run.fail(op, "allocation changes add up to %d slots for group %q, want %d", n, name, want[name])
		}
	}
	run.allocOp = allocOp{kind: "bulk"}
	clear(run.deniedGroups)
	clear(run.requeuedGroups)
}

// checkGroupStats requires the grouped runs to exercise what they check:
// pauses, refused weight changes and, with group weights, jobs held by
// their group's allocation, weight changes, allocation changes, and urgent
// jobs borrowing slots (only with an urgent threshold).
func checkGroupStats(t *testing.T, o refOptions, stats *refStats) {
	t.Helper()
	if stats.reasons[policy.ReasonPaused] == 0 || stats.pauses == 0 {
		t.Error("no pending job ever waited for its paused group")
	}
	if stats.invalidWeights == 0 {
		t.Error("no SetGroupWeight was refused")
	}
	if o.groups == nil {
		if stats.weightChanges != 0 || stats.allocChanges != 0 || stats.borrowed != 0 || stats.reasons[policy.ReasonGroupLimit] != 0 {
			t.Errorf("group weights at work though none are configured: %+v", *stats)
		}
		return
	}
	if stats.reasons[policy.ReasonGroupLimit] == 0 {
		t.Error("no pending job ever waited for its group's allocation")
	}
	if stats.lent == 0 {
		t.Error("no group ever ran past its allocation while the others could use no slot")
	}
	if stats.allocChanges == 0 || stats.weightChanges == 0 {
		t.Errorf("no allocation change or no weight change: %+v", *stats)
	}
	urgent := o.aging != nil && o.aging.UrgentThreshold > 0
	if urgent && stats.borrowed == 0 {
		t.Error("no urgent job ever borrowed a slot past its group's allocation")
	}
	if !urgent && stats.borrowed != 0 {
		t.Errorf("%d jobs borrowed a slot past their group's allocation without an urgent threshold", stats.borrowed)
	}
}

// groupState describes the groups on both sides, for failures.
func (run *refRun) groupState() string {
	if !run.grouped {
		return ""
	}
	var b strings.Builder
	alloc := run.ref.allocation()
	for _, g := range run.ref.groupNames() {
		var cfg policy.GroupConfig
		if run.ref.groups != nil {
			cfg = run.ref.groups.Config(g)
		}
		fmt.Fprintf(&b, "  ref group %q: alloc %d running %d pending %d paused %v %+v\n", g, alloc[g],
			run.ref.groupRunning(g), run.ref.groupPending(g), run.ref.paused(g), cfg)
	}
	names := slices.Sorted(maps.Keys(run.c.groups))
	for _, name := range names {
		g := run.c.groups[name]
		fmt.Fprintf(&b, "  core group %q: alloc %d running %d pending %d paused %v\n", name, g.alloc,
			g.running, g.pending, g.q.Paused())
	}
	for _, j := range run.ref.running {
		fmt.Fprintf(&b, "  running #%d %s/%s group %q\n", j.seq, j.typ, j.id, j.group)
	}
	return b.String()
}
