// Command fairsim plays scenario files through the real scheduler in
// virtual time and reports what it decided.
//
//	fairsim [-json] [-svg FILE] SCENARIO.yaml
//	fairsim -summary [-svgdir DIR] [-builtin] SCENARIO.yaml...
//
// Each scenario runs on a mock clock: jobs take exactly their scripted
// duration, one second per step (see internal/scenario). The report gives
// the admission timeline, per fairness key and per group the jobs, the
// wait p50/p95/max and the share of capacity served, Jain's fairness index
// over keys, the longest wait against the aging bound, and the checks: no
// cap exceeded, no conflict or slot overlap, and the claims the file makes
// (expect). -json prints the same as JSON; -svg draws a Gantt chart (a row
// per slot, a colour per key) and the cumulative service per key. With
// -summary each scenario gets one verdict line, and -svgdir a chart each;
// -builtin adds the library's feature scenarios (aging, groups, tenancy,
// rate limits, expiry: internal/scenario.Features), written in Go.
// A long run reports its progress on stderr. The exit status is 1 when a
// check fails, 2 on a bad file or flag.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fairsched/fairsched/internal/report"
	"github.com/fairsched/fairsched/internal/scenario"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fairsim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	svg := fs.String("svg", "", "write the Gantt and cumulative-service chart to `FILE` (one scenario)")
	summary := fs.Bool("summary", false, "print one verdict line per scenario instead of the report")
	svgDir := fs.String("svgdir", "", "write a chart per scenario to `DIR`/NAME.svg")
	builtin := fs.Bool("builtin", false, "with -summary: also play the library's built-in feature scenarios")
	restart := fs.Bool("restart", false, "show durable jobs surviving a restart, on a real scheduler and bbolt file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fairsim [-json] [-svg FILE] SCENARIO.yaml\n       fairsim -summary [-svgdir DIR] SCENARIO.yaml...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *restart {
		if err := restartDemo(stdout); err != nil {
			fmt.Fprintln(stderr, "fairsim: restart:", err)
			return 1
		}
		return 0
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
		scenarios = append(scenarios, scenario.Features()...)
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
