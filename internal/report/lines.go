package report

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// Series is one line of a Panel: points (x, y) in x order, drawn as a
// polyline, or as dots when Dots is set.
type Series struct {
	Name   string
	Points [][2]float64
	Dots   bool
}

// Panel is one chart of Lines: a shared x axis in seconds, a y axis
// labelled YLabel, linear from 0 or, with Log, by powers of ten.
type Panel struct {
	Title  string
	YLabel string
	Log    bool
	Series []Series
}

const (
	panelTall = 220 // a panel's plot area
	panelGap  = 70  // between panels: the axis labels, the next title
)

// Lines writes a standalone SVG image of panels stacked under one title
// and subtitle, sharing a time axis (seconds) from 0 to the last x of any
// series; the series of every panel take the palette's colours in order,
// by name, so that one system has one colour in every panel. The output
// depends only on its arguments.
func Lines(w io.Writer, title, subtitle string, panels []Panel) error {
	colour := map[string]string{}
	lastX := 0.0
	for _, p := range panels {
		for _, s := range p.Series {
			if _, ok := colour[s.Name]; !ok {
				colour[s.Name] = palette[len(colour)%len(palette)]
			}
			for _, pt := range s.Points {
				lastX = max(lastX, pt[0])
			}
		}
	}
	step := niceStep(int(math.Ceil(lastX)), timeTicks)
	domain := max(ceilTo(int(math.Ceil(lastX)), step), step)
	xOf := func(x float64) float64 { return plotLeft + x*plotWidth/float64(domain) }

	b := &strings.Builder{}
	y := 28
	for i, line := range wrap(title, titleChars) {
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="18" font-weight="bold">%s</text>`+"\n", plotLeft, y+22*i, esc(line))
		y += 22 * i
	}
	y += 20
	for _, line := range wrap(subtitle, 150) {
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="%d" fill="#444">%s</text>`+"\n", plotLeft, y, fontSize, esc(line))
		y += 15
	}
	// The legend.
	x := plotLeft
	y += 6
	for _, name := range legendOrder(panels) {
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", x, y-legendSwat+2, legendSwat, legendSwat, colour[name])
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="%d">%s</text>`+"\n", x+legendSwat+4, y, fontSize, esc(name))
		x += legendSwat + 16 + textWidth(name)
	}
	y += 20
	for _, p := range panels {
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="13" font-weight="bold">%s</text>`+"\n", plotLeft, y, esc(p.Title))
		top, bottom := y+12, y+12+panelTall
		yOf, ticks := yScale(p, top, bottom)
		for _, t := range ticks {
			yy := num(yOf(t.v))
			fmt.Fprintf(b, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#eee"/>`+"\n", plotLeft, yy, plotLeft+plotWidth, yy)
			fmt.Fprintf(b, `<text x="%d" y="%s" font-size="%d" text-anchor="end" fill="#444" dy="4">%s</text>`+"\n", plotLeft-6, yy, fontSize, esc(t.label))
		}
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="%d" fill="#444" transform="rotate(-90 %d %d)" text-anchor="middle">%s</text>`+"\n",
			plotLeft-62, (top+bottom)/2, fontSize, plotLeft-62, (top+bottom)/2, esc(p.YLabel))
		timeAxis(b, func(t int) float64 { return xOf(float64(t)) }, domain, step, top, bottom)
		for _, s := range p.Series {
			pts := make([]string, 0, len(s.Points))
			for _, pt := range s.Points {
				if p.Log && pt[1] <= 0 {
					continue
				}
				if s.Dots {
					fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="2" fill="%s" fill-opacity="0.7"/>`+"\n", num(xOf(pt[0])), num(yOf(pt[1])), colour[s.Name])
					continue
				}
				pts = append(pts, num(xOf(pt[0]))+","+num(yOf(pt[1])))
			}
			if len(pts) > 0 {
				fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"><title>%s</title></polyline>`+"\n",
					strings.Join(pts, " "), colour[s.Name], esc(s.Name))
			}
		}
		y = bottom + panelGap
	}
	return write(w, title, b, y-panelGap+50)
}

// legendOrder is every series' name once, in the order first met.
func legendOrder(panels []Panel) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range panels {
		for _, s := range p.Series {
			if !seen[s.Name] {
				seen[s.Name] = true
				out = append(out, s.Name)
			}
		}
	}
	return out
}

type yTick struct {
	v     float64
	label string
}

// yScale maps a panel's values onto [bottom, top]: linear from 0 to a
// round maximum, or logarithmic over whole powers of ten.
func yScale(p Panel, top, bottom int) (func(float64) float64, []yTick) {
	hi, lo := 0.0, math.Inf(1)
	for _, s := range p.Series {
		for _, pt := range s.Points {
			hi = max(hi, pt[1])
			if pt[1] > 0 {
				lo = min(lo, pt[1])
			}
		}
	}
	span := float64(bottom - top)
	if p.Log {
		if math.IsInf(lo, 1) {
			lo, hi = 1, 10
		}
		a, z := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
		if z <= a {
			z = a + 1
		}
		var ticks []yTick
		for e := a; e <= z; e++ {
			ticks = append(ticks, yTick{math.Pow(10, e), num(math.Pow(10, e))})
		}
		return func(v float64) float64 { return float64(bottom) - (math.Log10(v)-a)/(z-a)*span }, ticks
	}
	step := niceStep(int(math.Ceil(hi)), valueTicks)
	top2 := max(ceilTo(int(math.Ceil(hi)), step), step)
	var ticks []yTick
	for v := 0; v <= top2; v += step {
		ticks = append(ticks, yTick{float64(v), fmt.Sprint(v)})
	}
	return func(v float64) float64 { return float64(bottom) - v/float64(top2)*span }, ticks
}
