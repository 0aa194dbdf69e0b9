package policyfile_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/policyfile"
)

// TestLoadExample: the example file gives the policy it spells out, and
// starts a scheduler.
func TestLoadExample(t *testing.T) {
	p, err := policyfile.Load("testdata/tiers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ten := fairsched.Priority(10)
	want := fairsched.Policy{
		Version:        "tiers-2026-11-28",
		MaxConcurrency: 10,
		Tiers: map[fairsched.Priority]fairsched.TierConfig{
			10: {MinShare: 0.4, BurstShare: 0.7}, 5: {MinShare: 0.4, BurstShare: 0.6}, 1: {MinShare: 0.2, BurstShare: 0.3},
		},
		Tenants:    &fairsched.TenantsConfig{Default: fairsched.TenantLimits{MaxRunning: 5, MaxPending: 500}, Keys: map[string]fairsched.TenantLimits{"acme": {MaxRunning: 8}}},
		KeyWeights: map[string]float64{"acme": 2},
		Types: map[fairsched.JobType]fairsched.JobTypeConfig{
			"remediate": {Priority: 10, DefaultCost: 5 * time.Second},
			"copilot":   {Priority: 5, DefaultCost: 2 * time.Second, QueueTimeout: time.Minute},
			"backfill": {Priority: 1, DefaultCost: 30 * time.Second, ConflictGroup: "table",
				Retry: fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Second, MaxBackoff: 30 * time.Second}},
		},
		RateLimits: []fairsched.RateLimit{{Scope: fairsched.RateForType("backfill"), PerSecond: 2, Burst: 4}},
		Workloads: []fairsched.Workload{
			{Name: "incident", MatchLabels: map[string]string{"class": "incident"}, Priority: &ten, FairnessLabelKey: "tenant"},
			{Name: "staging", MatchExpressions: []fairsched.LabelRequirement{
				{Key: "env", Op: fairsched.SelectorIn, Values: []string{"dev", "stage"}},
				{Key: "urgent", Op: fairsched.SelectorDoesNotExist},
			}, Tokens: 10 * time.Second, QueueTimeout: 5 * time.Minute},
		},
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("policy (-want +got):\n%s", diff)
	}
	opt, err := policyfile.Option("testdata/tiers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := fairsched.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())
	snap, err := s.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.Types, snap.Types); diff != "" {
		t.Errorf("registered types (-want +got):\n%s", diff)
	}
}

// TestFileErrors: each error names the file, line and column, the field,
// and what would be valid; it wraps ErrInvalidConfig.
func TestFileErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"unknown field", "tiers:\n  8: {min_share: 0.5, burst: 1}\n",
			`p.yaml:2:23: tiers.8.burst: fairsched: invalid config: unknown field "burst"; valid here: min_share, burst_share, max_running, lend_idle`},
		{"unknown top-level field", "max_concurency: 4\n",
			`p.yaml:1:1: max_concurency: fairsched: invalid config: unknown field "max_concurency"; valid here: version, max_concurrency,`},
		{"wrong kind", "max_concurrency: many\n", `p.yaml:1:18: max_concurrency: fairsched: invalid config: want a whole number, not "many"`},
		{"bad duration", "types:\n  a: {priority: 1, default_cost: soon}\n", `p.yaml:2:34: types.a.default_cost: fairsched: invalid config: want a duration such as "30s"`},
		{"tier name", "max_concurrency: 4\ntiers:\n  p0: {max_running: 1}\n", `p.yaml:3:3: tiers.p0: fairsched: invalid config: a tier is named by its priority, a whole number from 0 up, not "p0"`},
		{"tier share", "max_concurrency: 4\ntiers:\n  8: {min_share: 0.5, burst_share: 1.5}\n", `p.yaml:3:6: tiers.8: fairsched: invalid config:`},
		{"shares over 1", "max_concurrency: 4\ntiers:\n  8: {min_share: 0.6, burst_share: 1}\n  4: {min_share: 0.6, burst_share: 1}\n", `p.yaml:3:3: tiers: fairsched: invalid config:`},
		{"selector", "workloads:\n  - name: w\n    priority: 1\n    match_expressions: [{key: env, operator: Like, values: [x]}]\n",
			`p.yaml:2:5: workloads[0]: fairsched: invalid config: Workloads[0 "w"].MatchExpressions[0].Op = Like: must be In, NotIn, Exists or DoesNotExist`},
		{"type", "types:\n  a: {priority: 1, default_cost: 1s, conflict_mode: sometimes}\n", `p.yaml:2:53: types.a.conflict_mode: fairsched: invalid config: ConflictMode = sometimes: must be "exclusive" or "shared"`},
		{"rate scope", "rate_limits: [{scope: tenant, name: a, per_second: 1, burst: 1}]\n", `p.yaml:1:23: rate_limits[0].scope: fairsched: invalid config: scope = tenant: must be "type", "group" or "key"`},
		{"syntax", "tiers: [\n", `p.yaml:1: fairsched: invalid config: yaml: line 1:`},
		{"two documents", "version: a\n---\nversion: b\n", `p.yaml:3:1: fairsched: invalid config: a policy file holds one YAML document`},
		{"alias", "key_weights: &w {a: 1}\ntenants: *w\n", `p.yaml:2:10: tenants: fairsched: invalid config: aliases are not supported`},
	} {
		_, err := policyfile.Parse("p.yaml", []byte(tc.yaml))
		var fe *policyfile.Error
		if !errors.Is(err, fairsched.ErrInvalidConfig) || !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: Parse = %v\nwant an *Error wrapping ErrInvalidConfig, starting %s", tc.name, err, tc.want)
		}
	}
}

// TestEmptyFile: an empty file is a policy that sets nothing.
func TestEmptyFile(t *testing.T) {
	p, err := policyfile.Parse("empty.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fairsched.Policy{}, p); diff != "" {
		t.Errorf("policy of an empty file (-want +got):\n%s", diff)
	}
}
