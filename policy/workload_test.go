package policy

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestWorkloadSelectors: each operator as a Kubernetes set-based selector
// has it — NotIn and DoesNotExist hold for a job without the label — and a
// rule's requirements all hold at once.
func TestWorkloadSelectors(t *testing.T) {
	one := Priority(1)
	rule := func(name string, reqs ...LabelRequirement) Workload {
		return Workload{Name: name, MatchExpressions: reqs, Priority: &one}
	}
	ws, err := CompileWorkloads([]Workload{
		{Name: "eq", MatchLabels: map[string]string{"team": "core", "env": "prod"}, Priority: &one},
		rule("in", LabelRequirement{"env", SelectorIn, []string{"dev", "test", "stage"}}),
		rule("notin", LabelRequirement{"env", SelectorNotIn, []string{"prod"}}, LabelRequirement{"team", SelectorExists, nil}),
		rule("absent", LabelRequirement{"env", SelectorDoesNotExist, nil}),
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for name, labels := range map[string]Labels{
		"core prod":   {"team": "core", "env": "prod"},
		"web prod":    {"team": "web", "env": "prod"},
		"stage":       {"env": "stage"},
		"core qa":     {"team": "core", "env": "qa"},
		"qa":          {"env": "qa"},
		"none":        nil,
		"team only":   {"team": "web"},
		"empty value": {"env": ""},
	} {
		if eff := ws.Match(labels); eff != nil {
			got[name] = eff.Name
		} else {
			got[name] = "-"
		}
	}
	want := map[string]string{
		"core prod": "eq", "web prod": "-", "stage": "in", "core qa": "notin", "qa": "-",
		"none": "absent", "empty value": "-",
		"team only": "notin", // NotIn holds without the label
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("matched rule by job (-want +got):\n%s", diff)
	}
	var empty *Workloads
	if empty.Match(Labels{"a": "b"}) != nil {
		t.Error("a nil list matched")
	}
}

// TestWorkloadsRejected: every invalid rule is ErrInvalidConfig naming
// the rule and the field.
func TestWorkloadsRejected(t *testing.T) {
	one, neg := Priority(1), Priority(-1)
	for _, tc := range []struct {
		w    []Workload
		want string
	}{
		{[]Workload{{Priority: &one}}, "Workloads[0].Name"},
		{[]Workload{{Name: "a", Priority: &one}, {Name: "a", Priority: &one}}, `Workloads[1 "a"].Name`},
		{[]Workload{{Name: "a"}}, "sets nothing"},
		{[]Workload{{Name: "a", Priority: &neg}}, "Priority"},
		{[]Workload{{Name: "a", Tokens: -1}}, "Tokens"},
		{[]Workload{{Name: "a", QueueTimeout: -time.Second}}, "QueueTimeout"},
		{[]Workload{{Name: "a", FairnessLabelKey: "\x00"}}, "FairnessLabelKey"},
		{[]Workload{{Name: "a", Priority: &one, MatchLabels: map[string]string{"": "x"}}}, "MatchLabels key"},
		{[]Workload{{Name: "a", Priority: &one, MatchExpressions: []LabelRequirement{{Key: "k", Op: SelectorIn}}}}, "MatchExpressions[0].Values"},
		{[]Workload{{Name: "a", Priority: &one, MatchExpressions: []LabelRequirement{{Key: "k", Op: SelectorExists, Values: []string{"x"}}}}}, "takes no values"},
		{[]Workload{{Name: "a", Priority: &one, MatchExpressions: []LabelRequirement{{Key: "k", Op: "Has"}}}}, "must be In, NotIn, Exists or DoesNotExist"},
		{make([]Workload, MaxWorkloads+1), "at most 1000 rules"},
	} {
		_, err := CompileWorkloads(tc.w)
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CompileWorkloads(%.60v) = %v; want ErrInvalidConfig naming %q", tc.w, err, tc.want)
		}
	}
}

// benchRules returns n rules that a job with labels {team: t<n>, env:
// prod} fails until the last: the worst case, every rule read.
func benchRules(n int) []Workload {
	one := Priority(1)
	ws := make([]Workload, n)
	for i := range ws {
		ws[i] = Workload{Name: fmt.Sprint("r", i), Priority: &one,
			MatchLabels: map[string]string{"team": fmt.Sprint("t", i+1)},
			MatchExpressions: []LabelRequirement{
				{Key: "env", Op: SelectorIn, Values: []string{"prod", "stage", "dev"}},
				{Key: "canary", Op: SelectorDoesNotExist},
			}}
	}
	return ws
}

// BenchmarkWorkloadMatch is the cost of matching one submission's labels
// against 0, 10 and 100 rules, the last one matching (every rule read).
func BenchmarkWorkloadMatch(b *testing.B) {
	for _, n := range []int{0, 10, 100} {
		b.Run(fmt.Sprint("rules=", n), func(b *testing.B) {
			ws, err := CompileWorkloads(benchRules(n))
			if err != nil {
				b.Fatal(err)
			}
			labels := Labels{"team": fmt.Sprint("t", n), "env": "prod", "tenant": "acme"}
			b.ReportAllocs()
			for b.Loop() {
				if eff := ws.Match(labels); n > 0 && eff == nil {
					b.Fatal("no match")
				}
			}
		})
	}
}
