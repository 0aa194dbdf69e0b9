package core

import (
	"cmp"
	"slices"
)

// TenantSnapshot is one tenant of hierarchical fair share in a Snapshot.
type TenantSnapshot struct {
	Name   string  `json:"name"`
	Weight float64 `json:"weight"`
	// Keys counts its fairness keys with jobs pending or running.
	Keys    int `json:"keys"`
	Pending int `json:"pending"`
	Running int `json:"running"`
	// Share is its fair share of the service now: its weight over the sum
	// of the weights of the tenants with jobs pending or running. While
	// it is backlogged it receives that share of the service, in learned
	// cost; an idle tenant's share goes to the others.
	Share float64 `json:"share"`
}

// tenantSnapshots returns the tenants with jobs, by name, and how many
// there are: every one when all or when there are at most rows, else the
// tenants of the listed pending jobs and of the running ones. It costs
// O(running + listed tenants · log). Nil without a hierarchy.
func (c *Core) tenantSnapshots(pending []*Job, rows int, all bool) ([]TenantSnapshot, int) {
	h := c.hier
	if h == nil || len(h.tenants) == 0 {
		return nil, 0
	}
	running := map[*hierTenant]int{} // at most one entry per running job
	for _, j := range c.running {
		if k := h.keys[j.Key]; k != nil {
			running[k.t]++
		}
	}
	listed := h.tenants
	if !all && len(h.tenants) > rows {
		listed = make(map[string]*hierTenant, rows)
		for t := range running {
			listed[t.name] = t
		}
		for _, j := range pending {
			if k := h.keys[j.Key]; k != nil {
				listed[k.t.name] = k.t
			}
		}
	}
	out := make([]TenantSnapshot, 0, len(listed))
	for _, t := range listed {
		out = append(out, TenantSnapshot{Name: t.name, Weight: t.weight, Keys: t.keys,
			Pending: t.jobs - running[t], Running: running[t],
			Share: float64(micro(t.weight)) / float64(h.weightSum)})
	}
	slices.SortFunc(out, func(a, b TenantSnapshot) int { return cmp.Compare(a.Name, b.Name) })
	return out, len(h.tenants)
}
