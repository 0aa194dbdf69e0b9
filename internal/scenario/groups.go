package scenario

import (
	"fmt"
	"time"

	"github.com/fairsched/fairsched"
)

// The group scenarios use one background job type with room for every slot,
// so that only the group allocation decides who runs.
const Sync fairsched.JobType = "sync"

func syncType(priority fairsched.Priority) Type {
	return Type{Sync, fairsched.JobTypeConfig{DefaultCost: 2 * time.Second, Priority: priority}}
}

// groupJobs returns n background jobs of group g arriving at step at.
func groupJobs(g string, n, at, duration int) []Job {
	jobs := make([]Job, n)
	for i := range jobs {
		jobs[i] = Job{Type: Sync, ID: fmt.Sprintf("%s-%d", g, i+1), Arrival: at, Duration: duration, Group: g}
	}
	return jobs
}

// WeightedGroups is why groups exist: profile A (weight 3, plenty of
// work) and profile B (weight 1, 20 jobs) on 16 slots progress 12:4 while
// both have work; when B runs dry its slots go to A.
func WeightedGroups() Scenario {
	sc := Scenario{Name: "09-weighted-groups", Title: "Two groups weighted 3 and 1 share 16 slots 12 to 4 while both have work",
		MaxConcurrency: 16, Types: []Type{syncType(16)},
		Options:      []fairsched.Option{fairsched.WithGroupWeight("A", 3), fairsched.WithGroupWeight("B", 1)},
		GroupWeights: map[string]int{"A": 3, "B": 1}}
	sc.Jobs = append(groupJobs("A", 60, 0, 2), groupJobs("B", 20, 0, 2)...)
	return sc
}

// PausedGroup: the same groups; B is paused at T=2 and resumed at T=6.
// While paused B's jobs wait (reason paused) and A takes every slot; on
// resume B gets its share back as slots free.
func PausedGroup() Scenario {
	sc := WeightedGroups()
	sc.Name, sc.Title = "11-paused-group", "A paused group's jobs wait and its slots go to the other group; on resume it gets its share back"
	sc.Script = map[int]func(*fairsched.Scheduler) error{
		2: func(s *fairsched.Scheduler) error { return s.PauseGroup("B") },
		6: func(s *fairsched.Scheduler) error { return s.ResumeGroup("B") },
	}
	return sc
}

// UrgentBorrow: 4 slots split 2:2 between A and B. B's two long jobs hold
// its share; its old low-priority job ages to the urgent threshold at T=5
// and borrows the next slot A frees, running B past its allocation.
func UrgentBorrow() Scenario {
	sc := Scenario{Name: "13-urgent-borrow", Title: "A job that has waited long enough to become urgent borrows a slot beyond its group's share",
		MaxConcurrency: 4,
		Aging:          &fairsched.AgingConfig{GracePeriod: 2 * time.Second, Interval: time.Second, Step: 3, MaxEffectivePriority: 10, UrgentThreshold: 10},
		Types: []Type{syncType(10),
			{Repack, fairsched.JobTypeConfig{DefaultCost: 2 * time.Second, Priority: 1}}},
		Options:      []fairsched.Option{fairsched.WithGroupWeight("A", 1), fairsched.WithGroupWeight("B", 1)},
		GroupWeights: map[string]int{"A": 1, "B": 1}}
	for t := 0; t < 9; t++ {
		sc.Jobs = append(sc.Jobs,
			Job{Type: Sync, ID: fmt.Sprintf("A-%da", t), Arrival: t, Duration: 1, Group: "A"},
			Job{Type: Sync, ID: fmt.Sprintf("A-%db", t), Arrival: t, Duration: 1, Group: "A"})
		if t == 0 {
			sc.Jobs = append(sc.Jobs, groupJobs("B", 2, 0, 10)...)
			sc.Jobs = append(sc.Jobs, Job{Type: Repack, ID: "old", Arrival: 0, Duration: 2, Group: "B"})
		}
	}
	return sc
}

// WeightChange: A and B share 8 slots 4:4 until A's weight becomes 3 at
// T=4; the new split 6:2 takes effect as slots free.
func WeightChange() Scenario {
	sc := Scenario{Name: "12-weight-change", Title: "A group's weight changed at run time changes the split as soon as slots free",
		MaxConcurrency: 8, Types: []Type{syncType(8)},
		Options:      []fairsched.Option{fairsched.WithGroupWeight("A", 1), fairsched.WithGroupWeight("B", 1)},
		GroupWeights: map[string]int{"A": 1, "B": 1},
		Script: map[int]func(*fairsched.Scheduler) error{
			4: func(s *fairsched.Scheduler) error { return s.SetGroupWeight("A", 3) },
		}}
	sc.Jobs = append(groupJobs("A", 20, 0, 3), groupJobs("B", 20, 0, 3)...)
	return sc
}
