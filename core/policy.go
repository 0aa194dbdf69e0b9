package core

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/queue"
)

// livePolicy is what the core keeps of the policy applied last
// (ApplyPolicy): the compiled workloads, and the applied version.
type livePolicy struct {
	workloads *policy.Workloads
	version   string
	applied   uint64 // policies applied since the start
}

// SetLabels gives j its labels, before Submit; the caller has validated
// them (policy.ValidateLabels) and does not change them afterwards.
func (j *Job) SetLabels(l policy.Labels) {
	if j.Rare != nil || len(l) > 0 {
		j.more().labels = l
	}
}

// Labels are j's labels (SetLabels).
func (j *Job) Labels() policy.Labels { return j.rare().labels }

// SetWorkloads installs the workload rules, before the core's first
// Submit (New's policy); a running core changes them with ApplyPolicy.
func (c *Core) SetWorkloads(ws *policy.Workloads) { c.installWorkloads(ws) }

// installWorkloads makes ws the workload rules. Rules that set a priority
// put jobs in tiers other than their types': the queue then asks each job
// its tier (it never stops asking: jobs may wait in such tiers still).
func (c *Core) installWorkloads(ws *policy.Workloads) {
	c.pol.workloads = ws
	if ws.SetsPriority() {
		c.queue.TierOf(func(qj *queue.Job) policy.Priority { return jobOf(qj).Priority() })
	}
}

// applyWorkload gives j what the first workload rule its labels match
// sets, where j set nothing itself: its fairness key (from the rule's
// label, for a job without one), tokens, queue timeout and its tier — the
// priority it competes at and whose cap and share it counts against —
// unless an inherited priority (a floor) was given at the call. O(rules).
func (c *Core) applyWorkload(j *Job) {
	if c.pol.workloads == nil {
		return
	}
	labels := j.Labels()
	eff := c.pol.workloads.Match(labels)
	if eff == nil {
		return
	}
	if k := eff.FairnessLabelKey; k != "" && j.Key == "" {
		j.Key = labels[k]
	}
	if eff.Tokens > 0 && j.Tokens() == 0 {
		j.SetTokens(eff.Tokens)
	}
	if eff.QueueTimeout > 0 && j.TTL() == 0 {
		j.SetTTL(eff.QueueTimeout)
	}
	if eff.HasPriority && !j.Floored {
		j.slot = c.usage.AtTier(j.slot, eff.Priority)
		c.declareTier(eff.Priority)
	}
}

// declareTier makes tier p known to the queue the first time a job is put
// in it, blocked as its cap and share say.
func (c *Core) declareTier(p policy.Priority) {
	if c.queue.HasTier(p) {
		return
	}
	c.queue.AddTier(p)
	if c.usage.Shares() {
		c.syncTiers()
	} else if c.usage.TierFull(p) {
		c.queue.BlockTier(p, true)
	}
}

// AppliedPolicy is the version of the policy applied last and how many
// were applied since the start.
type AppliedPolicy struct {
	Version string
	Seq     uint64
}

// PolicyVersion reports the policy applied last (ApplyPolicy).
func (c *Core) PolicyVersion() AppliedPolicy {
	return AppliedPolicy{Version: c.pol.version, Seq: c.pol.applied}
}

// ApplyPolicy replaces the policy of a running core, all of it or none:
// any error (wrapping ErrInvalidConfig) changes nothing. The tiers, tenant
// and key limits, key weights, groups' settings and workloads become the
// policy's; a MaxConcurrency the policy sets replaces the cap; its new
// types are registered. They reach the queued jobs at the next Dispatch;
// running jobs are never stopped — a tier, group or key now over its cap
// starts nothing until enough of its jobs have ended.
func (c *Core) ApplyPolicy(now time.Time, p policy.Policy) error {
	next, ws, err := c.checkPolicy(p)
	if err != nil {
		return err
	}
	c.queue.At(now)
	if next.MaxConcurrency != c.limits.MaxConcurrency {
		c.limits.MaxConcurrency = next.MaxConcurrency
		c.usage.SetMax(next.MaxConcurrency)
	}
	c.limits.KeyWeights = next.KeyWeights
	c.reweighAll()
	c.applyTenants(next.Tenants)
	c.applyTiers(next.Tiers)
	if next.Groups != nil {
		c.applyGroups(next.Groups)
	}
	for _, t := range slices.Sorted(maps.Keys(p.Types)) {
		if _, ok := c.usage.Lookup(t); !ok {
			if err := c.RegisterType(t, p.Types[t]); err != nil {
				panic(fmt.Sprintf("core: a checked type does not register: %v", err)) // checkPolicy checked it
			}
		}
	}
	c.installWorkloads(ws)
	c.pol.version = p.Version
	c.pol.applied++
	return nil
}

// checkPolicy returns the limits p gives the running core, and its
// compiled workloads, or why p cannot apply now.
func (c *Core) checkPolicy(p policy.Policy) (policy.Limits, *policy.Workloads, error) {
	next := c.limits
	next.Tiers, next.Tenants, next.KeyWeights = nil, nil, nil
	if next.Groups != nil {
		next.Groups = &policy.GroupsConfig{DefaultWeight: 1}
	}
	if p.Groups != nil && c.limits.Groups == nil {
		return next, nil, policy.InvalidConfig("Policy.Groups", "groups", "a scheduler started without group settings cannot start splitting its cap while running: start it with them")
	}
	if p.RateLimits == nil {
		p.RateLimits = c.limits.RateLimits
	}
	if !sameRates(p.RateLimits, c.limits.RateLimits) {
		return next, nil, policy.InvalidConfig("Policy.RateLimits", len(p.RateLimits), "rate limits cannot change while running: start the scheduler with them")
	}
	if err := p.Validate(next); err != nil {
		return next, nil, err
	}
	next = p.Limits(next)
	for _, t := range slices.Sorted(maps.Keys(p.Types)) {
		if slot, ok := c.usage.Lookup(t); ok && slot.Config != p.Types[t] {
			return next, nil, policy.InvalidConfig(fmt.Sprintf("Policy.Types[%q]", policy.CleanTextN(string(t), 64)), "a new config",
				"a registered type keeps its config while running: give the changed type a new name")
		}
	}
	ws, err := policy.CompileWorkloads(p.Workloads)
	if ws.Len() == 0 {
		ws = nil // no rule: Submit matches nothing
	}
	return next, ws, err
}

// sameRates reports whether a and b limit the same scopes alike, in any
// order.
func sameRates(a, b []policy.RateLimit) bool {
	key := func(r policy.RateLimit) string { return r.Scope.String() }
	x, y := slices.Clone(a), slices.Clone(b)
	slices.SortFunc(x, func(p, q policy.RateLimit) int { return cmpString(key(p), key(q)) })
	slices.SortFunc(y, func(p, q policy.RateLimit) int { return cmpString(key(p), key(q)) })
	return slices.Equal(x, y)
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// applyTenants installs the tenant limits and counts the running jobs of
// each key again (they are counted only with limits); keys that may now
// run more are released.
func (c *Core) applyTenants(t *policy.TenantsConfig) {
	held := slices.Collect(maps.Keys(c.keyRunning))
	c.limits.Tenants = t
	clear(c.keyRunning)
	if t != nil {
		for _, j := range c.running {
			c.keyRunning[j.Key]++
		}
	}
	slices.Sort(held)
	for _, key := range held {
		if !c.keyRateBlocked(key) && (t == nil || t.For(key).MaxRunning == 0 || c.keyRunning[key] < t.For(key).MaxRunning) {
			c.queue.ReleaseKey(key)
		}
	}
}

// applyTiers installs the tier shares and caps, counts the waiting jobs of
// each tier again, and re-asks every tier whether it may start a job.
func (c *Core) applyTiers(tiers map[policy.Priority]policy.TierConfig) {
	c.limits.Tiers = tiers
	c.usage.ReplaceTiers(tiers)
	for _, g := range c.groups {
		g.waiting = nil
	}
	if c.usage.Shares() {
		c.queue.Each(func(qj *queue.Job) { c.countWaiting(jobOf(qj), 1) })
		c.syncTiers()
		return
	}
	for _, p := range c.usage.Tiers() {
		c.queue.BlockTier(p, c.usage.TierFull(p))
	}
}

// applyGroups installs the groups' weights, minimums and limits, and
// splits the cap again.
func (c *Core) applyGroups(gs *policy.GroupsConfig) {
	c.limits.Groups = gs
	names := slices.Sorted(maps.Keys(c.groups))
	for _, name := range names {
		c.groups[name].limit = gs.Config(name).Limit
	}
	c.reallocate(AllocWeightChange, "")
	for _, name := range names {
		if g := c.groups[name]; c.room(g) > 0 {
			c.queue.ReleaseGroup(g.q)
		}
	}
}
