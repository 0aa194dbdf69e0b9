package clusterbench

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fairsched/fairsched/internal/pgtest"
)

// TestMain makes the test binary a worker process when the harness
// re-executes it, else runs the tests, stops the throwaway PostgreSQL and
// checks that no goroutine leaked.
func TestMain(m *testing.M) {
	if IsChild() {
		os.Exit(ChildMain())
	}
	os.Exit(pgtest.Run(m))
}

// TestHarnessTiny runs every scenario at a tiny size against a real
// PostgreSQL (skipped without one, failed under FAIRSCHED_REQUIRE_PG=1):
// both systems run every job, fairsched's cap and conflicts hold by its
// executors' own log, its kills lose no job and rerun only interrupted
// ones, and the table and the chart come out. No duration is asserted.
func TestHarnessTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes: not in -short")
	}
	url := pgtest.URL(t)
	var out bytes.Buffer
	cfg := Default()
	cfg.URL, cfg.Out, cfg.Dir = url, &out, t.TempDir()
	cfg.Jobs, cfg.Continuous, cfg.MinAvail = 300, 2*time.Second, 500
	cfg.Big, cfg.Small, cfg.CapJobs, cfg.Cap = 400, 10, 300, 8
	cfg.ConfJobs, cfg.ConfIDs, cfg.ConfWork = 200, 10, 2*time.Millisecond
	cfg.FaultJobs, cfg.FaultWork = 400, 10*time.Millisecond
	cfg.Workers, cfg.Slots = 50, 50
	rep, err := Run(context.Background(), cfg)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	labels := map[int][]string{
		1: {"River", "fairsched ×1", "fairsched ×3"},
		2: {"River", "fairsched ×1"},
		3: {"River ×4", "fairsched ×4"},
		4: {"River ×3", "fairsched ×3"},
		5: {"River ×3", "fairsched ×3"},
	}
	for s, ls := range labels {
		for _, l := range ls {
			r := rep.Find(s, "", l)
			if r == nil {
				t.Errorf("scenario %d: no result for %s", s, l)
				continue
			}
			if r.Jobs == 0 || r.Lost > 0 {
				t.Errorf("scenario %d, %s: %d jobs, %d lost", s, l, r.Jobs, r.Lost)
			}
		}
	}
	if f := rep.Find(3, "", "fairsched ×4"); f != nil && (f.Peak > cfg.Cap || f.SampledMx > cfg.Cap) {
		t.Errorf("cap %d exceeded: %d running by the log, %d rows", cfg.Cap, f.Peak, f.SampledMx)
	}
	if f := rep.Find(4, "", "fairsched ×3"); f != nil && f.Overlaps > 0 {
		t.Errorf("%d conflict overlaps", f.Overlaps)
	}
	if f := rep.Find(5, "", "fairsched ×3"); f != nil {
		if f.DupsUnexp > 0 {
			t.Errorf("%d duplicate starts of jobs no kill interrupted", f.DupsUnexp)
		}
		if len(f.Faults) != 2 {
			t.Errorf("%d kills, want 2", len(f.Faults))
		}
	}
	md := rep.Markdown()
	if !strings.Contains(md, "| 1 throughput, no policies | fairsched ×1 |") || !strings.Contains(md, "Zero conflict overlaps") {
		t.Errorf("the table:\n%s", md)
	}
	svg, err := rep.SVG()
	if err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("the chart: %v", err)
	}
}
