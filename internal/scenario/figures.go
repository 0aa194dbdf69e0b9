package scenario

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Figures returns the measurements scenario sc states, for the demo to
// print beside its verdict, some as small text charts: each tenant's share
// of the service (28), each client's jobs run, shed and refused (29), the
// start estimate's accuracy (30), what each waiting job named and when it
// started against its estimate (31).
func Figures(sc Scenario, res Result) []string {
	switch sc.Name {
	case "28-tenant-shares":
		return tenantFigures(sc, res)
	case "29-fair-shedding":
		return shedFigures(sc, res)
	case "30-start-estimate":
		return estimateFigures(res)
	case "31-blocker-eta":
		return blockerFigures(res)
	}
	return nil
}

// figureBar is a bar of width cells filled to fraction f.
func figureBar(f float64, width int) string {
	n := min(max(int(f*float64(width)+0.5), 0), width)
	return strings.Repeat("█", n) + strings.Repeat("·", width-n)
}

// tenantFigures charts each tenant's share of the job-seconds admitted
// while every tenant had work waiting, beside what one level would give.
func tenantFigures(sc Scenario, res Result) []string {
	tenant := func(key string) string { t, _, _ := strings.Cut(key, "/"); return t }
	waiting, keys := map[string]int{}, map[string]map[string]bool{}
	for _, j := range sc.Jobs {
		t := tenant(j.Key)
		waiting[t]++
		if keys[t] == nil {
			keys[t] = map[string]bool{}
		}
		keys[t][j.Key] = true
	}
	served, total := map[string]int{}, 0
	for _, e := range res.Timeline {
		if e.Kind != "admit" {
			continue
		}
		all := true
		for _, n := range waiting {
			all = all && n > 0
		}
		t := tenant(e.Key)
		if all {
			d := find(sc, e.Job).Duration
			served[t] += d
			total += d
		}
		waiting[t]--
	}
	out := []string{"share of the service while every tenant had work waiting (one level would split it by keys):"}
	allKeys := 0
	for _, ks := range keys {
		allKeys += len(ks)
	}
	for _, t := range slices.Sorted(maps.Keys(keys)) {
		share := 0.0
		if total > 0 {
			share = float64(served[t]) / float64(total)
		}
		n := fmt.Sprintf("%d keys", len(keys[t]))
		if len(keys[t]) == 1 {
			n = "1 key"
		}
		out = append(out, fmt.Sprintf("  %-6s %-7s %s %3.0f%%   one level: %3.0f%%", t, n,
			figureBar(share, 20), 100*share, 100*float64(len(keys[t]))/float64(allKeys)))
	}
	return out
}

// shedFigures charts each client's jobs: run (█), shed (s), refused (x).
func shedFigures(sc Scenario, res Result) []string {
	type count struct{ ran, shed, refused int }
	by := map[string]*count{}
	for _, j := range sc.Jobs {
		if by[j.Key] == nil {
			by[j.Key] = &count{}
		}
	}
	for _, e := range res.Timeline {
		switch e.Kind {
		case "admit":
			by[e.Key].ran++
		case "shed":
			by[e.Key].shed++
		case "refuse":
			by[e.Key].refused++
		}
	}
	out := []string{"each client's jobs: █ ran, s shed for a quieter client, x refused:"}
	for _, k := range slices.Sorted(maps.Keys(by)) {
		c := by[k]
		out = append(out, fmt.Sprintf("  %-8s %-16s %d ran, %d shed, %d refused", k,
			strings.Repeat("█", c.ran)+strings.Repeat("s", c.shed)+strings.Repeat("x", c.refused), c.ran, c.shed, c.refused))
	}
	return out
}

// blockerFigures lists what each waiting job named on arrival, and when it
// started against its estimate.
func blockerFigures(res Result) []string {
	var out []string
	for _, e := range res.Timeline {
		if e.Kind == "explain" {
			out = append(out, fmt.Sprintf("%s: %s; started T=%d", e.Job, e.Detail, res.Start[e.Job]))
		}
	}
	return out
}
