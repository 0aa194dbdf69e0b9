package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/fairsched/fairsched"
)

// The types of the policy scenario.
const (
	Interactive fairsched.JobType = "interactive"
	Batch       fairsched.JobType = "batch"
)

// tierSplit is a policy of two tiers on 10 slots: interactive (priority
// 20) reserves and is capped at share hi, batch (10) at lo.
func tierSplit(version string, hi, lo float64) fairsched.Policy {
	return fairsched.Policy{Version: version, Tiers: map[fairsched.Priority]fairsched.TierConfig{
		20: {MinShare: hi, BurstShare: hi},
		10: {MinShare: lo, BurstShare: lo},
	}}
}

// PolicyTierChange: 10 slots, interactive and batch work both flooding,
// split 80/20 by the policy the scheduler starts with. At T=4 a new policy
// (ApplyPolicy) splits them 30/70: the 8 interactive jobs running go on to
// their end at T=6 — a lower cap stops nothing — and from then on the
// queued work follows the new shares, 3 and 7 at a time.
func PolicyTierChange() Scenario {
	sc := Scenario{Name: "26-policy-tier-change", Title: "A policy applied mid-run moves the tier split from 80/20 to 30/70: running jobs finish, the queued work follows the new shares",
		MaxConcurrency: 10,
		Options:        []fairsched.Option{fairsched.WithPolicy(tierSplit("80-20", 0.8, 0.2))},
		Types: []Type{
			{Interactive, fairsched.JobTypeConfig{DefaultCost: 3 * time.Second, Priority: 20}},
			{Batch, fairsched.JobTypeConfig{DefaultCost: 3 * time.Second, Priority: 10}},
		},
		Script: map[int]func(*fairsched.Scheduler) error{
			4: func(s *fairsched.Scheduler) error {
				return s.ApplyPolicy(context.Background(), tierSplit("30-70", 0.3, 0.7))
			},
		}}
	for i := range 30 {
		sc.Jobs = append(sc.Jobs,
			Job{Type: Interactive, ID: fmt.Sprintf("i%02d", i+1), Arrival: 0, Duration: 3},
			Job{Type: Batch, ID: fmt.Sprintf("b%02d", i+1), Arrival: 0, Duration: 3})
	}
	return sc
}

// checkPolicyTierChange is the property PolicyTierChange exists to show.
func checkPolicyTierChange(sc Scenario, res Result) []string {
	at := func(step int) [2]int {
		return [2]int{typeRunning(sc, res, Interactive, step), typeRunning(sc, res, Batch, step)}
	}
	return []string{
		verdict(at(3) == [2]int{8, 2}, "T=3, under the first policy: interactive runs 8 and batch 2 (%v)", at(3)),
		verdict(at(5) == [2]int{8, 2}, "T=5, after the change at T=4: the 8 interactive jobs running were not stopped (%v)", at(5)),
		verdict(at(6) == [2]int{3, 7} && at(9) == [2]int{3, 7}, "T=6 and T=9: the queued work follows the new shares, 3 and 7 (%v, %v)", at(6), at(9)),
	}
}
