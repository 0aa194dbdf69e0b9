package scenario_test

import (
	"math"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/scenario"
)

// TestParseRegressions pins the fixes of the parser bugs FuzzParse found
// (testdata/fuzz/FuzzParse/regress-*): the exact error, with file and line,
// or the exact scenario accepted.
func TestParseRegressions(t *testing.T) {
	const types = "types: [{name: a, priority: 1, default_cost: 1s}]\n" // line 1
	const job = "jobs: [{type: a, id: x, duration: 1}]\n"
	const worker = "types: [{name: w, priority: 1, default_cost: 1s, requires_worker: true}]\n" + // line 1
		"jobs: [{type: w, id: x, duration: 1}]\n"
	maxInt := strconv.Itoa(math.MaxInt)
	for _, tc := range []struct {
		name, yaml string
		want       string         // the error; "" when Parse accepts the file
		jobs       []scenario.Job // the jobs accepted, when want is ""
		workers    []fairsched.WorkerSpec
	}{
		// A null map value has no line: errors about it name its key's.
		{name: "null tier", yaml: types + job + "scheduler:\n  tiers: {8: ~}\n",
			want: "f.yaml:4: scheduler.tiers need scheduler.max_concurrency: the capacity they share"},
		{name: "absent tier value", yaml: types + job + "scheduler:\n  tiers:\n    8:\n",
			want: "f.yaml:5: scheduler.tiers need scheduler.max_concurrency: the capacity they share"},
		{name: "null tier below 0", yaml: types + job + "scheduler:\n  max_concurrency: 4\n  tiers:\n    5: {min_share: 0.5}\n    -1: ~\n",
			want: "f.yaml:7: scheduler.tiers.-1: a tier is a type priority, not negative"},
		{name: "tier max_running alone needs no cap", yaml: types + job + "scheduler:\n  priority_mode: order_only\n  tiers: {0: {max_running: 2}}\n",
			jobs: []scenario.Job{{Type: "a", ID: "x", Duration: 1}}},
		{name: "negative tier max_running", yaml: types + job + "scheduler:\n  max_concurrency: 4\n  tiers: {5: {max_running: -1}}\n",
			want: "f.yaml:5: scheduler.tiers.5.max_running must not be negative, got -1"},
		{name: "unknown priority mode", yaml: types + job + "scheduler:\n  priority_mode: caps\n",
			want: `f.yaml:4: scheduler.priority_mode must be value_is_cap or order_only, got "caps"`},
		{name: "priority 0 without order_only", yaml: "types:\n  - {name: a, priority: 0, default_cost: 1s}\n" + job,
			want: `f.yaml:2: type "a": priority must be at least 1, got 0: it is the tier's concurrency cap; priorities from 0 need scheduler.priority_mode: order_only (or scoring)`},
		{name: "priority 0 with order_only", yaml: "types:\n  - {name: a, priority: 0, default_cost: 1s}\n" + job + "scheduler: {priority_mode: order_only}\n",
			jobs: []scenario.Job{{Type: "a", ID: "x", Duration: 1}}},
		{name: "null tier after a tier", yaml: types + job + "scheduler:\n  tiers:\n    5: {min_share: 0.5}\n    8: ~\n",
			want: "f.yaml:6: scheduler.tiers need scheduler.max_concurrency: the capacity they share"},
		{name: "null tier accepted", yaml: types + job + "scheduler:\n  max_concurrency: 4\n  tiers: {8: ~}\n",
			jobs: []scenario.Job{{Type: "a", ID: "x", Duration: 1}}},
		{name: "null key weight", yaml: types + job + "scheduler:\n  key_weights: {gold: ~, silver: 2}\n",
			want: "f.yaml:4: scheduler.key_weights.gold must be a positive finite number, got null"},
		{name: "absent key weight", yaml: types + job + "scheduler:\n  key_weights:\n    silver: 2\n    ? gold\n",
			want: "f.yaml:6: scheduler.key_weights.gold must be a positive finite number, got null"},
		{name: "null key weight through an alias", yaml: types + job + "scheduler:\n  key_weights:\n    silver: &n ~\n    gold: *n\n",
			want: "f.yaml:5: scheduler.key_weights.silver must be a positive finite number, got null\nf.yaml:6: scheduler.key_weights.gold must be a positive finite number, got null"},
		{name: "null key weight merged", yaml: types + job + "scheduler:\n  key_limits: &m {gold: ~}\n  key_weights:\n    <<: *m\n    silver: 2\n",
			want: "f.yaml:4: scheduler.key_weights.gold must be a positive finite number, got null"},
		{name: "merged null key weight overridden", yaml: types + job + "scheduler:\n  key_limits: &m {gold: ~}\n  key_weights:\n    <<: *m\n    gold: 0\n",
			want: "f.yaml:7: scheduler.key_weights.gold must be a positive finite number, got 0"},

		// A generator's arrivals must be ints.
		{name: "every overflows", yaml: types + "generators:\n  - {type: a, count: 3, every: 4611686018427387904, duration: 1}\n",
			want: "f.yaml:3: generator 1: arrivals out of range: start + (count-1)*every = 0 + 2*4611686018427387904 exceeds " + maxInt},
		{name: "start and every overflow", yaml: types + "generators:\n  - type: a\n    count: 2\n    start: " + maxInt + "\n    every: 1\n    duration: 1\n",
			want: "f.yaml:6: generator 1: arrivals out of range: start + (count-1)*every = " + maxInt + " + 1*1 exceeds " + maxInt},
		{name: "spread overflows", yaml: types + "generators:\n  - {type: a, count: 2, start: " + maxInt + ", spread: 2, duration: 1, seed: 3}\n",
			want: "f.yaml:3: generator 1: arrivals out of range: start + spread - 1 = " + maxInt + " + 2 - 1 exceeds " + maxInt},
		{name: "last arrival the largest int", yaml: types + "generators:\n  - {type: a, count: 2, start: 1, every: " + strconv.Itoa(math.MaxInt-1) + ", duration: 1}\n",
			jobs: []scenario.Job{{Type: "a", ID: "a-1", Arrival: 1, Duration: 1}, {Type: "a", ID: "a-2", Arrival: math.MaxInt, Duration: 1}}},
		{name: "spread up to the largest int", yaml: types + "generators:\n  - {type: a, count: 1, start: " + maxInt + ", spread: 1, duration: 1}\n",
			jobs: []scenario.Job{{Type: "a", ID: "a-1", Arrival: math.MaxInt, Duration: 1}}},
		{name: "one arrival never overflows", yaml: types + "generators:\n  - {type: a, count: 1, start: " + maxInt + ", every: " + maxInt + ", duration: 1}\n",
			jobs: []scenario.Job{{Type: "a", ID: "a-1", Arrival: math.MaxInt, Duration: 1}}},

		// A slot lists each type once; slots may share a type.
		{name: "slot lists a type twice", yaml: worker + "workers:\n  - {id: w1, slots: [[w, w]]}\n",
			want: `f.yaml:4: worker "w1": slot 1 lists type "w" twice, first at line 4`},
		{name: "slot lists a type twice on two lines", yaml: worker + "workers:\n  - id: w1\n    slots:\n      - [w]\n      - - w\n        - w\n",
			want: `f.yaml:8: worker "w1": slot 2 lists type "w" twice, first at line 7`},
		{name: "slot lists an undeclared type twice", yaml: worker + "workers:\n  - {id: w1, slots: [[v, v]]}\n",
			want: "f.yaml:4: worker \"w1\": type \"v\" is not declared under types\n" +
				"f.yaml:4: worker \"w1\": type \"v\" is not declared under types\n" +
				`f.yaml:4: worker "w1": slot 1 lists type "v" twice, first at line 4`},
		{name: "slots share a type", yaml: worker + "workers:\n  - {id: w1, slots: [[w], [w]]}\n",
			jobs:    []scenario.Job{{Type: "w", ID: "x", Duration: 1}},
			workers: []fairsched.WorkerSpec{{ID: "w1", Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{"w"}}, {Types: []fairsched.JobType{"w"}}}}}},

		// yaml.v3 panics on a mapping that merges and has a list or a
		// mapping as a key (found while fixing the above).
		{name: "merge beside a list key", yaml: types + job + "scheduler:\n  tiers: {[1]: 2, <<: {}}\n",
			want: "f.yaml:4: want a string or a number as a key, got a list"},
		{name: "merge beside a mapping key", yaml: types + job + "scheduler:\n  <<: {}\n  ? {a: 1}\n  : 2\n",
			want: "f.yaml:5: want a string or a number as a key, got a mapping"},
		{name: "merge beside an alias of a list", yaml: types + job + "x: &l [1]\nscheduler: {*l : 1, <<: {}}\n",
			want: "f.yaml:4: want a string or a number as a key, got a list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := scenario.Parse("f.yaml", []byte(tc.yaml))
			if tc.want != "" {
				if err == nil || err.Error() != tc.want {
					t.Fatalf("Parse error:\n got: %v\nwant: %s", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tc.jobs, sc.Jobs); diff != "" {
				t.Errorf("jobs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.workers, sc.Workers); diff != "" {
				t.Errorf("workers (-want +got):\n%s", diff)
			}
		})
	}
}
