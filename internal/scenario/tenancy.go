package scenario

import (
	"fmt"
	"time"

	"github.com/fairsched/fairsched"
)

// WeightedKeys: two clients queue 24 one-second clones each on 3 slots;
// "gold" has fairness key weight 2, "free" weight 1. A clone costs 1s, so
// each admission charges gold 0.5s and free 1s of virtual time: while both
// have work, gold receives twice free's service.
func WeightedKeys() Scenario {
	sc := Scenario{Name: "11-weighted-keys", Title: "Fairness keys of weights 2 and 1 receive service 2:1",
		MaxConcurrency: 3,
		Types:          []Type{{SyncClone, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8}}},
		Options:        []fairsched.Option{fairsched.WithKeyWeight("gold", 2)}}
	for i := range 24 {
		sc.Jobs = append(sc.Jobs,
			Job{Type: SyncClone, ID: fmt.Sprintf("gold-%02d", i+1), Key: "gold", Arrival: 0, Duration: 1},
			Job{Type: SyncClone, ID: fmt.Sprintf("free-%02d", i+1), Key: "free", Arrival: 0, Duration: 1})
	}
	return sc
}

// NoisyTenant: on 4 slots, tenant "noisy" queues 44 one-second clones at
// T=0, the most its limit of 40 pending lets it (4 start at once); its 45th
// is refused at once. Tenant "quiet" sends 2 clones at T=2: having consumed
// less, they start as soon as slots free, within one job's duration.
func NoisyTenant() Scenario {
	sc := Scenario{Name: "12-noisy-tenant", Title: "A noisy tenant is capped at 40 pending; a quiet one is served at once",
		MaxConcurrency: 4,
		Types:          []Type{{SyncClone, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8}}},
		Options: []fairsched.Option{fairsched.WithTenantLimits(fairsched.TenantLimits{MaxPending: 10}),
			fairsched.WithKeyLimits("noisy", fairsched.TenantLimits{MaxPending: 40})}}
	for i := range 45 {
		sc.Jobs = append(sc.Jobs, Job{Type: SyncClone, ID: fmt.Sprintf("noisy-%02d", i+1), Key: "noisy", Duration: 1, Refused: i == 44})
	}
	sc.Jobs = append(sc.Jobs,
		Job{Type: SyncClone, ID: "quiet-1", Key: "quiet", Arrival: 2, Duration: 1},
		Job{Type: SyncClone, ID: "quiet-2", Key: "quiet", Arrival: 2, Duration: 1})
	return sc
}

// serviceRatio checks that, at the end of every step while both keys still
// have jobs waiting, the service (admitted jobs, all of one cost) of key a
// is ratio times that of key b, within one job of b.
func serviceRatio(sc Scenario, res Result, a, b string, ratio int) string {
	admitted := map[string]int{}
	waiting := map[string]int{}
	for _, j := range sc.Jobs {
		waiting[j.Key]++
	}
	worst, at := 0, 0
	last := -1
	check := func() {
		if waiting[a] == 0 || waiting[b] == 0 {
			return
		}
		if d := abs(admitted[a] - ratio*admitted[b]); d > worst {
			worst, at = d, last
		}
	}
	for _, e := range res.Timeline {
		if e.Kind != "admit" {
			continue
		}
		if e.T != last {
			check()
			last = e.T
		}
		admitted[e.Key]++
		waiting[e.Key]--
	}
	return verdict(worst <= ratio,
		"while both waited, %s's service stayed %d× %s's within one job of %s (worst gap %d jobs at T=%d)",
		a, ratio, b, b, worst, at)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
