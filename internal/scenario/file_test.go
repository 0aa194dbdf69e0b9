package scenario_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/scenario"
)

const fullScenario = `name: full
title: "Every section"
scheduler:
  max_concurrency: 8
  aging: {grace: 3s, interval: 1s, step: 2, max_priority: 8, urgent_threshold: 7}
  groups:
    default_weight: 1
    weights: {B: 1, A: 3}
    min_slots: {A: 1}
    limits: {A: 6}
  tiers:
    8: {min_share: 0.5}
    5: {min_share: 0.25, burst_share: 0.5, lend_idle: true}
  tenants: {max_running: 2, max_pending: 10}
  key_limits: {gold: {max_running: 4}, bronze: {max_pending: 1}}
  key_weights: {gold: 2, bronze: 0.5}
types:
  - name: pdf
    priority: 5
    default_cost: 10s
    conflict_group: docs
    requires_worker: true
    queue_timeout: 30s
  - name: excel
    priority: 8
    default_cost: 1m30s
    max_concurrency: 2
    requires_worker: true
  - {name: mail, priority: 1, default_cost: 500ms}
workers:
  - id: w1
    slots: [[pdf], [pdf, excel]]
  - {id: w2, slots: [[excel]]}
jobs:
  - {type: pdf, id: doc1, key: alice, at: 0, duration: 5, group: A, mode: queued}
  - {type: pdf, id: doc1, key: alice, at: 6, duration: 1, tag: "#2", mode: on-demand}
  - {type: mail, id: m1, duration: 2, refused: true}
generators:
  - {type: excel, key: gold, group: B, count: 3, start: 2, every: 4, duration: 3}
  - {type: mail, count: 2, duration: 1}
`

// ignoreOptions leaves out the scheduler options, functions cmp cannot
// compare; the tests count them and hand them to the scheduler instead.
var ignoreOptions = cmpopts.IgnoreFields(scenario.Scenario{}, "Options")

func TestParseFull(t *testing.T) {
	sc, err := scenario.Parse("full.yaml", []byte(fullScenario))
	if err != nil {
		t.Fatal(err)
	}
	want := scenario.Scenario{
		Name:               "full",
		Title:              "Every section",
		MaxConcurrency:     8,
		KeyWeights:         map[string]float64{"bronze": 0.5, "gold": 2},
		GroupWeights:       map[string]int{"A": 3, "B": 1},
		DefaultGroupWeight: 1,
		Aging:              &fairsched.AgingConfig{GracePeriod: 3 * time.Second, Interval: time.Second, Step: 2, MaxEffectivePriority: 8, UrgentThreshold: 7},
		Types: []scenario.Type{
			{Name: "pdf", Config: fairsched.JobTypeConfig{Priority: 5, DefaultCost: 10 * time.Second, ConflictGroup: "docs", RequiresWorker: true, QueueTimeout: 30 * time.Second}},
			{Name: "excel", Config: fairsched.JobTypeConfig{Priority: 8, DefaultCost: 90 * time.Second, MaxConcurrency: 2, RequiresWorker: true}},
			{Name: "mail", Config: fairsched.JobTypeConfig{Priority: 1, DefaultCost: 500 * time.Millisecond}},
		},
		Workers: []fairsched.WorkerSpec{
			{ID: "w1", Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{"pdf"}}, {Types: []fairsched.JobType{"pdf", "excel"}}}},
			{ID: "w2", Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{"excel"}}}},
		},
		Tiers: map[fairsched.Priority]fairsched.TierConfig{
			5: {MinShare: 0.25, BurstShare: 0.5, LendIdle: true},
			8: {MinShare: 0.5, BurstShare: 1},
		},
		Jobs: []scenario.Job{
			{Type: "pdf", ID: "doc1", Key: "alice", Arrival: 0, Duration: 5, Group: "A", Mode: scenario.ModeQueued},
			{Type: "pdf", ID: "doc1", Key: "alice", Arrival: 6, Duration: 1, Tag: "#2", Mode: scenario.ModeOnDemand},
			{Type: "mail", ID: "m1", Duration: 2, Refused: true},
			{Type: "excel", ID: "gold-1", Key: "gold", Group: "B", Arrival: 2, Duration: 3},
			{Type: "excel", ID: "gold-2", Key: "gold", Group: "B", Arrival: 6, Duration: 3},
			{Type: "excel", ID: "gold-3", Key: "gold", Group: "B", Arrival: 10, Duration: 3},
			{Type: "mail", ID: "mail-1", Arrival: 0, Duration: 1},
			{Type: "mail", ID: "mail-2", Arrival: 0, Duration: 1},
		},
	}
	if diff := cmp.Diff(want, sc, ignoreOptions); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
	// default_weight 1, weights 2, min_slots 1, limits 1, tiers 2,
	// tenants 1, key_limits 2, key_weights 2.
	if got := len(sc.Options); got != 12 {
		t.Errorf("len(Options) = %d, want 12", got)
	}

	// The scheduler takes the options, types and workers as they are.
	opts := append([]fairsched.Option{fairsched.WithClock(clock.NewMock()), fairsched.WithMaxConcurrency(sc.MaxConcurrency), fairsched.WithAging(*sc.Aging)}, sc.Options...)
	s, err := fairsched.New(opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer func() {
		if err := s.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	for _, ty := range sc.Types {
		if err := s.RegisterType(ty.Name, ty.Config); err != nil {
			t.Errorf("RegisterType(%s): %v", ty.Name, err)
		}
	}
	for _, w := range sc.Workers {
		if err := s.RegisterWorker(w); err != nil {
			t.Errorf("RegisterWorker(%s): %v", w.ID, err)
		}
	}
}

// TestParseOptionsApply checks that the options carry the file's values: a
// group limit of 1 and a key's running bound of 1 serialize their jobs.
func TestParseOptionsApply(t *testing.T) {
	sc, err := scenario.Parse("opts.yaml", []byte(`scheduler:
  max_concurrency: 4
  groups: {limits: {A: 1}}
  key_limits: {k: {max_running: 1}}
types: [{name: t, priority: 4, default_cost: 1s}]
jobs:
  - {type: t, id: a1, group: A, duration: 2, mode: queued}
  - {type: t, id: a2, group: A, duration: 2, mode: queued}
  - {type: t, id: k1, key: k, duration: 3}
  - {type: t, id: k2, key: k, duration: 3}
  - {type: t, id: free, duration: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := scenario.Run(sc, clock.NewMock(), scenario.Poll)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"t(a1)": 0, "t(a2)": 2, "t(k1)": 0, "t(k2)": 3, "t(free)": 0}
	if diff := cmp.Diff(want, res.Start); diff != "" {
		t.Errorf("starts (-want +got):\n%s", diff)
	}
}

func TestParseScoring(t *testing.T) {
	for name, tc := range map[string]struct {
		yaml string
		want *fairsched.ScoreConfig
	}{
		"absent":   {"", nil},
		"defaults": {"scheduler: {scoring: {}}\n", &fairsched.ScoreConfig{}},
		"set": {"scheduler:\n  scoring: {priority_weight: 100, age_weight: 2.5, rarity_bonus: 1, on_demand_bonus: 7, on_demand_age_weight: 0.5}\n",
			&fairsched.ScoreConfig{PriorityWeight: 100, AgeWeight: 2.5, RarityBonus: 1, OnDemandBonus: 7, OnDemandAgeWeight: 0.5}},
	} {
		t.Run(name, func(t *testing.T) {
			sc, err := scenario.Parse("s.yaml", []byte(tc.yaml+"types: [{name: t, priority: 1, default_cost: 1s}]\njobs: [{type: t, id: a, duration: 1}]\n"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, sc.Scoring); diff != "" {
				t.Errorf("Scoring (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunParsed plays a parsed two-job scenario on the real scheduler.
func TestRunParsed(t *testing.T) {
	sc, err := scenario.Parse("tiny.yaml", []byte(`types:
  - {name: clone, priority: 1, default_cost: 2s}
jobs:
  - {type: clone, id: r1, key: dev, at: 0, duration: 2}
  - {type: clone, id: r2, at: 1, duration: 3}
`))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Name != "tiny" {
		t.Errorf("Name = %q, want tiny", sc.Name)
	}
	res, err := scenario.Run(sc, clock.NewMock(), scenario.Poll)
	if err != nil {
		t.Fatal(err)
	}
	// Tier 1 runs one job at a time: r2 waits for r1.
	if diff := cmp.Diff(map[string]int{"clone(r1)": 0, "clone(r2)": 2}, res.Start); diff != "" {
		t.Errorf("starts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"clone(r1)": 2, "clone(r2)": 5}, res.End); diff != "" {
		t.Errorf("ends (-want +got):\n%s", diff)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	body := "types: [{name: t, priority: 1, default_cost: 1s}]\njobs: [{type: t, id: a, duration: 1}]\n"
	path := filepath.Join(dir, "my-scenario.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Name != "my-scenario" {
		t.Errorf("Name = %q, want my-scenario", sc.Name)
	}

	named := filepath.Join(dir, "other.yml")
	if err := os.WriteFile(named, []byte("name: given\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	if sc, err := scenario.Load(named); err != nil || sc.Name != "given" {
		t.Errorf("Load(named) = %q, %v; want given", sc.Name, err)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(body+"jbos: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = scenario.Load(bad)
	if want := bad + `:3: unknown field "jbos" at top level`; err == nil || err.Error() != want {
		t.Errorf("Load(bad) = %v, want %s", err, want)
	}

	if _, err := scenario.Load(filepath.Join(dir, "missing.yaml")); !os.IsNotExist(err) {
		t.Errorf("Load(missing) = %v, want a not-exist error", err)
	}
}

func TestGenerators(t *testing.T) {
	const text = `types:
  - {name: t, priority: 1, default_cost: 1s}
  - {name: u, priority: 2, default_cost: 1s}
jobs:
  - {type: t, id: x, at: 3, duration: 1}
generators:
  - {type: t, key: alice, count: 3, start: 5, every: 10, duration: 2, mode: on-demand}
  - {type: u, id: "r%02d", group: G, count: 6, start: 10, spread: 20, duration: {min: 1, max: 5}, seed: 7, mode: queued}
  - {type: u, count: 3, spread: 100, duration: 4}
`
	want := []scenario.Job{
		{Type: "t", ID: "x", Arrival: 3, Duration: 1},
		// Fixed spacing.
		{Type: "t", ID: "alice-1", Key: "alice", Arrival: 5, Duration: 2, Mode: scenario.ModeOnDemand},
		{Type: "t", ID: "alice-2", Key: "alice", Arrival: 15, Duration: 2, Mode: scenario.ModeOnDemand},
		{Type: "t", ID: "alice-3", Key: "alice", Arrival: 25, Duration: 2, Mode: scenario.ModeOnDemand},
		// Seeded random arrivals in [10, 30) and durations in [1, 5],
		// numbered in arrival order.
		{Type: "u", ID: "r01", Group: "G", Arrival: 14, Duration: 2, Mode: scenario.ModeQueued},
		{Type: "u", ID: "r02", Group: "G", Arrival: 18, Duration: 3, Mode: scenario.ModeQueued},
		{Type: "u", ID: "r03", Group: "G", Arrival: 20, Duration: 2, Mode: scenario.ModeQueued},
		{Type: "u", ID: "r04", Group: "G", Arrival: 25, Duration: 1, Mode: scenario.ModeQueued},
		{Type: "u", ID: "r05", Group: "G", Arrival: 26, Duration: 1, Mode: scenario.ModeQueued},
		{Type: "u", ID: "r06", Group: "G", Arrival: 29, Duration: 1, Mode: scenario.ModeQueued},
		// Random arrivals in [0, 100) with the default seed 1, default id.
		{Type: "u", ID: "u-1", Arrival: 10, Duration: 4},
		{Type: "u", ID: "u-2", Arrival: 86, Duration: 4},
		{Type: "u", ID: "u-3", Arrival: 99, Duration: 4},
	}
	first, err := scenario.Parse("gen.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, first.Jobs); diff != "" {
		t.Errorf("jobs (-want +got):\n%s", diff)
	}
	second, err := scenario.Parse("gen.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, second, ignoreOptions); diff != "" {
		t.Errorf("a second parse differs (-first +second):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	// types is one line: the cases' own lines start at 2.
	const types = "types: [{name: pdf, priority: 5, default_cost: 10s, requires_worker: true}, {name: mail, priority: 1, default_cost: 1s}]\n"
	const job = "jobs: [{type: pdf, id: a, duration: 1}]\n"
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown top-level field", types + job + "nmae: x\n",
			`f.yaml:3: unknown field "nmae" at top level`},
		{"expect names no job", types + job + "expect:\n  - {job: pdf(b), start: 3}\n",
			`f.yaml:4: expect 1: no job "pdf(b)" in the scenario (name jobs as type(id), with their tag)`},
		{"expect claims nothing", types + job + "expect:\n  - {job: pdf(a)}\n",
			`f.yaml:4: expect 1: claims nothing: give start, start_by or slot`},
		{"expect count without a step", types + job + "expect:\n  - {group: g, running: 3}\n",
			`f.yaml:4: expect 1: a count of running jobs takes group, at and running, and no job`},
		{"expect unknown field", types + job + "expect:\n  - {job: pdf(a), starts: 3}\n",
			`f.yaml:4: unknown field "starts" in an expectation`},
		{"unknown scheduler field", "scheduler:\n  max_concurrency: 2\n  max_concurency: 3\n" + types + job,
			`f.yaml:3: unknown field "max_concurency" in scheduler`},
		{"unknown aging field", "scheduler:\n  aging:\n    interval: 1s\n    gracee: 3s\n" + types + job,
			`f.yaml:4: unknown field "gracee" in scheduler.aging`},
		{"unknown job field", types + "jobs:\n  - type: pdf\n    id: a\n    duration: 1\n    prio: 3\n",
			`f.yaml:6: unknown field "prio" in a job`},
		{"unknown duration range field", types + "generators:\n  - {type: pdf, count: 1, duration: {min: 1, mx: 2}}\n",
			`f.yaml:3: unknown field "mx" in a duration range`},
		{"unknown type field", "types:\n  - {name: pdf, priority: 5, default_cost: 10s, requires_workers: true}\n" + job,
			`f.yaml:2: unknown field "requires_workers" in a type`},
		{"unknown type in job", types + "jobs:\n  - {type: pdf, id: a, duration: 1}\n  - {type: pfd, id: b, duration: 1}\n",
			`f.yaml:4: job "b": type "pfd" is not declared under types`},
		{"missing job type", types + "jobs:\n  - {id: b, duration: 1}\n",
			`f.yaml:3: job "b": type is required`},
		{"unknown type in generator", types + "generators:\n  - type: exel\n    count: 1\n    duration: 1\n",
			`f.yaml:3: generator 1: type "exel" is not declared under types`},
		{"unknown type in worker slot", types + job + "workers:\n  - id: w1\n    slots:\n      - [pdf]\n      - [pdf,\n         exel]\n",
			`f.yaml:8: worker "w1": type "exel" is not declared under types`},
		{"worker slot type not a worker type", types + job + "workers: [{id: w1, slots: [[pdf, mail]]}]\n",
			`f.yaml:3: worker "w1": type "mail" does not set requires_worker`},
		{"worker without slots", types + job + "workers:\n  - id: w1\n",
			`f.yaml:4: worker "w1": no slots`},
		{"duplicate worker", types + job + "workers:\n  - {id: w1, slots: [[pdf]]}\n  - {id: w1, slots: [[pdf]]}\n",
			`f.yaml:5: worker "w1": declared twice, first at line 4`},
		{"mode typo", types + "jobs:\n  - {type: pdf, id: a, duration: 1, mode: on-demnd}\n",
			`f.yaml:3: job "a": mode "on-demnd" is not on-demand or queued`},
		{"mode typo in generator", types + "generators:\n  - type: pdf\n    mode: queue\n    count: 1\n    duration: 1\n",
			`f.yaml:4: generator 1: mode "queue" is not on-demand or queued`},
		{"count 0", types + "generators:\n  - type: pdf\n    count: 0\n    duration: 1\n",
			`f.yaml:4: generator 1: count must be at least 1, got 0`},
		{"count missing", types + job + "generators:\n  - {type: pdf, duration: 1}\n  - {type: mail, duration: 1}\n",
			"f.yaml:4: generator 1: count is required\nf.yaml:5: generator 2: count is required"},
		{"negative count", types + "generators:\n  - {type: pdf, count: -2, duration: 1}\n",
			`f.yaml:3: generator 1: count must be at least 1, got -2`},
		{"count not a number", types + "generators:\n  - {type: pdf, count: many, duration: 1}\n",
			`f.yaml:3: want an integer, got "many"`},
		{"negative seed", types + "generators:\n  - {type: pdf, count: 1, duration: 1, seed: -1}\n",
			`f.yaml:3: want a non-negative integer, got -1`},
		{"bad default_cost", "types:\n  - name: pdf\n    priority: 5\n    default_cost: 10\n" + job,
			`f.yaml:4: type "pdf": default_cost "10" is not a duration such as "10s"`},
		{"zero default_cost", "types:\n  - {name: pdf, priority: 5, default_cost: 0s}\n" + job,
			`f.yaml:2: type "pdf": default_cost must be positive, got 0s`},
		{"missing priority", "types:\n  - {name: pdf, default_cost: 1s}\n" + job,
			`f.yaml:2: type "pdf": priority is required`},
		{"duplicate type", "types:\n  - {name: pdf, priority: 5, default_cost: 1s}\n  - {name: pdf, priority: 5, default_cost: 1s}\n" + job,
			`f.yaml:3: type "pdf": declared twice, first at line 2`},
		{"bad aging interval", "scheduler:\n  aging:\n    interval: 1x\n    max_priority: 8\n" + types + job,
			`f.yaml:3: scheduler.aging.interval "1x" is not a duration such as "10s"`},
		{"negative queue_timeout", "types:\n  - {name: pdf, priority: 5, default_cost: 1s, queue_timeout: -1s}\n" + job,
			`f.yaml:2: type "pdf": queue_timeout must not be negative, got -1s`},
		{"every and spread", types + "generators:\n  - type: pdf\n    count: 2\n    every: 1\n    spread: 10\n    duration: 1\n",
			`f.yaml:6: generator 1: every and spread exclude each other`},
		{"bad conflict_mode", "types:\n  - {name: pdf, priority: 5, default_cost: 1s, conflict_group: g, conflict_mode: reader}\n" + job,
			`f.yaml:2: type "pdf": conflict_mode must be exclusive or shared, got "reader"`},
		{"conflict_mode without group", "types:\n  - {name: pdf, priority: 5, default_cost: 1s, conflict_mode: shared}\n" + job,
			`f.yaml:2: type "pdf": conflict_mode needs a conflict_group`},
		{"closed loop with every", types + "generators:\n  - {type: pdf, count: 2, every: 3, duration: 1, closed_loop: true}\n",
			`f.yaml:3: generator 1: closed_loop excludes every and spread`},
		{"bad duration range", types + "generators:\n  - {type: pdf, count: 2, duration: {min: 3, max: 2}}\n",
			`f.yaml:3: generator 1: duration.max must be at least min 3, got 2`},
		{"id without number", types + "generators:\n  - {type: pdf, count: 2, duration: 1, id: doc}\n",
			`f.yaml:3: generator 1: id "doc" must number the jobs with one %d`},
		{"job duration 0", types + "jobs:\n  - {type: pdf, id: a, duration: 0}\n",
			`f.yaml:3: job "a": duration must be at least 1, got 0`},
		{"negative at", types + "jobs:\n  - {type: pdf, id: a, at: -1, duration: 1}\n",
			`f.yaml:3: job "a": at must not be negative, got -1`},
		{"job id missing", types + "jobs:\n  - {type: pdf, duration: 1}\n",
			`f.yaml:3: job 1: id is required`},
		{"duplicate id", types + "jobs:\n  - {type: pdf, id: a, duration: 1}\n  - {type: mail, id: a, duration: 1}\n  - {type: pdf, id: a, at: 9, duration: 1}\n",
			`f.yaml:5: duplicate job pdf(a), first at line 3`},
		{"duplicate generated id", types + "jobs:\n  - {type: pdf, id: doc-2, duration: 1}\ngenerators:\n  - {type: pdf, id: doc-%d, count: 3, duration: 1}\n",
			`f.yaml:5: duplicate job pdf(doc-2), first at line 3`},
		{"duplicate across generators", types + "generators:\n  - {type: pdf, count: 1, duration: 1}\n  - {type: pdf, count: 2, duration: 1}\n",
			`f.yaml:4: duplicate job pdf(pdf-1), first at line 3`},
		{"no jobs", types + "scheduler: {max_concurrency: 2}\n",
			`f.yaml:1: no jobs: give at least one under jobs or generators`},
		{"empty jobs", types + "jobs: []\n",
			`f.yaml:2: no jobs: give at least one under jobs or generators`},
		{"no types", "types: []\n" + "jobs: [{type: pdf, id: a, duration: 1}]\n",
			"f.yaml:1: no job types: declare at least one under types\nf.yaml:2: job \"a\": type \"pdf\" is not declared under types"},
		{"empty file", "",
			"f.yaml:1: no job types: declare at least one under types\nf.yaml:1: no jobs: give at least one under jobs or generators"},
		{"wrong kind", types + "jobs: {type: pdf}\n",
			`f.yaml:2: want a list, got a mapping`},
		{"scalar for a section", types + job + "scheduler: 3\n",
			`f.yaml:3: want a mapping, got 3`},
		{"scalar for a job", types + "jobs: [pdf]\n",
			`f.yaml:2: want a mapping, got "pdf"`},
		{"scalar for a slot", types + job + "workers: [{id: w1, slots: [pdf]}]\n",
			`f.yaml:3: want a list, got "pdf"`},
		{"scoring with aging", "scheduler:\n  aging: {interval: 1s, max_priority: 3}\n  scoring: {}\n" + types + job,
			`f.yaml:3: scheduler.scoring and scheduler.aging exclude each other: the score has its own aging term (age_weight)`},
		{"groups without max_concurrency", "scheduler:\n  groups:\n    weights: {A: 2}\n" + types + job,
			`f.yaml:3: scheduler.groups need scheduler.max_concurrency: the capacity they split`},
		{"group weight 0", "scheduler:\n  max_concurrency: 4\n  groups:\n    weights: {A: 0}\n" + types + job,
			`f.yaml:4: scheduler.groups.weights.A must be at least 1, got 0`},
		{"group minimums over capacity", "scheduler:\n  max_concurrency: 2\n  groups:\n    min_slots: {A: 2, B: 1}\n" + types + job,
			`f.yaml:4: scheduler.groups: GroupMinSlots = 3: the minimums add up to more than MaxConcurrency (2)`},
		{"tier share", "scheduler:\n  max_concurrency: 4\n  tiers:\n    5: {min_share: 1.5}\n" + types + job,
			`f.yaml:4: scheduler.tiers.5.min_share must be in [0, 1], got 1.5`},
		{"tier key", "scheduler:\n  max_concurrency: 4\n  tiers:\n    high: {min_share: 0.5}\n" + types + job,
			`f.yaml:4: want an integer, got "high"`},
		{"negative tenant bound", "scheduler:\n  tenants:\n    max_pending: -1\n" + types + job,
			`f.yaml:3: scheduler.tenants.max_pending must not be negative, got -1`},
		{"key weight 0", "scheduler:\n  key_weights: {gold: 0}\n" + types + job,
			`f.yaml:2: scheduler.key_weights.gold must be a positive finite number, got 0`},
		{"two documents", types + job + "---\nname: x\n",
			`f.yaml:4: a scenario file holds one YAML document`},
		{"syntax error", types + job + "name: a: b\n",
			`f.yaml:3: mapping values are not allowed in this context`},
		{"repeated key", types + job + "jobs: []\n",
			`f.yaml:3: mapping key "jobs" already defined at line 2`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scenario.Parse("f.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatalf("Parse succeeded, want %s", tc.want)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("Parse error:\n got: %s\nwant: %s", got, tc.want)
			}
			if strings.Count(err.Error(), "\n") == 0 {
				if _, ok := err.(*scenario.FileError); !ok {
					t.Errorf("error is a %T, want *scenario.FileError", err)
				}
			}
		})
	}
}
