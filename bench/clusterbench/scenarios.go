// Package clusterbench measures fairsched's cluster mode against River
// (github.com/riverqueue/river, with riverpgxv5) on one PostgreSQL, one
// system after the other, in five scenarios: throughput (River bench's
// burn-down and continuous modes), a noisy neighbour, a global cap across
// instances, conflict exclusion across instances, and kill -9 faults.
// Every worker — a River client or a fairsched instance — is a process of
// its own (the harness binary re-executed, see IsChild), appending a line
// to a shared log when a job starts and ends: the figures come from that
// log, from sampling the database, and from pg_stat_*.
package clusterbench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

type pgxTx = pgx.Tx

// Config sizes a run of the harness.
type Config struct {
	URL        string // a server whose user may create databases (each run gets its own)
	Scenarios  []int  // which of 1…5
	Jobs       int    // scenario 1's burn-down
	Continuous time.Duration
	MinAvail   int // continuous mode keeps at least this many jobs available
	Big, Small int // scenario 2's tenants
	CapJobs    int // scenario 3
	Cap        int
	ConfJobs   int // scenario 4
	ConfIDs    int
	ConfWork   time.Duration
	FaultJobs  int // scenario 5
	FaultWork  time.Duration
	Lease      time.Duration // fairsched's LeaseTTL in scenario 5 (the others use the default)
	Poll       time.Duration // fairsched's Poll (River bench's FetchPollInterval is 20 ms)
	Workers    int           // River's MaxWorkers per process (River bench: 2 000)
	Slots      int           // fairsched's Slots per instance, River's MaxWorkers by default; the cap is Slots × instances
	Dir        string        // logs and stderr of the workers
	Profile    bool          // CPU profiles of the fairsched instances into Dir
	Statements int           // print the top statements per run (pg_stat_statements)
	// Only, when set, skips every run whose label (River, fairsched ×1,
	// …) is not one of these: for profiling one system.
	Only []string
	// Rounds runs the throughput runs (scenario 1's burn-downs and
	// continuous runs, scenario 3's cap) this many times, the systems
	// taking turns (the order reversed every other round), and keeps each
	// system's median run (at least 1).
	Rounds int
	// Via is the path to PostgreSQL: ViaDirect (the default), ViaProxy
	// (behind delayproxy, each round trip delayed by Delay) or ViaBoth
	// (every scenario both ways, direct first).
	Via   string
	Delay time.Duration
	Out   io.Writer
}

// The paths to PostgreSQL (Config.Via).
const (
	ViaDirect = "direct"
	ViaProxy  = "proxy"
	ViaBoth   = "both"
)

// ErrVia is a Config.Via that names no path.
var ErrVia = errors.New("unknown path to PostgreSQL")

func (c Config) vias() ([]string, error) {
	switch c.Via {
	case "", ViaDirect:
		return []string{ViaDirect}, nil
	case ViaProxy:
		return []string{ViaProxy}, nil
	case ViaBoth:
		return []string{ViaDirect, ViaProxy}, nil
	}
	return nil, fmt.Errorf("via %q (want %s, %s or %s): %w", c.Via, ViaDirect, ViaProxy, ViaBoth, ErrVia)
}

// Default is a run that finishes in a few minutes; Full the sizes.
func Default() Config {
	return Config{Scenarios: []int{1, 2, 3, 4, 5}, Jobs: 10_000, Continuous: 10 * time.Second, MinAvail: 10_000,
		Big: 10_000, Small: 100, CapJobs: 5_000, Cap: 40, ConfJobs: 3_000, ConfIDs: 100, ConfWork: 5 * time.Millisecond,
		FaultJobs: 3_000, FaultWork: 10 * time.Millisecond, Lease: 2 * time.Second, Poll: 20 * time.Millisecond,
		Workers: 2_000, Slots: 2_000, Delay: time.Millisecond}
}

// Full is the sizes: 1 000 000 jobs burnt down, 75 000 kept
// available, 100 000 + 1 000 tenants' jobs; the default lease (10 s).
func Full() Config {
	c := Default()
	c.Jobs, c.MinAvail, c.Continuous = 1_000_000, 75_000, 60*time.Second
	c.Big, c.Small, c.CapJobs, c.ConfJobs, c.FaultJobs = 100_000, 1_000, 100_000, 30_000, 20_000
	c.Lease = 10 * time.Second
	return c
}

// Report is every result of a run of the harness.
type Report struct {
	Date    time.Time
	Machine string
	Config  Config
	Paths   []Path // in the order run
	Results []*Result
}

// Path is one way to PostgreSQL that the scenarios ran over.
type Path struct {
	Via       string        // ViaDirect or ViaProxy
	RoundTrip time.Duration // the proxy's delay of a round trip
	Measured  time.Duration // the median of SELECT 1 over it
}

func (p Path) describe() string {
	if p.Via == ViaProxy {
		return fmt.Sprintf("behind a TCP proxy delaying each round trip by %s", ms(p.RoundTrip))
	}
	return "direct"
}

// Via is the report of the results over one path only.
func (r *Report) Via(via string) *Report {
	sub := *r
	sub.Paths, sub.Results = nil, nil
	for _, p := range r.Paths {
		if p.Via == via {
			sub.Paths = append(sub.Paths, p)
		}
	}
	for _, x := range r.Results {
		if x.Via == via {
			sub.Results = append(sub.Results, x)
		}
	}
	return &sub
}

// Find returns the result of scenario s for label in mode, or nil.
func (r *Report) Find(s int, mode, label string) *Result {
	for _, x := range r.Results {
		if x.Scenario == s && x.Label == label && (mode == "" || x.Mode == mode) {
			return x
		}
	}
	return nil
}

// Run runs the scenarios one after the other, River first in each, once
// for each path to PostgreSQL that cfg.Via names (direct first), and
// prints each result as it comes.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "clusterbench")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	vias, err := cfg.vias()
	if err != nil {
		return nil, err
	}
	rep := &Report{Date: time.Now(), Machine: machine(), Config: cfg}
	for _, via := range vias {
		h := &harness{base: cfg.URL, dir: dir, out: cfg.Out, statements: cfg.Statements, via: via}
		if cfg.Profile {
			h.profile = dir
		}
		path := Path{Via: via}
		if via == ViaProxy {
			p, base, err := startProxy(cfg.URL, cfg.Delay)
			if err != nil {
				return rep, err
			}
			h.base, path.RoundTrip = base, cfg.Delay
			defer p.Close()
		}
		if path.Measured, err = pingMedian(ctx, h.base); err != nil {
			return rep, fmt.Errorf("%s: %w", via, err)
		}
		rep.Paths = append(rep.Paths, path)
		fmt.Fprintf(cfg.Out, "PostgreSQL %s: SELECT 1 takes %s (median)\n", path.describe(), ms(path.Measured))
		if err := h.scenarios(ctx, cfg, rep); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// scenarios runs cfg's scenarios over h, appending the results to rep.
func (h *harness) scenarios(ctx context.Context, cfg Config, rep *Report) error {
	skip := func(spec runSpec) bool { return len(cfg.Only) > 0 && !slices.Contains(cfg.Only, spec.label()) }
	do := func(spec runSpec) error {
		if skip(spec) {
			return nil
		}
		r, err := h.announce(ctx, spec)
		if err == nil {
			rep.Results = append(rep.Results, r)
		}
		return err
	}
	// rounds runs specs cfg.Rounds times, the order reversed every other
	// round (a run after another's million jobs is slower than one
	// alone), and keeps each one's median run (by jobs/s), the others
	// named in its notes. It returns the medians by label.
	rounds := func(specs ...runSpec) (map[string]*Result, error) {
		runs := make([][]*Result, len(specs))
		for round := range max(cfg.Rounds, 1) {
			for k := range specs {
				i := k
				if round%2 == 1 {
					i = len(specs) - 1 - k
				}
				if skip(specs[i]) {
					continue
				}
				r, err := h.announce(ctx, specs[i])
				if err != nil {
					return nil, err
				}
				runs[i] = append(runs[i], r)
			}
		}
		medians := map[string]*Result{}
		for i, rs := range runs {
			if len(rs) > 0 {
				medians[specs[i].label()] = median(rs)
				rep.Results = append(rep.Results, medians[specs[i].label()])
			}
		}
		return medians, nil
	}
	river := func(s runSpec) runSpec { s.system, s.workers = "river", cfg.Workers; return s }
	fair := func(s runSpec, procs int) runSpec {
		s.system, s.procs, s.workers, s.cap, s.poll = "fairsched", procs, cfg.Slots, cfg.Slots*procs, cfg.Poll
		if s.types == 0 {
			s.types = 1
		}
		return s
	}
	want := func(s int) bool { return slices.Contains(cfg.Scenarios, s) }

	rate := map[string]float64{} // scenario 1's burn-down jobs/s from the first start, for spreading scenario 2's trickle
	if want(1) {
		base := runSpec{scenario: 1, procs: 1, pre: cfg.Jobs}
		medians, err := rounds(river(base), fair(base, 1), fair(base, 3))
		if err != nil {
			return err
		}
		for l, r := range medians {
			rate[l] = r.SteadyPerS
		}
		if cfg.Continuous > 0 {
			cont := runSpec{scenario: 1, procs: 1, continuous: cfg.Continuous, minAvail: cfg.MinAvail}
			if _, err := rounds(river(cont), fair(cont, 1), fair(cont, 3)); err != nil {
				return err
			}
		}
	}
	if want(2) {
		small := func(n int) bool { return n > cfg.Big }
		base := runSpec{scenario: 2, procs: 1, pre: cfg.Big, trickle: cfg.Small, small: small,
			key: func(n int) string {
				if small(n) {
					return "small"
				}
				return "big"
			}}
		for _, s := range []runSpec{river(base), fair(base, 1)} {
			// The small tenant's jobs spread over the time the big one's
			// backlog takes this system (scenario 1's rate; else 1 000/s).
			r := rate[s.label()]
			if r == 0 {
				r = 1000
			}
			s.trickleOver = time.Duration(float64(cfg.Big) / r * float64(time.Second))
			if err := do(s); err != nil {
				return err
			}
		}
	}
	if want(3) {
		base := runSpec{scenario: 3, procs: 4, pre: cfg.CapJobs, sample: true}
		r := river(base)
		r.workers = cfg.Cap / 4 // River has no global cap: 4 × MaxWorkers 10
		f := fair(base, 4)
		f.cap, f.workers = cfg.Cap, cfg.Cap
		// And with the jobs on the leader's instance while it has a free
		// slot (ClusterConfig.LeaderFirst): the cap's throughput is its
		// size over a slot's cycle, shortest there.
		lf := f
		lf.leaderFirst = true
		if _, err := rounds(r, f, lf); err != nil {
			return err
		}
	}
	if want(4) {
		ids := cfg.ConfIDs
		base := runSpec{scenario: 4, procs: 3, pre: cfg.ConfJobs, work: cfg.ConfWork, exclude: true,
			types:  (cfg.ConfJobs + ids - 1) / ids,
			typeID: func(n int) (int, string) { return (n - 1) / ids, "r" + strconv.Itoa((n-1)%ids) },
			res:    func(n int32) int { return int(n-1) % ids }}
		for _, s := range []runSpec{river(base), fair(base, 3)} {
			if err := do(s); err != nil {
				return err
			}
		}
	}
	if want(5) {
		base := runSpec{scenario: 5, procs: 3, pre: cfg.FaultJobs, work: cfg.FaultWork, faults: true, lease: cfg.Lease}
		r := river(base)
		r.workers = 8
		f := fair(base, 3)
		f.workers, f.cap = 8, 24
		for _, s := range []runSpec{r, f} {
			if err := do(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// announce runs spec, printing what runs and its result.
func (h *harness) announce(ctx context.Context, spec runSpec) (*Result, error) {
	fmt.Fprintf(h.out, "scenario %d, %s, %s …\n", spec.scenario, spec.label(), h.via)
	r, err := h.run(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("scenario %d, %s, %s: %w", spec.scenario, spec.label(), h.via, err)
	}
	fmt.Fprintln(h.out, "  "+r.Line())
	for _, t := range r.Top {
		fmt.Fprintln(h.out, "    "+t)
	}
	return r, nil
}

func ms(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return fmt.Sprintf("%.0f s", d.Seconds())
	case d >= time.Second:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d >= 10*time.Millisecond:
		return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// Line is the result in one line.
func (r *Result) Line() string {
	parts := []string{fmt.Sprintf("%s %s: %d jobs in %.2f s = %.0f jobs/s", r.Label, r.Mode, r.Jobs, r.Seconds, r.JobsPerS)}
	if r.SteadyPerS > 0 {
		parts = append(parts, fmt.Sprintf("first start at %.2f s, %.0f jobs/s from there", r.FirstS, r.SteadyPerS))
	}
	if r.Drained > 0 {
		parts = append(parts, fmt.Sprintf("drained in the database at %.2f s", r.Drained))
	}
	parts = append(parts, fmt.Sprintf("wait p50 %s p99 %s", ms(r.WaitP50), ms(r.WaitP99)),
		fmt.Sprintf("%.2f rows and %.0f WAL bytes a job", r.RowsPerJ, r.WALPerJ))
	if r.SmallP99 > 0 {
		parts = append(parts, fmt.Sprintf("small tenant p50 %s p99 %s, Jain %.2f", ms(r.SmallP50), ms(r.SmallP99), r.Jain))
	}
	if r.Scenario >= 3 {
		parts = append(parts, fmt.Sprintf("peak %d running (log)", r.Peak))
	}
	if r.SampledMx > 0 {
		parts = append(parts, fmt.Sprintf("peak %d running rows (sampled)", r.SampledMx))
	}
	if r.Scenario == 4 {
		parts = append(parts, fmt.Sprintf("%d overlaps", r.Overlaps))
	}
	if r.Scenario == 5 {
		parts = append(parts, fmt.Sprintf("%d duplicate starts (%d of jobs no kill interrupted), %d lost, %d stuck", r.Dups, r.DupsUnexp, r.Lost, r.Stuck))
		for _, f := range r.Faults {
			s := fmt.Sprintf("kill of the %s: %d interrupted", f.What, f.Interrupted)
			if f.Takeover > 0 {
				s += fmt.Sprintf(", lease taken over after %s", ms(f.Takeover))
			}
			s += fmt.Sprintf(", dispatch resumed after %s (first start of any job %s), last interrupted job restarted after %s", ms(f.Resumed), ms(f.FirstStart), ms(f.Restarted))
			parts = append(parts, s)
		}
	} else if r.Dups > 0 {
		parts = append(parts, fmt.Sprintf("%d duplicate starts", r.Dups))
	}
	parts = append(parts, r.Notes...)
	return strings.Join(parts, "; ")
}

// machine describes the machine: CPUs, model, memory.
func machine() string {
	cpus := 0
	model := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "processor") {
				cpus++
			}
			if model == "" && strings.HasPrefix(l, "model name") {
				_, model, _ = strings.Cut(l, ": ")
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		f := strings.Fields(string(b))
		if len(f) > 1 {
			if kb, err := strconv.Atoi(f[1]); err == nil {
				mem = fmt.Sprintf(", %d GiB", (kb+1<<19)>>20)
			}
		}
	}
	return fmt.Sprintf("%d vCPU (%s)%s, Linux; PostgreSQL on the same machine", cpus, strings.TrimSpace(model), mem)
}

// median returns the run of rs with the median jobs/s (the lower of the
// two middle ones of an even count), noting every round's figure when
// there were several.
func median(rs []*Result) *Result {
	if len(rs) == 1 {
		return rs[0]
	}
	sorted := slices.Clone(rs)
	slices.SortFunc(sorted, func(a, b *Result) int { return cmp.Compare(a.JobsPerS, b.JobsPerS) })
	m := sorted[(len(sorted)-1)/2]
	figures := make([]string, len(rs))
	for i, r := range rs {
		figures[i] = fmt.Sprintf("%.0f", r.JobsPerS)
	}
	m.Notes = append(m.Notes, fmt.Sprintf("the median of %d rounds (jobs/s in run order: %s)", len(rs), strings.Join(figures, ", ")))
	return m
}
