package policyfile

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/fairsched/fairsched/policy"
)

// checker turns the decoded file into a Policy, checking each part where
// the file states it, so that an error points at its line.
type checker struct {
	*walker
	maxConcurrency int
}

// at records err, if any, at the node of path (or of the nearest parent
// the file states).
func (c *checker) at(path string, err error) bool {
	if err == nil {
		return false
	}
	n := c.nodes[path]
	for p := path; n == nil && p != ""; {
		p = parent(p)
		n = c.nodes[p]
	}
	e := &Error{File: c.file, Field: path, Err: err}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	c.errs = append(c.errs, e)
	return true
}

func parent(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '.' || path[i] == '[' {
			return path[:i]
		}
	}
	return ""
}

func (c *checker) policy(f *file) policy.Policy {
	p := policy.Policy{Version: f.Version, MaxConcurrency: f.MaxConcurrency, KeyWeights: f.KeyWeights}
	if f.Version != "" {
		c.at("version", policy.Policy{Version: f.Version}.Validate(policy.DefaultLimits()))
	}
	if f.MaxConcurrency < 0 {
		c.at("max_concurrency", policy.InvalidConfig("max_concurrency", f.MaxConcurrency, "must be positive (absent or 0: as the options say)"))
	}
	c.maxConcurrency = f.MaxConcurrency
	p.Tiers = c.tiers(f.Tiers)
	p.Tenants = c.tenants(f)
	for _, k := range slices.Sorted(maps.Keys(f.KeyWeights)) {
		c.at("key_weights."+k, policy.ValidateKeyWeight(k, f.KeyWeights[k]))
	}
	p.Types = c.types(f.Types, p.Tiers)
	p.Groups = c.groups(f.Groups)
	p.RateLimits = c.rates(f.RateLimits)
	p.Workloads = c.workloads(f.Workloads)
	if len(c.errs) == 0 {
		c.at("", p.Validate(policy.DefaultLimits())) // what spans the parts
	}
	return p
}

func (c *checker) tiers(ft map[int]fileTier) map[policy.Priority]policy.TierConfig {
	if ft == nil {
		return nil
	}
	out := map[policy.Priority]policy.TierConfig{}
	for _, p := range slices.Sorted(maps.Keys(ft)) {
		t := ft[p]
		cfg := policy.TierConfig{MinShare: t.MinShare, BurstShare: t.BurstShare, MaxRunning: t.MaxRunning, LendIdle: t.LendIdle}
		if !c.at(fmt.Sprintf("tiers.%d", p), policy.ValidateTiers(map[policy.Priority]policy.TierConfig{policy.Priority(p): cfg}, c.maxConcurrency)) {
			out[policy.Priority(p)] = cfg
		}
	}
	if len(out) == len(ft) {
		c.at("tiers", policy.ValidateTiers(out, c.maxConcurrency))
	}
	return out
}

func (c *checker) tenants(f *file) *policy.TenantsConfig {
	if f.Tenants == nil && f.KeyLimits == nil {
		return nil
	}
	t := &policy.TenantsConfig{}
	if l := f.Tenants; l != nil {
		t.Default = policy.TenantLimits{MaxRunning: l.MaxRunning, MaxPending: l.MaxPending}
		c.at("tenants", t.Default.Validate("tenants"))
	}
	for _, k := range slices.Sorted(maps.Keys(f.KeyLimits)) {
		if t.Keys == nil {
			t.Keys = map[string]policy.TenantLimits{}
		}
		l := policy.TenantLimits{MaxRunning: f.KeyLimits[k].MaxRunning, MaxPending: f.KeyLimits[k].MaxPending}
		t.Keys[k] = l
		one := policy.TenantsConfig{Keys: map[string]policy.TenantLimits{k: l}}
		c.at("key_limits."+k, one.Validate())
	}
	return t
}

func (c *checker) types(ft map[string]fileType, tiers map[policy.Priority]policy.TierConfig) map[policy.JobType]policy.JobTypeConfig {
	if ft == nil {
		return nil
	}
	// Priority 0 is valid only in order-only mode, which the options set:
	// New checks it again with them.
	limits := policy.Limits{MaxConcurrency: c.maxConcurrency, Tiers: tiers, PriorityMode: policy.PriorityOrderOnly}
	out := map[policy.JobType]policy.JobTypeConfig{}
	for _, name := range slices.Sorted(maps.Keys(ft)) {
		t := ft[name]
		path := "types." + name
		cfg := policy.JobTypeConfig{DefaultCost: t.DefaultCost, MaxConcurrency: t.MaxConcurrency, ConflictGroup: policy.ConflictGroup(t.ConflictGroup),
			Priority: policy.Priority(t.Priority), QueueTimeout: t.QueueTimeout, Coalesce: t.Coalesce, RequiresWorker: t.RequiresWorker}
		if c.at(path+".conflict_mode", cfg.ConflictMode.UnmarshalText([]byte(t.ConflictMode))) {
			continue
		}
		if r := t.Retry; r != nil {
			cfg.Retry = policy.RetryPolicy{MaxAttempts: r.MaxAttempts, MinBackoff: r.MinBackoff, MaxBackoff: r.MaxBackoff,
				Jitter: r.Jitter, MaxInterruptions: r.MaxInterruptions}
		}
		if !c.at(path, cfg.ValidateFor(policy.JobType(name), limits)) {
			out[policy.JobType(name)] = cfg
		}
	}
	return out
}

func (c *checker) groups(fg *fileGroups) *policy.GroupsConfig {
	if fg == nil {
		return nil
	}
	gs := &policy.GroupsConfig{DefaultWeight: fg.DefaultWeight, Groups: map[string]policy.GroupConfig{}}
	if gs.DefaultWeight == 0 && c.nodes["groups.default_weight"] == nil {
		gs.DefaultWeight = 1
	}
	for _, m := range []map[string]int{fg.Weights, fg.MinSlots, fg.Limits} {
		for name := range m {
			gs.Groups[name] = policy.GroupConfig{Weight: gs.DefaultWeight}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(gs.Groups)) {
		g := gs.Groups[name]
		if w, ok := fg.Weights[name]; ok {
			g.Weight = w
		}
		g.MinSlots, g.Limit = fg.MinSlots[name], fg.Limits[name]
		gs.Groups[name] = g
		path := "groups.weights." + name
		if _, ok := fg.Weights[name]; !ok {
			path = "groups." + name
		}
		c.at(path, g.Validate(name))
	}
	if c.maxConcurrency > 0 {
		c.at("groups", gs.Validate(c.maxConcurrency))
	}
	return gs
}

var scopes = map[string]policy.RateScopeKind{"type": policy.RateType, "group": policy.RateGroup, "key": policy.RateKey}

func (c *checker) rates(fr []fileRate) []policy.RateLimit {
	var out []policy.RateLimit
	for i, r := range fr {
		path := "rate_limits[" + strconv.Itoa(i) + "]"
		kind, ok := scopes[r.Scope]
		if !ok {
			c.at(path+".scope", policy.InvalidConfig("scope", policy.CleanTextN(r.Scope, 64), `must be "type", "group" or "key"`))
			continue
		}
		l := policy.RateLimit{Scope: policy.RateScope{Kind: kind, Name: r.Name}, PerSecond: r.PerSecond, Burst: r.Burst}
		if !c.at(path, policy.ValidateRateLimits([]policy.RateLimit{l})) {
			out = append(out, l)
		}
	}
	if len(out) == len(fr) {
		c.at("rate_limits", policy.ValidateRateLimits(out))
	}
	return out
}

func (c *checker) workloads(fw []fileWorkload) []policy.Workload {
	var out []policy.Workload
	for i, f := range fw {
		w := policy.Workload{Name: f.Name, MatchLabels: f.MatchLabels, Tokens: f.Tokens, QueueTimeout: f.QueueTimeout, FairnessLabelKey: f.FairnessLabelKey}
		if f.Priority != nil {
			p := policy.Priority(*f.Priority)
			w.Priority = &p
		}
		for _, e := range f.MatchExpressions {
			w.MatchExpressions = append(w.MatchExpressions, policy.LabelRequirement{Key: e.Key, Op: policy.SelectorOp(e.Operator), Values: e.Values})
		}
		if !c.at(fmt.Sprintf("workloads[%d]", i), policy.ValidateWorkload(i, w)) {
			out = append(out, w)
		}
	}
	if len(out) == len(fw) {
		_, err := policy.CompileWorkloads(out)
		c.at("workloads", err)
	}
	return out
}
