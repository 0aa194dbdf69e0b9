package scenario_test

import (
	"strings"
	"testing"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/internal/scenario"
)

// TestFigures: the demo's charts of scenarios 28, 29 and 31 — each
// tenant's share over time against its bound and one level's, each client's jobs run, shed and
// refused, each waiting job's blocker and start against its estimate.
func TestFigures(t *testing.T) {
	want := map[string][]string{
		"28-tenant-shares": {
			"each tenant's share of the service over time while every tenant had work waiting; bound: acme (100 keys) 50 %, solo (1 key) 50 %, ± 5 %:",
			"  T=  0–20    acme ██████████··········  51 %  solo ██████████··········  49 %   within",
			"  T= 20–40    acme ██████████··········  50 %  solo ██████████··········  50 %   within",
			"  T= 40–60    acme ██████████··········  50 %  solo ██████████··········  50 %   within",
			"  T= 60–80    acme ██████████··········  50 %  solo ██████████··········  50 %   within",
			"  T= 80–99    acme ██████████··········  50 %  solo ██████████··········  50 %   within",
			"  T=  0–99    acme 50.3 %  solo 49.7 %   within overall; one level would give acme 99 %, solo 1 %",
		},
		"29-fair-shedding": {
			"each client's jobs: █ ran, s shed for a quieter client, x refused:",
			"  noisy    ████████ssssxx   8 ran, 4 shed, 2 refused",
			"  quiet-a  ██               2 ran, 0 shed, 0 refused",
			"  quiet-b  ██               2 ran, 0 shed, 0 refused",
		},
		"31-blocker-eta": {
			"export(doc1)-again: conflict, held by export(doc1); estimated start T=10 (0 ahead); started T=10",
			"lookup(q1): global_limit, held by key big ×2; estimated start T=10 (0 ahead); started T=10",
		},
	}
	for _, sc := range []scenario.Scenario{scenario.TenantShares(), scenario.FairShedding(), scenario.Blocker()} {
		res, err := scenario.Run(sc, clock.NewMock(), scenario.Poll)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want[sc.Name], scenario.Figures(sc, res)); diff != "" {
			t.Errorf("%s: figures (-want +got):\n%s", sc.Name, diff)
		}
	}
}

// TestTenantSharesOneLevel plays scenario 28 with one level (no tenants
// in the scheduler, the scenario still grouping its keys by tenant): acme's
// 100 keys take nearly all the service, and the check and the figures say
// the bound failed.
func TestTenantSharesOneLevel(t *testing.T) {
	sc := scenario.TenantShares()
	sc.Options = nil
	res, err := scenario.Run(sc, clock.NewMock(), scenario.Poll)
	if err != nil {
		t.Fatal(err)
	}
	failed := failedChecks(sc, res)
	want := []string{
		"FAIL while both had work waiting (T=0–50), each tenant got 50 % ± 5 % of the service: acme 99.0 %, solo 1.0 % (one level: acme 99 %)",
		"FAIL while both waited, acme (100 keys) and solo (1 key) were served alike, within one round of slots (worst gap 196 jobs at T=49)",
	}
	if diff := cmp.Diff(want, failed); diff != "" {
		t.Errorf("failed checks (-want +got):\n%s", diff)
	}
	figures := scenario.Figures(sc, res)
	if last := figures[len(figures)-1]; !strings.Contains(last, "OUTSIDE overall") {
		t.Errorf("the figures' last line does not say the bound failed: %q", last)
	}
}
