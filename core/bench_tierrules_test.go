package core

import (
	"testing"
	"time"

	"github.com/fairsched/fairsched/policy"
)

// BenchmarkCoreTierRules is the decision's cost with the tier rules on —
// the upper tier's starvation window over the lower one and a preemption
// budget — against the same steady state without them (x-vs-off). The
// harness's types are not preemptible, so this is the window's cost and
// the budget's bookkeeping: a preemption itself is a cancel.
func BenchmarkCoreTierRules(b *testing.B) {
	defer dropCache()
	for _, f := range []struct {
		name  string
		limit func(*policy.Limits)
	}{
		{"off", func(*policy.Limits) {}},
		{"window+budget", func(l *policy.Limits) {
			l.Tiers = map[policy.Priority]policy.TierConfig{
				48: {StarvationWindow: 50 * time.Millisecond, Preempt: &policy.PreemptBudget{Max: 1, Window: time.Second}},
			}
		}},
	} {
		name := "keys=10000/" + f.name
		b.Run(name, func(b *testing.B) {
			newEngine := func(maxConcurrency int) engine {
				l := policy.DefaultLimits()
				l.MaxConcurrency = maxConcurrency
				f.limit(&l)
				return New(l)
			}
			h := cachedHarness("tierrules/"+name, 100_000, 10_000, 0, newEngine)
			b.ReportAllocs()
			for b.Loop() {
				h.step()
			}
			h.check(b, 100_000)
			ns := book.Record(b, "tierrules/"+name)
			if base := book.Median("tierrules/keys=10000/off"); f.name != "off" && base > 0 {
				b.ReportMetric(ns/base, "x-vs-off")
			}
		})
	}
}
