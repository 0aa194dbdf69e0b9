package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/fairsched/fairsched/internal/replay"
)

// The replay's chart: a bar per tenant of its share of the contended
// service and one of its p95 wait, each with its bounds marked, so that
// how far a tenant is from a bound shows at a glance.

const (
	chartWidth   = 40 // characters of a full bar
	chartTenants = 12 // tenants charted at most: the table lists them all
)

// printChart draws the replayed tenants' shares and p95 waits against
// the bounds that apply to them.
func printChart(w io.Writer, bounds []bound, tenants []replay.Tenant) {
	shown := tenants[:min(len(tenants), chartTenants)]
	nameWidth := 6
	for _, t := range shown {
		nameWidth = max(nameWidth, len(display(t.Name)))
	}
	fmt.Fprintf(w, "share of the contended service, 0 to 100%% (| a bound)\n")
	for _, t := range shown {
		if !t.Contended {
			fmt.Fprintf(w, "  %-*s %s  -\n", nameWidth, display(t.Name), strings.Repeat(" ", chartWidth+1))
			continue
		}
		var marks []float64
		for _, b := range boundsOf(bounds, t.Name, "min-share", "max-share") {
			marks = append(marks, b.share)
		}
		fmt.Fprintf(w, "  %-*s %s  %s\n", nameWidth, display(t.Name), bar(t.Share, marks), shareText(t))
	}
	scale := time.Duration(0)
	for _, t := range shown {
		scale = max(scale, t.P95Wait)
		for _, b := range boundsOf(bounds, t.Name, "max-p95") {
			scale = max(scale, b.wait)
		}
	}
	fmt.Fprintf(w, "p95 wait, 0 to %v (| a bound)\n", scale)
	for _, t := range shown {
		var marks []float64
		for _, b := range boundsOf(bounds, t.Name, "max-p95") {
			marks = append(marks, fraction(b.wait, scale))
		}
		fmt.Fprintf(w, "  %-*s %s  %v\n", nameWidth, display(t.Name), bar(fraction(t.P95Wait, scale), marks), t.P95Wait)
	}
	if more := len(tenants) - len(shown); more > 0 {
		fmt.Fprintf(w, "(+%d more tenants in the table, not charted)\n", more)
	}
}

// boundsOf returns the bounds of the given kinds that apply to tenant.
func boundsOf(bounds []bound, tenant string, kinds ...string) []bound {
	var out []bound
	for _, b := range bounds {
		if (b.tenant == "*" || b.tenant == tenant) && slices.Contains(kinds, b.kind) {
			out = append(out, b)
		}
	}
	return out
}

func fraction(d, scale time.Duration) float64 {
	if scale <= 0 {
		return 0
	}
	return float64(d) / float64(scale)
}

// bar is a bar of chartWidth+1 cells filled to f of chartWidth, with a |
// at each mark (fractions of the same scale).
func bar(f float64, marks []float64) string {
	cells := []rune(strings.Repeat("█", cell(f)) + strings.Repeat("·", chartWidth+1-cell(f)))
	for _, m := range marks {
		cells[cell(m)] = '|'
	}
	return string(cells)
}

// cell is the cell of fraction f, within the bar.
func cell(f float64) int {
	return min(max(int(f*chartWidth+0.5), 0), chartWidth)
}
