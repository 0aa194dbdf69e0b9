package policy

import (
	"maps"
	"slices"
)

// ReplaceTiers gives a running tracker new tier shares and caps (a policy
// applied live). The running counts stay: a tier now over its cap runs its
// jobs to their end and starts no other until it is under it. The waiting
// counts start at zero; the caller counts the waiting jobs again
// (Waiting) and then re-asks every tier (SyncTiers, or TierFull without
// shares).
func (u *Usage) ReplaceTiers(tiers map[Priority]TierConfig) {
	u.shares, u.configs = nil, nil
	if len(tiers) > 0 {
		u.shares = make(map[Priority]*tierShare, len(tiers))
		u.configs = maps.Clone(tiers)
	}
	for p, t := range tiers {
		r, b := t.Slots(u.max)
		u.shares[p] = &tierShare{reserved: r, burst: b, lendIdle: t.LendIdle}
		if u.tiers[p] == nil {
			u.tiers[p] = new(int) // listed, registered types or not: its reservation counts
		}
	}
	u.tierList = u.tierList[:0]
	for _, p := range slices.Sorted(maps.Keys(u.tiers)) { // one order every run
		u.tierList = append(u.tierList, tierEntry{p, u.tiers[p], u.shares[p]})
	}
	u.recap()
}

// Tiers lists every tier the tracker knows, in priority order.
func (u *Usage) Tiers() []Priority {
	out := make([]Priority, len(u.tierList))
	for i, e := range u.tierList {
		out[i] = e.p
	}
	return out
}
