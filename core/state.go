package core

import (
	"cmp"
	"slices"
	"time"

	"github.com/fairsched/fairsched/costmodel"
	"github.com/fairsched/fairsched/policy"
)

// State is what a scheduler keeps across restarts (see fairsched.Store):
// the learned cost estimates, and when each periodic job last ran.
type State struct {
	Estimates []CostEstimate `json:"estimates"`
	// LastRuns holds, by "type/id", when each periodic job's last
	// occurrence was submitted.
	LastRuns map[string]time.Time `json:"last_runs,omitempty"`
	// KeyCosts holds each fairness key's accumulated cost, so that a
	// restart does not hand every key a clean slate.
	KeyCosts map[string]time.Duration `json:"key_costs,omitempty"`
}

// KeyCosts returns every fairness key's accumulated cost.
func (c *Core) KeyCosts() map[string]time.Duration { return c.ledger.Costs() }

// RestoreKeyCosts loads accumulated costs saved by an earlier run, as idle
// keys used at now.
func (c *Core) RestoreKeyCosts(now time.Time, costs map[string]time.Duration) {
	keys := make([]string, 0, len(costs))
	for k := range costs {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the idle list's order: deterministic eviction
	least := time.Duration(-1)
	for _, k := range keys {
		c.ledger.Restore(k, costs[k], now)
		if costs[k] > 0 && (least < 0 || costs[k] < least) {
			least = costs[k]
		}
	}
	if least > 0 {
		c.ledger.RaiseFloor(least)
	}
}

// Estimates returns the learned cost estimates, by type then id.
func (c *Core) Estimates() []CostEstimate {
	out := []CostEstimate{}
	c.estimates.Each(func(k costmodel.EstimateKey, cost time.Duration) {
		out = append(out, CostEstimate{Type: policy.JobType(k.Type), ID: k.ID, Cost: cost})
	})
	slices.SortFunc(out, func(a, b CostEstimate) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// RestoreEstimates loads estimates saved by an earlier run, as used at now
// (their TTL starts over). Non-positive costs are skipped.
func (c *Core) RestoreEstimates(now time.Time, ests []CostEstimate) {
	for _, e := range ests {
		if e.Cost > 0 {
			c.estimates.Put(costmodel.EstimateKey{Type: string(e.Type), ID: e.ID}, e.Cost, now)
		}
	}
}
