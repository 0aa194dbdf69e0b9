package metrics

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/fairsched/fairsched"
)

// TestPreempted: a repack (tier 4, preemptible) holding the one slot is
// preempted by a clone (tier 8, which preempts): preempted_total counts it
// by type, tier and preempting tier, and its attempt is not a failure.
func TestPreempted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New(fairsched.WithClock(clock.NewMock()), fairsched.WithMaxConcurrency(1),
			fairsched.WithTier(8, fairsched.TierConfig{Preempt: &fairsched.PreemptBudget{Max: 1, Window: time.Minute}}))
		if err != nil {
			t.Fatal(err)
		}
		for typ, cfg := range map[fairsched.JobType]fairsched.JobTypeConfig{
			clone:  {DefaultCost: time.Second, Priority: 8},
			repack: {DefaultCost: time.Second, Priority: 4, Preemptible: true},
		} {
			if err := s.RegisterType(typ, cfg); err != nil {
				t.Fatal(err)
			}
		}
		c := collectorOf(t, s)
		first := true
		submit(t, s, repack, "r1", func(ctx context.Context) error {
			if first {
				first = false
				<-ctx.Done()
				return context.Cause(ctx)
			}
			return nil
		})
		synctest.Wait()
		submit(t, s, clone, "c1", ok)
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		c.Close()
		compare(t, c, `
fairsched_preempted_total{by="8",tier="4",type="repack"} 1
fairsched_completed_total{type="clone"} 1
fairsched_completed_total{type="repack"} 1
`, "fairsched_preempted_total", "fairsched_completed_total", "fairsched_failed_total")
	})
}
