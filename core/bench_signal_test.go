package core

import (
	"testing"
	"time"

	"github.com/fairsched/fairsched/policy"
)

// BenchmarkCoreLoadSignal measures one Finish + Submit + Dispatch at 100k
// pending jobs with a load signal (WithLoadSignal) against the core without
// one, and reports x-vs-off. With the signal, the owner's reading is taken
// as it would be — every simulated second, one each 1 000 operations — from
// the core's LoadState (the queue's length, never overloaded here: it
// measures the reading and the checks, not a held queue), and it drives an
// adaptive limit (LoadTarget), which stays at the cap.
func BenchmarkCoreLoadSignal(b *testing.B) {
	defer dropCache()
	sig := policy.QueueLength(1_000_000) // 0.1: the limit stays at the cap
	for _, f := range []struct {
		name  string
		limit func(*policy.Limits)
	}{
		{"off", func(*policy.Limits) {}},
		{"load-signal", func(l *policy.Limits) {
			l.Load = &policy.LoadConfig{Signal: sig, Every: time.Second, Threshold: 1.0, Action: policy.OverloadDefer}
			l.Adaptive = &policy.AdaptiveLimitConfig{Min: 32, Max: benchCap, Backoff: 0.9, LoadTarget: 0.95}
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
			h := cachedHarness("load/"+name, 100_000, 10_000, 0, newEngine)
			c := h.eng.(*Core)
			_, reads := c.LoadConfig()
			b.ReportAllocs()
			ops := 0
			for b.Loop() {
				if ops++; reads && ops%1000 == 0 {
					v, err := sig.Load(c.LoadState(h.now))
					c.Load(h.now, v, err == nil)
				}
				h.step()
			}
			h.check(b, 100_000)
			ns := book.Record(b, "load/"+name)
			if base := book.Median("load/keys=10000/off"); f.name != "off" && base > 0 {
				b.ReportMetric(ns/base, "x-vs-off")
			}
		})
	}
}
