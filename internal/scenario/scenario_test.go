package scenario_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/fairsched/fairsched/internal/scenario"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestPollMatchesGolden plays every scenario with the demo's settler (polling
// snapshots, real goroutine scheduling) and requires the very timelines the
// synctest-driven tests of the root package pin down: the demo shows what
// the tests prove.
func TestPollMatchesGolden(t *testing.T) {
	for _, sc := range scenario.All() {
		t.Run(sc.Name, func(t *testing.T) {
			res, err := scenario.Run(sc, clock.NewMock(), scenario.Poll)
			if err != nil {
				t.Fatal(err)
			}
			golden, err := os.ReadFile(filepath.Join("..", "..", "testdata", "scenarios", sc.Name+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, line := range strings.Split(string(golden), "\n") {
				if line == "" {
					break // the timeline ends at the first blank line
				}
				want = append(want, line)
			}
			var got []string
			for _, e := range res.Timeline {
				got = append(got, e.String())
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("timeline (-golden +polled):\n%s", diff)
			}
			for _, line := range scenario.Check(sc, res) {
				if !strings.HasPrefix(line, "ok") {
					t.Error(line)
				}
			}
		})
	}
}

// TestCheckCatchesOverlap feeds Check a forged result in which a clone and a
// repack of one repository overlap and more jobs run than the caps allow:
// the checker must report both.
func TestCheckCatchesOverlap(t *testing.T) {
	sc := scenario.ConflictExclusion()
	res := scenario.Result{
		Start:    map[string]int{"sync-clone(repo1)": 0, "repack(repo1)": 1, "sync-clone(repo2)": 0, "repack(repo2)": 3},
		End:      map[string]int{"sync-clone(repo1)": 3, "repack(repo1)": 5, "sync-clone(repo2)": 3, "repack(repo2)": 7},
		Timeline: []scenario.Event{{T: 0}, {T: 1}, {T: 3}, {T: 5}, {T: 7}},
	}
	fails := failedChecks(sc, res)
	want := []string{
		"FAIL T=1: sync-clone(repo1) and repack(repo1) overlap on git/repo1",
		"FAIL repack(repo1) started at T=1, after sync-clone(repo1) ended at T=3 (same repo, same conflict group)",
	}
	if diff := cmp.Diff(want, fails); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
}

// failedChecks returns the checks of sc over res that failed.
func failedChecks(sc scenario.Scenario, res scenario.Result) []string {
	var failed []string
	for _, line := range scenario.Check(sc, res) {
		if strings.HasPrefix(line, "FAIL") {
			failed = append(failed, line)
		}
	}
	return failed
}
