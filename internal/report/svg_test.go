package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/internal/scenario"
)

// element is one start element of an SVG and the text directly inside it.
type element struct {
	name  string
	attrs map[string]string
	text  string
}

// parse decodes data as XML, failing the test when it is not well-formed,
// and returns its elements in document order.
func parse(t *testing.T, data []byte) []*element {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(data))
	var all, open []*element
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, data)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := &element{name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			all, open = append(all, e), append(open, e)
		case xml.EndElement:
			open = open[:len(open)-1]
		case xml.CharData:
			if len(open) > 0 {
				open[len(open)-1].text += string(tok)
			}
		}
	}
	if len(all) == 0 || all[0].name != "svg" || all[0].attrs["xmlns"] != "http://www.w3.org/2000/svg" {
		t.Fatalf("the document is not an SVG:\n%s", data)
	}
	return all
}

func render(t *testing.T, r Report) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := r.SVG(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func attrFloat(t *testing.T, e *element, name string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(e.attrs[name], 64)
	if err != nil {
		t.Fatalf("<%s %s=%q>: %v", e.name, name, e.attrs[name], err)
	}
	return v
}

// TestSVGBars: one bar per run, at x = plotLeft + start·plotWidth/domain
// with width (end − start)·plotWidth/domain, coloured by key, each with the
// job's name in its tooltip and inside the bar when it fits; the legend
// names every key.
func TestSVGBars(t *testing.T) {
	sc, res := handMade()
	r := Build(sc, res)
	els := parse(t, render(t, r))

	// The last run ends at 9: ticks of 1s, the axis runs to 9.
	const domain = 9.0
	scale := float64(plotWidth) / domain
	var bars []*element
	var titles, texts []string // titles: each bar's
	for i, e := range els {
		switch {
		case e.name == "rect" && e.attrs["class"] == "bar":
			bars = append(bars, e)
			if i == 0 || els[i-1].name != "title" {
				t.Errorf("bar %d has no title before it", len(bars))
				titles = append(titles, "")
			} else {
				titles = append(titles, els[i-1].text)
			}
		case e.name == "text":
			texts = append(texts, e.text)
		}
	}
	if len(bars) != len(r.Runs) {
		t.Fatalf("%d bars for %d runs", len(bars), len(r.Runs))
	}
	wantFill := map[string]string{"": backgroundColour, "A": palette[0], "B": palette[1]}
	for i, run := range r.Runs {
		bar := bars[i]
		x, w := attrFloat(t, bar, "x"), attrFloat(t, bar, "width")
		wantX, wantW := plotLeft+float64(run.Start)*scale, float64(run.End-run.Start)*scale
		if diff := x - wantX; diff > 0.006 || diff < -0.006 {
			t.Errorf("%s: x %v, want %v", run.Job, x, wantX)
		}
		if diff := w - wantW; diff > 0.006 || diff < -0.006 {
			t.Errorf("%s: width %v, want %v", run.Job, w, wantW)
		}
		if bar.attrs["fill"] != wantFill[run.Key] {
			t.Errorf("%s: fill %s, want %s", run.Job, bar.attrs["fill"], wantFill[run.Key])
		}
		if !strings.HasPrefix(titles[i], run.Job+":") {
			t.Errorf("bar %d's tooltip %q does not name %s", i, titles[i], run.Job)
		}
	}
	// sync-clone(b1) runs 1s (≈96px): its name does not fit; repack(r1)
	// runs 4s and shows its name.
	if !contains(texts, "repack(r1)") || contains(texts, "sync-clone(b1)") {
		t.Errorf("bar labels: %q", texts)
	}
	for _, name := range []string{"(background) (33.3%)", "A (50.0%)", "B (16.7%)"} {
		if !contains(texts, name) {
			t.Errorf("legend lacks %q: %q", name, texts)
		}
	}
	for _, label := range []string{"w1/0", "slot 1", "slot 2", "time (s)", "job-seconds", "Hand made"} {
		if !contains(texts, label) {
			t.Errorf("no text %q: %q", label, texts)
		}
	}
	if contains(texts, "slot 3") {
		t.Errorf("more rows than needed: %q", texts)
	}
	var lines int
	for _, e := range els {
		if e.name == "polyline" && e.attrs["class"] == "service" {
			lines++
		}
	}
	if lines != 3 {
		t.Errorf("%d service lines, want one per key (3)", lines)
	}

	// Arrivals: a dot per run at its arrival, in its key's colour; the
	// refused clone a red cross at 1, the expired repack a dark one at 7.
	var dots []string
	marks := map[string][]string{}
	waiting := map[string]string{}
	for _, e := range els {
		switch c := e.attrs["class"]; {
		case e.name == "circle" && c == "arrival":
			dots = append(dots, fmt.Sprintf("%.0f %s", (attrFloat(t, e, "cx")-plotLeft)/scale, e.attrs["fill"]))
		case e.name == "path" && (c == "refused" || c == "expired"):
			var x0, y0, x1, y1 float64
			if _, err := fmt.Sscanf(e.attrs["d"], "M%g %gL%g %g", &x0, &y0, &x1, &y1); err != nil || y1-y0 != 8 || x1-x0 != 8 {
				t.Errorf("%s mark %q is not a cross", c, e.attrs["d"])
			}
			marks[c] = append(marks[c], fmt.Sprintf("%.2f", ((x0+x1)/2-plotLeft)/scale))
		case e.name == "polyline" && c == "waiting":
			waiting[e.attrs["stroke"]] = e.attrs["points"]
		}
	}
	var wantDots []string
	for _, run := range r.Runs {
		wantDots = append(wantDots, fmt.Sprintf("%d %s", run.Arrival, wantFill[run.Key]))
	}
	if diff := cmp.Diff(wantDots, dots); diff != "" {
		t.Errorf("arrival dots (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string][]string{"refused": {"1.00"}, "expired": {"7.00"}}, marks); diff != "" {
		t.Errorf("refused and expired marks (-want +got):\n%s", diff)
	}
	// Waiting lines: B's two clones wait from 1, one starts at 4, the
	// other at 5; background work: r1 from 0 to 5, e1 from 2 to 7.
	if len(waiting) != 3 {
		t.Errorf("%d waiting lines, want 3 (A, B, background): %v", len(waiting), waiting)
	}
	steps := func(points string) []string { // x as seconds, y as the step's height rank
		var out []string
		for _, p := range strings.Fields(points) {
			xs, _, _ := strings.Cut(p, ",")
			x, _ := strconv.ParseFloat(xs, 64)
			out = append(out, fmt.Sprintf("%.0f", (x-plotLeft)/scale))
		}
		return out
	}
	if got := steps(waiting[palette[1]]); !cmp.Equal(got, []string{"1", "1", "4", "4", "5", "5", "9"}) {
		t.Errorf("B's waiting line changes at %v; want at 1, 4, 5 and ending at 9", got)
	}
}

// TestSVGWaits: above each run's bar, in its row, a tick at the job's
// arrival and, when it waited, a line from its arrival to its start in its
// key's colour; a refused job is a red cross at its arrival; an expired
// one a line from its arrival to its expiry, below the arrivals line,
// ending in a dark cross.
func TestSVGWaits(t *testing.T) {
	sc, res := handMade() // waits: a2 0→2, b1 1→4, r1 0→5, b2 1→5; x refused at 1; e1 expired 2→7
	r := Build(sc, res)
	els := parse(t, render(t, r))
	scale := float64(plotWidth) / 9
	sec := func(e *element, attr string) string {
		return fmt.Sprintf("%.2f", (attrFloat(t, e, attr)-plotLeft)/scale)
	}
	var waits, ticks []string
	var bars []float64 // each bar's y, in order
	var arrivalsY float64
	var crosses []*element
	for _, e := range els {
		switch c := e.attrs["class"]; {
		case e.name == "line" && c == "wait":
			waits = append(waits, fmt.Sprintf("%s→%s %s y%.0f", sec(e, "x1"), sec(e, "x2"), e.attrs["stroke"], attrFloat(t, e, "y1")))
		case e.name == "line" && c == "arrival":
			if e.attrs["x1"] != e.attrs["x2"] {
				t.Errorf("arrival tick %v is not vertical", e.attrs)
			}
			ticks = append(ticks, fmt.Sprintf("%s %s y%.0f-%.0f", sec(e, "x1"), e.attrs["stroke"], attrFloat(t, e, "y1"), attrFloat(t, e, "y2")))
		case e.name == "rect" && c == "bar":
			bars = append(bars, attrFloat(t, e, "y"))
		case e.name == "circle" && c == "arrival":
			arrivalsY = attrFloat(t, e, "cy")
		case e.name == "path" && (c == "refused" || c == "expired"):
			crosses = append(crosses, e)
		}
	}
	if len(bars) != len(r.Runs) {
		t.Fatalf("%d bars for %d runs", len(bars), len(r.Runs))
	}
	colour := map[string]string{"": backgroundColour, "A": palette[0], "B": palette[1]}
	lane := arrivalsY + laneGap // the expired job's lane
	want := []string{fmt.Sprintf("2.00→7.00 %s y%.0f", backgroundColour, lane)}
	var wantTicks []string
	for i, run := range r.Runs {
		wy := bars[i] - barTop + waitLane // the lane above the run's bar
		if run.Wait() > 0 {
			want = append(want, fmt.Sprintf("%d.00→%d.00 %s y%.0f", run.Arrival, run.Start, colour[run.Key], wy))
		}
		wantTicks = append(wantTicks, fmt.Sprintf("%d.00 %s y%.0f-%.0f", run.Arrival, colour[run.Key], wy-3, bars[i]))
	}
	if diff := cmp.Diff(want, waits); diff != "" {
		t.Errorf("wait lines (-want +got):\n%s", diff)
	}
	// The expired job's tick on its lane, then one per run in its row.
	wantTicks = append([]string{fmt.Sprintf("2.00 %s y%.0f-%.0f", backgroundColour, lane-3, lane+3)}, wantTicks...)
	if diff := cmp.Diff(wantTicks, ticks); diff != "" {
		t.Errorf("arrival ticks (-want +got):\n%s", diff)
	}
	var marks []string
	for _, e := range crosses {
		var x0, y0 float64
		fmt.Sscanf(e.attrs["d"], "M%g %g", &x0, &y0)
		marks = append(marks, fmt.Sprintf("%s at %.2f y%.0f %s", e.attrs["class"], (x0+4-plotLeft)/scale, y0+4, e.attrs["stroke"]))
	}
	wantMarks := []string{fmt.Sprintf("refused at 1.00 y%.0f #d62728", arrivalsY), fmt.Sprintf("expired at 7.00 y%.0f #333", lane)}
	if diff := cmp.Diff(wantMarks, marks); diff != "" {
		t.Errorf("refused and expired marks (-want +got):\n%s", diff)
	}
}

// TestExpiryLanes: an expired job's wait takes the lowest lane free at its
// arrival, up to maxLanes; refused jobs take none.
func TestExpiryLanes(t *testing.T) {
	unrun := []Unrun{{Arrival: 0, At: 5}, {Arrival: 1, At: 1, Refused: true}, {Arrival: 2, At: 4}, {Arrival: 5, At: 6}, {Arrival: 4, At: 9}}
	for range maxLanes + 1 {
		unrun = append(unrun, Unrun{Arrival: 0, At: 20})
	}
	want := []int{0, -1, 1, 0, 1, 2, 3, 4, 5, 5, 5, 5}
	if got := expiryLanes(unrun); !cmp.Equal(want, got) {
		t.Errorf("lanes %v, want %v", got, want)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestSVGDeterministic: two calls, and two reports built from the same
// run, write the same bytes.
func TestSVGDeterministic(t *testing.T) {
	sc, res := handMade()
	first := render(t, Build(sc, res))
	for range 5 {
		if again := render(t, Build(sc, res)); !bytes.Equal(first, again) {
			t.Fatalf("the SVG changed between calls:\n%s", cmp.Diff(string(first), string(again)))
		}
	}
}

// TestRows: worker slots take rows in the order of their first use; runs
// without a slot take the lowest-numbered free row at their start.
func TestRows(t *testing.T) {
	runs := []Run{
		{Job: "a", Start: 0, End: 4},
		{Job: "w", Slot: "w2/1", Start: 0, End: 3},
		{Job: "b", Start: 1, End: 2},
		{Job: "c", Start: 2, End: 5}, // row 2 is free again at 2
		{Job: "x", Slot: "w1/0", Start: 3, End: 4},
		{Job: "d", Start: 3, End: 6}, // rows 1 and 2 busy: a third
		{Job: "e", Start: 4, End: 5}, // row 1 free at 4
		{Job: "y", Slot: "w2/1", Start: 4, End: 5},
	}
	labels, rowOf := rows(runs)
	if diff := cmp.Diff([]string{"w2/1", "w1/0", "slot 1", "slot 2", "slot 3"}, labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{2, 0, 3, 3, 1, 4, 2, 0}, rowOf); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

func TestNiceStep(t *testing.T) {
	for _, c := range []struct{ span, n, want int }{
		{0, 12, 1}, {1, 12, 1}, {12, 12, 1}, {13, 12, 2}, {24, 12, 2}, {25, 12, 5}, {60, 12, 5},
		{61, 12, 10}, {100, 12, 10}, {130, 12, 20}, {1000, 12, 100}, {7, 5, 2}, {80, 5, 20},
	} {
		if got := niceStep(c.span, c.n); got != c.want {
			t.Errorf("niceStep(%d, %d) = %d, want %d", c.span, c.n, got, c.want)
		}
	}
}

// TestSVGEscapes: names with XML's special characters stay well-formed and
// read back unchanged.
func TestSVGEscapes(t *testing.T) {
	r := Report{Name: `a<b>&"c"`, Title: `Tom & Jerry's <scenario>`, Jobs: 1, Makespan: 2,
		Keys: []Stats{{Name: `k<&>"'`, Jobs: 1, Served: 2, Share: 1}},
		Runs: []Run{{Job: `t(<&>)`, Type: "t", Key: `k<&>"'`, Start: 0, End: 2}}, Jain: 1}
	var texts []string
	for _, e := range parse(t, render(t, r)) {
		texts = append(texts, e.text)
	}
	for _, want := range []string{`Tom & Jerry's <scenario>`, `t(<&>)`, `k<&>"' (100.0%)`} {
		if !contains(texts, want) {
			t.Errorf("no text %q in %q", want, texts)
		}
	}
}

// TestSVGNoRuns: a report of nothing is still a valid image.
func TestSVGNoRuns(t *testing.T) {
	var texts []string
	for _, e := range parse(t, render(t, Build(scenario.Scenario{Name: "empty"}, scenario.Result{}))) {
		texts = append(texts, e.text)
	}
	if !contains(texts, "no job ran") {
		t.Errorf("texts %q", texts)
	}
}

// TestSVGHeightGrowsWithRows: each row adds its height to the image.
func TestSVGHeightGrowsWithRows(t *testing.T) {
	r := Report{Name: "h", Keys: []Stats{{Name: "k"}}}
	height := func() int {
		h, err := strconv.Atoi(parse(t, render(t, r))[0].attrs["height"])
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	r.Runs = []Run{{Job: "a", Key: "k", End: 1}}
	one := height()
	r.Runs = append(r.Runs, Run{Job: "b", Key: "k", End: 1}, Run{Job: "c", Key: "k", End: 1})
	if three := height(); three != one+2*rowHeight {
		t.Errorf("height %d for one row, %d for three; want %d more", one, three, 2*rowHeight)
	}
}

// converter returns a command line that converts an SVG to a PNG, or ""
// when the machine has none (a stand-in that is not ImageMagick does not
// count).
func converter(svg, png string) []string {
	if path, err := exec.LookPath("rsvg-convert"); err == nil {
		return []string{path, "-o", png, svg}
	}
	if path, err := exec.LookPath("convert"); err == nil {
		if out, err := exec.Command(path, "-version").Output(); err == nil && strings.Contains(string(out), "Version: ImageMagick") {
			return []string{path, svg, png}
		}
	}
	return nil
}

// TestSVGConverts: a converter renders the image to a PNG.
func TestSVGConverts(t *testing.T) {
	dir := t.TempDir()
	svg, png := filepath.Join(dir, "report.svg"), filepath.Join(dir, "report.png")
	args := converter(svg, png)
	if args == nil {
		t.Skip("neither rsvg-convert nor ImageMagick's convert is installed")
	}
	sc, res := handMade()
	if err := os.WriteFile(svg, render(t, Build(sc, res)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	data, err := os.ReadFile(png)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("%s is not a PNG (%d bytes)", png, len(data))
	}
}

// TestRealRun reports a run of the real scheduler: 08-aging-under-stream, in which
// aging lifts repack(big) past a foreground stream within its bound
// MaxWait(1) = 7s.
func TestRealRun(t *testing.T) {
	sc := scenario.AgingUnderStream()
	res, err := scenario.Run(sc, clock.NewMock(), scenario.Poll)
	if err != nil {
		t.Fatal(err)
	}
	r := Build(sc, res)
	if want := (Wait{Job: "repack(big)", Wait: 7, Bound: 7, Within: true}); r.LongestWait != want {
		t.Errorf("longest wait %+v, want %+v", r.LongestWait, want)
	}
	if len(r.Runs) != len(sc.Jobs) {
		t.Errorf("%d runs of %d jobs", len(r.Runs), len(sc.Jobs))
	}
	var b strings.Builder
	if err := r.Text(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "longest wait 7s: repack(big) (bound 7s: ok)\n") {
		t.Errorf("text:\n%s", b.String())
	}
	parse(t, render(t, r))
}

// TestRenderScenarios writes the text, JSON and SVG reports of every
// scenario to $REPORT_DIR, to be looked at:
//
//	REPORT_DIR=/tmp/reports go test -run TestRenderScenarios ./internal/report
func TestRenderScenarios(t *testing.T) {
	dir := os.Getenv("REPORT_DIR")
	if dir == "" {
		t.Skip("REPORT_DIR is not set")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, sc := range scenario.All() {
		res, err := scenario.Run(sc, clock.NewMock(), scenario.Poll)
		if err != nil {
			t.Fatal(err)
		}
		r := Build(sc, res)
		var text, svg bytes.Buffer
		if err := r.Text(&text); err != nil {
			t.Fatal(err)
		}
		if err := r.SVG(&svg); err != nil {
			t.Fatal(err)
		}
		data, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		for ext, content := range map[string][]byte{".txt": text.Bytes(), ".json": data, ".svg": svg.Bytes()} {
			if err := os.WriteFile(filepath.Join(dir, sc.Name+ext), content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestSVGTitleWraps: a title longer than a line of the image wraps at
// spaces onto more lines, none longer than titleChars, no word lost.
func TestSVGTitleWraps(t *testing.T) {
	title := strings.Repeat("a fairly long title word ", 8) + "end"
	r := Report{Name: "w", Title: title, Keys: []Stats{{Name: "k"}}, Runs: []Run{{Job: "a", Key: "k", End: 1}}}
	var lines []string
	for _, e := range parse(t, render(t, r)) {
		if e.name == "text" && e.attrs["class"] == "title" {
			lines = append(lines, e.text)
			if len(e.text) > titleChars {
				t.Errorf("title line of %d characters: %q", len(e.text), e.text)
			}
		}
	}
	if len(lines) < 2 || strings.Join(lines, " ") != strings.TrimSpace(title) {
		t.Errorf("title lines %q", lines)
	}
	if got := wrap("", 10); !cmp.Equal(got, []string{""}) {
		t.Errorf("wrap of nothing: %q", got)
	}
	if got := wrap("short averyveryverylongword x", 10); !cmp.Equal(got, []string{"short", "averyveryverylongword", "x"}) {
		t.Errorf("wrap: %q", got)
	}
}

// TestSVGTenants: with tenants, the legend, the colours and the per-line
// charts are the tenants', and a chart draws each tenant's share of the
// service since TenantFrom over a band for its bound (fair share ± 5
// points); without tenants, no such chart.
func TestSVGTenants(t *testing.T) {
	run := func(job, key string, start int) Run {
		return Run{Job: job, Key: key, Start: start, End: start + 1}
	}
	r := Report{Name: "t", Keys: []Stats{{Name: "a/x"}, {Name: "a/y"}, {Name: "b/z"}},
		Tenants: []Stats{{Name: "a", Share: 0.625}, {Name: "b", Share: 0.375}}, TenantSep: "/", TenantFrom: 0, TenantTo: 4,
		Runs: []Run{run("a1", "a/x", 0), run("b1", "b/z", 0), run("a2", "a/y", 1), run("b2", "b/z", 1),
			run("a3", "a/x", 2), run("a4", "a/y", 2), run("b3", "b/z", 3), run("a5", "a/x", 3)}}
	els := parse(t, render(t, r))
	var legend, shares []string
	var bound *element
	fill := map[string]string{} // legend label or bar's job → colour
	for i, e := range els {
		switch e.attrs["class"] {
		case "legend":
			legend = append(legend, els[i+1].text)
			fill[els[i+1].text] = e.attrs["fill"]
		case "bar":
			fill[strings.SplitN(els[i-1].text, ":", 2)[0]] = e.attrs["fill"]
		case "share":
			shares = append(shares, fmt.Sprintf("%d points; %s", len(strings.Fields(e.attrs["points"])), els[i+1].text))
		case "bound":
			bound = e
		}
	}
	if diff := cmp.Diff([]string{"a (62.5%)", "b (37.5%)"}, legend); diff != "" {
		t.Errorf("legend (-want +got):\n%s", diff)
	}
	for _, job := range []string{"a1", "a2", "a3", "a4", "a5"} {
		if fill[job] != fill["a (62.5%)"] {
			t.Errorf("%s's bar is %s, not its tenant's colour %s", job, fill[job], fill["a (62.5%)"])
		}
	}
	if fill["b1"] != fill["b (37.5%)"] || fill["a1"] == fill["b1"] {
		t.Errorf("b1's bar is %s, tenant b's colour %s, a1's %s", fill["b1"], fill["b (37.5%)"], fill["a1"])
	}
	// Since T=0, a's share is 1/2 at T=1, 2/4 at T=2, 4/6 at T=3, 5/8 at T=4.
	want := []string{"4 points; a: 62.5% of the service over T=0–4", "4 points; b: 37.5% of the service over T=0–4"}
	if diff := cmp.Diff(want, shares); diff != "" {
		t.Errorf("share lines (-want +got):\n%s", diff)
	}
	if bound == nil {
		t.Fatal("no band for the bound")
	}
	if h := attrFloat(t, bound, "height"); h != 0.1*chartTall {
		t.Errorf("the bound's band is %gpx tall, want 10 points of %dpx", h, chartTall)
	}
	r.Tenants = nil
	for _, e := range parse(t, render(t, r)) {
		if c := e.attrs["class"]; c == "share" || c == "bound" {
			t.Errorf("a report without tenants draws a %s", c)
		}
	}
}
