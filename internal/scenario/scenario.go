// Package scenario plays scripted workloads through the real scheduler in
// virtual time and records what it decided. The built-in scenarios live
// here so that the tests and the demo play exactly the same thing.
//
// Time is a mock clock advanced one second per step. A job's function blocks
// until the runner releases it at its start time plus its duration, so a
// job's observed wall time is exactly its duration. Within a step the runner
// first submits the step's arrivals, then releases the step's completions
// one at a time in admission order, and lets the scheduler settle after each
// event; this makes the timeline deterministic.
package scenario

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/fairsched/fairsched"
)

// Mode says how a scripted job is handed to the scheduler.
type Mode int

const (
	// ModeAuto: RunSync when the job has a fairness key, else Submit.
	ModeAuto Mode = iota
	// ModeOnDemand: RunSync, a caller waits (on-demand work for scoring).
	ModeOnDemand
	// ModeQueued: Submit, with its fairness key if it has one (queued
	// work for scoring).
	ModeQueued
)

// Job is one scripted job. By default (ModeAuto) a job with a fairness key
// is foreground work (RunSync) and one without is background work (Submit).
type Job struct {
	Type    fairsched.JobType
	ID      string
	Key     string
	Arrival int // step (second) it is submitted at, unless After is set
	// After, when set, names the job whose end submits this one, at the
	// step it finishes: a closed-loop client, which sends its next request
	// only when the last one returned. Arrival is then ignored.
	After    string
	Duration int // seconds it runs once admitted
	// Tag tells apart two runs of one (type, id) in a scenario; they must not
	// be pending or running at the same time.
	Tag string
	// Group is the job's group (InGroup); "" for none.
	Group string
	// Refused: the scheduler must turn the job away at once (a pending
	// bound); it is never queued.
	Refused bool
	Mode    Mode
	// Labels are the job's labels (WithLabels), which the workload rules
	// of the scenario's policy match.
	Labels map[string]string
}

// OnDemand reports whether a caller waits for the job (RunSync).
func (j Job) OnDemand() bool {
	return j.Mode == ModeOnDemand || j.Mode == ModeAuto && j.Key != ""
}

// Name is how a job appears in timelines: type(id) and its tag.
func (j Job) Name() string { return fmt.Sprintf("%s(%s)%s", j.Type, j.ID, j.Tag) }

// jobRef names a scripted job in the scheduler's logs: its type, id and
// fairness key, so that jobs of one (type, id) may be in the scheduler at
// once for different keys (shared conflicts).
type jobRef struct {
	t       fairsched.JobType
	id, key string
}

// Type is a job type registration of a scenario.
type Type struct {
	Name   fairsched.JobType
	Config fairsched.JobTypeConfig
}

// Scenario is a workload and the scheduler it runs on.
type Scenario struct {
	Name string
	// Title says in one plain sentence what the scenario shows, for
	// someone who has not read it: the demo's line and the chart's title.
	Title          string
	MaxConcurrency int
	Aging          *fairsched.AgingConfig // nil: no aging
	Options        []fairsched.Option     // more options for New
	// KeyWeights and GroupWeights (DefaultGroupWeight for the groups they
	// do not name, 1 when 0) repeat the weights given in Options: the
	// shares the scenario intends, which the report's fairness index
	// measures against.
	KeyWeights         map[string]float64
	GroupWeights       map[string]int
	DefaultGroupWeight int
	// Script runs at the start of a step, after the clock moved and before
	// the step's arrivals: runtime changes such as PauseGroup.
	Script map[int]func(*fairsched.Scheduler) error
	Types  []Type
	// Workers are registered before the first arrival.
	Workers []fairsched.WorkerSpec
	// Scoring, when not nil, turns linear scoring on (WithScoring).
	Scoring *fairsched.ScoreConfig
	// Tiers and OrderOnly, as given to WithTier and WithPriorityMode among
	// Options, tell the checks each tier's cap, and the report's fairness
	// index each tier's reserved share (MinShare).
	Tiers     map[fairsched.Priority]fairsched.TierConfig
	OrderOnly bool
	Jobs      []Job
	// Expect are claims about the run that Check verifies.
	Expect []Expectation
	// Progress, when set, is called after every step with the step and
	// the number of jobs ended so far.
	Progress func(step, ended, total int)
	// Explain: each job still pending once its arrival has settled is
	// explained (Scheduler.Explain): an "explain" event, and its
	// estimated start in Result.Estimated.
	Explain bool
	// TenantSep repeats the separator given to WithKeyPath among Options:
	// the figures and the report group the keys by tenant (TenantOf); ""
	// for a scenario without tenants.
	TenantSep string
}

// Event is one line of a timeline.
type Event struct {
	T     int    `json:"t"`               // seconds since the scenario started
	Kind  string `json:"kind"`            // "arrive", "admit", "done", "refuse", "shed", "expire", "aged", "allocation" or "preempt"
	Job   string `json:"job"`             // type(id)
	Key   string `json:"key,omitempty"`   // fairness key, "" for background
	Group string `json:"group,omitempty"` // the job's group, "" for none
	// For "admit": the cost charged, the key's accumulated cost after the
	// charge, and the running count of the job's tier and overall.
	Cost        time.Duration `json:"cost,omitempty"`
	KeyCost     time.Duration `json:"key_cost,omitempty"`
	TierRunning int           `json:"tier_running,omitempty"`
	Running     int           `json:"running,omitempty"`
	// Base is the job's base priority; Effective the priority it was
	// admitted at ("admit") or has aged to ("aged").
	Base      int `json:"base_priority,omitempty"`
	Effective int `json:"effective_priority,omitempty"`
	// For "allocation" (Job holds the group): the slots before and after,
	// and why.
	Previous int    `json:"previous_slots,omitempty"`
	Slots    int    `json:"slots,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// For "done": the cost estimate of the (type, id) after the run.
	Estimate time.Duration `json:"estimate,omitempty"`
	// For "load" (a reading that moved the limit or the overload): the
	// reading, whether it is overloaded, and the limit after it (Previous
	// before).
	Load       float64 `json:"load,omitempty"`
	Overloaded bool    `json:"overloaded,omitempty"`
	Limit      int     `json:"limit,omitempty"`
	// For "explain": what holds the job and when it is expected to start.
	Detail string `json:"detail,omitempty"`
}

func (e Event) String() string {
	key := e.Key
	if key == "" {
		key = "bg"
	}
	switch e.Kind {
	case "admit":
		aged := ""
		if e.Effective > e.Base {
			aged = fmt.Sprintf(" aged %d→%d", e.Base, e.Effective)
		}
		return fmt.Sprintf("T=%3d  ADMIT   %-22s key=%-8s cost=%-4v accumulated[%s]=%-5v tier_running=%d running=%d%s%s",
			e.T, e.Job, key, e.Cost, key, e.KeyCost, e.TierRunning, e.Running, aged, e.inGroup())
	case "done":
		return fmt.Sprintf("T=%3d  DONE    %-22s key=%-8s estimate now %v", e.T, e.Job, key, e.Estimate)
	case "allocation":
		return fmt.Sprintf("T=%3d  SLOTS   group %-16q %d → %d (%s)", e.T, e.Job, e.Previous, e.Slots, e.Reason)
	case "expire":
		return fmt.Sprintf("T=%3d  EXPIRE  %-22s key=%-8s still pending when its time to live ran out", e.T, e.Job, key)
	case "refuse":
		return fmt.Sprintf("T=%3d  REFUSE  %-22s key=%-8s %s, returned at once", e.T, e.Job, key, e.Reason)
	case "shed":
		return fmt.Sprintf("T=%3d  SHED    %-22s key=%-8s its newest pending job, dropped for a key under its fair share (%s)", e.T, e.Job, key, e.Reason)
	case "load":
		return e.loadLine()
	case "aged":
		return fmt.Sprintf("T=%3d  AGED    %-22s key=%-8s effective priority now %d", e.T, e.Job, key, e.Effective)
	case "explain":
		return fmt.Sprintf("T=%3d  WAITS   %-22s key=%-8s %s", e.T, e.Job, key, e.Detail)
	case "preempt":
		return fmt.Sprintf("T=%3d  PREEMPT %-22s key=%-8s a higher tier took its slot: back to the head of its lane", e.T, e.Job, key)
	}
	return fmt.Sprintf("T=%3d  ARRIVE  %-22s key=%s%s", e.T, e.Job, key, e.inGroup())
}

func (e Event) inGroup() string {
	if e.Group == "" {
		return ""
	}
	return " group=" + e.Group
}

// Result is what a run produced.
type Result struct {
	Timeline []Event
	// AccumulatedCost per fairness key when the last job finished.
	AccumulatedCost map[string]time.Duration
	// Estimates are the learned costs, "type(id)" → cost.
	Estimates map[string]time.Duration
	// Start and End step of every job, by Job.Name(). A refused or expired
	// job has an End and no Start.
	Start, End map[string]int
	// Slot is the worker slot each job ran on, "worker/index", by
	// Job.Name(); absent for jobs of types without workers.
	Slot map[string]string
	// Estimated is the estimated start step of each job explained
	// pending on arrival (Scenario.Explain), by Job.Name().
	Estimated map[string]int
}

// Settler returns once the scheduler has handled everything sent to it and
// cond holds for its state. Tests use testing/synctest to wait; the demo
// polls snapshots.
type Settler func(s *fairsched.Scheduler, cond func(fairsched.Snapshot) bool) error

// Poll is a Settler for use outside tests: it asks for snapshots until cond
// holds.
func Poll(s *fairsched.Scheduler, cond func(fairsched.Snapshot) bool) error {
	for {
		snap, err := s.Snapshot(context.Background(), fairsched.SnapshotAll())
		if err != nil {
			return err
		}
		if cond(snap) {
			return nil
		}
	}
}

// SchedulerOptions returns the options sc configures its scheduler with,
// after opts (a clock, a logger).
func (sc Scenario) SchedulerOptions(opts ...fairsched.Option) []fairsched.Option {
	if sc.MaxConcurrency > 0 {
		opts = append(opts, fairsched.WithMaxConcurrency(sc.MaxConcurrency))
	}
	if sc.Aging != nil {
		opts = append(opts, fairsched.WithAging(*sc.Aging))
	}
	if sc.Scoring != nil {
		opts = append(opts, fairsched.WithScoring(*sc.Scoring))
	}
	return append(opts, sc.Options...)
}

// Run plays sc on a new scheduler driven by clk and settle.
func Run(sc Scenario, clk *clock.Mock, settle Settler) (Result, error) {
	logs, records := observer.New(zap.DebugLevel)
	s, err := fairsched.New(sc.SchedulerOptions(fairsched.WithClock(clk), fairsched.WithLogger(zap.New(logs)))...)
	if err != nil {
		return Result{}, err
	}
	r := &runner{sc: sc, s: s, clk: clk, settle: settle, records: records,
		release: map[string]chan struct{}{}, byName: map[string]Job{}, active: map[jobRef]Job{},
		res: Result{Start: map[string]int{}, End: map[string]int{}, Slot: map[string]string{}, Estimated: map[string]int{}}, t0: clk.Now()}
	res, runErr := r.run()
	ctx, cancel := context.WithCancel(context.Background())
	if runErr != nil {
		cancel() // the script stopped: its jobs would never be released
	}
	if err := s.Close(ctx); err != nil && runErr == nil {
		runErr = err
	}
	cancel()
	for range r.sync {
		// An expired RunSync job is in the timeline; its caller's
		// ErrExpired is what the scenario expects.
		if err := <-r.errc; err != nil && !errors.Is(err, fairsched.ErrExpired) && runErr == nil {
			runErr = err
		}
	}
	return res, runErr
}

type runner struct {
	sc      Scenario
	s       *fairsched.Scheduler
	clk     *clock.Mock
	settle  Settler
	records *observer.ObservedLogs
	release map[string]chan struct{}
	byName  map[string]Job
	active  map[jobRef]Job // scripted job behind each (type, id, key) in the scheduler
	admits  []string       // admission order
	sync    []string       // RunSync jobs started
	errc    chan error
	now     int
	res     Result
	t0      time.Time // step 0
}

func (r *runner) run() (Result, error) {
	r.errc = make(chan error, len(r.sc.Jobs))
	for _, t := range r.sc.Types {
		if err := r.s.RegisterType(t.Name, t.Config); err != nil {
			return Result{}, err
		}
	}
	for _, w := range r.sc.Workers {
		if err := r.s.RegisterWorker(w); err != nil {
			return Result{}, err
		}
	}
	for _, j := range r.sc.Jobs {
		r.byName[j.Name()] = j
	}
	for r.now = 0; len(r.res.End) < len(r.sc.Jobs); r.now++ {
		if r.now > 0 {
			r.clk.Add(time.Second)
			// Timers may admit jobs as the clock moves (deferrals, rate
			// limits, load readings): record them at this step.
			if err := r.step(readingsDone(r.now)); err != nil {
				return r.res, err
			}
		}
		if r.now > 100000 {
			return r.res, fmt.Errorf("scenario %s: jobs never finished: %d of %d", r.sc.Name, len(r.res.End), len(r.sc.Jobs))
		}
		if f := r.sc.Script[r.now]; f != nil {
			if err := f(r.s); err != nil {
				return r.res, err
			}
			if err := r.step(func(fairsched.Snapshot) bool { return true }); err != nil {
				return r.res, err
			}
		}
		for _, j := range r.sc.Jobs {
			if j.After == "" && j.Arrival == r.now {
				if err := r.arrive(j); err != nil {
					return r.res, err
				}
			}
		}
		for _, name := range r.admits {
			j := r.byName[name]
			start, started := r.res.Start[name] // not while a preempted job waits again
			if _, done := r.res.End[name]; done || !started || start+j.Duration != r.now {
				continue
			}
			if err := r.finish(j); err != nil {
				return r.res, err
			}
		}
		for _, j := range r.sc.Jobs { // closed-loop jobs follow their predecessor's end
			if end, done := r.res.End[j.After]; j.After != "" && done && end == r.now {
				if err := r.arrive(j); err != nil {
					return r.res, err
				}
			}
		}
		if r.sc.Progress != nil {
			r.sc.Progress(r.now, len(r.res.End), len(r.sc.Jobs))
		}
	}
	snap, err := r.s.Snapshot(context.Background(), fairsched.SnapshotAll())
	if err != nil {
		return r.res, err
	}
	r.res.AccumulatedCost = snap.AccumulatedCost
	r.res.Estimates = map[string]time.Duration{}
	for _, e := range snap.CostEstimates {
		r.res.Estimates[Job{Type: e.Type, ID: e.ID}.Name()] = e.Cost
	}
	return r.res, nil
}

func (r *runner) arrive(j Job) error {
	ref := jobRef{j.Type, j.ID, j.Key}
	if prev, busy := r.active[ref]; busy {
		return fmt.Errorf("scenario %s: %s arrives while %s is still in the scheduler", r.sc.Name, j.Name(), prev.Name())
	}
	r.active[ref] = j
	r.res.Timeline = append(r.res.Timeline, Event{T: r.now, Kind: "arrive", Job: j.Name(), Key: j.Key, Group: j.Group})
	rel := make(chan struct{})
	r.release[j.Name()] = rel
	fn := func(ctx context.Context) error {
		select {
		case <-rel:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var opts []fairsched.JobOption
	if j.Group != "" {
		opts = append(opts, fairsched.InGroup(j.Group))
	}
	if j.Labels != nil {
		opts = append(opts, fairsched.WithLabels(j.Labels))
	}
	if j.Refused {
		return r.refused(j, fn, opts)
	}
	if !j.OnDemand() {
		if j.Key != "" {
			opts = append(opts, fairsched.WithFairnessKey(j.Key))
		}
		if err := r.s.Submit(j.Type, j.ID, fn, opts...); err != nil {
			return err
		}
	} else {
		r.sync = append(r.sync, j.Name())
		go func() { r.errc <- r.s.RunSync(context.Background(), j.Type, j.ID, j.Key, fn, opts...) }()
	}
	if err := r.step(func(s fairsched.Snapshot) bool { return present(s, j) }); err != nil || !r.sc.Explain {
		return err
	}
	return r.explain(j)
}

// refused submits a job the scheduler must turn away, in the calling
// goroutine: the call returns at once with a *RefusalError.
func (r *runner) refused(j Job, fn func(context.Context) error, opts []fairsched.JobOption) error {
	delete(r.active, jobRef{j.Type, j.ID, j.Key})
	var err error
	if j.Key == "" {
		err = r.s.Submit(j.Type, j.ID, fn, opts...)
	} else {
		err = r.s.RunSync(context.Background(), j.Type, j.ID, j.Key, fn, opts...)
	}
	var re *fairsched.RefusalError
	if !errors.As(err, &re) {
		return fmt.Errorf("scenario %s: %s was to be refused; got %v", r.sc.Name, j.Name(), err)
	}
	r.res.Timeline = append(r.res.Timeline, Event{T: r.now, Kind: "refuse", Job: j.Name(), Key: j.Key, Group: j.Group, Reason: string(re.Reason)})
	r.res.End[j.Name()] = r.now
	return nil
}

func (r *runner) finish(j Job) error {
	close(r.release[j.Name()])
	return r.step(func(s fairsched.Snapshot) bool {
		for _, rj := range s.Running {
			if rj.Type == j.Type && rj.ID == j.ID && rj.FairnessKey == j.Key {
				return false
			}
		}
		return true
	})
}

// step settles the scheduler and turns its new log entries into events.
func (r *runner) step(cond func(fairsched.Snapshot) bool) error {
	if err := r.settle(r.s, cond); err != nil {
		return err
	}
	var preempted []Job // their attempts end, and their slots are given, after the step
	for _, e := range r.records.TakeAll() {
		f := e.ContextMap()
		key, ok := f["key"]
		if !ok {
			key = f["tenant"] // a decision record's name for it
		}
		ref := jobRef{fairsched.JobType(str(f["type"])), str(f["id"]), str(key)}
		name := r.active[ref].Name()
		ev := Event{T: r.now, Job: name, Key: str(f["key"]), Group: str(f["group"])}
		switch e.Message {
		case "admit":
			ev.Kind = "admit"
			ev.Cost, ev.KeyCost = dur(f["cost"]), dur(f["key_cost"])
			ev.TierRunning, ev.Running = int(f["tier_running"].(int64)), int(f["running"].(int64))
			ev.Base, ev.Effective = int(f["priority"].(int64)), int(f["effective_priority"].(int64))
			r.res.Start[name] = r.now
			r.admits = append(r.admits, name)
			if w := str(f["worker"]); w != "" {
				r.res.Slot[name] = fmt.Sprintf("%s/%d", w, f["slot"].(int64))
			}
		case "allocation":
			ev.Kind = "allocation"
			ev.Job = str(f["group"])
			ev.Previous, ev.Slots = int(f["previous"].(int64)), int(f["slots"].(int64))
			ev.Reason = str(f["reason"])
		case "job preempted":
			ev.Kind = "preempt"
			ev.Key = r.active[ref].Key // a decision record says "tenant"
			delete(r.res.Start, name)  // its run is cut short: it starts again
			preempted = append(preempted, r.active[ref])
		case "aged":
			ev.Kind = "aged"
			ev.Base, ev.Effective = int(f["priority"].(int64)), int(f["effective_priority"].(int64))
		case "job expired":
			ev.Kind = "expire"
			ev.Key, ev.Group = r.active[ref].Key, r.active[ref].Group // a decision record says "tenant"
			r.res.End[name] = r.now
			delete(r.active, ref)
		case "job shed":
			ev.Kind, ev.Reason = "shed", str(f["reason_code"])
			ev.Key = r.active[ref].Key // a decision record says "tenant"
			r.res.End[name] = r.now
			delete(r.active, ref)
		case "load reading":
			ev = loadEvent(r.now, f)
		case "complete":
			ev.Kind = "done"
			ev.Estimate = dur(f["estimate"])
			r.res.End[name] = r.now
			delete(r.active, ref)
		default:
			continue
		}
		r.res.Timeline = append(r.res.Timeline, ev)
	}
	if len(preempted) > 0 { // settle until each has returned: the turn that requeues it gives its slot
		return r.step(func(s fairsched.Snapshot) bool {
			return !slices.ContainsFunc(preempted, func(j Job) bool { return isRunning(s, j) })
		})
	}
	return nil
}

// isRunning reports whether j runs in s.
func isRunning(s fairsched.Snapshot, j Job) bool {
	return slices.ContainsFunc(s.Running, func(rj fairsched.RunningJob) bool {
		return rj.Type == j.Type && rj.ID == j.ID && rj.FairnessKey == j.Key
	})
}

func present(s fairsched.Snapshot, j Job) bool {
	for _, p := range s.Pending {
		if p.Type == j.Type && p.ID == j.ID && p.FairnessKey == j.Key {
			return true
		}
	}
	for _, rj := range s.Running {
		if rj.Type == j.Type && rj.ID == j.ID && rj.FairnessKey == j.Key {
			return true
		}
	}
	return false
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func dur(v any) time.Duration {
	d, _ := v.(time.Duration)
	return d
}
