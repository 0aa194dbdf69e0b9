package policy_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/policy"
)

// TestAtTier: a job a workload rule puts in tier 5 counts against tier 5's
// cap and its type's cap, not against its type's tier; its slot is made
// once, and its cap follows the tiers replaced live.
func TestAtTier(t *testing.T) {
	u := policy.NewUsage(10)
	base := u.Slot("task", policy.JobTypeConfig{Priority: 3, DefaultCost: time.Second, MaxConcurrency: 3})
	vip := u.AtTier(base, 5)
	if again := u.AtTier(vip, 5); again != vip {
		t.Error("AtTier made a second slot for the same tier")
	}
	if same := u.AtTier(vip, 3); same != base {
		t.Error("AtTier of the type's own priority is not its own slot")
	}
	type state struct {
		Blocker       policy.Reason
		ByTier        map[policy.Priority]int
		Type          int
		VipPriority   policy.Priority
		BasePriority  policy.Priority
		TypeFullAtVip bool
	}
	look := func() state {
		return state{u.Blocker(vip, "x"), u.ByTier(), u.TypeRunning("task"), vip.Config.Priority, base.Config.Priority, vip.TypeFull()}
	}
	for range 5 { // tier 5's cap is its value, 5
		u.Start(vip, "v")
	}
	got := []state{look()}
	u.ReplaceTiers(map[policy.Priority]policy.TierConfig{5: {MaxRunning: 6}})
	got = append(got, look())
	u.Finish(vip, "v")
	u.Finish(vip, "v")
	u.Start(base, "n")
	got = append(got, look())
	want := []state{
		{policy.ReasonTierLimit, map[policy.Priority]int{5: 5}, 5, 5, 3, true},
		{policy.ReasonTypeLimit, map[policy.Priority]int{5: 5}, 5, 5, 3, true},
		{policy.ReasonTypeLimit, map[policy.Priority]int{3: 1, 5: 3}, 4, 5, 3, true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
