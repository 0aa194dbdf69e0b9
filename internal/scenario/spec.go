package scenario

import (
	"fmt"
	"time"

	"github.com/fairsched/fairsched"
)

// The job types and costs of the spec's simulation. Costs are wall time: a
// (type, id) seen for the first time is charged its type's DefaultCost.
const (
	SyncClone fairsched.JobType = "sync-clone"
	Repack    fairsched.JobType = "repack"
	Pull      fairsched.JobType = "pull"
)

// standardTypes is the spec's make_scheduler: global 8, foreground tier 8,
// background tier 4, all in the "git" conflict group.
func standardTypes() []Type {
	return []Type{
		{SyncClone, fairsched.JobTypeConfig{DefaultCost: 10 * time.Second, MaxConcurrency: 8, ConflictGroup: "git", Priority: 8}},
		{Repack, fairsched.JobTypeConfig{DefaultCost: 20 * time.Second, MaxConcurrency: 3, ConflictGroup: "git", Priority: 4}},
		{Pull, fairsched.JobTypeConfig{DefaultCost: 10 * time.Second, MaxConcurrency: 3, ConflictGroup: "git", Priority: 4}},
	}
}

// Spec returns the five scenarios of the spec, in order.
func Spec() []Scenario {
	return []Scenario{BackgroundSaturated(), TwoClientBurst(), ExpensiveVsCheap(), ConflictExclusion(), ManyBackgroundTypes()}
}

// All returns every scenario: the spec's five, then those of the later
// features.
func All() []Scenario {
	return append(Spec(), AgingUnderStream(), WeightedGroups(), PausedGroup(), UrgentBorrow(), WeightChange(), WeightedKeys(), NoisyTenant(), TierShares(), RateLimited(), Expiry())
}

// AgingUnderStream: two slots, a foreground stream that always has two
// clones waiting, and one background job. Without aging the background job
// would wait as long as the stream lasts; with aging (grace 3s, +2 per
// second, ceiling 8) it reaches the foreground's priority after
// MaxWait(1) = 3s + ⌈7/2⌉·1s = 7s and, its key having consumed less, takes
// the next slot that frees.
func AgingUnderStream() Scenario {
	sc := Scenario{Name: "6-aging-under-stream", Title: "Aging lifts a background job past a continuous foreground stream",
		MaxConcurrency: 2,
		Aging:          &fairsched.AgingConfig{GracePeriod: 3 * time.Second, Interval: time.Second, Step: 2, MaxEffectivePriority: 8},
		Types: []Type{
			{SyncClone, fairsched.JobTypeConfig{DefaultCost: time.Second, ConflictGroup: "git", Priority: 8}},
			{Repack, fairsched.JobTypeConfig{DefaultCost: 4 * time.Second, ConflictGroup: "git", Priority: 1}},
		}}
	for t := 0; t < 12; t++ {
		sc.Jobs = append(sc.Jobs,
			Job{SyncClone, fmt.Sprintf("s%da", t), "user", t, 1, "", "", false},
			Job{SyncClone, fmt.Sprintf("s%db", t), "user", t, 1, "", "", false})
		if t == 0 {
			sc.Jobs = append(sc.Jobs, Job{Repack, "big", "", 0, 3, "", "", false})
		}
	}
	return sc
}

// BackgroundSaturated is scenario 1: background work fills its tier, then a
// foreground clone arrives and must start at once.
func BackgroundSaturated() Scenario {
	sc := Scenario{Name: "1-background-saturated", Title: "Background saturated, foreground arrives late (global 8, background tier 4)",
		MaxConcurrency: 8, Types: standardTypes()}
	for i := 1; i <= 6; i++ {
		sc.Jobs = append(sc.Jobs, Job{Repack, fmt.Sprintf("r%d", i), "", 0, 8, "", "", false})
	}
	for i := 7; i <= 10; i++ {
		sc.Jobs = append(sc.Jobs, Job{Pull, fmt.Sprintf("r%d", i), "", 0, 6, "", "", false})
	}
	sc.Jobs = append(sc.Jobs, Job{SyncClone, "r99", "dev1", 3, 2, "", "", false})
	return sc
}

// TwoClientBurst is scenario 2: client A bursts ten clones, client B then
// asks for two, with background repacks running.
func TwoClientBurst() Scenario {
	sc := Scenario{Name: "2-two-client-burst", Title: "Two clients burst, with background work and conflicts",
		MaxConcurrency: 8, Types: standardTypes()}
	for i := 1; i <= 4; i++ {
		sc.Jobs = append(sc.Jobs, Job{Repack, fmt.Sprintf("repo%d", i), "", 0, 6, "", "", false})
	}
	for i := 1; i <= 10; i++ {
		sc.Jobs = append(sc.Jobs, Job{SyncClone, fmt.Sprintf("a%d", i), "clientA", 1, 3, "", "", false})
	}
	sc.Jobs = append(sc.Jobs, Job{SyncClone, "b1", "clientB", 2, 3, "", "", false}, Job{SyncClone, "b2", "clientB", 2, 3, "", "", false})
	return sc
}

// ExpensiveVsCheap is scenario 3: one huge clone from A, eight small ones
// from B, two medium ones from C later. The workload is played twice: the
// first round is charged at DefaultCost (nothing is known yet), the second
// at the costs learned from the first, so the expensive clone now advances
// A's accumulated cost more than a small clone advances B's.
func ExpensiveVsCheap() Scenario {
	sc := Scenario{Name: "3-expensive-vs-cheap", Title: "Expensive vs cheap clones; round 2 (T=30) is charged at learned costs",
		MaxConcurrency: 8, Types: standardTypes()}
	for _, start := range []int{0, 30} {
		tag := ""
		if start > 0 {
			tag = "#2" // same ids, so round 2 is charged what round 1 taught
		}
		sc.Jobs = append(sc.Jobs, Job{SyncClone, "linux", "clientA", start, 15, tag, "", false})
		for i := 1; i <= 8; i++ {
			sc.Jobs = append(sc.Jobs, Job{SyncClone, fmt.Sprintf("small%d", i), "clientB", start, 2, tag, "", false})
		}
		sc.Jobs = append(sc.Jobs, Job{SyncClone, "med1", "clientC", start + 5, 4, tag, "", false},
			Job{SyncClone, "med2", "clientC", start + 5, 4, tag, "", false})
	}
	return sc
}

// ConflictExclusion is scenario 4: a clone and a repack of the same repo
// must not overlap; work on different repos runs side by side.
func ConflictExclusion() Scenario {
	return Scenario{Name: "4-conflict-exclusion", Title: "Conflict group keeps clone and repack of one repo apart",
		MaxConcurrency: 8, Types: standardTypes(), Jobs: []Job{
			{SyncClone, "repo1", "dev1", 0, 3, "", "", false},
			{Repack, "repo1", "", 0, 4, "", "", false},
			{SyncClone, "repo2", "dev2", 0, 3, "", "", false},
			{Repack, "repo2", "", 0, 4, "", "", false},
		}}
}

// ManyBackgroundTypes is scenario 5: four background types each wanting four
// slots cannot delay a foreground burst.
func ManyBackgroundTypes() Scenario {
	sc := Scenario{Name: "5-many-background-types", Title: "Many background types do not starve foreground",
		MaxConcurrency: 8}
	bg := []fairsched.JobType{"repack", "pull", "gc", "verify"}
	for _, t := range bg {
		sc.Types = append(sc.Types, Type{t, fairsched.JobTypeConfig{DefaultCost: 15 * time.Second, MaxConcurrency: 4, ConflictGroup: "git", Priority: 4}})
	}
	sc.Types = append(sc.Types, Type{SyncClone, fairsched.JobTypeConfig{DefaultCost: 10 * time.Second, MaxConcurrency: 8, ConflictGroup: "git", Priority: 8}})
	for _, t := range bg {
		for i := 1; i <= 3; i++ {
			sc.Jobs = append(sc.Jobs, Job{t, fmt.Sprintf("%s%d", t, i), "", 0, 6, "", "", false})
		}
	}
	for i := 1; i <= 4; i++ {
		sc.Jobs = append(sc.Jobs, Job{SyncClone, fmt.Sprintf("clone%d", i), "clientA", 2, 2, "", "", false})
	}
	return sc
}
