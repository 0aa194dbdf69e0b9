package metrics

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/benbjohnson/clock"

	"github.com/fairsched/fairsched"
)

// TestPoliciesApplied: each applied policy counts under its version; a
// refused one does not count.
func TestPoliciesApplied(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, fairsched.WithClock(clock.NewMock()), fairsched.WithMaxConcurrency(2))
		c := collectorOf(t, s)
		ctx := context.Background()
		for _, v := range []string{"v1", "v2", "v2"} {
			if err := s.ApplyPolicy(ctx, fairsched.Policy{Version: v}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.ApplyPolicy(ctx, fairsched.Policy{Version: "bad", MaxConcurrency: -1}); err == nil {
			t.Fatal("a negative cap applied")
		}
		synctest.Wait()
		compare(t, c, `
fairsched_policies_applied_total{version="v1"} 1
fairsched_policies_applied_total{version="v2"} 2
`, "fairsched_policies_applied_total")
	})
}
