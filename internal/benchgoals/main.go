// Command benchgoals prints the table of issue 19's goals from the output of
// `make bench` (go test -bench, both modules, -count ≥ 6): for each goal the
// median over the repetitions of the ratio the benchmark reports against
// its baseline in the same run, the target, and whether it is met.
//
//	go run ./internal/benchgoals bench.txt
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// goal is one row: the median of metric over the runs of bench (the name
// without its -GOMAXPROCS suffix) in package pkg, against target. atMost
// says the figure must not exceed the target (else not fall below it); a
// target of 0 is reported, not judged.
type goal struct {
	what, pkg, bench, metric string
	target                   float64
	atMost                   bool
}

const (
	root  = "github.com/fairsched/fairsched"
	core  = "github.com/fairsched/fairsched/core"
	peers = "github.com/fairsched/fairsched/bench"
)

var goals = []goal{
	{"Submit → run → complete, cap 4, vs semaphore", root, "BenchmarkThroughput/scheduler/cap=4", "vs-semaphore", 1.5, true},
	{"Submit → run → complete, cap 64, vs semaphore", root, "BenchmarkThroughput/scheduler/cap=64", "vs-semaphore", 1.5, true},
	{"RunSync, 64 callers, cap 4, vs semaphore", root, "BenchmarkRunSync/scheduler/cap=4", "vs-semaphore", 2, true},
	{"RunSync, 64 callers, cap 64, vs actor floor", root, "BenchmarkRunSyncVsFloor", "vs-floor", 2, true},
	{"RunSync, 64 callers, cap 64, vs semaphore (never blocks)", root, "BenchmarkRunSync/scheduler/cap=64", "vs-semaphore", 0, true},
	{"RunSync, 64 callers, cap 64, ns a call", root, "BenchmarkRunSyncVsFloor", "ns/op", 0, true},
	{"… the actor floor alone, ns a call", root, "BenchmarkActorFloor", "ns/op", 0, true},
	{"… the core's decision alone (RunSync's workload), ns a job", core, "BenchmarkCoreDecision/runsync/cap=64", "ns/op", 0, true},
	{"Submit allocations per job, cap 4", root, "BenchmarkThroughput/scheduler/cap=4", "allocs/job", 1, true},
	{"Submit allocations per job, cap 64", root, "BenchmarkThroughput/scheduler/cap=64", "allocs/job", 1, true},
	{"RunSync allocations per call", root, "BenchmarkRunSync/scheduler/cap=64", "allocs/job", 2, true},
	{"distinct ids vs repeated, cap 4", root, "BenchmarkDistinctIDs/distinct/cap=4", "x-vs-repeated", 1.2, true},
	{"distinct ids vs repeated, cap 64", root, "BenchmarkDistinctIDs/distinct/cap=64", "x-vs-repeated", 1.2, true},
	{"SubmitMany vs Submit, per job", root, "BenchmarkBulk/submit/many", "x-faster", 3, false},
	{"SubmitMany vs Submit, queueing alone (nothing runs)", root, "BenchmarkBulkQueue/many", "x-faster", 0, false},
	{"EnqueueMany vs Enqueue, per job", root, "BenchmarkBulk/enqueue/many", "x-faster", 3, false},
	{"durable jobs/s at 64 producers (bbolt, start written first)", root, "BenchmarkDurable/producers=64/durable", "jobs/s", 25000, false},
	{"index: 1M pending, 100k keys vs 1k pending", core, "BenchmarkCoreDispatch/pending=1000000/keys=100000", "x-vs-1k", 2, true},
	{"index: 1M pending, 10k keys vs 1k pending", core, "BenchmarkCoreDispatch/pending=1000000/keys=10000", "x-vs-1k", 2, true},
	{"index: 1M pending, 10 keys vs 1k pending", core, "BenchmarkCoreDispatch/pending=1000000/keys=10", "x-vs-1k", 2, true},
	{"aging + 200 groups vs off, 10 keys", core, "BenchmarkCoreFeatures/keys=10/aging+200groups", "x-vs-off", 1.5, true},
	{"aging + 200 groups vs off, 10 000 keys", core, "BenchmarkCoreFeatures/keys=10000/aging+200groups", "x-vs-off", 1.5, true},
	{"load signal (read each 1 000 ops) vs none, 100k pending", core, "BenchmarkCoreLoadSignal/keys=10000/load-signal", "x-vs-off", 1.1, true},
	{"two levels (tenants over keys) vs one, 10 000 tenants × 10 keys, per decision", core, "BenchmarkHierarchical/levels=2/tenants=10000/keys=100000", "x-vs-one-level", 0, true},
	{"… one level (no tenants), ns a decision", core, "BenchmarkHierarchical/levels=1/tenants=10000/keys=100000", "ns/op", 0, true},
	{"bytes of heap per pending job", root, "BenchmarkPendingMemory", "B/pending", 256, true},
	{"per request vs APF queue set, cap 4", peers, "BenchmarkRequest/fairsched/cap=4", "x-vs-apf", 1, true},
	{"per request vs APF queue set, cap 64", peers, "BenchmarkRequest/fairsched/cap=64", "x-vs-apf", 1, true},
	{"Jain's index under a noisy flow: APF", peers, "BenchmarkFairness/apf", "jain", 0, false},
	{"Jain's index under a noisy flow: fairsched", peers, "BenchmarkFairness/fairsched", "jain", 0, false},
	{"raw throughput vs ants pool, cap 4", peers, "BenchmarkThroughput/fairsched/cap=4", "x-vs-ants", 0, true},
	{"raw throughput vs ants pool, cap 64", peers, "BenchmarkThroughput/fairsched/cap=64", "x-vs-ants", 0, true},
}

var procs = regexp.MustCompile(`-\d+$`)

// parse returns the values of every metric of every benchmark, by package
// and name.
func parse(r io.Reader) (map[string][]float64, error) {
	values := map[string][]float64{}
	pkg := ""
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := procs.ReplaceAllString(f[0], "")
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			k := pkg + " " + name + " " + f[i+1]
			values[k] = append(values[k], v)
		}
	}
	return values, sc.Err()
}

// median is benchstat's: the middle value, or the mean of the two middle
// ones.
func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	n := len(v)
	if n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[n/2]
}

func main() {
	in := io.Reader(os.Stdin)
	if len(os.Args) > 1 {
		f, err := os.Open(os.Args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
		in = f
	}
	values, err := parse(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("| goal | median (runs) | target | |")
	fmt.Println("|---|---|---|---|")
	for _, g := range goals {
		v := values[g.pkg+" "+g.bench+" "+g.metric]
		if len(v) == 0 {
			fmt.Printf("| %s | not run | | |\n", g.what)
			continue
		}
		// Judged at the precision shown (three significant digits): 2.004
		// allocations a call is 2.00.
		m, _ := strconv.ParseFloat(strconv.FormatFloat(median(v), 'g', 3, 64), 64)
		target, verdict := "", "reported"
		if g.target > 0 {
			op := "≥"
			met := m >= g.target
			if g.atMost {
				op, met = "≤", m <= g.target
			}
			target, verdict = fmt.Sprintf("%s %g", op, g.target), map[bool]string{true: "met", false: "**not met**"}[met]
		}
		figure := fmt.Sprintf("%.3g", m)
		if m >= 100 {
			figure = fmt.Sprintf("%.0f", m)
		}
		fmt.Printf("| %s | %s %s (%d) | %s | %s |\n", g.what, figure, g.metric, len(v), target, verdict)
	}
}
