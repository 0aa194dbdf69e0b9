package invariant

import (
	"time"

	"github.com/fairsched/fairsched"
)

// tierRules gives aging mode's configuration c, on half the seeds, a
// starvation window of the stream's tier ph instead of aging, and on half
// of those a preemption budget over the low-priority type, which becomes
// preemptible. Drawn last, so that the seeds that keep aging play as
// before.
func (g *gen) tierRules(c *config, ph fairsched.Priority) {
	if !g.chance(0.5) {
		return
	}
	c.aging = nil
	c.window = g.ticks(4, 40)
	t := fairsched.TierConfig{StarvationWindow: c.window}
	if g.chance(0.5) {
		t.Preempt = &fairsched.PreemptBudget{Max: 1 + g.intn(2), Window: g.ticks(10, 80)}
		c.preempt = t.Preempt
		c.types[1].cfg.Preemptible = true
	}
	c.tiers = map[fairsched.Priority]fairsched.TierConfig{ph: t}
}

// waitBound is the longest a job of type t may wait for its first start
// in aging mode: MaxWait(base) plus one job duration with aging; the
// starvation window plus one job duration for the low-priority type with
// a window (the stream's own jobs have no bound then). ok is false when t
// has no bound.
func (c *config) waitBound(t *typeSpec) (bound time.Duration, ok bool) {
	switch {
	case c.mode != Aging:
		return 0, false
	case c.aging != nil:
		return c.aging.MaxWait(t.cfg.Priority) + c.dmax, true
	case t.name == "lo":
		return c.window + c.dmax, true
	}
	return 0, false
}

// preemptedAttempt takes back the count of attempt a, which a higher tier
// preempted: the job's next start makes the same attempt again.
func (sm *sim) preemptedAttempt(a *attempt) {
	if a.job == nil {
		sm.violate("%s was preempted: periodic work is never preemptible here", a.name())
		return
	}
	if !a.typ.cfg.Preemptible {
		sm.violate("%s was preempted, but its type is not preemptible", a.name())
	}
	a.job.attempts--
	a.job.preempted++
}

// preemptedEvent checks a JobPreempted event against the budget: no more
// than Max preemptions within any Window.
func (sm *sim) preemptedEvent(e fairsched.JobPreempted) {
	sm.res.Preemptions++
	b := sm.cfg.preempt
	if b == nil {
		sm.violate("%s/%s was preempted, but no tier preempts", e.Type, e.ID)
		return
	}
	sm.preemptions = append(sm.preemptions, e.Time)
	if n := len(sm.preemptions); n > b.Max {
		if first := sm.preemptions[n-1-b.Max]; e.Time.Sub(first) < b.Window {
			sm.violate("%s/%s preempted at %v: %d preemptions since %v, within the budget's window %v (Max %d)",
				e.Type, e.ID, e.Time.Sub(sm.t0), b.Max+1, first.Sub(sm.t0), b.Window, b.Max)
		}
	}
}
