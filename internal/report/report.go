// Package report summarises one scenario run (internal/scenario): per
// fairness key and per group, the waits and the share of service each
// received, a weighted fairness index (Jain's), and the longest wait
// against the aging bound. A Report prints as text (Text), as JSON (its
// fields carry json tags, so json.MarshalIndent of a Report is the machine
// readable form) and as a standalone SVG image (SVG): the arrivals (and
// the jobs refused or expired), a Gantt chart of the runs with each job's
// arrival and wait above its bar, the jobs waiting per key and the
// cumulative service of each key over time — per tenant instead when the
// scenario has tenants, with each tenant's share of the service over time
// against its bound.
//
// Everything a Report holds is derived deterministically from the scenario
// and its result: no map iteration order reaches the output.
package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/scenario"
)

// Background is the name under which background work (fairness key "")
// appears in Report.Keys.
const Background = "(background)"

// Report is the summary of one scenario run.
type Report struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	// Jobs is the number of scripted jobs, whether they ran or not.
	Jobs int `json:"jobs"`
	// Makespan is the second the last job ended (ran, was refused or
	// expired).
	Makespan int `json:"makespan"`
	// Keys holds one entry per fairness key that has a job in the
	// scenario, sorted by name; background work (key "") is named
	// Background.
	Keys []Stats `json:"keys"`
	// Groups holds one entry per group that has a job in the scenario,
	// sorted by name; jobs without a group are in none.
	Groups []Stats `json:"groups"`
	// Tenants holds one entry per tenant when the scenario has tenants
	// (TenantSep, its Scenario.TenantSep), sorted by name: the chart then
	// colours, counts and sums the keys by tenant and draws each tenant's
	// share of the service over the window [TenantFrom, TenantTo) in which
	// every tenant had work waiting (scenario.TenantWindow), against its
	// fair share (an equal part) ± scenario.TenantShareTolerance.
	Tenants    []Stats `json:"tenants,omitempty"`
	TenantSep  string  `json:"tenant_sep,omitempty"`
	TenantFrom int     `json:"tenant_from,omitempty"`
	TenantTo   int     `json:"tenant_to,omitempty"`
	// Jain is Jain's fairness index, (Σx)² / (n·Σx²), of the service the
	// competing parties received while all of them had work, each divided
	// by its configured weight: 1 means every party got exactly its
	// configured share, 1/n that one got everything (see weightedJain).
	Jain float64 `json:"jain"`
	// JainOver says what the parties were: "keys", "tenants", "groups" or
	// "tiers".
	JainOver string `json:"jain_over"`
	// JainParties is how many parties had work; JainFrom and JainTo the
	// window in which all of them had work, over which Jain compares them.
	// With fewer than two parties, or no such window (JainFrom = JainTo),
	// nothing competed and Jain is 1 by convention.
	JainParties int `json:"jain_parties"`
	JainFrom    int `json:"jain_from"`
	JainTo      int `json:"jain_to"`
	// LongestWait is the job that waited longest between its arrival and
	// its start — with aging on, of the jobs below the aging ceiling,
	// whose wait the bound covers; the zero Wait when no such job ran.
	LongestWait Wait `json:"longest_wait"`
	// Aging reports whether the scenario had aging on (LongestWait.Bound
	// is its bound then).
	Aging bool `json:"aging"`
	// Timeline is a copy of the run's timeline.
	Timeline []scenario.Event `json:"timeline"`
	// Runs lists every job that ran, by start, then admission order.
	Runs []Run `json:"runs"`
	// Refused and Expired count the jobs that never ran: turned away at
	// once, or expired while pending.
	Refused int `json:"refused"`
	Expired int `json:"expired"`
	// Shed counts the jobs shed while pending for a key under its fair
	// share (WithShedding); they are among Unrun, not among Expired.
	Shed int `json:"shed,omitempty"`
	// Unrun lists those jobs, in script order.
	Unrun []Unrun `json:"unrun,omitempty"`
}

// Unrun is a job that never ran: refused at its arrival, or expired at At
// after waiting since its arrival.
type Unrun struct {
	Job     string `json:"job"`
	Type    string `json:"type"`
	Key     string `json:"key"`
	Group   string `json:"group,omitempty"`
	Arrival int    `json:"arrival"`
	At      int    `json:"at"`
	Refused bool   `json:"refused"`
	Shed    bool   `json:"shed,omitempty"`
}

// Stats describes the jobs of one fairness key or one group.
type Stats struct {
	Name string `json:"name"`
	// Jobs is the number of the key's (group's) jobs that ran; the wait
	// percentiles are over them.
	Jobs int `json:"jobs"`
	// Waits in seconds from arrival to start; P50 and P95 are nearest-rank
	// percentiles.
	WaitP50 int `json:"wait_p50"`
	WaitP95 int `json:"wait_p95"`
	WaitMax int `json:"wait_max"`
	// Served is the job-seconds the key's (group's) jobs ran.
	Served int `json:"served"`
	// Share is Served over the job-seconds run by all jobs, 0 when nothing
	// ran.
	Share float64 `json:"share"`
}

// Wait is the longest wait of a run.
type Wait struct {
	Job string `json:"job"`
	Key string `json:"key"`
	// Wait is the seconds from the job's arrival to its start.
	Wait int `json:"wait"`
	// Bound is the aging bound of the job's base priority
	// (AgingConfig.MaxWait) rounded up to whole seconds, 0 when aging is
	// off.
	Bound int `json:"bound"`
	// Within reports whether aging is on and Wait ≤ Bound.
	Within bool `json:"within"`
}

// Run is one job that ran.
type Run struct {
	Job     string `json:"job"`
	Type    string `json:"type"`
	Key     string `json:"key"`
	Group   string `json:"group,omitempty"`
	Slot    string `json:"slot,omitempty"` // "worker/index"; "" for types without workers
	Arrival int    `json:"arrival"`
	Start   int    `json:"start"`
	End     int    `json:"end"`
}

// Wait is the seconds the run waited from arrival to start.
func (r Run) Wait() int { return r.Start - r.Arrival }

// Served is the job-seconds the run took.
func (r Run) Served() int { return r.End - r.Start }

// Build computes the summary of one run.
func Build(sc scenario.Scenario, res scenario.Result) Report {
	r := Report{Name: sc.Name, Title: sc.Title, Jobs: len(sc.Jobs), Aging: sc.Aging != nil, Timeline: slices.Clone(res.Timeline)}
	for _, end := range res.End {
		r.Makespan = max(r.Makespan, end)
	}

	// Runs, in start order; within a step in admission order (as the
	// timeline has it), then in script order.
	admitted := map[string]int{}
	for i, e := range res.Timeline {
		if _, seen := admitted[e.Job]; e.Kind == "admit" && !seen {
			admitted[e.Job] = i
		}
	}
	type ran struct {
		run   Run
		admit int
		index int
	}
	var runs []ran
	var longest *ran
	keyed, grouped, shed := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, e := range res.Timeline {
		if e.Kind == "shed" {
			shed[e.Job] = true
		}
	}
	for i, j := range sc.Jobs {
		name := j.Name()
		keyed[j.Key] = true
		if j.Group != "" {
			grouped[j.Group] = true
		}
		start, started := res.Start[name]
		end, ended := res.End[name]
		switch {
		case !started && ended && j.Refused:
			r.Refused++
			r.Unrun = append(r.Unrun, Unrun{Job: name, Type: string(j.Type), Key: j.Key, Group: j.Group, Arrival: j.Arrival, At: end, Refused: true})
			continue
		case !started && ended && shed[name]:
			r.Shed++
			r.Unrun = append(r.Unrun, Unrun{Job: name, Type: string(j.Type), Key: j.Key, Group: j.Group, Arrival: j.Arrival, At: end, Shed: true})
			continue
		case !started && ended:
			r.Expired++
			r.Unrun = append(r.Unrun, Unrun{Job: name, Type: string(j.Type), Key: j.Key, Group: j.Group, Arrival: j.Arrival, At: end})
			continue
		case !started || !ended:
			continue // the run did not finish: nothing to report
		}
		admit, ok := admitted[name]
		if !ok {
			admit = math.MaxInt
		}
		runs = append(runs, ran{Run{Job: name, Type: string(j.Type), Key: j.Key, Group: j.Group, Slot: res.Slot[name],
			Arrival: j.Arrival, Start: start, End: end}, admit, i})
	}
	slices.SortStableFunc(runs, func(a, b ran) int {
		return cmp.Or(cmp.Compare(a.run.Start, b.run.Start), cmp.Compare(a.admit, b.admit), cmp.Compare(a.index, b.index))
	})
	total := 0
	for i := range runs {
		r.Runs = append(r.Runs, runs[i].run)
		total += runs[i].run.Served()
		// The longest wait; on a tie the job first in the script. With
		// aging, of the jobs it lifts — those below its ceiling — for the
		// bound says nothing of the others.
		if sc.Aging != nil && typePriority(sc, sc.Jobs[runs[i].index]) >= sc.Aging.MaxEffectivePriority {
			continue
		}
		if longest == nil || runs[i].run.Wait() > longest.run.Wait() ||
			runs[i].run.Wait() == longest.run.Wait() && runs[i].index < longest.index {
			longest = &runs[i]
		}
	}

	r.Keys = stats(sortedKeys(keyed), r.Runs, total, func(run Run) string { return run.Key }, KeyName)
	r.Groups = stats(sortedKeys(grouped), r.Runs, total, func(run Run) string { return run.Group }, func(g string) string { return g })
	if sc.TenantSep != "" {
		tenants := map[string]bool{}
		for key := range keyed {
			tenants[sc.TenantOf(key)] = true
		}
		r.TenantSep = sc.TenantSep
		r.Tenants = stats(sortedKeys(tenants), r.Runs, total, func(run Run) string { return sc.TenantOf(run.Key) }, KeyName)
		r.TenantFrom, r.TenantTo, _ = scenario.TenantWindow(sc, res)
	}

	f := weightedJain(sc, r.Runs, r.Unrun)
	r.Jain, r.JainOver, r.JainParties, r.JainFrom, r.JainTo = f.index, f.over, f.parties, f.from, f.to

	if longest != nil {
		w := longest.run
		r.LongestWait = Wait{Job: w.Job, Key: w.Key, Wait: w.Wait()}
		if sc.Aging != nil {
			j := sc.Jobs[longest.index]
			bound := sc.Aging.MaxWait(typePriority(sc, j))
			r.LongestWait.Bound = int((bound + time.Second - 1) / time.Second)
			r.LongestWait.Within = r.LongestWait.Wait <= r.LongestWait.Bound
		}
	}
	return r
}

// KeyName is how a fairness key is named in a report: Background for "".
func KeyName(key string) string {
	if key == "" {
		return Background
	}
	return key
}

// typePriority is the base priority of j's type; 0 for a type the
// scenario does not register.
func typePriority(sc scenario.Scenario, j scenario.Job) fairsched.Priority {
	for _, t := range sc.Types {
		if t.Name == j.Type {
			return t.Config.Priority
		}
	}
	return 0
}

// stats computes one Stats per name of names (raw keys or groups), over
// the runs whose of(run) is that name, sorted by display name.
func stats(names []string, runs []Run, total int, of func(Run) string, display func(string) string) []Stats {
	var out []Stats
	for _, n := range names {
		s := Stats{Name: display(n)}
		var waits []int
		for _, run := range runs {
			if of(run) == n {
				waits = append(waits, run.Wait())
				s.Served += run.Served()
			}
		}
		slices.Sort(waits)
		s.Jobs = len(waits)
		s.WaitP50, s.WaitP95 = percentile(waits, 50), percentile(waits, 95)
		if len(waits) > 0 {
			s.WaitMax = waits[len(waits)-1]
		}
		if total > 0 {
			s.Share = float64(s.Served) / float64(total)
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Stats) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// percentile is the nearest-rank percentile p (0 < p ≤ 100) of sorted: the
// value at rank ⌈p/100 · n⌉; 0 for no values.
func percentile(sorted []int, p int) int {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := (p*n + 99) / 100 // ⌈p·n/100⌉ in integers: no float rounding
	return sorted[max(rank, 1)-1]
}

// fairness is the fairness figure in a few words: Jain's index between the
// parties, or that no two of them had work at once.
func (r Report) fairness() string {
	names := map[string][2]string{"keys": {"client", "clients"}, "tenants": {"tenant", "tenants"}, "groups": {"group", "groups"}, "tiers": {"priority tier", "priority tiers"}}
	one, many := names[r.jainOver()][0], names[r.jainOver()][1]
	switch {
	case r.JainParties == 0:
		return fmt.Sprintf("fairness n/a (no %s: background work only)", many)
	case r.JainParties == 1:
		return fmt.Sprintf("fairness n/a (one %s only)", one)
	case r.JainTo <= r.JainFrom:
		return fmt.Sprintf("fairness n/a (the %d %s never all had work at once)", r.JainParties, many)
	}
	return fmt.Sprintf("fairness %.2f between %d %s", r.Jain, r.JainParties, many)
}

// jainOver is JainOver, "keys" when unset.
func (r Report) jainOver() string {
	if r.JainOver == "" {
		return "keys"
	}
	return r.JainOver
}

// JainExplained says in one sentence what Report.Jain measures.
const JainExplained = "fairness: Jain's index of the service each party (client, or tenant, or weighted group, or priority tier with a reserved share) got while all had work, each divided by its configured weight or share; 1.00 means each got exactly its configured share, 1/n that one got everything"

// fairnessIndex is weightedJain's answer: the index, what the parties
// are ("keys", "tenants", "groups" or "tiers"), how many had work, and the window
// [from, to) in which all had work (empty when they never did).
type fairnessIndex struct {
	index    float64
	over     string
	parties  int
	from, to int
}

// weightedJain measures how close the scenario came to the shares it
// configured. The parties are the tenants when the scenario has them
// (Scenario.TenantSep, each of weight 1); else the groups when it gives
// group weights; else the priority tiers when it reserves shares for two or more
// (WithTier MinShare: the tiers without one, and their jobs, do not
// count); else the fairness keys (background work, key "", is not a
// tenant). Fairness only means something while parties compete, so the
// service counted is the job-seconds each ran within the window in which
// every party had work: from the last party's first arrival to the first
// party's last completion, refusal or expiry — a party whose jobs expired
// unserved had work, and counts with what it got. Each party's service is divided by its weight
// (group weight, tier MinShare, or key weight; 1 by default), so a correct
// 3:1 split scores 1. With fewer than two parties, or no common window,
// nothing competed: 1.
func weightedJain(sc scenario.Scenario, runs []Run, unrun []Unrun) fairnessIndex {
	over, party, weight := "keys", func(r Run) string { return r.Key }, func(name string) float64 {
		if w, ok := sc.KeyWeights[name]; ok {
			return w
		}
		return 1
	}
	shares := map[string]float64{} // tier name → MinShare, of the tiers that reserve one
	for p, t := range sc.Tiers {
		if t.MinShare > 0 {
			shares[tierName(p)] = t.MinShare
		}
	}
	switch {
	case sc.TenantSep != "":
		over, party, weight = "tenants", func(r Run) string { return sc.TenantOf(r.Key) }, func(string) float64 { return 1 }
	case len(sc.GroupWeights) > 0 || sc.DefaultGroupWeight > 0:
		over, party, weight = "groups", func(r Run) string { return r.Group }, func(name string) float64 {
			if w, ok := sc.GroupWeights[name]; ok {
				return float64(w)
			}
			return float64(max(sc.DefaultGroupWeight, 1))
		}
	case len(shares) >= 2:
		priority := map[string]fairsched.Priority{}
		for _, t := range sc.Types {
			priority[string(t.Name)] = t.Config.Priority
		}
		over, party, weight = "tiers", func(r Run) string {
			if name := tierName(priority[r.Type]); shares[name] > 0 {
				return name
			}
			return "" // a tier without a reserved share is no party
		}, func(name string) float64 { return shares[name] }
	}
	first, last := map[string]int{}, map[string]int{}
	hadWork := func(p string, from, to int) {
		if p == "" {
			return
		}
		if a, ok := first[p]; !ok || from < a {
			first[p] = from
		}
		last[p] = max(last[p], to)
	}
	for _, r := range runs {
		hadWork(party(r), r.Arrival, r.End)
	}
	for _, u := range unrun {
		hadWork(party(Run{Type: u.Type, Key: u.Key, Group: u.Group}), u.Arrival, u.At)
	}
	if len(first) < 2 {
		return fairnessIndex{1, over, len(first), 0, 0}
	}
	lo, hi := math.MinInt, math.MaxInt
	for p := range first {
		lo, hi = max(lo, first[p]), min(hi, last[p])
	}
	if hi <= lo {
		return fairnessIndex{1, over, len(first), 0, 0}
	}
	served := map[string]float64{}
	for p := range first {
		served[p] = 0 // a party starved in the window counts, with 0
	}
	for _, r := range runs {
		if p := party(r); p != "" {
			served[p] += float64(max(0, min(r.End, hi)-max(r.Start, lo)))
		}
	}
	xs := make([]float64, 0, len(served))
	names := make([]string, 0, len(served))
	for p := range served {
		names = append(names, p)
	}
	slices.Sort(names) // a fixed order: float sums are exact the same each run
	for _, p := range names {
		xs = append(xs, served[p]/weight(p))
	}
	return fairnessIndex{jain(xs), over, len(xs), lo, hi}
}

// tierName names the tier of priority p as a party of the fairness index.
func tierName(p fairsched.Priority) string { return fmt.Sprintf("priority %d", p) }

// Jain is Jain's fairness index (Σx)² / (n·Σx²); 1 for at most one value
// or when every value is 0. (The bench module's cluster report uses it.)
func Jain(xs []float64) float64 { return jain(xs) }

// jain is Jain's fairness index (Σx)² / (n·Σx²); 1 for at most one value.
func jain(xs []float64) float64 {
	if len(xs) <= 1 {
		return 1
	}
	var sum, squares float64
	for _, x := range xs {
		sum += x
		squares += x * x
	}
	if squares == 0 {
		return 1
	}
	return sum * sum / (float64(len(xs)) * squares)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Text writes the human report: the title, the admission timeline, a table
// per key and per group, Jain's index and the longest wait against the
// aging bound.
func (r Report) Text(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", r.Name, r.Title)
	fmt.Fprintf(&b, "%d jobs, %d ran, %d refused, %d expired", r.Jobs, len(r.Runs), r.Refused, r.Expired)
	if r.Shed > 0 {
		fmt.Fprintf(&b, ", %d shed", r.Shed)
	}
	fmt.Fprintf(&b, ", makespan %ds\n", r.Makespan)
	b.WriteString("\nTimeline:\n")
	for _, e := range r.Timeline {
		fmt.Fprintf(&b, "  %s\n", e)
	}
	table(&b, "Per key", "key", r.Keys)
	table(&b, "Per tenant", "tenant", r.Tenants)
	table(&b, "Per group", "group", r.Groups)
	fmt.Fprintf(&b, "\nFairness over %s while all had work, by configured weight (Jain's index, 1 = each got its share): %.3f\n", r.jainOver(), r.Jain)
	b.WriteString(r.LongestWait.text(len(r.Runs) > 0, r.Aging))
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func (lw Wait) text(ran, aging bool) string {
	if !ran {
		return "longest wait: no job ran"
	}
	s := fmt.Sprintf("longest wait %ds: %s", lw.Wait, lw.Job)
	if !aging {
		return s + " (no aging)"
	}
	verdict := "ok"
	if !lw.Within {
		verdict = "EXCEEDED"
	}
	return fmt.Sprintf("%s (bound %ds: %s)", s, lw.Bound, verdict)
}

func table(b *strings.Builder, title, column string, rows []Stats) {
	if len(rows) == 0 {
		return
	}
	width := len(column)
	for _, s := range rows {
		width = max(width, len(s.Name))
	}
	fmt.Fprintf(b, "\n%s:\n", title)
	fmt.Fprintf(b, "  %-*s  %4s  %8s  %8s  %8s  %6s  %6s\n", width, column, "jobs", "wait p50", "wait p95", "wait max", "served", "share")
	for _, s := range rows {
		fmt.Fprintf(b, "  %-*s  %4d  %7ds  %7ds  %7ds  %5ds  %5.1f%%\n", width, s.Name, s.Jobs, s.WaitP50, s.WaitP95, s.WaitMax, s.Served, 100*s.Share)
	}
}
