package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

// TestLines: the chart is well-formed XML, draws a polyline per line
// series and a dot per point of a dotted one, names every series once in
// the legend, and is the same twice.
func TestLines(t *testing.T) {
	panels := []Panel{
		{Title: "jobs/s", YLabel: "jobs/s", Series: []Series{
			{Name: "a", Points: [][2]float64{{0, 10}, {2, 20}, {4, 15}}},
			{Name: "b", Points: [][2]float64{{0, 1000}, {2, 2000}}},
		}},
		{Title: "wait", YLabel: "ms", Log: true, Series: []Series{
			{Name: "a", Dots: true, Points: [][2]float64{{1, 3}, {2, 0}, {3, 4000}}},
		}},
	}
	var one, two bytes.Buffer
	if err := Lines(&one, "title <&>", "sub", panels); err != nil {
		t.Fatal(err)
	}
	if err := Lines(&two, "title <&>", "sub", panels); err != nil {
		t.Fatal(err)
	}
	if one.String() != two.String() {
		t.Error("two drawings differ")
	}
	d := xml.NewDecoder(strings.NewReader(one.String()))
	for {
		if _, err := d.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not XML: %v", err)
			}
			break
		}
	}
	s := one.String()
	if n := strings.Count(s, "<polyline"); n != 2 {
		t.Errorf("%d polylines, want 2", n)
	}
	if n := strings.Count(s, "<circle"); n != 2 { // the 0 is off a log scale
		t.Errorf("%d dots, want 2", n)
	}
	for _, name := range []string{`">a</text>`, `">b</text>`} {
		if strings.Count(s, name) != 1 {
			t.Errorf("legend entry %s appears %d times", name, strings.Count(s, name))
		}
	}
}
