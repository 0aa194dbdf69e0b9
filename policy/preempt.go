package policy

import (
	"errors"
	"maps"
	"slices"
	"time"
)

// ErrPreempted is the cause of a running job's context when a higher tier
// preempted it (TierConfig.Preempt): the job is queued again at the head
// of its lane, the attempt not counted as a failure.
var ErrPreempted = errors.New("fairsched: job preempted by a higher tier")

// PreemptBudget bounds a tier's preemptions: at most Max in any Window
// (a sliding window). Past it the tier waits for slots like any other, so
// a flood of urgent work cannot turn into churn of the work it preempts.
type PreemptBudget struct {
	Max    int
	Window time.Duration
}

// Validate checks the budget: Max and Window positive.
func (b PreemptBudget) Validate(field string) error {
	switch {
	case b.Max <= 0:
		return InvalidConfig(field+".Max", b.Max, "must be positive (preemptions per window)")
	case b.Window <= 0:
		return InvalidConfig(field+".Window", b.Window, "must be positive")
	}
	return nil
}

// rulesOnly reports whether the tier config sets only preemption rules
// (Preempt, StarvationWindow) and no share or cap.
func (t TierConfig) rulesOnly() bool {
	return !t.shares() && t.MaxRunning == 0 && !t.LendIdle && t.HasRules()
}

// HasRules reports whether the tier preempts or guards lower tiers with a
// starvation window.
func (t TierConfig) HasRules() bool { return t.Preempt != nil || t.StarvationWindow > 0 }

func (t TierConfig) validateRules(field string) error {
	if t.StarvationWindow < 0 {
		return InvalidConfig(field+".StarvationWindow", t.StarvationWindow, "must not be negative (0 for none)")
	}
	if t.Preempt != nil {
		return t.Preempt.Validate(field + ".Preempt")
	}
	return nil
}

// cappedTiers returns the tiers that take shares or caps: tiers with only
// preemption rules keep their default cap.
func cappedTiers(tiers map[Priority]TierConfig) map[Priority]TierConfig {
	if !slices.ContainsFunc(slices.Collect(maps.Values(tiers)), TierConfig.rulesOnly) {
		return tiers
	}
	out := make(map[Priority]TierConfig, len(tiers))
	for p, t := range tiers {
		if !t.rulesOnly() {
			out[p] = t
		}
	}
	return out
}

// FreedFor reports whether one fewer running job of tier q — which would
// then wait again — would let tier p start one more job, everything else
// unchanged: tier p below its cap, and the slot freed not owed to another
// tier's reservation (q's own included, if q fell below it). waits says
// whether the job, waiting again, would count among q's waiting jobs (see
// Waiting): if not, and q waits for nothing else, a q that lends its idle
// reservation is owed none.
func (u *Usage) FreedFor(p, q Priority, waits bool) bool {
	if u.TierFull(p) || u.TierRunning(q) == 0 {
		return false
	}
	if u.shares == nil {
		return true
	}
	others := 0
	for _, e := range u.tierList {
		if e.p == p {
			continue
		}
		if e.p != q {
			others += e.owed()
			continue
		}
		if t := e.share; t != nil && (waits || t.waiting > 0 || !t.lendIdle) { // q with one job fewer
			others += max(0, t.reserved-(*e.running-1))
		}
	}
	return u.max <= 0 || u.running+others <= u.max
}
