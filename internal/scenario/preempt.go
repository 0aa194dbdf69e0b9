package scenario

import (
	"fmt"
	"slices"
	"time"

	"github.com/fairsched/fairsched"
)

// TierRules: spec 5's P1 "cannot starve P2 for more than the configured
// window" and P0 "can preempt other tiers for short windows only". Four
// slots, kept busy by P1 copilot jobs of 8 s (one arrives every 2 s, one
// slot frees every 2 s); P2 backfills (preemptible) wait behind them.
// P1's starvation window of 5 s gives P2 the first slot that frees once
// 5 s have passed since P2's last admission (or since its work arrived):
// within the window plus one slot's turnover. At T=7 two P0 incidents
// arrive to full slots: the first preempts the running backfill — the
// only preemptible job — and starts at once, the backfill going back to
// the head of its lane; the second finds P0's budget (1 preemption per
// 10 s) spent and waits for the next slot that frees, like any job.
func TierRules() Scenario {
	sc := Scenario{Name: "27-tier-rules", Title: "P1 cannot starve P2 past its 5 s window; a P0 incident preempts a backfill within its budget",
		MaxConcurrency: 4,
		Types: []Type{
			{Incident, fairsched.JobTypeConfig{DefaultCost: 2 * time.Second, Priority: 30}},
			{Copilot, fairsched.JobTypeConfig{DefaultCost: 8 * time.Second, Priority: 20}},
			{Backfill, fairsched.JobTypeConfig{DefaultCost: 3 * time.Second, Priority: 10, Preemptible: true}},
		},
		Tiers: map[fairsched.Priority]fairsched.TierConfig{
			30: {Preempt: &fairsched.PreemptBudget{Max: 1, Window: 10 * time.Second}},
			20: {StarvationWindow: 5 * time.Second},
		}}
	for _, p := range []fairsched.Priority{30, 20} {
		sc.Options = append(sc.Options, fairsched.WithTier(p, sc.Tiers[p]))
	}
	for i, d := range []int{2, 4, 6, 8, 8} { // staggered: one slot frees every 2 s
		sc.Jobs = append(sc.Jobs, Job{Type: Copilot, ID: fmt.Sprintf("c0%c", 'a'+i), Arrival: 0, Duration: d})
	}
	for t := 2; t <= 24; t += 2 {
		sc.Jobs = append(sc.Jobs, Job{Type: Copilot, ID: fmt.Sprintf("c%02d", t), Arrival: t, Duration: 8})
	}
	for i := range 3 {
		sc.Jobs = append(sc.Jobs, Job{Type: Backfill, ID: fmt.Sprintf("b%d", i+1), Arrival: 0, Duration: 3})
	}
	sc.Jobs = append(sc.Jobs, Job{Type: Incident, ID: "i1", Arrival: 7, Duration: 2}, Job{Type: Incident, ID: "i2", Arrival: 7, Duration: 2})
	return sc
}

// tierRules checks TierRules' promises: P2 admitted within its window plus
// one slot's turnover (2 s) of its work arriving and of each admission
// while copilots wait; the preemption, and the incident past the budget
// waiting.
func tierRules(res Result) []string {
	var p2 []int
	preempted := ""
	for _, e := range res.Timeline {
		switch {
		case e.Kind == "admit" && e.Base == 10:
			p2 = append(p2, e.T)
		case e.Kind == "preempt":
			preempted += fmt.Sprintf(" %s at T=%d", e.Job, e.T)
		}
	}
	gaps := slices.Clone(p2)
	for i := len(gaps) - 1; i > 0; i-- {
		gaps[i] -= gaps[i-1]
	}
	ok := len(p2) == 4 && slices.Max(gaps) <= 5+2
	return []string{
		verdict(ok, "P2 admitted at T=%v (b1 twice: preempted once): its first within 5 s + 2 s of its arrival, then each within 5 s + 2 s of the last", p2),
		verdict(preempted == " p2-backfill(b1) at T=7" && res.Start["p0-incident(i1)"] == 7,
			"the first incident preempted%s and started at once (T=%d)", preempted, res.Start["p0-incident(i1)"]),
		verdict(res.Start["p0-incident(i2)"] == 8,
			"the second found P0's budget spent and took the next slot that freed (T=%d)", res.Start["p0-incident(i2)"]),
	}
}
