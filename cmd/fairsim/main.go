// Command fairsim plays scenario files through the real scheduler in
// virtual time and reports what it decided.
//
//	fairsim [-json] [-svg FILE] SCENARIO.yaml
//	fairsim -summary [-svgdir DIR] [-builtin] SCENARIO.yaml...
//	fairsim -restart
//	fairsim -check-policy POLICY.yaml...
//	fairsim -replay TRACE [-policy FILE] [-max-concurrency N] [-key-weight KEY=W]... [-min-share T=F]... [-max-share T=F]... [-max-p95 T=D]...
//	fairsim -cluster N [-db URL] [-step D] [-slots S] [-heartbeat D] [-log] SCENARIO.yaml
//
// Each scenario runs on a mock clock: jobs take exactly their scripted
// duration, one second per step (see internal/scenario). The report gives
// the admission timeline, per fairness key and per group the jobs, the
// wait p50/p95/max and the share of capacity served, Jain's fairness index
// over keys, the longest wait against the aging bound, and the checks: no
// cap exceeded, no conflict or slot overlap, and the claims the file makes
// (expect). -json prints the same as JSON; -svg draws a Gantt chart (a row
// per slot, a colour per key, each job's arrival and wait above its run, a
// cross for each job refused or expired), the jobs waiting and the
// cumulative service per key (per tenant when the scenario has tenants,
// with each tenant's share over time against its bound). With
// -summary each scenario gets one verdict line, and -svgdir a chart each;
// -builtin adds the library's feature scenarios (aging, groups, tenancy,
// rate limits, expiry: internal/scenario.Features), written in Go; they
// share the files' numbering, and all play in the order of their names.
// A long run reports its progress on stderr. -restart shows durable jobs
// surviving a restart, on a real scheduler and bbolt file. -check-policy
// checks policy files (package policyfile) without running anything: a
// line per valid file, each error at its file:line:column, exit status 2
// if any is invalid.
//
// -replay (first on the command line) plays a trace of real traffic
// (package trace) through the real scheduler in virtual time, under a
// policy file, -max-concurrency and -key-weight, and prints each tenant's
// jobs, its share of the contended service and its p95 wait, as recorded
// and as replayed. -min-share, -max-share and -max-p95 state bounds on the
// replay, per tenant or for every tenant (*): a line each, ok or FAIL and
// by how much, exit status 1 if one fails. A bad trace line is reported
// with its line number (exit status 2). See docs/traffic-checks.md.
//
// -cluster N plays one scenario for real on a cluster of N instances in
// this process, over PostgreSQL: the database -db names (an empty one), or
// a new database in the server FAIRSCHED_TEST_DATABASE_URL names, or one
// in a throwaway cluster started from the installed server binaries
// (internal/pgtest). Its jobs are durable jobs, enqueued at their arrival
// in turn from each instance and run by handlers on every instance on the
// wall clock, one scenario second being -step (by default 200ms, less for
// a long scenario, so that a play lasts a few seconds); each instance has
// -slots slots (by default the scenario's global cap) and beats every
// -heartbeat (1s; -log writes the instances' records to stderr). It prints the
// leader and its epoch, the jobs each instance ran, the peak concurrency
// against the caps from the handlers' shared start/end log, each key's
// waits beside those of one in-process scheduler playing the same
// scenario, and checks: every job ran once, no cap exceeded, no conflict
// overlapped, every instance ran some, the leader's snapshots named each
// running job's instance. Scenarios with scripts, workers or refusals do
// not play on a cluster. Without PostgreSQL it prints one line saying it
// skipped and why, and exits 0.
//
// The exit status is 1 when a check fails, 2 on a bad file or flag.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fairsched/fairsched/internal/report"
	"github.com/fairsched/fairsched/internal/scenario"
)

func main() {
	// An interrupt ends a cluster play early, its instances closed and its
	// throwaway database removed.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runContext(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if isReplay(args) {
		return replayMain(args, stdout, stderr)
	}
	fs := flag.NewFlagSet("fairsim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	svg := fs.String("svg", "", "write the Gantt and cumulative-service chart to `FILE` (one scenario)")
	summary := fs.Bool("summary", false, "print one verdict line per scenario instead of the report")
	svgDir := fs.String("svgdir", "", "write a chart per scenario to `DIR`/NAME.svg")
	builtin := fs.Bool("builtin", false, "with -summary: also play the library's built-in feature scenarios")
	restart := fs.Bool("restart", false, "show durable jobs surviving a restart, on a real scheduler and bbolt file")
	instances := fs.Int("cluster", 0, "play one scenario for real on a cluster of `N` instances over PostgreSQL")
	db := fs.String("db", "", "with -cluster: an empty PostgreSQL database's `URL` (default: FAIRSCHED_TEST_DATABASE_URL's server or a throwaway cluster)")
	step := fs.Duration("step", 0, "with -cluster: the wall-clock `length` of one scenario second (default 200ms, less for a long scenario)")
	slots := fs.Int("slots", 0, "with -cluster: each instance's `slots` (default the scenario's global cap)")
	heartbeat := fs.Duration("heartbeat", 0, "with -cluster: the instances' heartbeat `interval`, which also bounds each of the leader's database calls (default 1s)")
	checkPolicy := fs.Bool("check-policy", false, "check the policy files given (package policyfile) without running them")
	records := fs.Bool("log", false, "with -cluster: write the instances' scheduler and cluster records to stderr")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fairsim [-json] [-svg FILE] SCENARIO.yaml\n       fairsim -summary [-svgdir DIR] SCENARIO.yaml...\n       fairsim -restart\n       fairsim -check-policy POLICY.yaml...\n       fairsim -replay TRACE [-policy FILE] [-max-concurrency N] [-key-weight K=W]... [-min-share T=F]... [-max-share T=F]... [-max-p95 T=D]...\n       fairsim -cluster N [-db URL] [-step D] [-slots S] [-heartbeat D] [-log] SCENARIO.yaml")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *checkPolicy {
		return checkPolicies(fs.Args(), stdout, stderr)
	}
	if *restart {
		if err := restartDemo(stdout); err != nil {
			fmt.Fprintln(stderr, "fairsim: restart:", err)
			return 1
		}
		return 0
	}
	if *instances != 0 || *db != "" || *step != 0 || *slots != 0 || *heartbeat != 0 || *records {
		cfg := clusterConfig{instances: *instances, db: *db, step: *step, slots: *slots, heartbeat: *heartbeat}
		if *records {
			cfg.log = stderr
		}
		return clusterMain(ctx, fs.Args(), cfg,
			*asJSON || *svg != "" || *summary || *svgDir != "" || *builtin, stdout, stderr)
	}
	files := fs.Args()
	var scenarios []scenario.Scenario
	for _, file := range files {
		sc, err := scenario.Load(file)
		if err != nil {
			fmt.Fprintln(stderr, "fairsim:", err)
			return 2
		}
		scenarios = append(scenarios, sc)
	}
	if *builtin {
		// The built-ins share the files' numbering (NN-name): merged by
		// name, they all print in reading order.
		scenarios = append(scenarios, scenario.Features()...)
		slices.SortStableFunc(scenarios, func(a, b scenario.Scenario) int { return strings.Compare(a.Name, b.Name) })
	}
	switch {
	case *builtin && !*summary:
		fmt.Fprintln(stderr, "fairsim: -builtin needs -summary")
		return 2
	case len(scenarios) == 0:
		fs.Usage()
		return 2
	case len(scenarios) > 1 && !*summary:
		fmt.Fprintln(stderr, "fairsim: several scenarios need -summary")
		return 2
	case *svg != "" && len(scenarios) > 1:
		fmt.Fprintln(stderr, "fairsim: -svg takes one scenario; use -svgdir for several")
		return 2
	}
	if *svgDir != "" {
		if err := os.MkdirAll(*svgDir, 0o755); err != nil {
			fmt.Fprintln(stderr, "fairsim:", err)
			return 2
		}
	}
	status := 0
	if *summary {
		fmt.Fprintln(stdout, "Each scenario plays a workload through the real scheduler in virtual time: what it shows, and whether it held.")
		fmt.Fprintln(stdout)
	}
	for _, sc := range scenarios {
		out, err := report.Play(sc, scenario.Poll, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "fairsim: %s: %v\n", sc.Name, err)
			return 2
		}
		if out.Failed() > 0 {
			status = 1
		}
		chart := *svg
		if *svgDir != "" {
			chart = filepath.Join(*svgDir, sc.Name+".svg")
		}
		if chart != "" {
			if err := writeSVG(chart, out.Report); err != nil {
				fmt.Fprintln(stderr, "fairsim:", err)
				return 2
			}
		}
		switch {
		case *summary:
			fmt.Fprintln(stdout, out.Verdict())
			fmt.Fprintln(stdout)
		case *asJSON:
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			err = enc.Encode(out)
		default:
			err = out.Text(stdout)
		}
		if err != nil {
			fmt.Fprintln(stderr, "fairsim:", err)
			return 2
		}
	}
	if *summary {
		fmt.Fprintln(stdout, "("+report.JainExplained+".)")
	}
	return status
}

func writeSVG(path string, r report.Report) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	return r.SVG(f)
}

// clusterMain checks the flags of a cluster play and plays it.
func clusterMain(ctx context.Context, files []string, cfg clusterConfig, others bool, stdout, stderr io.Writer) int {
	switch {
	case cfg.instances < 1 || cfg.instances > 16:
		fmt.Fprintf(stderr, "fairsim: -cluster %d: want 1 to 16 instances (-db, -step, -slots, -heartbeat and -log go with it)\n", cfg.instances)
		return 2
	case others:
		fmt.Fprintln(stderr, "fairsim: -cluster plays one scenario on its own: not with -json, -svg, -summary, -svgdir or -builtin")
		return 2
	case len(files) != 1:
		fmt.Fprintln(stderr, "fairsim: -cluster takes one scenario file")
		return 2
	case cfg.step < 0 || cfg.step > 0 && cfg.step < time.Millisecond || cfg.slots < 0:
		fmt.Fprintf(stderr, "fairsim: -step %v, -slots %d: want a step of 1ms or more and slots ≥ 0\n", cfg.step, cfg.slots)
		return 2
	case cfg.heartbeat < 0 || cfg.heartbeat > 0 && cfg.heartbeat < 10*time.Millisecond:
		fmt.Fprintf(stderr, "fairsim: -heartbeat %v: want 10ms or more\n", cfg.heartbeat)
		return 2
	}
	sc, err := scenario.Load(files[0])
	if err != nil {
		fmt.Fprintln(stderr, "fairsim:", err)
		return 2
	}
	status, err := clusterPlay(ctx, sc, cfg, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "fairsim: -cluster:", err)
		var ue usageError
		if errors.As(err, &ue) || status == 2 {
			return 2
		}
		return 1
	}
	return status
}
