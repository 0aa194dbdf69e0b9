// Command clusterbench measures fairsched's cluster mode against River on
// one PostgreSQL: the throwaway server of internal/pgtest (started from
// the installed binaries) unless -url names one, each run in a database
// of its own. It prints each result as it comes, then writes the table
// (Markdown), the figures (JSON) and the chart (SVG) into -out.
//
//	go run ./cmd/clusterbench -rounds 3            # a few minutes (make bench-cluster)
//	go run ./cmd/clusterbench -via both -rounds 3  # and again behind a 1 ms proxy (make bench-cluster-net)
//	go run ./cmd/clusterbench -full                # the sizes, medians of 3 (docs/cluster.md: how long)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fairsched/fairsched/bench/clusterbench"
	"github.com/fairsched/fairsched/internal/pgtest"
)

func main() {
	if clusterbench.IsChild() {
		os.Exit(clusterbench.ChildMain())
	}
	os.Exit(run())
}

func run() int {
	full := flag.Bool("full", false, "the issue's sizes (1 000 000 jobs burnt down, 75 000 kept available, 100 000 + 1 000 tenants' jobs, the default 10 s lease)")
	url := flag.String("url", "", "a PostgreSQL server (postgres:// URL; its user must be able to CREATE DATABASE); default: a throwaway one from the installed binaries, or FAIRSCHED_TEST_DATABASE_URL")
	scen := flag.String("scenarios", "1,2,3,4,5", "which scenarios to run")
	out := flag.String("out", "", "write the table (Markdown), the figures (JSON) and the chart (SVG) into this directory, named by -name")
	dir := flag.String("keep", "", "keep the workers' logs, stderr and profiles in this directory")
	profile := flag.Bool("cpuprofile", false, "CPU profiles of every worker process into -keep")
	statements := flag.Int("statements", 0, "print the top N statements of each run (needs pg_stat_statements preloaded)")
	jobs := flag.Int("jobs", 0, "scenario 1's burn-down jobs (default 10 000; -full 1 000 000)")
	capJobs := flag.Int("capjobs", 0, "scenario 3's jobs under the cap (default 5 000; -full 100 000)")
	slots := flag.Int("slots", 0, "fairsched's Slots per instance (default 2000, as River's MaxWorkers)")
	poll := flag.Duration("poll", 0, "fairsched's Poll (default 20ms, River bench's FetchPollInterval)")
	rounds := flag.Int("rounds", 0, "run the throughput runs (scenario 1, scenario 3) this many times, the systems taking turns (the order reversed every other round), and report each one's median run (default 1; -full 3)")
	via := flag.String("via", clusterbench.ViaDirect, "the path to PostgreSQL: direct, proxy (behind a TCP proxy in this process that delays each round trip by -delay) or both (every scenario both ways, one table each)")
	delay := flag.Duration("delay", time.Millisecond, "the proxy's round trip (-via proxy or both)")
	name := flag.String("name", "cluster-bench", "the files' name in -out: NAME.md, NAME.json, NAME.svg")
	only := flag.String("only", "", "run only these systems, comma-separated labels (River, \"fairsched ×1\", …): for profiling one")
	flag.Parse()
	cfg := clusterbench.Default()
	if *full {
		cfg = clusterbench.Full()
	}
	if *capJobs > 0 {
		cfg.CapJobs = *capJobs
	}
	if *jobs > 0 {
		cfg.Jobs = *jobs
	}
	if *slots > 0 {
		cfg.Slots = *slots
	}
	if *poll > 0 {
		cfg.Poll = *poll
	}
	cfg.Scenarios = nil
	for _, s := range strings.Split(*scen, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 5 {
			fmt.Fprintf(os.Stderr, "clusterbench: scenario %q: want 1…5\n", s)
			return 2
		}
		cfg.Scenarios = append(cfg.Scenarios, n)
	}
	cfg.Rounds = *rounds
	if cfg.Rounds == 0 && *full {
		cfg.Rounds = 3
	}
	cfg.Via, cfg.Delay = *via, *delay
	if *only != "" {
		for _, l := range strings.Split(*only, ",") {
			cfg.Only = append(cfg.Only, strings.TrimSpace(l))
		}
	}
	cfg.Dir, cfg.Profile, cfg.Statements, cfg.Out = *dir, *profile, *statements, os.Stdout
	if *profile && *dir == "" {
		fmt.Fprintln(os.Stderr, "clusterbench: -cpuprofile needs -keep")
		return 2
	}
	cfg.URL = *url
	if cfg.URL == "" {
		u, stop, err := pgtest.Start()
		if err != nil {
			fmt.Fprintln(os.Stderr, "clusterbench:", err)
			return 1
		}
		defer stop()
		cfg.URL = u
	}
	rep, err := clusterbench.Run(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "clusterbench:", err)
		return 1
	}
	fmt.Println()
	fmt.Print(rep.Markdown())
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "clusterbench:", err)
			return 1
		}
		js, _ := json.MarshalIndent(rep, "", "  ")
		svg, err := rep.SVG()
		if err == nil {
			err = os.WriteFile(filepath.Join(*out, *name+".svg"), svg, 0o644)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(*out, *name+".json"), js, 0o644)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(*out, *name+".md"), []byte(rep.Markdown()), 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "clusterbench:", err)
			return 1
		}
	}
	return 0
}
