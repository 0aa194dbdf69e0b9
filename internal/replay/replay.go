// Package replay plays a recorded trace (package trace) through the real
// scheduler in virtual time and measures each tenant's share of the
// service and its waits, for fairsim -replay.
package replay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/trace"
)

// DefaultType is how a type of the trace that the policy does not register
// is registered: each job's first run is charged a second until its cost
// is learned, and its tier does not cap it below the global limit.
var DefaultType = fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1 << 16}

// maxIdleAdvance bounds how far the clock moves to let jobs that wait on a
// timer (a rate limit, a backoff) start when nothing else happens.
const maxIdleAdvance = 24 * time.Hour

// MaxSpan bounds the time from a trace's first arrival to its last: the
// scheduler's own timers fire all along the virtual time a replay covers.
const MaxSpan = 31 * 24 * time.Hour

// ErrSpan: the trace's arrivals span more than MaxSpan.
var ErrSpan = errors.New("replay: trace too long")

// ErrStuck: jobs of the trace were still pending when nothing was left to
// happen: the policy never admits them.
var ErrStuck = errors.New("replay: jobs never started")

// Run is one job of a trace as it ran: its tenant, and its arrival and start
// from the first arrival of the trace, and how long it ran.
type Run struct {
	Tenant         string
	Arrival, Start time.Duration
	Run            time.Duration
	// NotRun: the replay's scheduler never started it (it refused it, or
	// it expired pending).
	NotRun bool
}

// Recorded returns the runs as the trace records them.
func Recorded(recs []trace.Record) []Run {
	if len(recs) == 0 {
		return nil
	}
	t0 := slices.MinFunc(recs, func(a, b trace.Record) int { return a.Arrival.Compare(b.Arrival) }).Arrival
	runs := make([]Run, len(recs))
	for i, r := range recs {
		arrival := r.Arrival.Sub(t0)
		runs[i] = Run{Tenant: r.TenantOrKey(), Arrival: arrival, Start: arrival + r.Wait, Run: r.Run}
	}
	return runs
}

// Play replays recs on a new scheduler configured by opts, on a mock clock:
// each job arrives at its recorded arrival (as a background job with its
// fairness key and group) and runs exactly its recorded run time. It
// returns the runs in the order of recs.
func Play(recs []trace.Record, opts ...fairsched.Option) ([]Run, error) {
	runs := Recorded(recs) // arrivals and run times; starts to be replaced
	if len(recs) == 0 {
		return nil, nil
	}
	for i := range runs {
		runs[i].Start, runs[i].NotRun = 0, true
		if runs[i].Arrival > MaxSpan {
			return nil, fmt.Errorf("%w: record %d arrives %v after the first, beyond %v", ErrSpan, i+1, runs[i].Arrival, MaxSpan)
		}
	}
	clk := clock.NewMock()
	t0 := recs[0].Arrival.Add(-runs[0].Arrival)
	clk.Set(t0)
	s, err := fairsched.New(append(slices.Clip(opts), fairsched.WithClock(clk))...)
	if err != nil {
		return nil, err
	}
	p := &player{s: s, clk: clk, t0: t0, recs: recs, runs: runs, started: make(chan int, len(recs)),
		release: make([]chan struct{}, len(recs)), ends: map[int]time.Duration{}}
	playErr := p.play()
	ctx, cancel := context.WithCancel(context.Background())
	if playErr != nil {
		cancel() // its jobs would never be released
	}
	for i, ch := range p.release {
		if ch != nil && p.ends[i] >= 0 {
			close(ch)
		}
	}
	err = s.Close(ctx)
	cancel()
	return runs, errors.Join(playErr, err)
}

type player struct {
	s       *fairsched.Scheduler
	clk     *clock.Mock
	t0      time.Time
	recs    []trace.Record
	runs    []Run
	started chan int
	release []chan struct{}
	ends    map[int]time.Duration // running jobs' ends; -1 once released
	order   []int                 // running jobs in start order
	pending int
}

func (p *player) play() error {
	byArrival := make([]int, len(p.recs))
	for i := range byArrival {
		byArrival[i] = i
	}
	slices.SortStableFunc(byArrival, func(a, b int) int { return cmp.Compare(p.runs[a].Arrival, p.runs[b].Arrival) })
	for _, t := range p.types() {
		if err := p.s.RegisterType(t, DefaultType); err != nil && !errors.Is(err, fairsched.ErrDuplicateType) {
			return err
		}
	}
	next := 0
	for next < len(byArrival) || len(p.order) > 0 || p.pending > 0 {
		at, ok := p.nextEvent(byArrival, next)
		if !ok {
			if err := p.advanceIdle(); err != nil {
				return err
			}
			continue
		}
		p.clk.Set(p.t0.Add(at))
		if err := p.endRuns(at); err != nil {
			return err
		}
		for next < len(byArrival) && p.runs[byArrival[next]].Arrival == at {
			if err := p.arrive(byArrival[next]); err != nil {
				return err
			}
			next++
		}
	}
	return nil
}

// types returns the job types of the trace, sorted.
func (p *player) types() []fairsched.JobType {
	var ts []fairsched.JobType
	for _, r := range p.recs {
		ts = append(ts, fairsched.JobType(r.Type))
	}
	slices.Sort(ts)
	return slices.Compact(ts)
}

// nextEvent is the time of the next arrival or end of a run.
func (p *player) nextEvent(byArrival []int, next int) (time.Duration, bool) {
	at, ok := time.Duration(0), false
	if next < len(byArrival) {
		at, ok = p.runs[byArrival[next]].Arrival, true
	}
	for _, i := range p.order {
		if end := p.ends[i]; !ok || end < at {
			at, ok = end, true
		}
	}
	return at, ok
}

// advanceIdle moves the clock while jobs wait and nothing runs or arrives,
// in growing steps, until one starts.
func (p *player) advanceIdle() error {
	for step, moved := time.Millisecond, time.Duration(0); moved < maxIdleAdvance; step *= 2 {
		p.clk.Add(step)
		moved += step
		if err := p.settle(); err != nil {
			return err
		}
		if len(p.order) > 0 {
			return nil
		}
	}
	return fmt.Errorf("%w: %d pending after %v with nothing running", ErrStuck, p.pending, maxIdleAdvance)
}

// endRuns ends the runs due at at, in the order they started.
func (p *player) endRuns(at time.Duration) error {
	for _, i := range slices.Clone(p.order) {
		if p.ends[i] != at {
			continue
		}
		p.ends[i] = -1
		p.order = slices.DeleteFunc(p.order, func(j int) bool { return j == i })
		close(p.release[i])
		if err := p.settle(); err != nil {
			return err
		}
	}
	return nil
}

func (p *player) arrive(i int) error {
	rec := p.recs[i]
	rel := make(chan struct{})
	p.release[i] = rel
	fn := func(ctx context.Context) error {
		p.started <- i
		select {
		case <-rel:
		case <-ctx.Done():
		}
		return nil
	}
	opts := []fairsched.JobOption{fairsched.WithFairnessKey(rec.Key)}
	if rec.Group != "" {
		opts = append(opts, fairsched.InGroup(rec.Group))
	}
	err := p.s.Submit(fairsched.JobType(rec.Type), rec.ID, fn, opts...)
	var refused *fairsched.RefusalError
	if err != nil && !errors.As(err, &refused) { // a refused job is a run that never starts
		return fmt.Errorf("replay: record %d (type %q, id %q): %w", i+1, rec.Type, rec.ID, err)
	}
	return p.settle()
}

// settle returns once the scheduler has handled everything sent to it:
// every job it runs has started its function, and no released job is
// still running.
func (p *player) settle() error {
	for {
		snap, err := p.s.Snapshot(context.Background()) // lists every running job
		if err != nil {
			return err
		}
		p.takeStarts()
		if len(snap.Running) == len(p.order) {
			p.pending = snap.PendingTotal
			return nil
		}
	}
}

// takeStarts notes the jobs whose function has started: they started now,
// since the clock does not move until the scheduler has settled.
func (p *player) takeStarts() {
	for {
		select {
		case i := <-p.started:
			now := p.clk.Now().Sub(p.t0)
			p.runs[i].Start, p.runs[i].NotRun = now, false
			p.ends[i] = now + p.runs[i].Run
			p.order = append(p.order, i)
		default:
			return
		}
	}
}
