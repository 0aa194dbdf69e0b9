package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/internal/report"
	"github.com/fairsched/fairsched/internal/scenario"
)

// TestMain checks that no test leaves a goroutine behind, once the
// throwaway PostgreSQL of the cluster play's test, if it started one, is
// stopped.
func TestMain(m *testing.M) {
	os.Exit(pgtest.Run(m)) // tests, the throwaway PostgreSQL stopped, then a leak check
}

func scenarioFile(name string) string {
	return filepath.Join("..", "..", "testdata", "scenarios", name)
}

// TestTextMatchesGolden: the CLI, driving the scheduler with real goroutine
// scheduling (polled snapshots), prints exactly the report the synctest
// golden test of the root package pins down.
func TestTextMatchesGolden(t *testing.T) {
	for _, name := range []string{"22-crossover-priority", "20-specialist-slots", "02-two-client-burst"} {
		var stdout, stderr bytes.Buffer
		if code := run([]string{scenarioFile(name + ".yaml")}, &stdout, &stderr); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr.String())
		}
		want, err := os.ReadFile(scenarioFile(name + ".golden"))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(stdout.String(), "\n")); diff != "" {
			t.Errorf("%s (-golden +cli):\n%s", name, diff)
		}
	}
}

// TestJSONAndSVG: -json prints the same figures as JSON, -svg writes a
// well-formed SVG with a bar per run.
func TestJSONAndSVG(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "chart.svg")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-json", "-svg", svg, scenarioFile("20-specialist-slots.yaml")}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var out struct {
		Name   string
		Jain   float64
		Runs   []struct{ Job, Slot string }
		Checks []string
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	slots := map[string]string{}
	for _, r := range out.Runs {
		slots[r.Job] = r.Slot
	}
	want := map[string]string{"pdf(report)": "specialist/0", "excel(budget)": "mixed/0", "index(search)": "versatile/0",
		"pdf(invoice)": "specialist/0", "pdf(memo)": "mixed/0"}
	if out.Name != "20-specialist-slots" || len(out.Checks) != 4 || !cmp.Equal(want, slots) {
		t.Errorf("JSON: name %q, checks %v, slots %v", out.Name, out.Checks, slots)
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	dec, bars := xml.NewDecoder(bytes.NewReader(data)), 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			for _, a := range se.Attr {
				if a.Name.Local == "class" && a.Value == "bar" {
					bars++
				}
			}
		}
	}
	if bars != len(out.Runs) {
		t.Errorf("SVG has %d bars for %d runs", bars, len(out.Runs))
	}
}

// TestSummaryAndErrors: -summary prints a verdict per scenario and writes
// a chart each; a bad file names its line and exits 2; misuse exits 2.
func TestSummaryAndErrors(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	files := []string{scenarioFile("04-conflict-exclusion.yaml"), scenarioFile("23-crossover-on-demand.yaml")}
	if code := run(append([]string{"-summary", "-svgdir", dir}, files...), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "\nok   04-conflict-exclusion: A clone and a repack of one repository never run at the same time; work on different repositories runs side by side — held: 1 of 1 checks passed\n") ||
		!strings.Contains(out, "longest wait 256s (batch(nightly))") || strings.Count(out, "\nok   ") != 2 ||
		!strings.HasSuffix(out, "("+report.JainExplained+".)\n") {
		t.Errorf("summary:\n%s", out)
	}
	for _, name := range []string{"04-conflict-exclusion.svg", "23-crossover-on-demand.svg"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("types:\n  - {name: a, priority: 1, default_cost: 1s}\njobs:\n  - {type: b, id: x, duration: 1}\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{bad}, bad + `:4: job "x": type "b" is not declared under types`},
		{[]string{files[0], files[1]}, "fairsim: several scenarios need -summary"},
		{nil, "usage: fairsim"},
	} {
		stdout.Reset()
		stderr.Reset()
		if code := run(tc.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("run(%v) = %d, stderr %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// TestRestartDemo: the durable demo's whole story, the same every run: the
// tenants take turns, the interrupted mail comes back with its attempt
// counted, and the store ends empty.
func TestRestartDemo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-restart"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := `Durable jobs across a restart (one slot, tenants alice and bob):
  before: sent mail-1 for alice (attempt 1)
  before: sent mail-4 for bob (attempt 1)
  before: sending mail-2 for alice (attempt 1) when the process stops
  restart: 3 mails restored, waiting for their handler (reason no_handler)
  after:  sent mail-2 for alice (attempt 2)
  after:  sent mail-5 for bob (attempt 1)
  after:  sent mail-3 for alice (attempt 1)
  every mail sent once, the interrupted one twice; 0 records left in the store
`
	if diff := cmp.Diff(want, stdout.String()); diff != "" {
		t.Errorf("restart demo (-want +got):\n%s", diff)
	}
}

// TestBuiltinInReadingOrder: -builtin merges the built-in scenarios with
// the files by name, so that the summary follows the shared numbering.
func TestBuiltinInReadingOrder(t *testing.T) {
	var stdout, stderr bytes.Buffer
	files := []string{scenarioFile("10-weighted-profiles.yaml"), scenarioFile("07-aging.yaml")}
	if code := run(append([]string{"-summary", "-builtin"}, files...), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var names []string
	for _, line := range strings.Split(stdout.String(), "\n") {
		if f := strings.Fields(line); len(f) > 1 && (f[0] == "ok" || f[0] == "FAIL") {
			names = append(names, strings.TrimSuffix(f[1], ":"))
		}
	}
	if len(names) != 2+len(scenario.Features()) || !slices.IsSorted(names) || names[0] != "07-aging" || names[3] != "10-weighted-profiles" {
		t.Errorf("scenarios in the order %q; want 07-aging, the built-ins and 10-weighted-profiles by name", names)
	}
}
