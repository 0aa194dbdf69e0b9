package clusterbench

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/fairsched/fairsched/internal/report"
)

var scenarioNames = map[int]string{
	1: "1 throughput, no policies",
	2: "2 noisy neighbour",
	3: "3 global cap across 4 instances",
	4: "4 conflict exclusion, 3 instances",
	5: "5 kill -9 leader, then executor",
}

// Markdown is the run's sizes and settings, then for each path to
// PostgreSQL a table of every result, with ratios to River's result of
// the same scenario and mode beside the figures, and the goals met or
// missed.
func (r *Report) Markdown() string {
	b := &strings.Builder{}
	c := r.Config
	fmt.Fprintf(b, "Run %s on %s. Sizes: %d jobs burnt down, continuous mode %v keeping ≥ %d available; noisy neighbour %d + %d; cap %d over %d jobs; conflicts %d jobs over %d ids (%v each); faults %d jobs (%v each), lease %v. River: MaxWorkers %d per process (cap scenario: %d each), FetchCooldown 2 ms, FetchPollInterval 20 ms (River bench's). fairsched: Slots %d per instance, cap Slots × instances, Poll %v, the other timings default. Throughput runs (scenario 1, scenario 3) are each system's median of %d rounds.\n\n",
		r.Date.Format("2006-01-02"), r.Machine, c.Jobs, c.Continuous, c.MinAvail, c.Big, c.Small, c.Cap, c.CapJobs, c.ConfJobs, c.ConfIDs, c.ConfWork,
		c.FaultJobs, c.FaultWork, c.Lease, c.Workers, c.Cap/4, c.Slots, c.Poll, max(c.Rounds, 1))
	if len(r.Paths) == 0 { // a report of results only
		r.table(b)
		return b.String()
	}
	for _, p := range r.Paths {
		fmt.Fprintf(b, "### PostgreSQL %s\n\nA `SELECT 1` took %s (median of 21).\n\n", p.describe(), ms(p.Measured))
		r.Via(p.Via).table(b)
		b.WriteString("\n")
	}
	return b.String()
}

// table writes the table of r's results and the goals.
func (r *Report) table(b *strings.Builder) {
	b.WriteString("| scenario | system | mode | jobs | jobs/s | × River | first start | jobs/s from first start | wait p50 | wait p99 | rows/job | WAL B/job | more |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, x := range r.Results {
		rv := r.riverOf(x)
		ratio := "—"
		if rv != nil && rv.JobsPerS > 0 {
			ratio = fmt.Sprintf("%.2f×", x.JobsPerS/rv.JobsPerS)
		}
		steady := "—"
		if x.SteadyPerS > 0 {
			steady = fmt.Sprintf("%.0f", x.SteadyPerS)
			if rv != nil && rv.SteadyPerS > 0 {
				steady += fmt.Sprintf(" (%.2f×)", x.SteadyPerS/rv.SteadyPerS)
			}
		}
		rows, wal := fmt.Sprintf("%.2f", x.RowsPerJ), fmt.Sprintf("%.0f", x.WALPerJ)
		if rv != nil && rv.RowsPerJ > 0 && rv.WALPerJ > 0 {
			rows += fmt.Sprintf(" (%.2f×)", x.RowsPerJ/rv.RowsPerJ)
			wal += fmt.Sprintf(" (%.2f×)", x.WALPerJ/rv.WALPerJ)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %d | %.0f | %s | %.2f s | %s | %s | %s | %s | %s | %s |\n",
			scenarioNames[x.Scenario], x.Label, x.Mode, x.Jobs, x.JobsPerS, ratio, x.FirstS, steady, ms(x.WaitP50), ms(x.WaitP99), rows, wal, more(x))
	}
	b.WriteString("\n")
	for _, g := range r.Goals() {
		b.WriteString("- " + g + "\n")
	}
}

// riverOf is River's result of x's scenario and mode, or nil (also for
// River's own).
func (r *Report) riverOf(x *Result) *Result {
	if x.System == "river" {
		return nil
	}
	for _, y := range r.Results {
		if y.Scenario == x.Scenario && y.Mode == x.Mode && y.System == "river" {
			return y
		}
	}
	return nil
}

func more(x *Result) string {
	var p []string
	switch x.Scenario {
	case 1:
		p = append(p, x.Notes...) // the rounds' figures
	case 2:
		p = append(p, fmt.Sprintf("small tenant p50 %s p99 %s; Jain %.2f", ms(x.SmallP50), ms(x.SmallP99), x.Jain))
	case 3:
		p = append(p, fmt.Sprintf("peak running: %d (log), %d (sampled rows)", x.Peak, x.SampledMx))
	case 4:
		p = append(p, fmt.Sprintf("%d overlaps; peak %d running", x.Overlaps, x.Peak))
	case 5:
		p = append(p, fmt.Sprintf("%d duplicate starts (%d not explained by a kill), %d lost, %d stuck", x.Dups, x.DupsUnexp, x.Lost, x.Stuck))
		for _, f := range x.Faults {
			s := fmt.Sprintf("%s: %d interrupted", f.What, f.Interrupted)
			if f.Takeover > 0 {
				s += ", lease taken over after " + ms(f.Takeover)
			}
			s += fmt.Sprintf(", dispatch resumed after %s, interrupted jobs rerun by %s", ms(f.Resumed), ms(f.Restarted))
			p = append(p, s)
		}
		if x.System == "river" {
			p = append(p, "the killed process's jobs stay running until River's rescuer retries them (RescueStuckJobsAfter: 1 h by default)")
		}
	}
	return strings.Join(p, "; ")
}

// Goals says, for each goal of the issue whose scenario ran, whether this
// run met it.
func (r *Report) Goals() []string {
	var out []string
	verdict := func(ok bool) string {
		if ok {
			return "**met**"
		}
		return "**missed**"
	}
	river1, f1, f3 := r.Find(1, "burn-down", "River"), r.Find(1, "burn-down", "fairsched ×1"), r.Find(1, "burn-down", "fairsched ×3")
	if river1 != nil && f1 != nil {
		out = append(out, fmt.Sprintf("Burn-down ≥ 1.2× River with 1 instance: %s — %.2f× River's %.0f jobs/s (from the first start: %.2f×).",
			verdict(f1.JobsPerS >= 1.2*river1.JobsPerS), f1.JobsPerS/river1.JobsPerS, river1.JobsPerS, f1.SteadyPerS/river1.SteadyPerS))
		out = append(out, fmt.Sprintf("Rows and WAL bytes per job ≤ River's (burn-down, 1 instance): %s — %.3f rows and %.0f bytes against %.3f and %.0f.",
			verdict(thousandths(f1.RowsPerJ) <= thousandths(river1.RowsPerJ) && f1.WALPerJ <= river1.WALPerJ), f1.RowsPerJ, f1.WALPerJ, river1.RowsPerJ, river1.WALPerJ))
	}
	if f1 != nil && f3 != nil {
		out = append(out, fmt.Sprintf("Burn-down with 3 instances ≥ 0.9× 1 instance's: %s — %.0f against %.0f jobs/s (%.2f×).",
			verdict(f3.JobsPerS >= 0.9*f1.JobsPerS), f3.JobsPerS, f1.JobsPerS, f3.JobsPerS/f1.JobsPerS))
	}
	if rc, fc := r.Find(1, "continuous", "River"), r.Find(1, "continuous", "fairsched ×1"); rc != nil && fc != nil {
		out = append(out, fmt.Sprintf("Continuous ≥ 1.2× River with 1 instance: %s — %.2f× River's %.0f jobs/s.",
			verdict(fc.JobsPerS >= 1.2*rc.JobsPerS), fc.JobsPerS/rc.JobsPerS, rc.JobsPerS))
	}
	if rv, f := r.Find(2, "", "River"), r.Find(2, "", "fairsched ×1"); rv != nil && f != nil && f.SmallP99 > 0 {
		s := fmt.Sprintf("Noisy neighbour, the small tenant's p99 ≥ 10× lower than River's: %s — %s vs %s (%.2f×); Jain %.2f vs River's %.2f.",
			verdict(rv.SmallP99 >= 10*f.SmallP99), ms(f.SmallP99), ms(rv.SmallP99), float64(rv.SmallP99)/float64(f.SmallP99), f.Jain, rv.Jain)
		if f1 != nil {
			s += fmt.Sprintf(" Throughput within 10 %% of scenario 1: %s — %.0f vs %.0f jobs/s (%+.0f %%).", verdict(f.JobsPerS >= 0.9*f1.JobsPerS), f.JobsPerS, f1.JobsPerS, 100*(f.JobsPerS/f1.JobsPerS-1))
		}
		out = append(out, s)
	}
	for _, l := range []string{"fairsched ×4", "fairsched ×4 (leader first)"} {
		f := r.Find(3, "", l)
		if f == nil {
			continue
		}
		s := fmt.Sprintf("%s: cap %d never exceeded: %s — peak %d running by the executors' log, %d running rows sampled every %d ms.",
			l, r.Config.Cap, verdict(f.Peak <= r.Config.Cap && f.SampledMx <= r.Config.Cap), f.Peak, f.SampledMx, sampleEvery.Milliseconds())
		if f1 != nil {
			least, spread := spreadOf(f)
			s += fmt.Sprintf(" Within 20 %% of scenario 1's throughput with the work spread (each instance ≥ half an equal share): %s — %.0f vs %.0f jobs/s (%+.0f %%), the least busy instance ran %.0f %% of an equal share.",
				verdict(f.JobsPerS >= 0.8*f1.JobsPerS && spread), f.JobsPerS, f1.JobsPerS, 100*(f.JobsPerS/f1.JobsPerS-1), 100*least)
		}
		out = append(out, s)
	}
	if f := r.Find(4, "", "fairsched ×3"); f != nil {
		s := fmt.Sprintf("Zero conflict overlaps: %s — %d (%.0f jobs/s).", verdict(f.Overlaps == 0), f.Overlaps, f.JobsPerS)
		if rv := r.Find(4, "", "River ×3"); rv != nil {
			s += fmt.Sprintf(" River, which has no conflict exclusion: %d overlaps (%.0f jobs/s).", rv.Overlaps, rv.JobsPerS)
		}
		out = append(out, s)
	}
	if f := r.Find(5, "", "fairsched ×3"); f != nil && len(f.Faults) > 0 {
		lease := r.Config.Lease
		worst := time.Duration(0)
		for _, x := range f.Faults {
			worst = max(worst, x.Resumed)
		}
		out = append(out, fmt.Sprintf("Faults: dispatch resumes within 2 × the lease TTL (%v): %s — at worst %s; duplicates only of interrupted jobs: %s (%d duplicate starts, %d not explained); no job lost: %s (%d).",
			2*lease, verdict(worst < 2*lease), ms(worst), verdict(f.DupsUnexp == 0), f.Dups, f.DupsUnexp, verdict(f.Lost == 0), f.Lost))
	}
	return out
}

// spreadOf is the share of x's jobs its least busy instance ended, as a
// fraction of an equal share, and whether that is at least half.
func spreadOf(x *Result) (float64, bool) {
	if x.Procs == 0 || x.Jobs == 0 {
		return 0, false
	}
	least := x.Jobs
	if len(x.Shares) < x.Procs { // an instance that ended none
		least = 0
	}
	for _, n := range x.Shares {
		least = min(least, n)
	}
	equal := float64(x.Jobs) / float64(x.Procs)
	return float64(least) / equal, float64(least) >= equal/2
}

// SVG is the chart: jobs/s per 2 s window and the small tenant's wait,
// over time, in the noisy-neighbour scenario, for both systems.
func (r *Report) SVG() ([]byte, error) {
	var rate, wait []report.Series
	for _, x := range r.Results {
		if x.Scenario != 2 {
			continue
		}
		var pts [][2]float64
		for i, v := range x.Windows {
			pts = append(pts, [2]float64{float64(i)*window.Seconds() + window.Seconds()/2, v})
		}
		name := x.Label
		if x.Via == ViaProxy {
			name += " (via the proxy)"
		}
		rate = append(rate, report.Series{Name: name, Points: pts})
		wait = append(wait, report.Series{Name: name, Points: x.SmallWait, Dots: true})
	}
	if len(rate) == 0 {
		return nil, fmt.Errorf("scenario 2 did not run: no chart")
	}
	var buf bytes.Buffer
	c := r.Config
	err := report.Lines(&buf, "fairsched's cluster mode and River on one PostgreSQL: a noisy neighbour",
		fmt.Sprintf("One tenant's %d jobs inserted up front, another's %d spread over the run; no-op jobs; %s; %s.", c.Big, c.Small, r.Machine, r.Date.Format("2006-01-02")),
		[]report.Panel{
			{Title: "Jobs done per second (2 s windows)", YLabel: "jobs/s", Series: rate},
			{Title: "The small tenant's wait, insert to start, by when it was inserted", YLabel: "wait (ms, log)", Log: true, Series: wait},
		})
	return buf.Bytes(), err
}

// thousandths is rows a job at the precision the table prints. Each job
// costs both systems three row writes; what a run writes once (an
// instance's row and its heartbeats, a leader's row) adds a few rows to a
// run of thousands of jobs, which no figure printed shows.
func thousandths(rowsPerJob float64) int64 { return int64(math.Round(rowsPerJob * 1000)) }
