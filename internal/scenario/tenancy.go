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
	sc := Scenario{Name: "14-weighted-keys", Title: "A client of weight 2 gets twice the service of a client of weight 1",
		MaxConcurrency: 3,
		Types:          []Type{{SyncClone, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8}}},
		Options:        []fairsched.Option{fairsched.WithKeyWeight("gold", 2)},
		KeyWeights:     map[string]float64{"gold": 2}}
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
	sc := Scenario{Name: "15-noisy-tenant", Title: "A noisy client is held to 40 waiting jobs (its 45th is refused); a quiet client is still served at once",
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

// The tier scenario's job types: one per tier (P0, P1, P2); and a
// background snapshot for the expiry scenario.
const (
	Snapshot fairsched.JobType = "snapshot"
	Incident fairsched.JobType = "p0-incident"
	Copilot  fairsched.JobType = "p1-copilot"
	Backfill fairsched.JobType = "p2-backfill"
)

// TierShares is a controlled load test: tiers P0, P1 and P2 with
// 40/40/20 % of 10 slots reserved and bursts to 70/60/30 %, under P0 and
// P1 pressure (5 new jobs a second each, more than 4 slots run). While all
// three have work each runs its reservation, P2 included; once P1 (which
// lends its reservation while idle) runs dry after T=4, P0 bursts to its 7
// and P2 takes the tenth slot, up to its burst of 3.
func TierShares() Scenario {
	sc := Scenario{Name: "16-tier-shares", Title: "Three priority tiers reserve 40/40/20 % of the slots: the lowest keeps its reserved slots under pressure",
		MaxConcurrency: 10,
		Types: []Type{
			{Incident, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 30}},
			{Copilot, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 20}},
			{Backfill, fairsched.JobTypeConfig{DefaultCost: 3 * time.Second, Priority: 10}},
		},
		Tiers: map[fairsched.Priority]fairsched.TierConfig{
			30: {MinShare: 0.4, BurstShare: 0.7},
			20: {MinShare: 0.4, BurstShare: 0.6, LendIdle: true},
			10: {MinShare: 0.2, BurstShare: 0.3},
		}}
	for _, p := range []fairsched.Priority{30, 20, 10} {
		sc.Options = append(sc.Options, fairsched.WithTier(p, sc.Tiers[p]))
	}
	for i := range 40 {
		sc.Jobs = append(sc.Jobs, Job{Type: Incident, ID: fmt.Sprintf("i%02d", i+1), Arrival: i / 5, Duration: 1})
		if i < 20 {
			sc.Jobs = append(sc.Jobs, Job{Type: Copilot, ID: fmt.Sprintf("c%02d", i+1), Arrival: i / 5, Duration: 1})
		}
	}
	for i := range 8 {
		sc.Jobs = append(sc.Jobs, Job{Type: Backfill, ID: fmt.Sprintf("b%d", i+1), Arrival: 0, Duration: 3})
	}
	return sc
}

// tierFloor checks that, at every step while type t has a job waiting, at
// least n of its jobs run.
func tierFloor(sc Scenario, res Result, t fairsched.JobType, n int) string {
	steps := 0
	for step := 0; ; step++ {
		waitingJob, runningJobs := false, 0
		for _, j := range sc.Jobs {
			start, ok := res.Start[j.Name()]
			if j.Type != t {
				continue
			}
			if j.Arrival <= step && (!ok || start > step) {
				waitingJob = true
			}
			if ok && start <= step && step < res.End[j.Name()] {
				runningJobs++
			}
		}
		if !waitingJob {
			break
		}
		if runningJobs < n {
			return verdict(false, "T=%d: %s runs %d with jobs waiting; its floor is %d", step, t, runningJobs, n)
		}
		steps++
	}
	return verdict(steps > 0, "%s ran at least its %d reserved slots at each of the %d steps it had work waiting", t, n, steps)
}

// RateLimited: 3 slots; repacks limited to one start every 2 seconds
// (burst 1) while clones keep arriving. The repacks wait (rate_limited)
// without holding a slot: the clones take every slot the repacks cannot
// use, and each repack starts when its token arrives, on the scheduler's
// timer.
func RateLimited() Scenario {
	sc := Scenario{Name: "18-rate-limited", Title: "A rate-limited job type waits for its tokens without holding slots; other work uses them meanwhile",
		MaxConcurrency: 3,
		Types: []Type{{SyncClone, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8}},
			{Repack, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8}}},
		Options: []fairsched.Option{fairsched.WithRateLimit(fairsched.RateForType(Repack), 0.5, 1)}}
	for i := range 4 {
		sc.Jobs = append(sc.Jobs, Job{Type: Repack, ID: fmt.Sprintf("repo%d", i+1), Arrival: 0, Duration: 1})
	}
	for t := range 8 {
		for i := range 3 {
			sc.Jobs = append(sc.Jobs, Job{Type: SyncClone, ID: fmt.Sprintf("c%d-%d", t, i), Key: "user", Arrival: t, Duration: 1})
		}
	}
	return sc
}

// Expiry: one slot, held by a 6-second repack from T=0. A pull (queue
// timeout 2 s) and a clone with no timeout queue behind it, then a snapshot
// job (queue timeout 4 s, background): the pull and the snapshot expire
// while pending — the pull's caller gets ErrExpired at T=3, the snapshot is
// reported at T=5 — and the clone runs when the slot frees.
func Expiry() Scenario {
	sc := Scenario{Name: "19-expiry", Title: "Jobs that wait longer than their queue timeout expire; the others run",
		MaxConcurrency: 1,
		Types: []Type{
			{Repack, fairsched.JobTypeConfig{DefaultCost: 6 * time.Second, Priority: 4}},
			{Pull, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8, QueueTimeout: 2 * time.Second}},
			{SyncClone, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8}},
			{Snapshot, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4, QueueTimeout: 4 * time.Second}},
		}}
	sc.Jobs = []Job{
		{Type: Repack, ID: "big", Arrival: 0, Duration: 6},
		{Type: Pull, ID: "repo", Key: "dev1", Arrival: 1, Duration: 1},
		{Type: SyncClone, ID: "repo", Key: "dev2", Arrival: 1, Duration: 1},
		{Type: Snapshot, ID: "nightly", Arrival: 1, Duration: 1},
	}
	return sc
}

// typeRunning returns how many jobs of type t run at step.
func typeRunning(sc Scenario, res Result, t fairsched.JobType, step int) int {
	n := 0
	for _, j := range sc.Jobs {
		if start, ok := res.Start[j.Name()]; j.Type == t && ok && start <= step && step < res.End[j.Name()] {
			n++
		}
	}
	return n
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
