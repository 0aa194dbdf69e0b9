package clusterbench

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/internal/pgtest"
)

// TestProxyTarget: the proxy dials the server's Unix socket when the URL
// names a directory (as internal/pgtest's does), else its TCP address;
// clients reach it through the proxy's address with the rest of the URL
// kept.
func TestProxyTarget(t *testing.T) {
	type route struct{ Network, Target, Through string }
	cases := map[string]route{
		"postgres://postgres@/postgres?host=%2Ftmp%2Fpg1&sslmode=disable": {"unix", "/tmp/pg1/.s.PGSQL.5432", "postgres://postgres@127.0.0.1:9/postgres?sslmode=disable"},
		"postgres://u:pw@db.example:6543/x?sslmode=require":               {"tcp", "db.example:6543", "postgres://u:pw@127.0.0.1:9/x?sslmode=require"},
		"postgres://u@/x?host=%2Frun%2Fpg&port=5433":                      {"unix", "/run/pg/.s.PGSQL.5433", "postgres://u@127.0.0.1:9/x"},
		"postgres://u@localhost/x":                                        {"tcp", "localhost:5432", "postgres://u@127.0.0.1:9/x"},
	}
	for base, want := range cases {
		var got route
		var err error
		got.Network, got.Target, err = proxyTarget(base)
		if err == nil {
			got.Through, err = throughProxy(base, "127.0.0.1:9")
		}
		if err != nil {
			t.Errorf("%s: %v", base, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", base, diff)
		}
	}
	if _, _, err := proxyTarget("postgres://u@/x"); !errors.Is(err, ErrNoHost) {
		t.Errorf("a URL with no host: %v, want ErrNoHost", err)
	}
	if _, err := Default().vias(); err != nil {
		t.Errorf("the default path: %v", err)
	}
	if _, err := (Config{Via: "carrier pigeon"}).vias(); !errors.Is(err, ErrVia) {
		t.Errorf("an unknown path: %v, want ErrVia", err)
	}
}

// TestGoalsPerPath: a report of both paths has a table per path, each
// with its own ratios to River beside the figures and its own verdicts.
func TestGoalsPerPath(t *testing.T) {
	res := func(via, system, label, mode string, procs int, perS, rows, wal float64) *Result {
		return &Result{Via: via, Scenario: 1, System: system, Label: label, Mode: mode, Procs: procs, Jobs: 1000,
			JobsPerS: perS, SteadyPerS: perS, RowsPerJ: rows, WALPerJ: wal}
	}
	rep := &Report{Config: Default(),
		Paths: []Path{{Via: ViaDirect, Measured: 50 * time.Microsecond}, {Via: ViaProxy, RoundTrip: time.Millisecond, Measured: 1100 * time.Microsecond}},
		Results: []*Result{
			res(ViaDirect, "river", "River", "burn-down", 1, 1000, 3, 900),
			res(ViaDirect, "fairsched", "fairsched ×1", "burn-down", 1, 1300, 3, 800),
			res(ViaDirect, "fairsched", "fairsched ×3", "burn-down", 3, 1200, 3.6, 1000),
			res(ViaProxy, "river", "River", "burn-down", 1, 500, 3, 900),
			res(ViaProxy, "fairsched", "fairsched ×1", "burn-down", 1, 400, 3, 900),
			res(ViaProxy, "fairsched", "fairsched ×3", "burn-down", 3, 200, 3.6, 1000),
		}}
	want := map[string][]string{
		ViaDirect: {
			"Burn-down ≥ 1.2× River with 1 instance: **met** — 1.30× River's 1000 jobs/s (from the first start: 1.30×).",
			"Rows and WAL bytes per job ≤ River's (burn-down, 1 instance): **met** — 3.000 rows and 800 bytes against 3.000 and 900.",
			"Burn-down with 3 instances ≥ 0.9× 1 instance's: **met** — 1200 against 1300 jobs/s (0.92×).",
		},
		ViaProxy: {
			"Burn-down ≥ 1.2× River with 1 instance: **missed** — 0.80× River's 500 jobs/s (from the first start: 0.80×).",
			"Rows and WAL bytes per job ≤ River's (burn-down, 1 instance): **met** — 3.000 rows and 900 bytes against 3.000 and 900.",
			"Burn-down with 3 instances ≥ 0.9× 1 instance's: **missed** — 200 against 400 jobs/s (0.50×).",
		},
	}
	for via, goals := range want {
		if diff := cmp.Diff(goals, rep.Via(via).Goals()); diff != "" {
			t.Errorf("%s goals (-want +got):\n%s", via, diff)
		}
	}
	md := rep.Markdown()
	direct, proxied, ok := strings.Cut(md, "### PostgreSQL behind a TCP proxy delaying each round trip by 1.0 ms")
	if !ok || !strings.Contains(direct, "### PostgreSQL direct") {
		t.Fatalf("no table per path:\n%s", md)
	}
	for _, c := range []struct{ part, row string }{
		{direct, "| 1 throughput, no policies | fairsched ×3 | burn-down | 1000 | 1200 | 1.20× | 0.00 s | 1200 (1.20×) | 0.0 ms | 0.0 ms | 3.60 (1.20×) | 1000 (1.11×) |"},
		{proxied, "| 1 throughput, no policies | fairsched ×3 | burn-down | 1000 | 200 | 0.40× | 0.00 s | 200 (0.40×) | 0.0 ms | 0.0 ms | 3.60 (1.20×) | 1000 (1.11×) |"},
		{proxied, "A `SELECT 1` took 1.1 ms (median of 21)."},
	} {
		if !strings.Contains(c.part, c.row) {
			t.Errorf("missing %q in:\n%s", c.row, c.part)
		}
	}
}

// TestHarnessViaProxy runs scenario 1 at a tiny size direct and behind the
// delaying proxy against a real PostgreSQL: every job of both systems runs
// over both paths, and the report has both tables. No duration is
// asserted.
func TestHarnessViaProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes: not in -short")
	}
	var out strings.Builder
	cfg := Default()
	cfg.URL, cfg.Out, cfg.Dir = pgtest.URL(t), &out, t.TempDir()
	cfg.Scenarios, cfg.Jobs, cfg.Continuous = []int{1}, 300, 0
	cfg.Workers, cfg.Slots, cfg.Via = 50, 50, ViaBoth
	rep, err := Run(context.Background(), cfg)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range rep.Results {
		if x.Jobs != cfg.Jobs || x.Lost > 0 {
			t.Errorf("%s, %s: %d jobs, %d lost", x.Via, x.Label, x.Jobs, x.Lost)
		}
		got = append(got, x.Via+" "+x.Label)
	}
	want := []string{"direct River", "direct fairsched ×1", "direct fairsched ×3", "proxy River", "proxy fairsched ×1", "proxy fairsched ×3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if md := rep.Markdown(); strings.Count(md, "| 1 throughput, no policies | fairsched ×1 |") != 2 {
		t.Errorf("want a table per path:\n%s", md)
	}
}
