package fairsched_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/internal/report"
	"github.com/fairsched/fairsched/internal/scenario"
)

// TestScenarioFiles plays every scenario file of testdata/scenarios — the
// git proxy's basics, aging, weighted profiles, tiers, slot choice, the
// rare type, crossovers and shared clones — in virtual time through the simulator's own code
// (report.Play, as cmd/fairsim runs it) and compares its whole report with
// the reviewed golden file NAME.golden: the timeline, the waits and shares
// per key and group, Jain's index, the longest wait against the aging
// bound, and the checks. Every check must pass. -update rewrites them.
func TestScenarioFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*.yaml"))
	if err != nil || len(files) < 11 {
		t.Fatalf("scenario files: %v, %v", files, err)
	}
	for _, file := range files {
		sc, err := scenario.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(sc.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				out, err := report.Play(sc, settle, nil)
				if err != nil {
					t.Fatal(err)
				}
				var got bytes.Buffer
				if err := out.Text(&got); err != nil {
					t.Fatal(err)
				}
				golden := strings.TrimSuffix(file, ".yaml") + ".golden"
				if *update {
					if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got.String(), "\n")); diff != "" {
					t.Errorf("report differs from %s (-want +got):\n%s", golden, diff)
				}
				if out.Failed() > 0 {
					t.Errorf("checks failed:\n%s", strings.Join(out.Checks, "\n"))
				}
			})
		})
	}
}

// TestSpecFilesMatchGoScenarios: the scenario files 01-05 describe the
// very workloads of the Go scenarios the library's golden tests pin down
// (internal/scenario.Spec): played, they give the same timelines, line for
// line — the file format says what the Go code says.
func TestSpecFilesMatchGoScenarios(t *testing.T) {
	for _, goSc := range scenario.Spec() {
		file := filepath.Join("testdata", "scenarios", strings.TrimPrefix(goSc.Name, "go-")+".yaml")
		fileSc, err := scenario.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(goSc.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var timelines [2][]string
				for i, sc := range []scenario.Scenario{goSc, fileSc} {
					res, err := scenario.Run(sc, clock.NewMock(), settle)
					if err != nil {
						t.Fatal(err)
					}
					for _, e := range res.Timeline {
						timelines[i] = append(timelines[i], e.String())
					}
				}
				if diff := cmp.Diff(timelines[0], timelines[1]); diff != "" {
					t.Errorf("%s against %s (-go +file):\n%s", goSc.Name, file, diff)
				}
			})
		})
	}
}
