package fairsched_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/scenario"
)

var update = flag.Bool("update", false, "rewrite testdata/scenarios/*.golden from this run")

// settle waits until every goroutine of the bubble is blocked — the
// scheduler has handled all it was sent — and checks the runner's
// expectation against a snapshot.
func settle(s *fairsched.Scheduler, cond func(fairsched.Snapshot) bool) error {
	synctest.Wait()
	return scenario.Poll(s, func(snap fairsched.Snapshot) bool {
		if !cond(snap) {
			panic("scheduler settled in a state the scenario did not expect")
		}
		return true
	})
}

// render is the whole observable outcome of a scenario: its timeline, the
// final accumulated costs and the learned estimates.
func render(res scenario.Result) []string {
	var out []string
	for _, e := range res.Timeline {
		out = append(out, e.String())
	}
	out = append(out, "", "accumulated cost:")
	for _, k := range sortedKeys(res.AccumulatedCost) {
		out = append(out, fmt.Sprintf("  %q %v", k, res.AccumulatedCost[k]))
	}
	out = append(out, "", "estimates:")
	for _, k := range sortedKeys(res.Estimates) {
		out = append(out, fmt.Sprintf("  %s %v", k, res.Estimates[k]))
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestSpecScenarios plays the built-in scenarios (scenario.All: the git
// proxy's five written in Go, then the features') in virtual time and
// compares the whole timeline, final accumulated costs and estimates with
// the reviewed golden file, then checks caps, conflicts and the property
// each scenario exists to show.
func TestSpecScenarios(t *testing.T) {
	for _, sc := range scenario.All() {
		t.Run(sc.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				res, err := scenario.Run(sc, clock.NewMock(), settle)
				if err != nil {
					t.Fatal(err)
				}
				got := render(res)
				golden := filepath.Join("testdata", "scenarios", sc.Name+".golden")
				if *update {
					if err := os.WriteFile(golden, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(strings.Split(strings.TrimSuffix(string(want), "\n"), "\n"), got); diff != "" {
					t.Errorf("timeline differs from %s (-want +got):\n%s", golden, diff)
				}
				for _, line := range scenario.Check(sc, res) {
					if !strings.HasPrefix(line, "ok") {
						t.Error(line)
					}
				}
			})
		})
	}
}
