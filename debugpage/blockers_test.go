package debugpage

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
)

// TestPendingRowNamesBlockerETAAndHistory: a pending row says what holds
// the job, when it is expected to start and what it has waited on.
func TestPendingRowNamesBlockerETAAndHistory(t *testing.T) {
	now := time.Date(2026, 11, 28, 9, 0, 30, 0, time.UTC)
	alice, tier := "alice", fairsched.Priority(8)
	snap := fairsched.Snapshot{Time: now, PendingTotal: 2, Pending: []fairsched.PendingJob{
		{Type: "edit", ID: "a", FairnessKey: "bob", Submitted: now.Add(-20 * time.Second), Reason: fairsched.ReasonConflict,
			Reasons:  []fairsched.Reason{fairsched.ReasonConflict},
			Blockers: []fairsched.Blocker{{Reason: fairsched.ReasonConflict, Type: "edit", ID: "a", Key: &alice, Running: 1}},
			Estimate: &fairsched.StartEstimate{At: now.Add(5 * time.Second), Ahead: 2},
			History: []fairsched.WaitNote{{Reason: fairsched.ReasonGlobalLimit, Since: now.Add(-20 * time.Second)},
				{Reason: fairsched.ReasonConflict, Since: now.Add(-4 * time.Second)}}},
		{Type: "mail", ID: "m", Submitted: now, Reason: fairsched.ReasonTierLimit, Reasons: []fairsched.Reason{fairsched.ReasonTierLimit},
			Blockers: []fairsched.Blocker{{Reason: fairsched.ReasonTierLimit, Tier: &tier, Running: 3}},
			Estimate: &fairsched.StartEstimate{At: now.Add(3 * time.Minute), Bounded: true}},
	}}
	v := newView(snap, config{title: "t", maxRows: DefaultMaxRows})
	var got [][3]string
	for _, r := range v.PendingRows {
		got = append(got, [3]string{r.HeldBy, r.Starts, r.History})
	}
	want := [][3]string{
		{"edit a (alice)", "in ~5s", reasonLabel(fairsched.ReasonGlobalLimit) + " 20s ago → " + reasonLabel(fairsched.ReasonConflict) + " 4s ago"},
		{"tier 8: 3 slots", "in ≥ 3m", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pending rows' blocker, start, history (-want +got):\n%s", diff)
	}
}
