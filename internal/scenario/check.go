package scenario

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/fairsched/fairsched"
)

// Check verifies the invariants every run must keep — no cap exceeded, no
// two jobs of one conflict group overlapping on one id — and the property
// the scenario was written to show. It returns one line per check; a line
// starting with "FAIL" is a broken promise.
func Check(sc Scenario, res Result) []string {
	var out []string
	out = append(out, checkCaps(sc, res)...)
	for _, e := range sc.Expect {
		out = append(out, e.check(sc, res))
	}
	switch sc.Name {
	case "go-01-background-saturated":
		out = append(out, startsAtArrival(sc, res, "sync-clone(r99)"))
	case "go-02-two-client-burst":
		out = append(out, clientNotStarved(sc, res))
	case "go-03-expensive-vs-cheap":
		out = append(out, cheapOvertakes(res, ""), cheapOvertakes(res, "#2"),
			startsAtArrival(sc, res, "sync-clone(med1)"), startsAtArrival(sc, res, "sync-clone(med2)"))
	case "go-04-conflict-exclusion":
		out = append(out, after(res, "repack(repo1)", "sync-clone(repo1)"), after(res, "repack(repo2)", "sync-clone(repo2)"),
			overlap(res, "sync-clone(repo1)", "sync-clone(repo2)"), overlap(res, "repack(repo1)", "repack(repo2)"))
	case "08-aging-under-stream":
		j := find(sc, "repack(big)")
		bound := int(sc.Aging.MaxWait(1) / time.Second)
		out = append(out, verdict(res.Start[j.Name()] <= j.Arrival+bound,
			"repack(big) arrived at T=%d and started at T=%d, within MaxWait(1) = %ds under a stream that never paused",
			j.Arrival, res.Start[j.Name()], bound))
	case "09-weighted-groups":
		out = append(out, split(sc, res, 2, -1, "A", 12, "B", 4))
	case "11-paused-group":
		started := 0
		for _, j := range sc.Jobs {
			if t := res.Start[j.Name()]; j.Group == "B" && t >= 2 && t < 6 {
				started++
			}
		}
		out = append(out, verdict(started == 0, "no job of paused group B started in [2,6) (%d did)", started),
			verdict(running(sc, res, "A", 4) == 16, "A ran all 16 slots while B was paused (T=4: %d)", running(sc, res, "A", 4)),
			verdict(running(sc, res, "B", 6) == 4, "B had its 4 slots back at T=6 (%d)", running(sc, res, "B", 6)))
	case "13-urgent-borrow":
		old := "repack(old)"
		bound := int(sc.Aging.MaxWait(1) / time.Second)
		out = append(out, verdict(res.Start[old] == bound, "repack(old) became urgent and started at T=%d = MaxWait(1)", res.Start[old]),
			verdict(running(sc, res, "B", res.Start[old]) == 3, "group B ran %d jobs, one past its allocation of 2", running(sc, res, "B", res.Start[old])))
	case "12-weight-change":
		out = append(out, split(sc, res, 3, 3, "A", 4, "B", 4), split(sc, res, 6, -1, "A", 6, "B", 2))
	case "19-expiry":
		expired := map[string]int{}
		for _, e := range res.Timeline {
			if e.Kind == "expire" {
				expired[e.Job] = e.T
			}
		}
		out = append(out, verdict(len(expired) == 2 && expired["pull(repo)"] == 3 && expired["snapshot(nightly)"] == 5,
			"the pull expired at T=3 and the snapshot at T=5, pending (%v)", expired),
			verdict(res.Start["sync-clone(repo)"] == 6, "the clone without a timeout ran when the slot freed, at T=%d", res.Start["sync-clone(repo)"]))
	case "18-rate-limited":
		starts := []int{}
		for i := 1; i <= 4; i++ {
			starts = append(starts, res.Start[fmt.Sprintf("repack(repo%d)", i)])
		}
		idle := 0
		for step := 0; step < 8; step++ {
			if n := typeRunning(sc, res, SyncClone, step) + typeRunning(sc, res, Repack, step); n < 3 {
				idle++
			}
		}
		out = append(out, verdict(fmt.Sprint(starts) == "[0 2 4 6]", "the repacks started one token apart, at T=%v", starts),
			verdict(idle == 0, "no slot stood idle while clones waited (%d idle steps)", idle))
	case "26-policy-tier-change":
		out = append(out, checkPolicyTierChange(sc, res)...)
	case "27-tier-rules":
		out = append(out, tierRules(res)...)
	case "28-tenant-shares":
		out = append(out, tenantShares(sc, res)...)
	case "30-start-estimate":
		out = append(out, startEstimate(res)...)
	case "31-blocker-eta":
		out = append(out, blockerETA(res)...)
	case "32-workload-labels":
		out = append(out, workloadLabels(res)...)
	case "29-fair-shedding":
		out = append(out, fairShedding(sc, res)...)
	case "16-tier-shares":
		out = append(out, tierFloor(sc, res, Backfill, 2),
			verdict(typeRunning(sc, res, Incident, 2) == 4 && typeRunning(sc, res, Copilot, 2) == 4,
				"T=2, all three busy: P0 and P1 each run their 4 reserved slots (%d, %d)", typeRunning(sc, res, Incident, 2), typeRunning(sc, res, Copilot, 2)),
			verdict(typeRunning(sc, res, Incident, 5) == 7 && typeRunning(sc, res, Backfill, 5) == 3,
				"T=5, P1 idle and lending: P0 bursts to 7 and P2 to 3 (%d, %d)", typeRunning(sc, res, Incident, 5), typeRunning(sc, res, Backfill, 5)))
	case "15-noisy-tenant":
		for _, name := range []string{"sync-clone(quiet-1)", "sync-clone(quiet-2)"} {
			j := find(sc, name)
			out = append(out, verdict(res.Start[name] <= j.Arrival+j.Duration,
				"%s arrived at T=%d behind 40 of the noisy tenant's jobs and started at T=%d, within one job's duration", name, j.Arrival, res.Start[name]))
		}
		refused := 0
		for _, e := range res.Timeline {
			if e.Kind == "refuse" && e.Key == "noisy" && e.T == 0 && e.Reason == "tenant_limit" {
				refused++
			}
		}
		out = append(out, verdict(refused == 1, "the noisy tenant's 45th job was refused at once (tenant_limit): %d refusal(s) at T=0", refused))
	case "14-weighted-keys":
		out = append(out, serviceRatio(sc, res, "gold", "free", 2))
	case "go-05-many-background-types":

		for i := 1; i <= 4; i++ {
			out = append(out, startsAtArrival(sc, res, fmt.Sprintf("sync-clone(clone%d)", i)))
		}
	}
	return out
}

func verdict(ok bool, format string, args ...any) string {
	if ok {
		return "ok   " + fmt.Sprintf(format, args...)
	}
	return "FAIL " + fmt.Sprintf(format, args...)
}

func find(sc Scenario, name string) Job {
	for _, j := range sc.Jobs {
		if j.Name() == name {
			return j
		}
	}
	panic("scenario: no job " + name)
}

func startsAtArrival(sc Scenario, res Result, name string) string {
	j := find(sc, name)
	return verdict(res.Start[name] == j.Arrival, "%s arrived at T=%d and started at T=%d", name, j.Arrival, res.Start[name])
}

// clientNotStarved: client B's clones start in the first slots that free up
// after B arrives, while client A still has clones waiting.
func clientNotStarved(sc Scenario, res Result) string {
	firstFree := 1 << 30
	for name, end := range res.End {
		if end >= 2 && end < firstFree && find(sc, name).Arrival < 2 {
			firstFree = end
		}
	}
	aWaiting := 0
	for _, j := range sc.Jobs {
		if j.Key == "clientA" && res.Start[j.Name()] > firstFree {
			aWaiting++
		}
	}
	ok := res.Start["sync-clone(b1)"] == firstFree && res.Start["sync-clone(b2)"] == firstFree && aWaiting > 0
	return verdict(ok, "client B's clones started at T=%d and T=%d, the first free slots (T=%d), ahead of %d of client A's clones",
		res.Start["sync-clone(b1)"], res.Start["sync-clone(b2)"], firstFree, aWaiting)
}

// cheapOvertakes: every small clone of B finishes before A's expensive one.
func cheapOvertakes(res Result, tag string) string {
	last := 0
	for i := 1; i <= 8; i++ {
		last = max(last, res.End[fmt.Sprintf("sync-clone(small%d)%s", i, tag)])
	}
	linux := res.End["sync-clone(linux)"+tag]
	round := "round 1"
	if tag != "" {
		round = "round 2"
	}
	return verdict(last < linux, "%s: all 8 small clones done by T=%d, the expensive clone at T=%d", round, last, linux)
}

func after(res Result, later, first string) string {
	return verdict(res.Start[later] >= res.End[first], "%s started at T=%d, after %s ended at T=%d (same repo, same conflict group)",
		later, res.Start[later], first, res.End[first])
}

func overlap(res Result, a, b string) string {
	ok := res.Start[a] < res.End[b] && res.Start[b] < res.End[a]
	return verdict(ok, "%s [%d,%d) and %s [%d,%d) ran side by side", a, res.Start[a], res.End[a], b, res.Start[b], res.End[b])
}

// checkCaps replays the run and checks every cap and every conflict at each
// step.
func checkCaps(sc Scenario, res Result) []string {
	cfg := map[string]Type{}
	for _, t := range sc.Types {
		cfg[string(t.Name)] = t
	}
	var steps []int
	for _, e := range res.Timeline {
		steps = append(steps, e.T)
	}
	sort.Ints(steps)
	takes := map[string]bool{} // "worker/index type" for every slot and type it takes
	for _, w := range sc.Workers {
		for i, s := range w.Slots {
			for _, t := range s.Types {
				takes[fmt.Sprintf("%s/%d %s", w.ID, i, t)] = true
			}
		}
	}
	var fails []string
	for _, t := range steps {
		type holder struct {
			name      string
			exclusive bool
		}
		total, tier, typ, held := 0, map[int]int{}, map[string]int{}, map[string]holder{}
		onSlot := map[string]string{}
		for _, j := range sc.Jobs {
			name := j.Name()
			start, ok := res.Start[name]
			if !ok || t < start || t >= res.End[name] {
				continue
			}
			c := cfg[string(j.Type)].Config
			if slot := res.Slot[name]; slot != "" {
				if other, busy := onSlot[slot]; busy {
					fails = append(fails, fmt.Sprintf("FAIL T=%d: %s and %s overlap on slot %s", t, other, name, slot))
				}
				onSlot[slot] = name
				if !takes[slot+" "+string(j.Type)] {
					fails = append(fails, fmt.Sprintf("FAIL T=%d: %s runs on slot %s, which does not take %s", t, name, slot, j.Type))
				}
			} else if c.RequiresWorker {
				fails = append(fails, fmt.Sprintf("FAIL T=%d: %s runs on no worker slot", t, name))
			}
			total++
			tier[int(c.Priority)]++
			typ[string(j.Type)]++
			if c.MaxConcurrency > 0 && typ[string(j.Type)] > c.MaxConcurrency {
				fails = append(fails, fmt.Sprintf("FAIL T=%d: type %s over its cap %d", t, j.Type, c.MaxConcurrency))
			}
			if tier[int(c.Priority)] > sc.tierCap(c.Priority) {
				fails = append(fails, fmt.Sprintf("FAIL T=%d: tier %d over its cap", t, c.Priority))
			}
			if c.ConflictGroup != "" {
				// Shared jobs may overlap one another; an exclusive one
				// overlaps nothing.
				k := string(c.ConflictGroup) + "/" + j.ID
				exclusive := c.ConflictMode == fairsched.ConflictExclusive
				if other, busy := held[k]; busy && (exclusive || other.exclusive) {
					fails = append(fails, fmt.Sprintf("FAIL T=%d: %s and %s overlap on %s", t, other.name, name, k))
				}
				if other, busy := held[k]; !busy || exclusive && !other.exclusive {
					held[k] = holder{name, exclusive}
				}
			}
		}
		if sc.MaxConcurrency > 0 && total > sc.MaxConcurrency {
			fails = append(fails, fmt.Sprintf("FAIL T=%d: %d running over the global cap %d", t, total, sc.MaxConcurrency))
		}
	}
	if len(fails) == 0 {
		return []string{"ok   no cap exceeded, no conflicting jobs and no two jobs on one slot at any step"}
	}
	return fails
}

// running returns how many jobs of group g run at step t.
func running(sc Scenario, res Result, g string, t int) int {
	n := 0
	for _, j := range sc.Jobs {
		start, ok := res.Start[j.Name()]
		if j.Group == g && ok && start <= t && t < res.End[j.Name()] {
			n++
		}
	}
	return n
}

// waiting reports whether group g has a job not started by the end of
// step t.
func waiting(sc Scenario, res Result, g string, t int) bool {
	for _, j := range sc.Jobs {
		if start, ok := res.Start[j.Name()]; j.Group == g && j.Arrival <= t && (!ok || start > t) {
			return true
		}
	}
	return false
}

// split checks that from step from on (to step to, unless negative), at
// every step at which both groups still have work waiting, they run exactly
// na and nb jobs.
func split(sc Scenario, res Result, from, to int, a string, na int, b string, nb int) string {
	steps := 0
	for t := from; (to < 0 || t <= to) && waiting(sc, res, a, t) && waiting(sc, res, b, t); t++ {
		if ra, rb := running(sc, res, a, t), running(sc, res, b, t); ra != na || rb != nb {
			return verdict(false, "T=%d: %s runs %d and %s runs %d, want %d:%d", t, a, ra, b, rb, na, nb)
		}
		steps++
	}
	return verdict(steps > 0, "%s and %s ran %d:%d at each of the %d steps from T=%d while both had work waiting", a, b, na, nb, steps, from)
}

// Expectation is a claim a scenario file makes about its run, checked by
// Check: when a job starts (exactly, or at the latest) and on which slot;
// or how many jobs of a group run at a step.
type Expectation struct {
	Group      string // with HasRunning: the group counted
	At         int    // with HasRunning: the step
	Running    int    // with HasRunning: the jobs of Group running at At
	HasRunning bool

	Job             string // Job.Name()
	Start           int    // when HasStart: the step it must start at
	StartBy         int    // when HasBy: the latest step it may start at
	Slot            string // when not empty: the worker slot it must run on
	HasStart, HasBy bool
	Line            int // in the scenario file, for the report
}

// tierCap is the most jobs of tier p that may run: its WithTier burst, at
// most its MaxRunning; else its value, but no cap when priorities only
// order or for priority 0.
func (sc Scenario) tierCap(p fairsched.Priority) int {
	if t, ok := sc.Tiers[p]; ok { // written out again, not the library's Slots
		c := math.MaxInt
		if t.MinShare != 0 || t.BurstShare != 0 {
			share := func(f float64) int { return int(math.Floor(f * float64(sc.MaxConcurrency))) }
			c = max(share(t.BurstShare), share(t.MinShare), 1)
		}
		if t.MaxRunning > 0 {
			c = min(c, t.MaxRunning)
		}
		return c
	}
	if sc.OrderOnly || p < 1 {
		return math.MaxInt
	}
	return int(p)
}

func (e Expectation) check(sc Scenario, res Result) string {
	if e.HasRunning {
		n := running(sc, res, e.Group, e.At)
		return verdict(n == e.Running, "expected %d jobs of group %q running at T=%d: %d", e.Running, e.Group, e.At, n)
	}
	start, ran := res.Start[e.Job]
	var claims, fails []string
	if e.HasStart {
		claims = append(claims, fmt.Sprintf("starts at T=%d", e.Start))
		if !ran || start != e.Start {
			fails = append(fails, "start")
		}
	}
	if e.HasBy {
		claims = append(claims, fmt.Sprintf("starts by T=%d", e.StartBy))
		if !ran || start > e.StartBy {
			fails = append(fails, "start")
		}
	}
	if e.Slot != "" {
		claims = append(claims, "runs on "+e.Slot)
		if res.Slot[e.Job] != e.Slot {
			fails = append(fails, "slot")
		}
	}
	got := "never started"
	if ran {
		got = fmt.Sprintf("started at T=%d", start)
		if s := res.Slot[e.Job]; s != "" {
			got += " on " + s
		}
	}
	return verdict(len(fails) == 0, "expected %s %s: %s", e.Job, strings.Join(claims, " and "), got)
}
