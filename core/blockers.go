package core

import (
	"cmp"
	"slices"

	"github.com/fairsched/fairsched/policy"
)

// MaxBlockers bounds the blockers named for one job.
const MaxBlockers = 3

// Blocker names what holds a pending job under its binding rule (its
// headline reason): a running job on its conflict id (Type and ID), or a
// fairness key, a group or a tier holding slots of the rule's cap, with the
// slots it holds (Running), most first.
type Blocker struct {
	Reason  policy.Reason    `json:"reason"`
	Type    policy.JobType   `json:"type,omitempty"`
	ID      string           `json:"id,omitempty"`
	Key     *string          `json:"key,omitempty"`
	Group   string           `json:"group,omitempty"`
	Tier    *policy.Priority `json:"tier,omitempty"`
	Running int              `json:"running,omitempty"`
}

// holders indexes the running jobs for naming blockers: built once per
// snapshot or Explain, O(running); each lookup after it is O(running of
// the scope) at most.
type holders struct {
	c        *Core
	built    bool
	byKey    map[string]int
	byType   map[policy.JobType]map[string]int
	byTier   map[policy.Priority]map[string]int
	tiers    map[policy.Priority]int
	byGroup  map[string]int
	conflict map[policy.ConflictKey][]*Job
}

func (h *holders) build() {
	if h.built {
		return
	}
	h.built = true
	h.byKey, h.byGroup = map[string]int{}, map[string]int{}
	h.byType, h.byTier = map[policy.JobType]map[string]int{}, map[policy.Priority]map[string]int{}
	h.tiers, h.conflict = map[policy.Priority]int{}, map[policy.ConflictKey][]*Job{}
	for _, r := range h.c.running {
		h.byKey[r.Key]++
		h.byGroup[r.Group]++
		h.tiers[r.Priority()]++
		inc(h.byType, r.Type, r.Key)
		inc(h.byTier, r.Priority(), r.Key)
		if k, ok := r.slot.Config.Conflicts(r.ID); ok {
			h.conflict[k] = append(h.conflict[k], r)
		}
	}
}

func inc[K comparable](m map[K]map[string]int, k K, key string) {
	if m[k] == nil {
		m[k] = map[string]int{}
	}
	m[k][key]++
}

// of names what holds j under reason r, at most MaxBlockers.
func (h *holders) of(j *Job, r policy.Reason) []Blocker {
	h.build()
	switch r {
	case policy.ReasonConflict:
		k, _ := j.slot.Config.Conflicts(j.ID)
		return h.runningJobs(r, h.conflict[k])
	case policy.ReasonTypeLimit:
		return topKeys(r, h.byType[j.Type])
	case policy.ReasonTenantLimit:
		key := j.Key
		return []Blocker{{Reason: r, Key: &key, Running: h.byKey[j.Key]}}
	case policy.ReasonGroupLimit:
		return []Blocker{{Reason: r, Group: j.Group, Running: h.byGroup[j.Group]}}
	case policy.ReasonTierLimit:
		if h.c.usage.TierFull(j.Priority()) {
			return topKeys(r, h.byTier[j.Priority()])
		}
		return topTiers(r, h.tiers, j.Priority()) // the free slots are owed to other tiers
	case policy.ReasonGlobalLimit, policy.ReasonOverloaded:
		return topKeys(r, h.byKey)
	}
	return nil
}

func (h *holders) runningJobs(r policy.Reason, js []*Job) []Blocker {
	js = slices.Clone(js)
	slices.SortFunc(js, func(a, b *Job) int { return cmp.Compare(a.admitted, b.admitted) })
	out := make([]Blocker, 0, min(len(js), MaxBlockers))
	for _, x := range js[:min(len(js), MaxBlockers)] {
		key := x.Key
		out = append(out, Blocker{Reason: r, Type: x.Type, ID: x.ID, Key: &key, Running: 1})
	}
	return out
}

// topKeys names the keys holding most slots in counts, at most
// MaxBlockers, most first then by key. O(keys).
func topKeys(r policy.Reason, counts map[string]int) []Blocker {
	out := make([]Blocker, 0, MaxBlockers+1)
	for k, n := range counts {
		key := k
		out = append(out, Blocker{Reason: r, Key: &key, Running: n})
		slices.SortFunc(out, func(a, b Blocker) int { return cmp.Or(cmp.Compare(b.Running, a.Running), cmp.Compare(*a.Key, *b.Key)) })
		out = out[:min(len(out), MaxBlockers)]
	}
	return out
}

// topTiers names the other tiers holding most slots.
func topTiers(r policy.Reason, counts map[policy.Priority]int, own policy.Priority) []Blocker {
	out := make([]Blocker, 0, MaxBlockers+1)
	for p, n := range counts {
		if p == own {
			continue
		}
		tier := p
		out = append(out, Blocker{Reason: r, Tier: &tier, Running: n})
		slices.SortFunc(out, func(a, b Blocker) int {
			return cmp.Or(cmp.Compare(b.Running, a.Running), cmp.Compare(*b.Tier, *a.Tier))
		})
		out = out[:min(len(out), MaxBlockers)]
	}
	return out
}
