package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fairsched/fairsched/internal/scenario"
)

// The layout of the image, in pixels. The Gantt chart and the service chart
// share the horizontal time scale: x(t) = plotLeft + t·plotWidth/domain,
// where domain is the last end rounded up to a whole tick.
const (
	svgWidth   = 1000
	plotLeft   = 110 // room for the row labels and the service axis
	plotRight  = 30
	plotWidth  = svgWidth - plotLeft - plotRight
	rowHeight  = 26 // a lane for the wait, then the bar
	barHeight  = 16
	waitLane   = 4   // the wait line's height in its row: above the bar
	barTop     = 8   // the bar's top in its row
	chartTall  = 200 // the service chart's plot area
	fontSize   = 11  // bar labels, axis labels, legend
	charWidth  = 6.5 // estimated advance of one character at fontSize
	legendSwat = 12  // legend swatch size
	timeTicks  = 12  // at most this many time ticks
	valueTicks = 5   // at most this many service ticks
	titleChars = 90  // the title wraps after this many characters (18px bold)
	laneGap    = 9   // between the arrivals line and each lane of expired waits
	maxLanes   = 6   // lanes of expired waits at most
)

// palette colours the fairness keys in their sorted order, cycling when
// there are more keys than colours (Tableau 10 without its grey, which is
// background work's).
var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"}

// backgroundColour is background work's colour.
const backgroundColour = "#a0a0a0"

// SVG writes a standalone SVG image of the run: the scenario's title, a
// legend of the fairness keys, a strip of arrivals (a dot per job in its
// key's colour, a red cross per job refused at its arrival, a dark cross
// where a job expired, after a thin line for its wait), a Gantt chart
// with one row per slot and a bar per run coloured by key — above each
// bar, in the bar's row, a tick at the job's arrival and a thin line for
// its wait from arrival to start —, the jobs waiting per key over time,
// and the cumulative service (job-seconds run) per key over time. When r
// has tenants the legend, the colours and those two charts are the
// tenants', and a last chart draws each tenant's share of the service
// while every tenant had work waiting, over a band for its bound. The
// output depends only on r.
func (r Report) SVG(w io.Writer) error {
	colours := r.colours()

	title := r.Title
	if title == "" {
		title = r.Name
	}
	y := 30
	body := &strings.Builder{}
	for i, line := range wrap(title, titleChars) {
		if i > 0 {
			y += 22
		}
		fmt.Fprintf(body, `<text class="title" x="20" y="%d" font-size="18" font-weight="bold" fill="#222">%s</text>`+"\n", y, esc(line))
	}
	y += 20
	fmt.Fprintf(body, `<text x="20" y="%d" font-size="12" fill="#555">%s</text>`+"\n", y, esc(r.subtitle()))
	y += 16

	if len(r.Runs) == 0 {
		fmt.Fprintf(body, `<text x="20" y="%d" font-size="13" fill="#222">no job ran</text>`+"\n", y+14)
		return write(w, title, body, y+40)
	}

	// Legend, flowing into as many lines as it needs.
	x := 20
	for i, k := range r.parties() {
		label := fmt.Sprintf("%s (%.1f%%)", k.Name, 100*k.Share)
		item := legendSwat + 6 + textWidth(label) + 18
		if x+item > svgWidth-plotRight && i > 0 {
			x, y = 20, y+20
		}
		fmt.Fprintf(body, `<rect class="legend" x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", x, y, legendSwat, legendSwat, colours[k.Name])
		fmt.Fprintf(body, `<text x="%d" y="%d" font-size="%d" fill="#222">%s</text>`+"\n", x+legendSwat+6, y+10, fontSize, esc(label))
		x += item
	}
	y += 20 + 24

	// Arrivals: a dot per job that ran; a red cross at its arrival per job
	// refused; per job that expired, a line in its key's colour for its
	// wait, on a lane of its own below the dots, ending in a dark cross.
	domain, step := timeScale(r.Runs, r.Unrun)
	xOf := func(t int) float64 { return plotLeft + float64(t)*plotWidth/float64(domain) }
	fmt.Fprintf(body, `<text x="20" y="%d" font-size="13" font-weight="bold" fill="#222">Arrivals</text>`+"\n", y+4)
	fmt.Fprintf(body, `<text x="%d" y="%d" font-size="%d" fill="#555">dot: arrived · red cross: refused · line to a dark cross: waited, then expired</text>`+"\n", plotLeft+plotWidth-490, y+4, fontSize)
	ay := y + 16
	fmt.Fprintf(body, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#d8d8d8"/>`+"\n", plotLeft, ay, plotLeft+plotWidth, ay)
	for _, run := range r.Runs {
		fmt.Fprintf(body, "<circle class=\"arrival\" cx=\"%s\" cy=\"%d\" r=\"3\" fill=\"%s\" fill-opacity=\"0.6\"><title>%s</title></circle>\n",
			num(xOf(run.Arrival)), ay, colours[KeyName(run.Key)], esc(fmt.Sprintf("%s arrived at %d (key %s)", run.Job, run.Arrival, KeyName(run.Key))))
	}
	cross := func(class string, t, cy int, colour, tip string) {
		cx := xOf(t)
		fmt.Fprintf(body, "<path class=\"%s\" d=\"M%s %dL%s %dM%s %dL%s %d\" stroke=\"%s\" stroke-width=\"2\"><title>%s</title></path>\n",
			class, num(cx-4), cy-4, num(cx+4), cy+4, num(cx-4), cy+4, num(cx+4), cy-4, colour, esc(tip))
	}
	lanes := expiryLanes(r.Unrun)
	for i, u := range r.Unrun {
		key := KeyName(u.Key)
		if u.Refused {
			cross("refused", u.Arrival, ay, "#d62728", fmt.Sprintf("%s refused at its arrival at %d (key %s)", u.Job, u.Arrival, key))
			continue
		}
		tip := fmt.Sprintf("%s arrived at %d, waited %ds and expired at %d (key %s)", u.Job, u.Arrival, u.At-u.Arrival, u.At, key)
		class := "expired"
		if u.Shed {
			class, tip = "shed", fmt.Sprintf("%s arrived at %d, waited %ds and was shed at %d for a key under its fair share (key %s)", u.Job, u.Arrival, u.At-u.Arrival, u.At, key)
		}
		ly := ay + laneGap*(lanes[i]+1)
		fmt.Fprintf(body, "<g>\n<title>%s</title>\n", esc(tip))
		fmt.Fprintf(body, `<line class="wait" x1="%s" y1="%d" x2="%s" y2="%d" stroke="%s" stroke-width="2" stroke-opacity="0.8"/>`+"\n",
			num(xOf(u.Arrival)), ly, num(xOf(u.At)), ly, colours[key])
		fmt.Fprintf(body, `<line class="arrival" x1="%s" y1="%d" x2="%s" y2="%d" stroke="%s" stroke-width="1.5"/>`+"\n",
			num(xOf(u.Arrival)), ly-3, num(xOf(u.Arrival)), ly+3, colours[key])
		body.WriteString("</g>\n")
		cross(class, u.At, ly, "#333", tip)
	}
	used := 0
	for _, l := range lanes {
		used = max(used, l+1)
	}
	y = ay + 34 + laneGap*used

	// The Gantt chart.
	labels, rowOf := rows(r.Runs)
	fmt.Fprintf(body, `<text x="20" y="%d" font-size="13" font-weight="bold" fill="#222">Runs by slot</text>`+"\n", y-10)
	fmt.Fprintf(body, `<text x="%d" y="%d" font-size="%d" fill="#555">above each run: a tick at its arrival, a thin line while it waited</text>`+"\n", plotLeft+plotWidth-390, y-10, fontSize)
	top := y
	bottom := top + len(labels)*rowHeight
	for i, label := range labels {
		ry := top + i*rowHeight
		if i%2 == 0 {
			fmt.Fprintf(body, `<rect class="row" x="%d" y="%d" width="%d" height="%d" fill="#f3f3f3"/>`+"\n", plotLeft, ry, plotWidth, rowHeight)
		}
		fmt.Fprintf(body, `<text x="%d" y="%d" font-size="%d" text-anchor="end" fill="#222">%s</text>`+"\n", plotLeft-8, ry+barTop+barHeight/2+4, fontSize, esc(label))
	}
	timeAxis(body, xOf, domain, step, top, bottom)
	for i, run := range r.Runs {
		key := KeyName(run.Key)
		x0, x1 := xOf(run.Start), xOf(run.End)
		width := math.Max(x1-x0, 1) // a run of no time still shows
		ry := top + rowOf[i]*rowHeight
		by := ry + barTop
		// Its arrival and wait, in the lane above the bars of its row.
		wy, ax := ry+waitLane, xOf(run.Arrival)
		fmt.Fprintf(body, "<g>\n<title>%s</title>\n", esc(fmt.Sprintf("%s arrived at %d, waited %ds", run.Job, run.Arrival, run.Wait())))
		if run.Wait() > 0 {
			fmt.Fprintf(body, `<line class="wait" x1="%s" y1="%d" x2="%s" y2="%d" stroke="%s" stroke-width="2" stroke-opacity="0.8"/>`+"\n",
				num(ax), wy, num(x0), wy, colours[key])
		}
		fmt.Fprintf(body, `<line class="arrival" x1="%s" y1="%d" x2="%s" y2="%d" stroke="%s" stroke-width="1.5"/>`+"\n",
			num(ax), wy-3, num(ax), by, colours[key])
		body.WriteString("</g>\n")
		tip := fmt.Sprintf("%s: key %s, T=%d–%d, arrived %d, waited %ds", run.Job, key, run.Start, run.End, run.Arrival, run.Wait())
		if run.Group != "" {
			tip += ", group " + run.Group
		}
		if run.Slot != "" {
			tip += ", slot " + run.Slot
		}
		fmt.Fprintf(body, "<g>\n<title>%s</title>\n", esc(tip))
		fmt.Fprintf(body, `<rect class="bar" x="%s" y="%d" width="%s" height="%d" fill="%s" stroke="#fff" stroke-width="1"/>`+"\n",
			num(x0), by, num(width), barHeight, colours[key])
		if float64(textWidth(run.Job)+8) <= width {
			fmt.Fprintf(body, `<text x="%s" y="%d" font-size="%d" fill="%s">%s</text>`+"\n",
				num(x0+4), by+barHeight/2+4, fontSize, ink(colours[key]), esc(run.Job))
		}
		body.WriteString("</g>\n")
	}

	// Jobs waiting per key: arrived, not yet started (nor refused or
	// expired), as a step line per key.
	y = bottom + 70
	fmt.Fprintf(body, `<text x="20" y="%d" font-size="13" font-weight="bold" fill="#222">Jobs waiting per %s</text>`+"\n", y, r.unit())
	top = y + 16
	bottom = top + chartTall/2
	waits := r.waiting()
	most := 1
	for _, w := range waits {
		for _, p := range w.points {
			most = max(most, p.n)
		}
	}
	wstep := niceStep(most, valueTicks)
	wdomain := max(ceilTo(most, wstep), wstep)
	wyOf := func(v int) float64 { return float64(bottom) - float64(v)*float64(chartTall/2)/float64(wdomain) }
	for v := 0; v <= wdomain; v += wstep {
		fmt.Fprintf(body, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#e0e0e0"/>`+"\n", plotLeft, num(wyOf(v)), plotLeft+plotWidth, num(wyOf(v)))
		fmt.Fprintf(body, `<text x="%d" y="%s" font-size="%d" text-anchor="end" fill="#444">%d</text>`+"\n", plotLeft-6, num(wyOf(v)+4), fontSize, v)
	}
	fmt.Fprintf(body, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#444"/>`+"\n", plotLeft, top, plotLeft, bottom)
	timeAxis(body, xOf, domain, step, top, bottom)
	for _, w := range waits {
		var pts []string
		prev := 0
		for _, p := range w.points {
			pts = append(pts, num(xOf(p.t))+","+num(wyOf(prev)), num(xOf(p.t))+","+num(wyOf(p.n)))
			prev = p.n
		}
		pts = append(pts, num(xOf(domain))+","+num(wyOf(prev)))
		fmt.Fprintf(body, "<polyline class=\"waiting\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\">\n<title>%s</title>\n</polyline>\n",
			colours[w.key], strings.Join(pts, " "), esc(fmt.Sprintf("%s: jobs waiting", w.key)))
	}

	// The cumulative service per key (per tenant).
	y = bottom + 70
	fmt.Fprintf(body, `<text x="20" y="%d" font-size="13" font-weight="bold" fill="#222">Cumulative service per %s (job-seconds run)</text>`+"\n", y, r.unit())
	top = y + 16
	bottom = top + chartTall
	most = 0
	for _, k := range r.parties() {
		most = max(most, k.Served)
	}
	vstep := niceStep(most, valueTicks)
	vdomain := max(ceilTo(most, vstep), vstep)
	yOf := func(v int) float64 { return float64(bottom) - float64(v)*chartTall/float64(vdomain) }
	for v := 0; v <= vdomain; v += vstep {
		fmt.Fprintf(body, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#e0e0e0"/>`+"\n", plotLeft, num(yOf(v)), plotLeft+plotWidth, num(yOf(v)))
		fmt.Fprintf(body, `<text x="%d" y="%s" font-size="%d" text-anchor="end" fill="#444">%d</text>`+"\n", plotLeft-6, num(yOf(v)+4), fontSize, v)
	}
	fmt.Fprintf(body, `<text transform="translate(%d %d) rotate(-90)" font-size="%d" text-anchor="middle" fill="#444">job-seconds</text>`+"\n",
		plotLeft-52, (top+bottom)/2, fontSize)
	fmt.Fprintf(body, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#444"/>`+"\n", plotLeft, top, plotLeft, bottom)
	timeAxis(body, xOf, domain, step, top, bottom)
	times := breakpoints(r.Runs, domain)
	for _, k := range r.parties() {
		var mine []Run
		for _, run := range r.Runs {
			if r.partyOf(run.Key) == k.Name {
				mine = append(mine, run)
			}
		}
		if len(mine) == 0 {
			continue
		}
		points := make([]string, len(times))
		for i, t := range times {
			points[i] = num(xOf(t)) + "," + num(yOf(served(mine, t)))
		}
		fmt.Fprintf(body, "<polyline class=\"service\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\">\n<title>%s</title>\n</polyline>\n",
			colours[k.Name], strings.Join(points, " "), esc(fmt.Sprintf("%s: %d job-seconds", k.Name, k.Served)))
	}
	if len(r.Tenants) >= 2 && r.TenantTo > r.TenantFrom {
		bottom = r.tenantShareChart(body, colours, xOf, domain, step, bottom+70)
	}
	return write(w, title, body, bottom+50)
}

// tenantShareChart draws, from y down, each tenant's share of the service
// run since TenantFrom at each time a share changes slope until TenantTo,
// over a band for its fair share (an equal part) ±
// scenario.TenantShareTolerance. It returns the plot's bottom.
func (r Report) tenantShareChart(body *strings.Builder, colours map[string]string, xOf func(int) float64, domain, step, y int) int {
	from, to := r.TenantFrom, r.TenantTo
	fair, tol := 1/float64(len(r.Tenants)), scenario.TenantShareTolerance
	fmt.Fprintf(body, `<text x="20" y="%d" font-size="13" font-weight="bold" fill="#222">Share of the service per tenant while every tenant had work waiting (T=%d–%d)</text>`+"\n", y, from, to)
	top := y + 16
	bottom := top + chartTall
	fmt.Fprintf(body, `<text x="%d" y="%d" font-size="%d" fill="#555">shaded: the bound, fair share %s%% ± %s points; each line: the service run since T=%d</text>`+"\n",
		plotLeft+plotWidth-470, y, fontSize, num(100*fair), num(100*tol), from)
	yOf := func(f float64) float64 { return float64(bottom) - f*chartTall }
	for v := 0; v <= 100; v += 25 {
		f := float64(v) / 100
		fmt.Fprintf(body, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#e0e0e0"/>`+"\n", plotLeft, num(yOf(f)), plotLeft+plotWidth, num(yOf(f)))
		fmt.Fprintf(body, `<text x="%d" y="%s" font-size="%d" text-anchor="end" fill="#444">%d%%</text>`+"\n", plotLeft-6, num(yOf(f)+4), fontSize, v)
	}
	fmt.Fprintf(body, "<rect class=\"bound\" x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"#59a14f\" fill-opacity=\"0.18\">\n<title>%s</title>\n</rect>\n",
		num(xOf(from)), num(yOf(min(fair+tol, 1))), num(xOf(to)-xOf(from)), num(yOf(max(fair-tol, 0))-yOf(min(fair+tol, 1))),
		esc(fmt.Sprintf("bound: %s%% ± %s points while every tenant had work waiting", num(100*fair), num(100*tol))))
	fmt.Fprintf(body, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#59a14f" stroke-dasharray="4 3"/>`+"\n", num(xOf(from)), num(yOf(fair)), num(xOf(to)), num(yOf(fair)))
	fmt.Fprintf(body, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#444"/>`+"\n", plotLeft, top, plotLeft, bottom)
	timeAxis(body, xOf, domain, step, top, bottom)
	var times []int
	for _, t := range breakpoints(r.Runs, to) {
		if t > from && t <= to {
			times = append(times, t)
		}
	}
	for _, tenant := range r.Tenants {
		var mine []Run
		for _, run := range r.Runs {
			if r.partyOf(run.Key) == tenant.Name {
				mine = append(mine, run)
			}
		}
		var points []string
		last := 0.0
		for _, t := range times {
			all := served(r.Runs, t) - served(r.Runs, from)
			if all == 0 {
				continue
			}
			last = float64(served(mine, t)-served(mine, from)) / float64(all)
			points = append(points, num(xOf(t))+","+num(yOf(last)))
		}
		fmt.Fprintf(body, "<polyline class=\"share\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\">\n<title>%s</title>\n</polyline>\n",
			colours[tenant.Name], strings.Join(points, " "), esc(fmt.Sprintf("%s: %.1f%% of the service over T=%d–%d", tenant.Name, 100*last, from, to)))
	}
	return bottom
}

// write frames body as an SVG document of the given title and height and
// writes it.
func write(w io.Writer, title string, body *strings.Builder, height int) error {
	b := &strings.Builder{}
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif">`+"\n",
		svgWidth, height, svgWidth, height)
	fmt.Fprintf(b, `<title>%s</title>`+"\n", esc(title))
	fmt.Fprintf(b, `<rect x="0" y="0" width="%d" height="%d" fill="#fff"/>`+"\n", svgWidth, height)
	b.WriteString(body.String())
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// subtitle sums the run up in one line.
func (r Report) subtitle() string {
	parts := []string{r.Name, fmt.Sprintf("%d jobs", r.Jobs), fmt.Sprintf("makespan %ds", r.Makespan)}
	if r.Refused > 0 {
		parts = append(parts, fmt.Sprintf("%d refused", r.Refused))
	}
	if r.Expired > 0 {
		parts = append(parts, fmt.Sprintf("%d expired", r.Expired))
	}
	if r.Shed > 0 {
		parts = append(parts, fmt.Sprintf("%d shed", r.Shed))
	}
	parts = append(parts, r.fairness(), r.LongestWait.text(len(r.Runs) > 0, r.Aging))
	return strings.Join(parts, " · ")
}

// colours maps each party's name (r.parties) to its colour, background
// work grey, the others the palette in order; and each key's name to its
// party's colour.
func (r Report) colours() map[string]string {
	out := map[string]string{}
	i := 0
	for _, k := range r.parties() {
		if k.Name == Background {
			out[k.Name] = backgroundColour
			continue
		}
		out[k.Name] = palette[i%len(palette)]
		i++
	}
	for _, run := range r.Runs {
		if _, ok := out[KeyName(run.Key)]; !ok {
			out[KeyName(run.Key)] = out[r.partyOf(run.Key)]
		}
		if out[KeyName(run.Key)] == "" { // a run whose key the report does not list
			out[KeyName(run.Key)] = "#333333"
		}
	}
	for _, u := range r.Unrun {
		if _, ok := out[KeyName(u.Key)]; !ok {
			out[KeyName(u.Key)] = out[r.partyOf(u.Key)]
		}
	}
	return out
}

// parties are what the chart's legend, colours and per-line charts stand
// for: the tenants when the report has them, else the keys.
func (r Report) parties() []Stats {
	if len(r.Tenants) > 0 {
		return r.Tenants
	}
	return r.Keys
}

// unit names a party: "tenant" or "key".
func (r Report) unit() string {
	if len(r.Tenants) > 0 {
		return "tenant"
	}
	return "key"
}

// partyOf is the name of the party of key: its tenant's, or its own.
func (r Report) partyOf(key string) string {
	if len(r.Tenants) == 0 {
		return KeyName(key)
	}
	return KeyName(scenario.Scenario{TenantSep: r.TenantSep}.TenantOf(key))
}

// ink is the text colour that reads on a bar of colour c (#rrggbb).
func ink(c string) string {
	v, err := strconv.ParseUint(strings.TrimPrefix(c, "#"), 16, 32)
	if err != nil {
		return "#000"
	}
	red, green, blue := float64(v>>16&0xff), float64(v>>8&0xff), float64(v&0xff)
	if 0.2126*red+0.7152*green+0.0722*blue >= 150 {
		return "#222"
	}
	return "#fff"
}

// rows lays the runs out on the Gantt chart's rows: first one row per
// worker slot in the order the slots were first used, then, for runs
// without a slot, rows allocated greedily: a run takes the lowest-numbered
// row free at its start. It returns the rows' labels and each run's row.
// runs must be sorted by start.
func rows(runs []Run) (labels []string, rowOf []int) {
	rowOf = make([]int, len(runs))
	slot := map[string]int{}
	for i, run := range runs {
		if run.Slot == "" {
			continue
		}
		row, ok := slot[run.Slot]
		if !ok {
			row = len(labels)
			slot[run.Slot] = row
			labels = append(labels, run.Slot)
		}
		rowOf[i] = row
	}
	first := len(labels)
	var free []int // the end of the last run on each greedy row
	for i, run := range runs {
		if run.Slot != "" {
			continue
		}
		row := slices.IndexFunc(free, func(end int) bool { return end <= run.Start })
		if row < 0 {
			row = len(free)
			free = append(free, 0)
			labels = append(labels, fmt.Sprintf("slot %d", row+1))
		}
		free[row] = run.End
		rowOf[i] = first + row
	}
	return labels, rowOf
}

// timeScale returns the time axis's extent (the last end, or refusal or
// expiry, rounded up to a whole tick, at least one tick) and its tick
// spacing, in seconds.
func timeScale(runs []Run, unrun []Unrun) (domain, step int) {
	last := 0
	for _, run := range runs {
		last = max(last, run.End)
	}
	for _, u := range unrun {
		last = max(last, u.At)
	}
	step = niceStep(last, timeTicks)
	return max(ceilTo(last, step), step), step
}

// niceStep is the smallest of 1, 2, 5, 10, 20, 50, … that divides span
// into at most n ticks.
func niceStep(span, n int) int {
	for mag := 1; ; mag *= 10 {
		for _, m := range []int{1, 2, 5} {
			if c := m * mag; ceilTo(span, c)/c <= n {
				return c
			}
		}
	}
}

func ceilTo(v, step int) int { return (v + step - 1) / step * step }

// timeAxis draws the vertical grid lines between top and bottom and the
// labelled time axis at bottom.
func timeAxis(b *strings.Builder, xOf func(int) float64, domain, step, top, bottom int) {
	for t := 0; t <= domain; t += step {
		x := num(xOf(t))
		fmt.Fprintf(b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#d8d8d8"/>`+"\n", x, top, x, bottom)
		fmt.Fprintf(b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#444"/>`+"\n", x, bottom, x, bottom+5)
		fmt.Fprintf(b, `<text x="%s" y="%d" font-size="%d" text-anchor="middle" fill="#444">%d</text>`+"\n", x, bottom+17, fontSize, t)
	}
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#444"/>`+"\n", plotLeft, bottom, plotLeft+plotWidth, bottom)
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="%d" text-anchor="middle" fill="#444">time (s)</text>`+"\n", plotLeft+plotWidth/2, bottom+33, fontSize)
}

// expiryLanes gives each expired job of unrun a lane below the arrivals
// line: the lowest whose last wait ended by the job's arrival, at most
// maxLanes of them (the last is shared past that). Refused jobs get none
// (-1): their cross is on the arrivals line.
func expiryLanes(unrun []Unrun) []int {
	lanes := make([]int, len(unrun))
	var free []int // the end of the last wait on each lane
	for i, u := range unrun {
		if u.Refused {
			lanes[i] = -1
			continue
		}
		lane := slices.IndexFunc(free, func(end int) bool { return end <= u.Arrival })
		if lane < 0 {
			lane = min(len(free), maxLanes-1)
			if lane == len(free) {
				free = append(free, 0)
			}
		}
		free[lane] = max(free[lane], u.At)
		lanes[i] = lane
	}
	return lanes
}

// waitLine is one key's number of waiting jobs, changing at each point.
type waitLine struct {
	key    string
	points []waitPoint
}

type waitPoint struct{ t, n int }

// waiting returns, per party (key or tenant) that ever had a job wait, the
// number of its jobs waiting — arrived, not started, refused or expired —
// after each time it changes, in r.parties' order.
func (r Report) waiting() []waitLine {
	deltas := map[string]map[int]int{}
	add := func(key string, from, to int) {
		if to <= from {
			return
		}
		k := r.partyOf(key)
		if deltas[k] == nil {
			deltas[k] = map[int]int{}
		}
		deltas[k][from]++
		deltas[k][to]--
	}
	for _, run := range r.Runs {
		add(run.Key, run.Arrival, run.Start)
	}
	for _, u := range r.Unrun {
		add(u.Key, u.Arrival, u.At)
	}
	var out []waitLine
	for _, k := range r.parties() {
		d := deltas[k.Name]
		if d == nil {
			continue
		}
		times := make([]int, 0, len(d))
		for t := range d {
			times = append(times, t)
		}
		slices.Sort(times)
		line := waitLine{key: k.Name}
		n := 0
		for _, t := range times {
			n += d[t]
			line.points = append(line.points, waitPoint{t, n})
		}
		out = append(out, line)
	}
	return out
}

// breakpoints are the times at which some key's service changes slope,
// with 0 and the end of the axis: the service curves are straight between
// them.
func breakpoints(runs []Run, domain int) []int {
	times := []int{0, domain}
	for _, run := range runs {
		times = append(times, run.Start, run.End)
	}
	slices.Sort(times)
	return slices.Compact(times)
}

// served is the job-seconds runs have run by time t.
func served(runs []Run, t int) int {
	sum := 0
	for _, run := range runs {
		sum += min(max(t-run.Start, 0), run.Served())
	}
	return sum
}

// wrap breaks s into lines of at most width characters at spaces (a word
// longer than width gets a line of its own).
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}

// textWidth estimates the width in pixels of s at fontSize.
func textWidth(s string) int { return int(math.Ceil(float64(utf8.RuneCountInString(s)) * charWidth)) }

// num formats a coordinate with at most two decimals, the same on every
// platform.
func num(v float64) string {
	s := strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
	if s == "-0" {
		return "0"
	}
	return s
}

// esc escapes s for XML text and attribute values (characters XML does
// not allow become U+FFFD).
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder never fails
	return b.String()
}
