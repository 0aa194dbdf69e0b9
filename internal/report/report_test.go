package report

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/scenario"
)

const (
	clone  fairsched.JobType = "sync-clone"
	repack fairsched.JobType = "repack"
)

// handMade is a scenario and a result built by hand (no scheduler): keys A
// (6 job-seconds) and B (2), 4 of background work, a group, one refused and
// one expired job. Aging (grace 2s, +1 per second, ceiling 4) bounds a
// priority-1 job's wait at MaxWait(1) = 2s + 3·1s = 5s.
func handMade() (scenario.Scenario, scenario.Result) {
	sc := scenario.Scenario{
		Name: "t-hand", Title: "Hand made", MaxConcurrency: 2,
		Aging: &fairsched.AgingConfig{GracePeriod: 2 * time.Second, Interval: time.Second, Step: 1, MaxEffectivePriority: 4},
		Types: []scenario.Type{
			{Name: clone, Config: fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4}},
			{Name: repack, Config: fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}},
		},
		Jobs: []scenario.Job{
			{Type: clone, ID: "a1", Key: "A", Arrival: 0, Duration: 3},
			{Type: clone, ID: "a2", Key: "A", Arrival: 0, Duration: 3, Group: "g1"},
			{Type: clone, ID: "b1", Key: "B", Arrival: 1, Duration: 1},
			{Type: clone, ID: "b2", Key: "B", Arrival: 1, Duration: 1},
			{Type: clone, ID: "x", Key: "B", Arrival: 1, Duration: 1, Refused: true},
			{Type: repack, ID: "r1", Arrival: 0, Duration: 4, Group: "g1"},
			{Type: repack, ID: "e1", Arrival: 2, Duration: 4},
		},
	}
	res := scenario.Result{
		Timeline: []scenario.Event{
			{T: 0, Kind: "arrive", Job: "sync-clone(a1)", Key: "A"},
			{T: 0, Kind: "admit", Job: "sync-clone(a1)", Key: "A"},
			{T: 5, Kind: "admit", Job: "repack(r1)", Group: "g1"}, // before b2 at the same step
			{T: 5, Kind: "admit", Job: "sync-clone(b2)", Key: "B"},
		},
		Start: map[string]int{"sync-clone(a1)": 0, "sync-clone(a2)": 2, "sync-clone(b1)": 4, "sync-clone(b2)": 5, "repack(r1)": 5},
		End: map[string]int{"sync-clone(a1)": 3, "sync-clone(a2)": 5, "sync-clone(b1)": 5, "sync-clone(b2)": 6, "repack(r1)": 9,
			"sync-clone(x)": 1, "repack(e1)": 7},
		Slot: map[string]string{"repack(r1)": "w1/0"},
	}
	return sc, res
}

func TestBuild(t *testing.T) {
	sc, res := handMade()
	got := Build(sc, res)
	want := Report{
		Name: "t-hand", Title: "Hand made", Jobs: 7, Makespan: 9,
		Keys: []Stats{
			{Name: Background, Jobs: 1, WaitP50: 5, WaitP95: 5, WaitMax: 5, Served: 4, Share: 4.0 / 12},
			{Name: "A", Jobs: 2, WaitP50: 0, WaitP95: 2, WaitMax: 2, Served: 6, Share: 6.0 / 12},
			{Name: "B", Jobs: 2, WaitP50: 3, WaitP95: 4, WaitMax: 4, Served: 2, Share: 2.0 / 12},
		},
		Groups: []Stats{
			{Name: "g1", Jobs: 2, WaitP50: 2, WaitP95: 5, WaitMax: 5, Served: 7, Share: 7.0 / 12},
		},
		// While both keys had work, [1, 5]: A ran 2+3 job-seconds, B 1+0;
		// background work is not a tenant. (5+1)² / (2·(5²+1²)).
		Jain: 36.0 / 52, JainOver: "keys", JainParties: 2, JainFrom: 1, JainTo: 5,
		LongestWait: Wait{Job: "repack(r1)", Key: "", Wait: 5, Bound: 5, Within: true},
		Aging:       true,
		Timeline:    res.Timeline,
		Runs: []Run{
			{Job: "sync-clone(a1)", Type: "sync-clone", Key: "A", Arrival: 0, Start: 0, End: 3},
			{Job: "sync-clone(a2)", Type: "sync-clone", Key: "A", Group: "g1", Arrival: 0, Start: 2, End: 5},
			{Job: "sync-clone(b1)", Type: "sync-clone", Key: "B", Arrival: 1, Start: 4, End: 5},
			{Job: "repack(r1)", Type: "repack", Group: "g1", Slot: "w1/0", Arrival: 0, Start: 5, End: 9},
			{Job: "sync-clone(b2)", Type: "sync-clone", Key: "B", Arrival: 1, Start: 5, End: 6},
		},
		Refused: 1, Expired: 1,
		Unrun: []Unrun{
			{Job: "sync-clone(x)", Type: "sync-clone", Key: "B", Arrival: 1, At: 1, Refused: true},
			{Job: "repack(e1)", Type: "repack", Arrival: 2, At: 7},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Build (-want +got):\n%s", diff)
	}
	// The timeline is a copy: changing the result does not change the report.
	res.Timeline[0].Job = "changed"
	if got.Timeline[0].Job != "sync-clone(a1)" {
		t.Errorf("the report's timeline shares the result's: %q", got.Timeline[0].Job)
	}
}

// TestBuildLongestWaitBound: the bound is the aging bound of the longest
// waiter's own type, rounded up to whole seconds, and Within fails past it;
// without aging the bound is 0 and Within false.
func TestBuildLongestWaitBound(t *testing.T) {
	sc, res := handMade()
	sc.Aging.GracePeriod = 1500 * time.Millisecond // MaxWait(1) = 4.5s → 5s
	if got := Build(sc, res).LongestWait; got != (Wait{Job: "repack(r1)", Wait: 5, Bound: 5, Within: true}) {
		t.Errorf("bound 4.5s: %+v", got)
	}
	sc.Aging.GracePeriod = time.Second // MaxWait(1) = 4s
	if got := Build(sc, res).LongestWait; got != (Wait{Job: "repack(r1)", Wait: 5, Bound: 4, Within: false}) {
		t.Errorf("bound 4s: %+v", got)
	}
	// The clones' priority is the ceiling: aging bounds nothing of theirs,
	// so a clone waiting longer is not the longest wait against the bound.
	res.Start["sync-clone(b1)"], res.End["sync-clone(b1)"] = 8, 9
	if got := Build(sc, res).LongestWait; got != (Wait{Job: "repack(r1)", Wait: 5, Bound: 4, Within: false}) {
		t.Errorf("clone at the ceiling: %+v", got)
	}
	sc.Aging = nil
	r := Build(sc, res)
	if r.Aging || r.LongestWait != (Wait{Job: "sync-clone(b1)", Key: "B", Wait: 7}) {
		t.Errorf("no aging: aging %v, %+v", r.Aging, r.LongestWait)
	}
}

// TestBuildTies: of two equal waits the job first in the script is the
// longest; runs starting at one step without admissions in the timeline
// keep the script's order.
func TestBuildTies(t *testing.T) {
	sc := scenario.Scenario{Name: "ties", Jobs: []scenario.Job{
		{Type: clone, ID: "z", Key: "k", Arrival: 0, Duration: 1},
		{Type: clone, ID: "a", Key: "k", Arrival: 0, Duration: 1},
	}}
	res := scenario.Result{
		Start: map[string]int{"sync-clone(z)": 2, "sync-clone(a)": 2},
		End:   map[string]int{"sync-clone(z)": 3, "sync-clone(a)": 3},
	}
	r := Build(sc, res)
	if r.LongestWait.Job != "sync-clone(z)" {
		t.Errorf("longest wait %q, want the first in the script", r.LongestWait.Job)
	}
	if r.Runs[0].Job != "sync-clone(z)" || r.Runs[1].Job != "sync-clone(a)" {
		t.Errorf("runs %v, want script order", r.Runs)
	}
	if r.Jain != 1 {
		t.Errorf("Jain of one key: %v, want 1", r.Jain)
	}
}

func TestBuildEmpty(t *testing.T) {
	r := Build(scenario.Scenario{Name: "empty"}, scenario.Result{})
	want := Report{Name: "empty", Jain: 1, JainOver: "keys"}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("Build (-want +got):\n%s", diff)
	}
	var b strings.Builder
	if err := r.Text(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(b.String(), "longest wait: no job ran\n") {
		t.Errorf("text of no run:\n%s", b.String())
	}
}

func TestPercentile(t *testing.T) {
	seq := func(n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = i + 1
		}
		return s
	}
	for _, c := range []struct {
		waits    []int
		p50, p95 int
	}{
		{nil, 0, 0},
		{[]int{7}, 7, 7},
		{[]int{1, 9}, 1, 9},
		{[]int{1, 2, 3}, 2, 3},
		{seq(10), 5, 10},
		{seq(20), 10, 19},
		{seq(100), 50, 95},
		{seq(101), 51, 96},
	} {
		if p50, p95 := percentile(c.waits, 50), percentile(c.waits, 95); p50 != c.p50 || p95 != c.p95 {
			t.Errorf("%d waits: p50 %d p95 %d, want %d %d", len(c.waits), p50, p95, c.p50, c.p95)
		}
	}
}

// TestWeightedJain: the index is taken over the window in which every
// party had work, each party's service divided by its weight: a 3:1 split
// of groups weighted 3:1 scores 1, an equal split of unweighted keys 1, a
// key starved in the window less; tiers reserving 40/40/20 % and running
// 4:4:2 score 1 over tiers; a key whose jobs expired unserved counts with
// 0; what a party runs alone after the others drained does not count.
func TestWeightedJain(t *testing.T) {
	runs := func(party func(i int) (key, group string), n, slots int) []Run {
		var out []Run
		for i := range n {
			k, g := party(i)
			out = append(out, Run{Key: k, Group: g, Arrival: 0, Start: i / slots, End: i/slots + 1})
		}
		return out
	}
	// 16 jobs on 4 slots over 4 s: A takes 3 slots a second, B 1; then A
	// runs 4 s alone.
	split := func(i int) (string, string) {
		if i%4 == 3 {
			return "kb", "B"
		}
		return "ka", "A"
	}
	groups := runs(split, 16, 4)
	for i := range 16 {
		groups = append(groups, Run{Key: "ka", Group: "A", Start: 4 + i/4, End: 5 + i/4})
	}
	even := runs(func(i int) (string, string) { return []string{"x", "y"}[i%2], "" }, 8, 2)
	// Tiers of priorities 3, 2 and 1 reserving 40/40/20 % of 10 slots run
	// 4, 4 and 2 a second for 3 s; background work of priority 9, a tier
	// without a reserved share, runs beside them and does not count.
	var tiers []Run
	for i := range 30 {
		tiers = append(tiers, Run{Type: []string{"p3", "p3", "p3", "p3", "p2", "p2", "p2", "p2", "p1", "p1"}[i%10], Start: i / 10, End: i/10 + 1})
	}
	tiers = append(tiers, Run{Type: "p9", Start: 0, End: 3})
	tierScenario := func(reserved ...float64) scenario.Scenario {
		sc := scenario.Scenario{Tiers: map[fairsched.Priority]fairsched.TierConfig{9: {MaxRunning: 1}}}
		for i, p := range []fairsched.Priority{3, 2, 1, 9} {
			sc.Types = append(sc.Types, scenario.Type{Name: fairsched.JobType(fmt.Sprintf("p%d", p)), Config: fairsched.JobTypeConfig{Priority: p}})
			if i < len(reserved) {
				sc.Tiers[p] = fairsched.TierConfig{MinShare: reserved[i], BurstShare: 1}
			}
		}
		return sc
	}
	starved := append(runs(func(int) (string, string) { return "x", "" }, 8, 2), Run{Key: "y", Arrival: 0, Start: 4, End: 5})
	for _, c := range []struct {
		name    string
		sc      scenario.Scenario
		runs    []Run
		unrun   []Unrun
		want    float64
		over    string
		parties int
		window  [2]int
	}{
		{"groups 3:1 weighted 3:1", scenario.Scenario{GroupWeights: map[string]int{"A": 3, "B": 1}}, groups, nil, 1, "groups", 2, [2]int{0, 4}},
		{"groups 3:1 unweighted keys", scenario.Scenario{}, groups, nil, 0.8, "keys", 2, [2]int{0, 4}}, // 12:4 unweighted: (12+4)²/(2·(144+16))
		{"keys 1:1", scenario.Scenario{}, even, nil, 1, "keys", 2, [2]int{0, 4}},
		{"keys 3:1 weighted 3:1", scenario.Scenario{KeyWeights: map[string]float64{"ka": 3}}, groups, nil, 1, "keys", 2, [2]int{0, 4}},
		{"a key starved while both waited", scenario.Scenario{}, starved, nil, 0.5, "keys", 2, [2]int{0, 4}},
		{"tiers 4:4:2 reserving 40/40/20 %", tierScenario(0.4, 0.4, 0.2), tiers, nil, 1, "tiers", 3, [2]int{0, 3}},
		{"tiers 4:4:2 reserving a third each", tierScenario(0.3, 0.3, 0.3), tiers, nil, 100.0 / 108, "tiers", 3, [2]int{0, 3}}, // (12+12+6)²/(3·(144+144+36))
		{"one tier reserving a share, background keys: nothing to compare", tierScenario(0.4), tiers, nil, 1, "keys", 0, [2]int{}},
		{"one key", scenario.Scenario{}, starved[:8], nil, 1, "keys", 1, [2]int{}},
		{"two keys never at once", scenario.Scenario{}, []Run{{Key: "x", End: 2}, {Key: "y", Arrival: 2, Start: 2, End: 3}}, nil, 1, "keys", 2, [2]int{}},
		{"a key whose jobs expired unserved while the other ran", scenario.Scenario{}, starved[:8], []Unrun{{Key: "y", Arrival: 0, At: 4}}, 0.5, "keys", 2, [2]int{0, 4}},
	} {
		got := weightedJain(c.sc, c.runs, c.unrun)
		if math.Abs(got.index-c.want) > 1e-9 || got.over != c.over || got.parties != c.parties || [2]int{got.from, got.to} != c.window {
			t.Errorf("%s: %v over %d %s in [%d, %d); want %v over %d %s in %v",
				c.name, got.index, got.parties, got.over, got.from, got.to, c.want, c.parties, c.over, c.window)
		}
	}
}

func TestJain(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{nil, 1},
		{[]float64{5}, 1},
		{[]float64{6, 2}, 0.8},
		{[]float64{3, 3, 3}, 1},
		{[]float64{1, 0, 0, 0}, 0.25},
	} {
		if got := jain(c.xs); got != c.want {
			t.Errorf("jain(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
}

func TestText(t *testing.T) {
	sc, res := handMade()
	var b strings.Builder
	if err := Build(sc, res).Text(&b); err != nil {
		t.Fatal(err)
	}
	want := `t-hand: Hand made
7 jobs, 5 ran, 1 refused, 1 expired, makespan 9s

Timeline:
  T=  0  ARRIVE  sync-clone(a1)         key=A
  T=  0  ADMIT   sync-clone(a1)         key=A        cost=0s   accumulated[A]=0s    tier_running=0 running=0
  T=  5  ADMIT   repack(r1)             key=bg       cost=0s   accumulated[bg]=0s    tier_running=0 running=0 group=g1
  T=  5  ADMIT   sync-clone(b2)         key=B        cost=0s   accumulated[B]=0s    tier_running=0 running=0

Per key:
  key           jobs  wait p50  wait p95  wait max  served   share
  (background)     1        5s        5s        5s      4s   33.3%
  A                2        0s        2s        2s      6s   50.0%
  B                2        3s        4s        4s      2s   16.7%

Per group:
  group  jobs  wait p50  wait p95  wait max  served   share
  g1        2        2s        5s        5s      7s   58.3%

Fairness over keys while all had work, by configured weight (Jain's index, 1 = each got its share): 0.692
longest wait 5s: repack(r1) (bound 5s: ok)
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("Text (-want +got):\n%s", diff)
	}
}

func TestTextVerdicts(t *testing.T) {
	sc, res := handMade()
	for _, c := range []struct {
		aging *fairsched.AgingConfig
		want  string
	}{
		{nil, "longest wait 5s: repack(r1) (no aging)\n"},
		{&fairsched.AgingConfig{GracePeriod: time.Second, Interval: time.Second, MaxEffectivePriority: 4}, "longest wait 5s: repack(r1) (bound 4s: EXCEEDED)\n"},
	} {
		sc.Aging = c.aging
		var b strings.Builder
		if err := Build(sc, res).Text(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(b.String(), c.want) {
			t.Errorf("text ends:\n%s\nwant it to end with %q", b.String(), c.want)
		}
	}
}

// TestJSON: the report marshals with snake_case names and back unchanged.
func TestJSON(t *testing.T) {
	sc, res := handMade()
	r := Build(sc, res)
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{`"name"`, `"makespan"`, `"keys"`, `"wait_p50"`, `"wait_p95"`, `"wait_max"`, `"served"`, `"share"`,
		`"jain"`, `"longest_wait"`, `"bound"`, `"within"`, `"timeline"`, `"runs"`, `"arrival"`, `"slot"`, `"refused"`, `"expired"`} {
		if !strings.Contains(string(data), name) {
			t.Errorf("JSON lacks %s:\n%s", name, data)
		}
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, back); diff != "" {
		t.Errorf("JSON round trip (-built +decoded):\n%s", diff)
	}
}

// TestBuildTenants: with tenants, the report sums the keys by tenant,
// measures fairness between the tenants, and finds the window in which
// every tenant had work waiting: a spreads over two keys, b uses one, and
// each gets half.
func TestBuildTenants(t *testing.T) {
	job := func(id, key string) scenario.Job { return scenario.Job{Type: clone, ID: id, Key: key, Duration: 1} }
	sc := scenario.Scenario{Name: "t-tenants", MaxConcurrency: 2, TenantSep: "/",
		Jobs: []scenario.Job{job("1", "a/x"), job("2", "b/z"), job("3", "a/y"), job("4", "b/z")}}
	res := scenario.Result{Start: map[string]int{}, End: map[string]int{}}
	for i, j := range sc.Jobs {
		res.Timeline = append(res.Timeline, scenario.Event{T: 0, Kind: "arrive", Job: j.Name(), Key: j.Key})
		res.Start[j.Name()], res.End[j.Name()] = i/2, i/2+1
	}
	for _, j := range sc.Jobs {
		res.Timeline = append(res.Timeline, scenario.Event{T: res.Start[j.Name()], Kind: "admit", Job: j.Name(), Key: j.Key})
	}
	r := Build(sc, res)
	type got struct {
		Tenants           []Stats
		From, To, Parties int
		Over              string
		Jain              float64
		KeyNames          []string
	}
	g := got{Tenants: r.Tenants, From: r.TenantFrom, To: r.TenantTo, Parties: r.JainParties, Over: r.JainOver, Jain: r.Jain}
	for _, k := range r.Keys {
		g.KeyNames = append(g.KeyNames, k.Name)
	}
	want := got{
		Tenants: []Stats{{Name: "a", Jobs: 2, WaitP50: 0, WaitP95: 1, WaitMax: 1, Served: 2, Share: 0.5},
			{Name: "b", Jobs: 2, WaitP50: 0, WaitP95: 1, WaitMax: 1, Served: 2, Share: 0.5}},
		From: 0, To: 1, Parties: 2, Over: "tenants", Jain: 1, KeyNames: []string{"a/x", "a/y", "b/z"},
	}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
}
