package scenario

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fairsched/fairsched"
)

// TenantShareTolerance is how far, in points of share, each tenant's
// service may stray from its fair share while every tenant has work: a
// tenant of two gets 50 % ± 5 %.
const TenantShareTolerance = 0.05

// TenantShares: on 4 slots, tenant "acme" queues 200 one-second clones
// spread over 100 keys (acme/u001 … acme/u100, 2 each) and tenant "solo"
// 200 on its one key (solo/main), all at T=0. With the tenant read from
// the key's path (WithKeyPath "/"), each tenant gets half the service
// while both have work, acme's 100 keys sharing its half. With one level,
// acme's 100 keys would take 100 of every 101 slots.
func TenantShares() Scenario {
	const keys, perKey = 100, 2
	sc := Scenario{Name: "28-tenant-shares", Title: "A tenant that spreads its work over 100 keys gets half the service, as a tenant with one key does",
		MaxConcurrency: 4,
		Types:          []Type{{SyncClone, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8}}},
		Options:        []fairsched.Option{fairsched.WithKeyPath("/")},
		TenantSep:      "/",
		// The shares intended, for the report's fairness index: solo's one
		// key half the service, each of acme's a hundredth of the other half.
		KeyWeights: map[string]float64{"solo/main": 1}}
	for u := 1; u <= keys; u++ {
		sc.KeyWeights[fmt.Sprintf("acme/u%03d", u)] = 1.0 / keys
	}
	for i := range keys * perKey {
		sc.Jobs = append(sc.Jobs,
			Job{Type: SyncClone, ID: fmt.Sprintf("acme-%03d", i+1), Key: fmt.Sprintf("acme/u%03d", i%keys+1), Duration: 1},
			Job{Type: SyncClone, ID: fmt.Sprintf("solo-%03d", i+1), Key: "solo/main", Duration: 1})
	}
	return sc
}

// TenantOf is key's tenant under sc.TenantSep: the key's part before the
// first separator, or the whole key without one (as WithKeyPath reads
// it); "" when sc has no tenants.
func (sc Scenario) TenantOf(key string) string {
	if sc.TenantSep == "" {
		return ""
	}
	t, _, _ := strings.Cut(key, sc.TenantSep)
	return t
}

// TenantKeys counts each tenant's fairness keys among sc's jobs; nil when
// sc has no tenants.
func (sc Scenario) TenantKeys() map[string]int {
	if sc.TenantSep == "" {
		return nil
	}
	seen, out := map[string]bool{}, map[string]int{}
	for _, j := range sc.Jobs {
		if !seen[j.Key] {
			seen[j.Key] = true
			out[sc.TenantOf(j.Key)]++
		}
	}
	return out
}

// TenantWindow is the span [from, to) of whole steps in which every
// tenant of sc had a job waiting (arrived, and not admitted, refused, shed
// or expired) once the step's events were in; ok is false when there was
// none: fewer than two tenants, or never all of them at once.
func TenantWindow(sc Scenario, res Result) (from, to int, ok bool) {
	waiting := map[string]int{}
	for t := range sc.TenantKeys() {
		waiting[t] = 0
	}
	all := func() bool {
		for _, n := range waiting {
			if n <= 0 {
				return false
			}
		}
		return len(waiting) >= 2
	}
	from = -1
	tl := res.Timeline
	for i := 0; i < len(tl); {
		t := tl[i].T
		for ; i < len(tl) && tl[i].T == t; i++ {
			switch tl[i].Kind {
			case "arrive", "preempt":
				waiting[sc.TenantOf(tl[i].Key)]++
			case "admit", "refuse", "shed", "expire":
				waiting[sc.TenantOf(tl[i].Key)]--
			}
		}
		switch {
		case from < 0 && all():
			from = t
		case from >= 0 && !all():
			return from, t, true
		}
	}
	return 0, 0, false
}

// TenantService is the job-seconds each tenant's jobs ran within [from,
// to).
func TenantService(sc Scenario, res Result, from, to int) map[string]int {
	out := map[string]int{}
	for _, j := range sc.Jobs {
		start, ran := res.Start[j.Name()]
		if !ran {
			continue
		}
		if d := min(res.End[j.Name()], to) - max(start, from); d > 0 {
			out[sc.TenantOf(j.Key)] += d
		}
	}
	return out
}

// fairShares is each tenant's fair share: an equal part of the service
// (the scenarios give no tenant a weight).
func fairShares(sc Scenario) map[string]float64 {
	keys := sc.TenantKeys()
	out := map[string]float64{}
	for t := range keys {
		out[t] = 1 / float64(len(keys))
	}
	return out
}

// oneLevelShares is each tenant's share with one level, every key
// backlogged: its keys over all keys.
func oneLevelShares(sc Scenario) map[string]float64 {
	keys, all := sc.TenantKeys(), 0
	for _, n := range keys {
		all += n
	}
	out := map[string]float64{}
	for t, n := range keys {
		out[t] = float64(n) / float64(all)
	}
	return out
}

// tenantShares checks TenantShares: while both tenants had work waiting,
// each got its fair share of the service within TenantShareTolerance, and
// their admissions stayed within one round of slots of each other (acme's
// keys joined together are staggered, so the tenants alternate rather
// than acme's keys coming in rounds).
func tenantShares(sc Scenario, res Result) []string {
	from, to, ok := TenantWindow(sc, res)
	if !ok {
		return []string{verdict(false, "the tenants never all had work waiting at once")}
	}
	served, total := TenantService(sc, res, from, to), 0
	for _, s := range served {
		total += s
	}
	fair, within := fairShares(sc), total > 0
	var shares []string
	for _, t := range slices.Sorted(maps.Keys(fair)) {
		share := float64(served[t]) / float64(max(total, 1))
		within = within && share >= fair[t]-TenantShareTolerance && share <= fair[t]+TenantShareTolerance
		shares = append(shares, fmt.Sprintf("%s %.1f %%", t, 100*share))
	}
	admitted, worst, at := map[string]int{}, 0, 0
	for _, e := range res.Timeline {
		if e.Kind != "admit" || e.T >= to {
			continue
		}
		admitted[sc.TenantOf(e.Key)]++
		if d := abs(admitted["acme"] - admitted["solo"]); d > worst {
			worst, at = d, e.T
		}
	}
	return []string{
		verdict(within, "while both had work waiting (T=%d–%d), each tenant got 50 %% ± %.0f %% of the service: %s (one level: acme %.0f %%)",
			from, to, 100*TenantShareTolerance, strings.Join(shares, ", "), 100*oneLevelShares(sc)["acme"]),
		verdict(worst <= sc.MaxConcurrency,
			"while both waited, acme (100 keys) and solo (1 key) were served alike, within one round of slots (worst gap %d jobs at T=%d)", worst, at)}
}
