package core

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/fairsched/fairsched/policy"
)

// Hierarchical fair share.
//
// Without a hierarchy every fairness key is its own account: admitting a
// job of cost c charges its key c / w (w its weight), and dispatch serves
// the pending key of least accumulated cost — start-time fair queuing over
// keys. A tenant that spreads its work over many keys then gets a share per
// key: 100 keys against one key's 1, about 99 % of the service.
//
// A hierarchy maps each key to a tenant. The tenants share the service in
// proportion to their weights W_t, and a tenant's share is split among its
// active keys (those with jobs pending or running) in proportion to their
// weights w_k. Both levels are served by the one queue of keys the core
// already has: the key's charge divides by its share of the whole,
//
//	φ_k = W_t · w_k / S_t,   S_t = Σ w_j over the active keys j of t,
//	charge(k, c) = c / φ_k = c · S_t / (W_t · w_k).
//
// Within a tenant the keys' φ are in the ratio of their w; summed over a
// tenant they are W_t, however many keys it spreads over. Start-time fair
// queuing gives every backlogged key service in proportion to its φ, so
// backlogged tenants receive service in proportion to W_t and, inside a
// tenant, its backlogged keys in proportion to w_k. It is work-conserving at
// both levels: an idle key leaves S_t (its siblings' shares grow to cover
// it) and an idle tenant has no active key (the other tenants' keys share
// everything). The returning-key rule holds at both levels too: a key, or a
// whole tenant, that comes back joins at the floor — the least accumulated
// cost among active keys — and is never moved down, so idling earns no
// credit.
//
// Keys that become active together would move in step (all at the floor,
// each charged n jobs' worth) and serve their tenant in bursts of one job
// per key; so a key that becomes active beside active siblings joins no
// earlier than its tenant's cursor, which each joining key moves one job
// (its type's default cost over W_t) past itself. The keys then keep that
// spacing, and the tenants alternate as under nested per-tenant queues.
// A key alone in its tenant keeps the one-level rule.
//
// The cost: a map lookup when a key becomes active or idle and one at each
// admission, O(1); dispatch is untouched (O(levels + log n) per decision,
// however many tenants and keys). S_t is updated as keys come and go; a
// key's past charges stay in the units they were charged in, so a tenant
// whose key count changes converges to its new split from the floor on,
// rather than being re-priced backwards.

// Hierarchy configures hierarchical fair share: which tenant a fairness
// key belongs to, and the tenants' weights.
type Hierarchy struct {
	// TenantOf maps a key to its tenant. An empty tenant makes the key its
	// own tenant, and so does a panic. It runs on the scheduler's owner
	// goroutine when a key becomes active: keep it fast and pure.
	TenantOf func(key string) string
	// Sep, when TenantOf is nil, makes the tenant the key's part before the
	// first Sep ("acme/alice" → "acme" with "/"); a key without it is its
	// own tenant.
	Sep string
	// Weights are the tenants' weights (DefaultKeyWeight for the others),
	// within [MinKeyWeight, MaxKeyWeight].
	Weights map[string]float64
}

// CheckHierarchy checks h: a mapping (TenantOf or a non-empty Sep, not
// both) and weights that are valid names and in range. The errors match
// policy.ErrInvalidConfig and name the field at fault.
func CheckHierarchy(h Hierarchy) error {
	for _, t := range slices.Sorted(maps.Keys(h.Weights)) { // sorted: the same error every run
		if err := policy.InvalidName(policy.ErrInvalidConfig, "TenantWeight tenant", t); err != nil {
			return err
		}
		w := h.Weights[t]
		if math.IsNaN(w) || w < policy.MinKeyWeight || w > policy.MaxKeyWeight {
			return policy.InvalidConfig(fmt.Sprintf("TenantWeight[%q]", t), w,
				fmt.Sprintf("must be within [%g, %g]", policy.MinKeyWeight, policy.MaxKeyWeight))
		}
	}
	switch {
	case h.TenantOf == nil && h.Sep == "":
		return policy.InvalidConfig("key path separator", `""`, "tenants need a non-empty separator (WithKeyPath) or a mapping (WithKeyTenant)")
	case h.TenantOf != nil && h.Sep != "":
		return policy.InvalidConfig("key path separator", fmt.Sprintf("%q", policy.CleanTextN(h.Sep, 16)), "give either a separator (WithKeyPath) or a mapping (WithKeyTenant), not both")
	case len(h.Sep) > policy.MaxNameLen:
		return policy.InvalidConfig("key path separator", len(h.Sep), "a separator is at most MaxNameLen bytes")
	}
	return nil
}

// hier is the core's record of the active keys' tenants (nil without a
// hierarchy: the one-level path pays nothing for it).
type hier struct {
	tenantOf func(key string) string
	weights  map[string]float64
	keys     map[string]*hierKey    // active keys
	tenants  map[string]*hierTenant // tenants with an active key
	// weightSum is Σ W_t over the tenants with an active key, in
	// millionths: what a tenant's fair share of the whole divides by.
	weightSum int64
}

type hierKey struct {
	t      *hierTenant
	jobs   int     // pending + running, as the ledger counts them
	weight float64 // the key's weight counted in t.sum
}

type hierTenant struct {
	name string
	// cursor is where the tenant's next key to become active joins, at
	// the least: one job of the tenant (its type's default cost over W_t)
	// after the key that joined last, so that keys joining together are
	// staggered as a tenant's round of its keys would serve them.
	cursor time.Duration
	keys   int     // active keys
	jobs   int     // pending + running jobs of its keys
	sum    int64   // S_t in millionths: integers, so no drift as keys come and go
	weight float64 // W_t
}

// micro is weight w in millionths (weights are at least 1e-6). S_t stays
// exact below 9·10^6 active keys of the largest weight in one tenant.
func micro(w float64) int64 { return int64(math.Round(w * 1e6)) }

// SetHierarchy turns hierarchical fair share on, before any job is
// submitted. h must be valid (CheckHierarchy).
func (c *Core) SetHierarchy(h Hierarchy) error {
	if err := CheckHierarchy(h); err != nil {
		return err
	}
	of := h.TenantOf
	if of == nil {
		sep := h.Sep
		of = func(key string) string {
			if i := strings.Index(key, sep); i >= 0 {
				return key[:i]
			}
			return key
		}
	}
	c.hier = &hier{tenantOf: of, weights: maps.Clone(h.Weights),
		keys: map[string]*hierKey{}, tenants: map[string]*hierTenant{}}
	return nil
}

// Tenant returns the tenant of fairness key key: the key itself without a
// hierarchy.
func (c *Core) Tenant(key string) string {
	if c.hier == nil {
		return key
	}
	return c.hier.tenant(key)
}

func (h *hier) tenant(key string) (t string) {
	defer func() {
		if recover() != nil {
			t = key // a panicking mapping makes the key its own tenant
		}
	}()
	if t = h.tenantOf(key); t != "" {
		return t
	}
	return key
}

// join counts one more job of key, of weight w, whose cost as the ledger
// joined it is cost, and returns the cost the key should have: staggered
// behind the tenant's other active keys, if any. hint is the job's cost
// (its type's default).
func (h *hier) join(key string, w float64, cost, hint time.Duration) time.Duration {
	if k := h.keys[key]; k != nil {
		k.jobs++
		k.t.jobs++
		return cost
	}
	name := h.tenant(key)
	t := h.tenants[name]
	if t == nil {
		t = &hierTenant{name: name, weight: policy.DefaultKeyWeight}
		if tw, ok := h.weights[name]; ok {
			t.weight = tw
		}
		h.tenants[name] = t
		h.weightSum += micro(t.weight)
	} else { // siblings are active: join behind the last one
		cost = max(cost, t.cursor)
	}
	t.cursor = policy.AddSat(cost, policy.Weighted(hint, t.weight))
	t.keys++
	t.jobs++
	t.sum += micro(w)
	h.keys[key] = &hierKey{t: t, jobs: 1, weight: w}
	return cost
}

// leave counts one job of key less; a key left without jobs leaves its
// tenant's sum, and a tenant left without keys is forgotten.
func (h *hier) leave(key string) {
	k := h.keys[key]
	if k == nil {
		return
	}
	k.t.jobs--
	if k.jobs--; k.jobs > 0 {
		return
	}
	delete(h.keys, key)
	t := k.t
	t.keys--
	t.sum -= micro(k.weight)
	if t.keys == 0 {
		delete(h.tenants, t.name)
		h.weightSum -= micro(t.weight)
	}
}

// share returns φ_k, the weight key's charge divides by, for a key of
// weight w (its weight now: a change since it joined is taken in here).
func (h *hier) share(key string, w float64) float64 {
	k := h.keys[key]
	if k == nil {
		return w
	}
	if k.weight != w { // SetKeyWeight or a policy changed it while active
		k.t.sum += micro(w) - micro(k.weight)
		k.weight = w
	}
	return k.t.weight * w / (float64(k.t.sum) / 1e6)
}

// joinKey is the ledger's Join of j's key, and the hierarchy's count: it
// returns the key's accumulated cost.
func (c *Core) joinKey(j *Job, now time.Time) time.Duration {
	cost := c.ledger.Join(j.Key, now)
	if c.hier == nil {
		return cost
	}
	if want := c.hier.join(j.Key, c.keyWeight(j.Key), cost, j.slot.Config.DefaultCost); want > cost {
		cost = c.ledger.Raise(j.Key, want)
	}
	return cost
}

// rebaseHier lowers the tenants' cursors as the ledger lowered the costs.
func (c *Core) rebaseHier(shift time.Duration) {
	if c.hier != nil {
		for _, t := range c.hier.tenants {
			t.cursor = max(t.cursor-shift, 0)
		}
	}
}

// leaveKey is the hierarchy's side of a job of key leaving the ledger.
func (c *Core) leaveKey(key string) {
	if c.hier != nil {
		c.hier.leave(key)
	}
}

// chargeWeight is the weight admitting a job of key divides its cost by.
func (c *Core) chargeWeight(key string) float64 {
	w := c.keyWeight(key)
	if c.hier != nil {
		return c.hier.share(key, w)
	}
	return w
}

// reweigh brings key's weight in its tenant's sum up to date, if the key
// is active: its weight changed.
func (c *Core) reweigh(key string) {
	if c.hier != nil {
		c.hier.share(key, c.keyWeight(key))
	}
}

// reweighAll is reweigh of every active key: a policy replaced the weights.
func (c *Core) reweighAll() {
	if c.hier != nil {
		for key := range c.hier.keys {
			c.hier.share(key, c.keyWeight(key))
		}
	}
}
