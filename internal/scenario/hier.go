package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/fairsched/fairsched"
)

// TenantShares: on 4 slots, tenant "acme" queues 40 one-second clones
// spread over 8 keys (acme/u1 … acme/u8, 5 each) and tenant "solo" 40 on
// its one key (solo/main), all at T=0. With the tenant read from the key's
// path (WithKeyPath "/"), each tenant gets half the service while both
// have work: acme's 8 keys share its half, an eighth of it each, and the
// two tenants alternate. With one level, acme's 8 keys would take 8 of
// every 9 slots.
func TenantShares() Scenario {
	sc := Scenario{Name: "28-tenant-shares", Title: "A tenant that spreads its work over 8 keys gets half the service, as a tenant with one key does",
		MaxConcurrency: 4,
		Types:          []Type{{SyncClone, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8}}},
		Options:        []fairsched.Option{fairsched.WithKeyPath("/")},
		// The shares intended, for the report's fairness index: solo's one
		// key half the service, each of acme's an eighth of the other half.
		KeyWeights: map[string]float64{"solo/main": 1}}
	for u := 1; u <= 8; u++ {
		sc.KeyWeights[fmt.Sprintf("acme/u%d", u)] = 1.0 / 8
	}
	for i := range 40 {
		sc.Jobs = append(sc.Jobs,
			Job{Type: SyncClone, ID: fmt.Sprintf("acme-%02d", i+1), Key: fmt.Sprintf("acme/u%d", i%8+1), Duration: 1},
			Job{Type: SyncClone, ID: fmt.Sprintf("solo-%02d", i+1), Key: "solo/main", Duration: 1})
	}
	return sc
}

// tenantShares checks TenantShares: while both tenants had work waiting,
// their admissions stayed within one round of slots of each other (acme's
// keys joined together are staggered, so the tenants alternate rather
// than acme's keys coming in rounds).
func tenantShares(sc Scenario, res Result) []string {
	tenant := func(key string) string { t, _, _ := strings.Cut(key, "/"); return t }
	waiting, admitted := map[string]int{}, map[string]int{}
	for _, j := range sc.Jobs {
		waiting[tenant(j.Key)]++
	}
	worst, at := 0, 0
	var both map[string]int // admissions while both had work
	for _, e := range res.Timeline {
		if e.Kind != "admit" {
			continue
		}
		if waiting["acme"] > 0 && waiting["solo"] > 0 {
			both = map[string]int{"acme": admitted["acme"], "solo": admitted["solo"]}
			if d := abs(admitted["acme"] - admitted["solo"]); d > worst {
				worst, at = d, e.T
			}
		}
		admitted[tenant(e.Key)]++
		waiting[tenant(e.Key)]--
	}
	return []string{verdict(worst <= sc.MaxConcurrency,
		"while both waited, acme (8 keys) and solo (1 key) were served alike, within one round of slots (worst gap %d jobs at T=%d)", worst, at),
		verdict(abs(both["acme"]-both["solo"]) <= sc.MaxConcurrency,
			"admitted while both waited: acme %d, solo %d (with one level acme's 8 keys would take 8 of every 9)", both["acme"], both["solo"])}
}
