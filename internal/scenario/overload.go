package scenario

import (
	"fmt"
	"time"

	"github.com/fairsched/fairsched"
)

// Render is the load scenario's job type: CPU-bound work.
const Render fairsched.JobType = "render"

// cpuPerJob and neighbourCPU shape the load scenario's CPU-like signal, in
// per cent (whole numbers: 7 renders read exactly 0.70, not 0.7000…1):
// each running render takes a tenth of the machine, and a noisy neighbour
// takes 45 % of it from T=12 to T=21.
const (
	cpuPerJob    = 10
	neighbourCPU = 45
)

// neighbourFrom and neighbourTo bound the neighbour's burst, in steps.
const neighbourFrom, neighbourTo = 12, 22

// LoadFollowing: renders, 2 s each, arrive 4 a second for 30 s on at most 8
// slots. The load signal is CPU-like: 10 % a running render, plus a noisy
// neighbour's 45 % from T=12 to T=21. The adaptive limit follows it
// (LoadTarget 0.7, Backoff 0.75): above 70 % it shrinks by a quarter,
// at or below it grows by one a second while it binds — 6 to 8 renders run
// while the machine is the scheduler's. When the neighbour arrives the
// reading passes 90 %: admissions are deferred for that second (reason
// overloaded; only 3 renders run at T=12) and the limit falls, 1 to 3
// renders running, the most the CPU left allows; when it leaves, the limit
// climbs back to 8 by T=28 and the backlog drains.
func LoadFollowing() Scenario {
	sc := Scenario{Name: "25-load-signal", Title: "The adaptive limit follows a CPU-like load signal: a noisy neighbour's burst shrinks it, and it climbs back after",
		MaxConcurrency: 8,
		Types:          []Type{{Render, fairsched.JobTypeConfig{DefaultCost: 2 * time.Second, Priority: 8}}},
		Options: []fairsched.Option{
			fairsched.WithAdaptiveLimit(fairsched.AdaptiveLimitConfig{Min: 1, Max: 8, Backoff: 0.75, LoadTarget: 0.7}),
			fairsched.WithLoadSignal(fairsched.LoadConfig{Signal: fairsched.LoadFunc(machineCPU), Every: time.Second}),
		}}
	for t := range 30 {
		for i := range 4 {
			sc.Jobs = append(sc.Jobs, Job{Type: Render, ID: fmt.Sprintf("f%02d-%d", t, i), Arrival: t, Duration: 2})
		}
	}
	// The running jobs at steps the claims are about (the timeline shows
	// the limit's steps): the sawtooth before, the squeeze during, the
	// recovery after.
	for _, e := range []struct{ at, running int }{{9, 7}, {12, 3}, {15, 1}, {20, 3}, {28, 8}} {
		sc.Expect = append(sc.Expect, Expectation{HasRunning: true, At: e.at, Running: e.running})
	}
	return sc
}

// machineCPU is the scenario's CPU-like signal. The scenario runs on a mock
// clock from the Unix epoch: the step is the whole seconds since.
func machineCPU(s fairsched.LoadState) (float64, error) {
	cpu := cpuPerJob * s.Running
	if t := int(s.Now.Unix()); t >= neighbourFrom && t < neighbourTo {
		cpu += neighbourCPU
	}
	return float64(cpu) / 100, nil
}

// readingsDone reports whether the scheduler has taken every load reading
// due by step now — one a second: the scenarios read their signals every
// second — so that the step's timeline includes what they admit, whatever
// order the owner saw the clock's tick and the runner's calls in. True
// without a load signal.
func readingsDone(now int) func(fairsched.Snapshot) bool {
	return func(s fairsched.Snapshot) bool {
		return s.Load == nil || s.Load.Readings+s.Load.Skipped >= uint64(now)
	}
}

// loadEvent is the timeline's line for a load reading that moved the limit
// or the overload state (the owner's "load reading" log).
func loadEvent(now int, f map[string]any) Event {
	over, _ := f["overloaded"].(bool)
	value, _ := f["value"].(float64)
	limit, _ := f["limit"].(int64)
	prev, _ := f["previous_limit"].(int64)
	return Event{T: now, Kind: "load", Load: value, Overloaded: over, Limit: int(limit), Previous: int(prev)}
}

func (e Event) loadLine() string {
	state := "not overloaded"
	if e.Overloaded {
		state = "OVERLOADED: admissions deferred"
	}
	return fmt.Sprintf("T=%3d  LOAD    %.2f %-31s limit %d → %d", e.T, e.Load, state, e.Previous, e.Limit)
}
