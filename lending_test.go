package fairsched_test

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
)

// TestGroupsLendSlotsTheyCannotUse is spec 2's work conservation through
// the public API: two groups of equal weight share 4 slots, 2 each. Group a
// can use only one of its slots — its other jobs wait on its rate limit, or
// on a conflict with its own running job — so group b runs in the slot a
// cannot use instead of leaving it idle; a's allocation is unchanged, and a
// takes its slots again as soon as it can run (its token at 10 s and 20 s).
// Without lending b ran 2 at a time and finished at 40 s instead of 30 s.
func TestGroupsLendSlotsTheyCannotUse(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []fairsched.Option
		a    fairsched.JobType
		want []span
	}{
		{"rate-limited", []fairsched.Option{fairsched.WithRateLimit(fairsched.RateForGroup("a"), 0.1, 1)}, "work", []span{
			{"work/a1#a", 0, 10}, {"work/b1#b", 0, 10}, {"work/b2#b", 0, 10}, {"work/b3#b", 0, 10},
			{"work/a2#a", 10, 20}, {"work/b4#b", 10, 20}, {"work/b5#b", 10, 20}, {"work/b6#b", 10, 20},
			{"work/a3#a", 20, 30}, {"work/b7#b", 20, 30}, {"work/b8#b", 20, 30},
		}},
		{"conflict-blocked", nil, "repack", []span{
			{"repack/linux#a1", 0, 10}, {"work/b1#b", 0, 10}, {"work/b2#b", 0, 10}, {"work/b3#b", 0, 10},
			{"repack/linux#a2", 10, 20}, {"work/b4#b", 10, 20}, {"work/b5#b", 10, 20}, {"work/b6#b", 10, 20},
			{"repack/linux#a3", 20, 30}, {"work/b7#b", 20, 30}, {"work/b8#b", 20, 30},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := append([]fairsched.Option{fairsched.WithMaxConcurrency(4),
					fairsched.WithGroupWeight("a", 1), fairsched.WithGroupWeight("b", 1)}, tc.opts...)
				s, err := fairsched.New(opts...)
				if err != nil {
					t.Fatal(err)
				}
				for typ, cfg := range map[fairsched.JobType]fairsched.JobTypeConfig{
					"work":   {DefaultCost: 10 * time.Second, Priority: 8},
					"repack": {DefaultCost: 10 * time.Second, Priority: 8, ConflictGroup: "repo"},
				} {
					if err := s.RegisterType(typ, cfg); err != nil {
						t.Fatal(err)
					}
				}
				var jobs []timedJob
				for i := 1; i <= 3; i++ {
					j := timedJob{typ: tc.a, id: fmt.Sprintf("a%d", i), tag: "a", dur: 10, opts: []fairsched.JobOption{fairsched.InGroup("a")}}
					if tc.a == "repack" {
						j.id, j.tag = "linux", fmt.Sprintf("a%d", i)
					}
					jobs = append(jobs, j)
				}
				for i := 1; i <= 8; i++ {
					jobs = append(jobs, timedJob{typ: "work", id: fmt.Sprintf("b%d", i), tag: "b", dur: 10, opts: []fairsched.JobOption{fairsched.InGroup("b")}})
				}
				jobs = append(jobs, timedJob{at: 5, probe: func() {
					snap := snapshot(t, s)
					got := map[string][2]int{}
					for _, g := range snap.Groups {
						got[g.Name] = [2]int{g.Allocation, g.Running}
					}
					// a keeps its 2 slots' allocation while b runs in one of them.
					if diff := cmp.Diff(map[string][2]int{"a": {2, 1}, "b": {2, 3}}, got); diff != "" {
						t.Errorf("groups at 5 s, [allocation running] (-want +got):\n%s", diff)
					}
				}})
				if diff := cmp.Diff(tc.want, runTimeline(t, s, jobs)); diff != "" {
					t.Errorf("timeline (-want +got):\n%s", diff)
				}
			})
		})
	}
}
