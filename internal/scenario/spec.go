package scenario

import (
	"fmt"
	"time"

	"github.com/fairsched/fairsched"
)

// The job types and costs of the git-proxy scenarios (01-05). Costs are wall time: a
// (type, id) seen for the first time is charged its type's DefaultCost.
const (
	SyncClone fairsched.JobType = "sync-clone"
	Repack    fairsched.JobType = "repack"
	Pull      fairsched.JobType = "pull"
)

// standardTypes is the git proxy's scheduler of scenarios 01-05: global 8,
// foreground tier 8, background tier 4, all in the "git" conflict group.
func standardTypes() []Type {
	return []Type{
		{SyncClone, fairsched.JobTypeConfig{DefaultCost: 10 * time.Second, MaxConcurrency: 8, ConflictGroup: "git", Priority: 8}},
		{Repack, fairsched.JobTypeConfig{DefaultCost: 20 * time.Second, MaxConcurrency: 3, ConflictGroup: "git", Priority: 4}},
		{Pull, fairsched.JobTypeConfig{DefaultCost: 10 * time.Second, MaxConcurrency: 3, ConflictGroup: "git", Priority: 4}},
	}
}

// Spec returns the five git-proxy scenarios written in Go, in reading
// order; each has a twin scenario file (testdata/scenarios/01-05) that
// must play the same timeline.
func Spec() []Scenario {
	return []Scenario{BackgroundSaturated(), TwoClientBurst(), ExpensiveVsCheap(), ConflictExclusion(), ManyBackgroundTypes()}
}

// All returns every scenario written in Go: the git proxy's five, then the
// features'.
func All() []Scenario { return append(Spec(), Features()...) }

// Features returns the built-in scenarios of the features beyond the git
// proxy's basics — aging, groups, key weights, tenancy, tier shares, rate
// limits, expiry, tenants' shares — in the order of their names: they share the numbering
// of the scenario files, which is the order they are meant to be read in.
func Features() []Scenario {
	return []Scenario{AgingUnderStream(), WeightedGroups(), PausedGroup(), WeightChange(), UrgentBorrow(), WeightedKeys(), NoisyTenant(), TierShares(), RateLimited(), Expiry(), LoadFollowing(), PolicyTierChange(), TierRules(), TenantShares(), FairShedding(), StartEstimate(), Blocker(),
		WorkloadLabels()}
}

// AgingUnderStream: two slots, a foreground stream that always has two
// clones waiting, and one background job. Without aging the background job
// would wait as long as the stream lasts; with aging (grace 3s, +2 per
// second, ceiling 8) it reaches the foreground's priority after
// MaxWait(1) = 3s + ⌈7/2⌉·1s = 7s and, its key having consumed less, takes
// the next slot that frees.
func AgingUnderStream() Scenario {
	sc := Scenario{Name: "08-aging-under-stream", Title: "Aging lifts a background repack past a never-ending stream of user clones within its 7 s bound",
		MaxConcurrency: 2,
		Aging:          &fairsched.AgingConfig{GracePeriod: 3 * time.Second, Interval: time.Second, Step: 2, MaxEffectivePriority: 8},
		Types: []Type{
			{SyncClone, fairsched.JobTypeConfig{DefaultCost: time.Second, ConflictGroup: "git", Priority: 8}},
			{Repack, fairsched.JobTypeConfig{DefaultCost: 4 * time.Second, ConflictGroup: "git", Priority: 1}},
		}}
	for t := 0; t < 12; t++ {
		sc.Jobs = append(sc.Jobs,
			Job{Type: SyncClone, ID: fmt.Sprintf("s%da", t), Key: "user", Arrival: t, Duration: 1},
			Job{Type: SyncClone, ID: fmt.Sprintf("s%db", t), Key: "user", Arrival: t, Duration: 1})
		if t == 0 {
			sc.Jobs = append(sc.Jobs, Job{Type: Repack, ID: "big", Arrival: 0, Duration: 3})
		}
	}
	return sc
}

// BackgroundSaturated (01): background work fills its tier, then a
// foreground clone arrives and must start at once.
func BackgroundSaturated() Scenario {
	sc := Scenario{Name: "go-01-background-saturated", Title: "Background work fills its share of the slots; a user's clone arriving later still starts at once",
		MaxConcurrency: 8, Types: standardTypes()}
	for i := 1; i <= 6; i++ {
		sc.Jobs = append(sc.Jobs, Job{Type: Repack, ID: fmt.Sprintf("r%d", i), Arrival: 0, Duration: 8})
	}
	for i := 7; i <= 10; i++ {
		sc.Jobs = append(sc.Jobs, Job{Type: Pull, ID: fmt.Sprintf("r%d", i), Arrival: 0, Duration: 6})
	}
	sc.Jobs = append(sc.Jobs, Job{Type: SyncClone, ID: "r99", Key: "dev1", Arrival: 3, Duration: 2})
	return sc
}

// TwoClientBurst (02): client A bursts ten clones, client B then
// asks for two, with background repacks running.
func TwoClientBurst() Scenario {
	sc := Scenario{Name: "go-02-two-client-burst", Title: "One client bursts ten clones; another client's two clones take the next free slots instead of waiting behind all ten",
		MaxConcurrency: 8, Types: standardTypes()}
	for i := 1; i <= 4; i++ {
		sc.Jobs = append(sc.Jobs, Job{Type: Repack, ID: fmt.Sprintf("repo%d", i), Arrival: 0, Duration: 6})
	}
	for i := 1; i <= 10; i++ {
		sc.Jobs = append(sc.Jobs, Job{Type: SyncClone, ID: fmt.Sprintf("a%d", i), Key: "clientA", Arrival: 1, Duration: 3})
	}
	sc.Jobs = append(sc.Jobs, Job{Type: SyncClone, ID: "b1", Key: "clientB", Arrival: 2, Duration: 3}, Job{Type: SyncClone, ID: "b2", Key: "clientB", Arrival: 2, Duration: 3})
	return sc
}

// ExpensiveVsCheap (03): one huge clone from A, eight small ones
// from B, two medium ones from C later. The workload is played twice: the
// first round is charged at DefaultCost (nothing is known yet), the second
// at the costs learned from the first, so the expensive clone now advances
// A's accumulated cost more than a small clone advances B's.
func ExpensiveVsCheap() Scenario {
	sc := Scenario{Name: "go-03-expensive-vs-cheap", Title: "Huge and small clones share the slots, a late client starts at once, and from the second round each clone is charged its learned cost",
		MaxConcurrency: 8, Types: standardTypes()}
	for _, start := range []int{0, 30} {
		tag := ""
		if start > 0 {
			tag = "#2" // same ids, so round 2 is charged what round 1 taught
		}
		sc.Jobs = append(sc.Jobs, Job{Type: SyncClone, ID: "linux", Key: "clientA", Arrival: start, Duration: 15, Tag: tag})
		for i := 1; i <= 8; i++ {
			sc.Jobs = append(sc.Jobs, Job{Type: SyncClone, ID: fmt.Sprintf("small%d", i), Key: "clientB", Arrival: start, Duration: 2, Tag: tag})
		}
		sc.Jobs = append(sc.Jobs, Job{Type: SyncClone, ID: "med1", Key: "clientC", Arrival: start + 5, Duration: 4, Tag: tag},
			Job{Type: SyncClone, ID: "med2", Key: "clientC", Arrival: start + 5, Duration: 4, Tag: tag})
	}
	return sc
}

// ConflictExclusion (04): a clone and a repack of the same repo
// must not overlap; work on different repos runs side by side.
func ConflictExclusion() Scenario {
	return Scenario{Name: "go-04-conflict-exclusion", Title: "A clone and a repack of one repository never run at the same time; work on different repositories runs side by side",
		MaxConcurrency: 8, Types: standardTypes(), Jobs: []Job{
			{Type: SyncClone, ID: "repo1", Key: "dev1", Duration: 3},
			{Type: Repack, ID: "repo1", Duration: 4},
			{Type: SyncClone, ID: "repo2", Key: "dev2", Duration: 3},
			{Type: Repack, ID: "repo2", Duration: 4},
		}}
}

// ManyBackgroundTypes (05): four background types each wanting four
// slots cannot delay a foreground burst.
func ManyBackgroundTypes() Scenario {
	sc := Scenario{Name: "go-05-many-background-types", Title: "Four kinds of background work cannot take more than half the slots: a user's clones start the moment they arrive",
		MaxConcurrency: 8}
	bg := []fairsched.JobType{"repack", "pull", "gc", "verify"}
	for _, t := range bg {
		sc.Types = append(sc.Types, Type{t, fairsched.JobTypeConfig{DefaultCost: 15 * time.Second, MaxConcurrency: 4, ConflictGroup: "git", Priority: 4}})
	}
	sc.Types = append(sc.Types, Type{SyncClone, fairsched.JobTypeConfig{DefaultCost: 10 * time.Second, MaxConcurrency: 8, ConflictGroup: "git", Priority: 8}})
	for _, t := range bg {
		for i := 1; i <= 3; i++ {
			sc.Jobs = append(sc.Jobs, Job{Type: t, ID: fmt.Sprintf("%s%d", t, i), Arrival: 0, Duration: 6})
		}
	}
	for i := 1; i <= 4; i++ {
		sc.Jobs = append(sc.Jobs, Job{Type: SyncClone, ID: fmt.Sprintf("clone%d", i), Key: "clientA", Arrival: 2, Duration: 2})
	}
	return sc
}
