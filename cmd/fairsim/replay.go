package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/replay"
	"github.com/fairsched/fairsched/policyfile"
	"github.com/fairsched/fairsched/trace"
)

// isReplay reports whether args ask for a replay: -replay comes first.
func isReplay(args []string) bool {
	return len(args) > 0 && slices.Contains([]string{"-replay", "--replay"}, strings.SplitN(args[0], "=", 2)[0])
}

// pairs is a repeatable flag of NAME=VALUE.
type pairs [][2]string

func (p *pairs) String() string { return fmt.Sprint(*p) }

func (p *pairs) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" || value == "" {
		return fmt.Errorf("%q: want NAME=VALUE", s)
	}
	*p = append(*p, [2]string{name, value})
	return nil
}

// bound is one stated bound on a tenant ("*": every tenant).
type bound struct {
	tenant string
	kind   string // "min-share", "max-share" or "max-p95"
	share  float64
	wait   time.Duration
}

// replayMain replays a trace against a policy and checks the bounds: exit
// 1 when one fails, 2 on a bad flag or file.
func replayMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fairsim -replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("replay", "", "replay the trace `FILE` (package trace) in virtual time")
	policyFile := fs.String("policy", "", "replay under the policy `FILE` (package policyfile)")
	maxConc := fs.Int("max-concurrency", 0, "replay with WithMaxConcurrency(`N`)")
	var weights, minShare, maxShare, maxP95 pairs
	fs.Var(&weights, "key-weight", "replay with WithKeyWeight: `KEY=WEIGHT` (repeatable)")
	fs.Var(&minShare, "min-share", "bound: `TENANT=FRACTION` (0.3 or 30%) of the contended service at least; TENANT * is every tenant (repeatable)")
	fs.Var(&maxShare, "max-share", "bound: `TENANT=FRACTION` of the contended service at most (repeatable)")
	fs.Var(&maxP95, "max-p95", "bound: `TENANT=DURATION`, the tenant's p95 wait at most (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	opts, err := replayOptions(*policyFile, *maxConc, weights)
	var bounds []bound
	if err == nil {
		bounds, err = parseBounds(minShare, maxShare, maxP95)
	}
	if err == nil && (*file == "" || fs.NArg() > 0) {
		err = errors.New("-replay takes one trace file, and flags only")
	}
	if err != nil {
		fmt.Fprintln(stderr, "fairsim -replay:", err)
		return 2
	}
	recs, err := readTrace(*file)
	if err != nil {
		fmt.Fprintf(stderr, "fairsim -replay: %s: %v\n", *file, err)
		return 2
	}
	runs, err := replay.Play(recs, opts...)
	if err != nil {
		fmt.Fprintf(stderr, "fairsim -replay: %s: %v\n", *file, err)
		return 2
	}
	before, after := replay.Measure(replay.Recorded(recs)), replay.Measure(runs)
	printTenants(stdout, *file, len(recs), before, after)
	printChart(stdout, bounds, after)
	checks, failed := checkBounds(stdout, bounds, after)
	switch {
	case failed > 0:
		fmt.Fprintf(stdout, "%d of %d checks failed\n", failed, checks)
		return 1
	case checks > 0:
		fmt.Fprintf(stdout, "all %d checks held\n", checks)
	}
	return 0
}

func readTrace(path string) ([]trace.Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return trace.Read(f)
}

// replayOptions are the scheduler's options of the replay.
func replayOptions(policyFile string, maxConc int, weights pairs) ([]fairsched.Option, error) {
	var opts []fairsched.Option
	if policyFile != "" {
		p, err := policyfile.Load(policyFile)
		if err != nil {
			return nil, err
		}
		opts = append(opts, fairsched.WithPolicy(p))
	}
	if maxConc < 0 {
		return nil, fmt.Errorf("-max-concurrency %d: must not be negative", maxConc)
	}
	if maxConc > 0 {
		opts = append(opts, fairsched.WithMaxConcurrency(maxConc))
	}
	for _, w := range weights {
		v, err := strconv.ParseFloat(w[1], 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("-key-weight %s=%s: want a positive weight", w[0], w[1])
		}
		opts = append(opts, fairsched.WithKeyWeight(w[0], v))
	}
	return opts, nil
}

func parseBounds(minShare, maxShare, maxP95 pairs) ([]bound, error) {
	var out []bound
	for kind, list := range map[string]pairs{"min-share": minShare, "max-share": maxShare} {
		for _, p := range list {
			v, err := parseFraction(p[1])
			if err != nil {
				return nil, fmt.Errorf("-%s %s=%s: %w", kind, p[0], p[1], err)
			}
			out = append(out, bound{tenant: p[0], kind: kind, share: v})
		}
	}
	for _, p := range maxP95 {
		d, err := time.ParseDuration(p[1])
		if err != nil || d < 0 {
			return nil, fmt.Errorf("-max-p95 %s=%s: want a duration such as 2s", p[0], p[1])
		}
		out = append(out, bound{tenant: p[0], kind: "max-p95", wait: d})
	}
	slices.SortStableFunc(out, func(a, b bound) int {
		return strings.Compare(a.kind+"\x00"+a.tenant, b.kind+"\x00"+b.tenant)
	})
	return out, nil
}

// parseFraction reads 0.3 or 30%.
func parseFraction(s string) (float64, error) {
	pct := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if pct {
		v /= 100
	}
	if err != nil || !(v >= 0 && v <= 1) {
		return 0, errors.New("want a fraction in [0, 1], such as 0.3 or 30%")
	}
	return v, nil
}

func printTenants(w io.Writer, file string, n int, before, after []replay.Tenant) {
	fmt.Fprintf(w, "%s: %d runs of %d tenants replayed in virtual time\n", file, n, len(after))
	fmt.Fprintln(w, "(share: of the run time served while jobs waited and two or more tenants had work)")
	fmt.Fprintf(w, "%-16s %6s %8s  %-24s %s\n", "tenant", "jobs", "not run", "share recorded → replay", "p95 wait recorded → replay")
	for i, t := range after {
		fmt.Fprintf(w, "%-16s %6d %8d  %8s → %-13s %v → %v\n", display(t.Name), t.Jobs, t.NotRun,
			shareText(before[i]), shareText(t), before[i].P95Wait, t.P95Wait)
	}
}

// display quotes a tenant name that is empty or not plain: names come
// from the trace, untrusted.
func display(name string) string {
	if name != "" && strconv.Quote(name) == `"`+name+`"` && !strings.ContainsAny(name, " \t") {
		return name
	}
	return strconv.Quote(name)
}

func shareText(t replay.Tenant) string {
	if !t.Contended {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*t.Share)
}

// checkBounds prints a line per bound and tenant it applies to, and
// returns how many checks there were and how many failed.
func checkBounds(w io.Writer, bounds []bound, tenants []replay.Tenant) (checks, failed int) {
	for _, b := range bounds {
		matched := false
		for _, t := range tenants {
			if b.tenant != "*" && b.tenant != t.Name {
				continue
			}
			matched, checks = true, checks+1
			ok, text := b.check(t)
			verdict := "ok  "
			if !ok {
				verdict, failed = "FAIL", failed+1
			}
			fmt.Fprintf(w, "%s %s\n", verdict, text)
		}
		if !matched {
			checks, failed = checks+1, failed+1
			fmt.Fprintf(w, "FAIL %s %s: no such tenant in the trace\n", b.kind, display(b.tenant))
		}
	}
	return checks, failed
}

// check says whether t holds b, and how far off it is.
func (b bound) check(t replay.Tenant) (bool, string) {
	name := display(t.Name)
	switch b.kind {
	case "max-p95":
		if t.P95Wait <= b.wait {
			return true, fmt.Sprintf("p95 wait of %s %v ≤ %v", name, t.P95Wait, b.wait)
		}
		return false, fmt.Sprintf("p95 wait of %s %v > %v: %v over", name, t.P95Wait, b.wait, t.P95Wait-b.wait)
	case "min-share":
		if !t.Contended || t.Share >= b.share {
			return true, fmt.Sprintf("share of %s %s ≥ %.1f%%", name, shareText(t), 100*b.share)
		}
		return false, fmt.Sprintf("share of %s %s < %.1f%%: %.1f points short", name, shareText(t), 100*b.share, 100*(b.share-t.Share))
	default: // max-share
		if !t.Contended || t.Share <= b.share {
			return true, fmt.Sprintf("share of %s %s ≤ %.1f%%", name, shareText(t), 100*b.share)
		}
		return false, fmt.Sprintf("share of %s %s > %.1f%%: %.1f points over", name, shareText(t), 100*b.share, 100*(t.Share-b.share))
	}
}
