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
