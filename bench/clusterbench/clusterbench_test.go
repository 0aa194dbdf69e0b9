package clusterbench

import (
	"bytes"
	"context"
	"os"
	"slices"
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
	cfg.Rounds = 2 // scenario 1's burn-downs twice: one result each all the same
	rep, err := Run(context.Background(), cfg)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	labels := map[int][]string{
		1: {"River", "fairsched ×1", "fairsched ×3"},
		2: {"River", "fairsched ×1"},
		3: {"River ×4", "fairsched ×4", "fairsched ×4 (leader first)"},
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
	burns := 0
	for _, r := range rep.Results {
		if r.Scenario == 1 && r.Mode == "burn-down" {
			burns++
		}
	}
	if burns != 3 {
		t.Errorf("%d burn-down results of scenario 1 over 2 rounds, want 3 (each system's median)", burns)
	}
	for _, l := range []string{"fairsched ×4", "fairsched ×4 (leader first)"} {
		if f := rep.Find(3, "", l); f != nil && (f.Peak > cfg.Cap || f.SampledMx > cfg.Cap) {
			t.Errorf("%s: cap %d exceeded: %d running by the log, %d rows", l, cfg.Cap, f.Peak, f.SampledMx)
		}
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

// TestMedianRun: of several rounds' runs, a system keeps the one of the
// median jobs/s (the lower middle of an even count), which names every
// round's figure in run order.
func TestMedianRun(t *testing.T) {
	runs := []*Result{{JobsPerS: 300}, {JobsPerS: 100}, {JobsPerS: 200}, {JobsPerS: 400}}
	m := median(runs)
	if m != runs[2] {
		t.Errorf("median run of 300, 100, 200, 400 jobs/s: %v jobs/s, want 200", m.JobsPerS)
	}
	if want := []string{"the median of 4 rounds (jobs/s in run order: 300, 100, 200, 400)"}; !slices.Equal(m.Notes, want) {
		t.Errorf("notes %q, want %q", m.Notes, want)
	}
	if one := []*Result{{JobsPerS: 5}}; median(one) != one[0] || len(one[0].Notes) != 0 {
		t.Error("a single round's run is itself, with no note")
	}
}
