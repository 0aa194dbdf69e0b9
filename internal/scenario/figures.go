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

// tenantFigures charts each tenant's share of the service over time, a
// row per period of the window in which every tenant had work waiting,
// against its fair share ± TenantShareTolerance; then the whole window's,
// beside what one level (a share per key) would give.
func tenantFigures(sc Scenario, res Result) []string {
	from, to, ok := TenantWindow(sc, res)
	if !ok {
		return []string{"the tenants never all had work waiting at once"}
	}
	fair, one, keys := fairShares(sc), oneLevelShares(sc), sc.TenantKeys()
	tenants := slices.Sorted(maps.Keys(keys))
	width := 0
	for _, t := range tenants {
		width = max(width, len(t))
	}
	shares := func(a, b int) (map[string]float64, bool) {
		served, total := TenantService(sc, res, a, b), 0
		for _, s := range served {
			total += s
		}
		out, within := map[string]float64{}, total > 0
		for _, t := range tenants {
			out[t] = float64(served[t]) / float64(max(total, 1))
			within = within && out[t] >= fair[t]-TenantShareTolerance && out[t] <= fair[t]+TenantShareTolerance
		}
		return out, within
	}
	verdict := map[bool]string{true: "within", false: "OUTSIDE"}
	var fairText []string
	for _, t := range tenants {
		fairText = append(fairText, fmt.Sprintf("%s (%s) %.0f %%", t, plural(keys[t], "key"), 100*fair[t]))
	}
	out := []string{fmt.Sprintf("each tenant's share of the service over time while every tenant had work waiting; bound: %s, ± %.0f %%:",
		strings.Join(fairText, ", "), 100*TenantShareTolerance)}
	period := figurePeriod(to - from)
	for a := from; a < to; a += period {
		b := min(a+period, to)
		s, within := shares(a, b)
		line := fmt.Sprintf("  T=%3d–%-3d ", a, b)
		for _, t := range tenants {
			line += fmt.Sprintf("  %-*s %s %3.0f %%", width, t, figureBar(s[t], 20), 100*s[t])
		}
		out = append(out, line+"   "+verdict[within])
	}
	s, within := shares(from, to)
	line, oneText := fmt.Sprintf("  T=%3d–%-3d ", from, to), []string{}
	for _, t := range tenants {
		line += fmt.Sprintf("  %-*s %4.1f %%", width, t, 100*s[t])
		oneText = append(oneText, fmt.Sprintf("%s %.0f %%", t, 100*one[t]))
	}
	return append(out, line+"   "+verdict[within]+" overall; one level would give "+strings.Join(oneText, ", "))
}

// figurePeriod splits a span of seconds into about five periods of a
// round length.
func figurePeriod(span int) int {
	p := max((span+4)/5, 1)
	if p > 5 {
		p = (p + 4) / 5 * 5
	}
	return p
}

// plural is "1 key", "100 keys".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
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
