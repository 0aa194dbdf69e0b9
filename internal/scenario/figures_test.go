package scenario_test

import (
	"testing"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/internal/scenario"
)

// TestFigures: the demo's charts of scenarios 28, 29 and 31 — each
// tenant's share against one level's, each client's jobs run, shed and
// refused, each waiting job's blocker and start against its estimate.
func TestFigures(t *testing.T) {
	want := map[string][]string{
		"28-tenant-shares": {
			"share of the service while every tenant had work waiting (one level would split it by keys):",
			"  acme   8 keys  ██████████··········  52%   one level:  89%",
			"  solo   1 key   ██████████··········  48%   one level:  11%",
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
