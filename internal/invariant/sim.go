package invariant

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/fairsched/fairsched"
)

// Options selects what Run plays.
type Options struct {
	Seed uint64
	Mode Mode
	// Jobs, when positive, streams chaos workloads chunk after chunk until
	// this many jobs have arrived, then closes (the soak); 0 plays one
	// finite workload of the mode.
	Jobs int
	// CheckEvery runs the snapshot checks every n steps (default 1); the
	// checks made as each job starts and ends run always.
	CheckEvery int
	// Log, when set, receives every action and every snapshot checked, as
	// they happen: for debugging a seed.
	Log func(string)
	// Keep and KeepOp, when set, filter a chaos workload's jobs (by index)
	// and operations (by order of generation) after it is drawn, for
	// shrinking a failing seed to the calls that matter.
	Keep, KeepOp func(int) bool
}

// Result is what a run found and did.
type Result struct {
	Mode       Mode
	Config     string
	Violations []string
	// Trace holds the last actions before the first violation.
	Trace []string
	Jobs  int // RunSync and Submit calls
	// Superseded counts the JobSuperseded events: Supersede calls that
	// replaced a pending (or backing-off) background job.
	Superseded int
	// Shed counts the jobs fair shedding dropped (JobRefused, reason shed).
	Shed      int
	Starts    int // attempts started
	Steps     int
	Snapshots int
	Virtual   time.Duration // virtual time simulated
	// FairChecks counts the snapshots whose weighted service was compared
	// (fairness mode); AgingChecks the starts checked against the aging
	// bound (aging mode); MaxDrift the largest weighted-cost gap seen and
	// DriftBound its bound in the last check.
	FairChecks, AgingChecks int
	MaxDrift, DriftBound    time.Duration
	// LongestWait is the longest wait of a low-priority job in aging
	// mode, WaitBound its bound.
	LongestWait, WaitBound time.Duration
	// Preemptions counts the JobPreempted events (aging mode's tier
	// rules).
	Preemptions int
	// Plan describes the calls of a finite chaos workload, in time order.
	Plan []string
}

// errAttempt is what a planned failure returns (wrapped).
var errAttempt = errors.New("planned failure")

const (
	maxViolations = 20
	traceLen      = 80
	quantum       = 2 * time.Second // a step while only the scheduler's timers can move
	// stall is how long nothing may start or end, with work left, before
	// the run counts as stuck: far longer than any timer of a workload.
	stall      = 30 * time.Minute
	rateWindow = 64 // starts per rate scope checked against the newest
)

type slotRef struct {
	worker string
	slot   int
}

// jobRun is the run-time record of one jobSpec.
type jobRun struct {
	spec      *jobSpec
	typ       *typeSpec
	key       string // the fairness key it is charged to
	sig       string // type/id
	submitted time.Time
	attempts  int
	lastEnd   time.Time
	lastOut   outcome
	succeeded bool
	lost      bool // an attempt ran on a worker that was unregistered
	cur       *attempt
	fgDone    bool
	cancel    context.CancelFunc
	cancelled bool
	// superseded: a later Supersede of its (type, id) was accepted while
	// it did not execute (pending, or in a retry's backoff): it never
	// starts again.
	superseded bool
	// preempted counts its attempts a higher tier preempted: each is
	// taken back (attempts), as the scheduler counts none of them.
	preempted int
}

// attempt is one execution of a job function.
type attempt struct {
	job      *jobRun
	per      *perRun
	n        int
	start    time.Time
	due      time.Time
	plan     attemptSpec
	release  chan struct{}
	released bool
	slot     slotRef
	onSlot   bool
	typ      *typeSpec
	key      string
	group    string
	id       string
}

func (a *attempt) name() string {
	if a.per != nil {
		return fmt.Sprintf("%s#%d", a.id, a.n)
	}
	return fmt.Sprintf("j%d(%s/%s)#%d", a.job.spec.idx, a.typ.name, a.id, a.n)
}

// perRun is a periodic schedule's run-time record.
type perRun struct {
	spec  periodicSpec
	r     *rand.Rand
	n     int
	stop  func()
	count int // occurrences executing
}

// acct is the per-signature ledger reconciled against the event stream.
type acct struct {
	bgAccepted int // Submit returned nil
	succeeded  int // attempts that returned nil
	fgDefinite int // RunSync outcomes that come with exactly one terminal event
	fgFlexible int // RunSync outcomes that come with at most one (cancelled, closed)
}

type evCount struct{ completed, failed, expired, dropped, denied, superseded, shed int }

type sim struct {
	// loStarted: the last start of a "lo" attempt (the starvation
	// window is the tier's: the time since its last admission).
	loStarted time.Time
	opts      Options
	g         *gen
	cfg       *config
	mock      *clock.Mock
	t0        time.Time
	now       time.Time
	s         *fairsched.Scheduler

	arrivals []*jobSpec
	ops      []opSpec
	cancels  []*jobRun
	more     bool          // soak: chunks remain
	horizon  time.Duration // aging mode: the stream stops respawning then
	lastSnap fairsched.Snapshot
	haveSnap bool
	closeCtx context.CancelFunc
	abortAt  time.Time // zero: none
	pers     []*perRun

	// inbox carries what the scheduler's goroutines report (an attempt
	// starts or ends, a RunSync or Close returns) to the driver, the one
	// goroutine that owns this state: see call and settle.
	inbox chan func()
	// eventsIn is the scheduler's event stream, counted as settle drains it.
	eventsIn <-chan fairsched.Event
	// at is when what call carries out happened, while it is carried out.
	at          time.Time
	executing   []*attempt
	byTier      map[fairsched.Priority]int
	byType      map[fairsched.JobType]int
	byGroup     map[string]int
	byKey       map[string]int
	byConflict  map[string]int
	byExclusive map[string]int // the exclusive jobs among byConflict
	// writers: the earliest arrival of a pending exclusive job per
	// conflict key, at the last snapshot check.
	writers map[string]time.Time
	bySlot  map[slotRef]*attempt
	workers map[string]fairsched.WorkerSpec
	paused  map[string]bool
	// pauses are each group's pauses, the last open while it is paused:
	// a job's time to live does not run while its group is paused.
	pauses       map[string][]span
	rateStarts   [][]rateStart
	successes    map[string]time.Time // coalescing signatures: when a run last succeeded
	accts        map[string]*acct
	fgOut        int
	closeCalled  bool
	closeAbort   bool
	closeDone    bool
	closeErr     error
	trace        []string
	traceFrozen  bool
	res          Result
	maxElapsed   time.Duration
	retryTypes   map[fairsched.JobType]bool
	opSeq        int
	lastProgress time.Time // the last start or end of an attempt
	respawns     int
	tornDown     bool

	// background are the accepted background jobs of each signature, for
	// Supersede.
	background map[string][]*jobRun

	// preemptions are the times of the JobPreempted events so far.
	preemptions []time.Time

	events map[string]*evCount
	evDone bool
	// shares is fairness mode's own reckoning of the keys' shares
	// (hier.go).
	shares  shareLedger
	evTypes map[fairsched.JobType]bool // types whose signatures are reconciled
}

// Run plays one seed through a fresh scheduler. Call it inside a
// synctest bubble: it waits for the scheduler to settle with
// synctest.Wait and moves a mock clock; it returns once the scheduler has
// closed and every goroutine it started has ended.
func Run(opts Options) Result {
	if opts.CheckEvery < 1 {
		opts.CheckEvery = 1
	}
	mode := opts.Mode
	if opts.Jobs > 0 {
		mode = Chaos
	}
	g := newGen(opts.Seed, mode, opts.Jobs > 0)
	sm := &sim{
		opts: opts, g: g, cfg: g.cfg, mock: clock.NewMock(), inbox: make(chan func()),
		byTier: map[fairsched.Priority]int{}, byType: map[fairsched.JobType]int{}, byGroup: map[string]int{},
		byKey: map[string]int{}, byConflict: map[string]int{}, byExclusive: map[string]int{}, bySlot: map[slotRef]*attempt{},
		workers: map[string]fairsched.WorkerSpec{}, paused: map[string]bool{}, pauses: map[string][]span{},
		successes: map[string]time.Time{}, accts: map[string]*acct{}, events: map[string]*evCount{},
		evTypes: map[fairsched.JobType]bool{}, retryTypes: map[fairsched.JobType]bool{},
		background: map[string][]*jobRun{},
	}
	sm.res.Mode = mode
	sm.res.Config = sm.cfg.String()
	sm.t0 = sm.mock.Now()
	sm.now, sm.lastProgress = sm.t0, sm.t0
	sm.rateStarts = make([][]rateStart, len(sm.cfg.rates))
	for _, t := range sm.cfg.types {
		sm.evTypes[t.name] = !t.cfg.Coalesce
	}
	s, err := fairsched.New(append(sm.cfg.options(), fairsched.WithClock(sm.mock), fairsched.WithRandSeed(opts.Seed))...)
	if err != nil {
		sm.violate("New: %v (the generator drew an invalid configuration)", err)
		return sm.res
	}
	sm.s = s
	for i := range sm.cfg.types {
		t := &sm.cfg.types[i]
		if err := s.RegisterType(t.name, t.cfg); err != nil {
			sm.violate("RegisterType(%s): %v", t.name, err)
		}
	}
	sm.eventsIn, _ = s.Subscribe(1 << 12) // Close closes it
	sm.plan()
	sm.loop()
	sm.finish()
	return sm.res
}

// Play runs one seed (Run) in a testing/synctest bubble of its own.
func Play(t *testing.T, opts Options) Result {
	var res Result
	synctest.Test(t, func(*testing.T) { res = Run(opts) })
	return res
}

// plan lays out the workload of the mode: the first chunk and the Close.
func (sm *sim) plan() {
	switch sm.cfg.mode {
	case Fairness:
		sm.arrivals = sm.g.fairnessJobs()
		_, op := sm.g.closeOps(sm.arrivals[len(sm.arrivals)-1].at + tick)
		sm.ops = []opSpec{op}
	case Aging:
		jobs, end := sm.g.agingJobs()
		sm.arrivals, sm.horizon = jobs, end
		_, op := sm.g.closeOps(end)
		sm.ops = []opSpec{op}
	default:
		n := 20 + sm.g.intn(100)
		if sm.opts.Jobs > 0 {
			n = min(200, sm.opts.Jobs)
		}
		sm.chunk(0, n)
	}
}

// chunk appends a chaos chunk of n jobs from start, and the Close after
// the last chunk.
func (sm *sim) chunk(start time.Duration, n int) {
	jobs, ops, end := sm.g.chaosChunk(start, n)
	if sm.opts.Keep != nil {
		jobs = slices.DeleteFunc(jobs, func(j *jobSpec) bool { return !sm.opts.Keep(j.idx) })
	}
	if sm.opts.KeepOp != nil {
		ops = slices.DeleteFunc(ops, func(opSpec) bool { sm.opSeq++; return !sm.opts.KeepOp(sm.opSeq - 1) })
	}
	if sm.opts.Jobs == 0 {
		for _, j := range jobs {
			sm.res.Plan = append(sm.res.Plan, j.String(sm.cfg))
		}
		for _, op := range ops {
			sm.res.Plan = append(sm.res.Plan, op.String())
		}
	}
	sm.arrivals = append(sm.arrivals, jobs...)
	sm.ops = append(sm.ops, ops...)
	sm.more = sm.opts.Jobs > 0 && sm.g.jobs < sm.opts.Jobs
	if !sm.more {
		late, op := sm.g.closeOps(end + sm.g.ticks(0, 40))
		if len(sm.cfg.workerTypes()) > 0 && op.abort < 0 {
			// A graceful Close drains: every worker type needs a slot.
			w := sm.g.newWorker(true)
			sm.ops = append(sm.ops, opSpec{at: op.at, kind: opRegister, worker: w})
		}
		sm.ops = append(sm.ops, op)
		sm.arrivals = append(sm.arrivals, late...)
	}
	sortJobs(sm.arrivals)
	sortOps(sm.ops)
}

func (sm *sim) elapsed() time.Duration { return sm.now.Sub(sm.t0) }

// violate records a broken invariant.
func (sm *sim) violate(format string, args ...any) {
	if sm.tornDown {
		return
	}
	msg := fmt.Sprintf("t=%v: ", sm.clock().Sub(sm.t0)) + fmt.Sprintf(format, args...)
	if len(sm.res.Violations) < maxViolations {
		sm.res.Violations = append(sm.res.Violations, msg)
	}
	if !sm.traceFrozen {
		sm.traceFrozen = true
		sm.res.Trace = slices.Clone(sm.trace)
	}
}

func (sm *sim) failed() bool {
	return len(sm.res.Violations) > 0
}

// logf adds a line to the trace.
func (sm *sim) logf(format string, args ...any) {
	if sm.traceFrozen {
		return
	}
	if len(sm.trace) >= traceLen {
		copy(sm.trace, sm.trace[1:])
		sm.trace = sm.trace[:traceLen-1]
	}
	line := fmt.Sprintf("t=%v ", sm.clock().Sub(sm.t0)) + fmt.Sprintf(format, args...)
	sm.trace = append(sm.trace, line)
	if sm.opts.Log != nil {
		sm.opts.Log(line)
	}
}

// settle lets every goroutine of the bubble run until it blocks — the
// scheduler has handled everything it was sent — carrying out, one at a
// time, what they report through call, then counts the events emitted.
// Only the driver calls it.
func (sm *sim) settle() {
	for {
		synctest.Wait()
		select {
		case f := <-sm.inbox:
			f()
			continue
		default:
		}
		break
	}
	for sm.eventsIn != nil {
		select {
		case e, ok := <-sm.eventsIn:
			if !ok {
				sm.eventsIn, sm.evDone = nil, true
				break
			}
			sm.shares.note(e)
			sm.count(e)
			continue
		default:
		}
		break
	}
}

// call runs f on the driver, which owns the simulation's state, and returns
// when f has: how a goroutine of the scheduler (an attempt, a RunSync
// caller, Close) reports what it saw. The driver takes f when the bubble
// settles; the caller waits meanwhile, as a job that has started waits,
// so what it reports is in order with what the scheduler does next.
//
// The driver may take f later in virtual time (a mock clock's Add fires
// timers one by one, and jobs start in between): the time it happened is
// read here, and is the time f sees (clock).
func (sm *sim) call(f func()) {
	at, done := sm.mock.Now(), make(chan struct{})
	sm.inbox <- func() {
		sm.at = at
		f()
		sm.at = time.Time{}
		close(done)
	}
	<-done
}

// clock is the time of what the driver records: that of the report call
// carries out, or the mock clock's.
func (sm *sim) clock() time.Time {
	if !sm.at.IsZero() {
		return sm.at
	}
	return sm.mock.Now()
}

// loop steps virtual time from event to event until the scheduler has
// closed and every caller has returned.
func (sm *sim) loop() {
	limit := sm.horizonLimit()
	for {
		if sm.failed() {
			sm.teardown()
			return
		}
		next, ok := sm.nextTime()
		idle := sm.closeDone && sm.fgOut == 0 && len(sm.executing) == 0
		if idle {
			return
		}
		if !ok {
			next = sm.now.Add(quantum)
		}
		if next.Before(sm.now) {
			next = sm.now
		}
		still := len(sm.executing) == 0 && next.Sub(sm.lastProgress) > stall
		if next.Sub(sm.t0) > limit || still {
			sm.stuck()
			continue
		}
		sm.mock.Add(next.Sub(sm.now))
		sm.settle()
		sm.now = next
		sm.res.Steps++
		sm.doOps()
		sm.doReleases()
		sm.doCancels()
		sm.doArrivals()
		if !sm.abortAt.IsZero() && !sm.now.Before(sm.abortAt) {
			sm.logf("Close's context ends")
			sm.closeAbort = true
			sm.closeCtx()
			sm.abortAt = time.Time{}
			sm.settle()
		}
		if sm.res.Steps%sm.opts.CheckEvery == 0 {
			sm.checkSnapshot()
		}
		if sm.more && len(sm.arrivals) == 0 && sm.pendingLow() {
			// The next chunk starts after the last operation planned: the
			// generator's model of the workers runs in time order.
			start := sm.elapsed()
			for _, op := range sm.ops {
				start = max(start, op.at)
			}
			sm.chunk(start+tick, min(200, sm.opts.Jobs-sm.g.jobs))
		}
	}
}

// horizonLimit bounds the virtual time of a run: past it the scheduler is
// stuck.
func (sm *sim) horizonLimit() time.Duration {
	if sm.opts.Jobs > 0 {
		return time.Duration(sm.opts.Jobs) * 10 * time.Second
	}
	return 6 * time.Hour
}

// pendingLow reports whether the queue has drained enough for the soak's
// next chunk.
func (sm *sim) pendingLow() bool {
	return !sm.haveSnap || len(sm.lastSnap.Pending) < 40
}

// stuck reports a run that passed its time limit without ending.
func (sm *sim) stuck() {
	snap, err := sm.s.Snapshot(context.Background(), fairsched.SnapshotAll())
	var b strings.Builder
	if err == nil {
		for _, p := range snap.Pending {
			fmt.Fprintf(&b, "\n    pending %s/%s key=%q group=%q reason=%s", p.Type, p.ID, p.FairnessKey, p.Group, p.Reason)
		}
		for _, r := range snap.Running {
			fmt.Fprintf(&b, "\n    running %s/%s key=%q since %v", r.Type, r.ID, r.FairnessKey, r.Started.Sub(sm.t0))
		}
	}
	sm.violate("no progress: nothing started or ended for %v with work left (Close called=%v returned=%v; %d RunSync calls outstanding, %d attempts executing; snapshot err=%v)%s",
		sm.now.Sub(sm.lastProgress), sm.closeCalled, sm.closeDone, sm.fgOut, len(sm.executing), err, b.String())
}

// nextTime is the earliest instant at which the test has something to do.
func (sm *sim) nextTime() (time.Time, bool) {
	var next time.Time
	ok := false
	consider := func(t time.Time) {
		if !ok || t.Before(next) {
			next, ok = t, true
		}
	}
	if len(sm.arrivals) > 0 {
		consider(sm.t0.Add(sm.arrivals[0].at))
	}
	if len(sm.ops) > 0 {
		consider(sm.t0.Add(sm.ops[0].at))
	}
	for _, j := range sm.cancels {
		consider(sm.t0.Add(j.spec.cancelAt))
	}
	if !sm.abortAt.IsZero() {
		consider(sm.abortAt)
	}
	for _, a := range sm.executing {
		if !a.released {
			consider(a.due)
		}
	}
	return next, ok
}

func (sm *sim) due(at time.Duration) bool { return !sm.t0.Add(at).After(sm.now) }

func (sm *sim) doOps() {
	for len(sm.ops) > 0 && sm.due(sm.ops[0].at) {
		op := sm.ops[0]
		sm.ops = sm.ops[1:]
		sm.op(op)
		sm.settle()
	}
}

// opErr checks the error of an operation: nil, or ErrClosed once Close
// was called.
func (sm *sim) opErr(what string, err error) {
	if err != nil && !(sm.closeCalled && errors.Is(err, fairsched.ErrClosed)) {
		sm.violate("%s = %v", what, err)
	}
}

func (sm *sim) op(op opSpec) {
	s := sm.s
	switch op.kind {
	case opRegister:
		// Marked before the call: jobs start on its slots before it returns.
		sm.workers[op.worker.ID] = op.worker
		sm.logf("RegisterWorker %s %v", op.worker.ID, op.worker.Slots)
		err := s.RegisterWorker(op.worker)
		if err != nil {
			delete(sm.workers, op.worker.ID)
		}
		sm.opErr("RegisterWorker("+op.worker.ID+")", err)
	case opUnregister:
		sm.logf("UnregisterWorker %s", op.name)
		for _, a := range sm.executing {
			if a.onSlot && a.slot.worker == op.name && a.job != nil {
				a.job.lost = true // its context ends with ErrWorkerLost as the cause
			}
		}
		err := s.UnregisterWorker(op.name)
		// Marked after the call: nothing may start on its slots from now.
		delete(sm.workers, op.name)
		sm.opErr("UnregisterWorker("+op.name+")", err)
	case opPause:
		sm.logf("PauseGroup %q", op.name)
		err := s.PauseGroup(op.name)
		if err == nil && !sm.closeCalled { // Close resumes every group
			if !sm.paused[op.name] {
				sm.pauses[op.name] = append(sm.pauses[op.name], span{from: sm.mock.Now()})
			}
			sm.paused[op.name] = true
		}
		sm.opErr("PauseGroup", err)
	case opResume:
		sm.endPause(op.name)
		delete(sm.paused, op.name)
		sm.logf("ResumeGroup %q", op.name)
		sm.opErr("ResumeGroup", s.ResumeGroup(op.name))
	case opGroupWeight:
		sm.logf("SetGroupWeight %q %v", op.name, op.weight)
		sm.opErr("SetGroupWeight", s.SetGroupWeight(op.name, int(op.weight)))
	case opResetGroupWeights:
		sm.logf("ResetGroupWeights")
		sm.opErr("ResetGroupWeights", s.ResetGroupWeights())
	case opKeyWeight:
		sm.logf("SetKeyWeight %q %v", op.name, op.weight)
		sm.opErr("SetKeyWeight", s.SetKeyWeight(op.name, op.weight))
	case opPeriodicStart:
		ps := sm.g.periodics[op.per]
		p := &perRun{spec: ps, r: rand.New(rand.NewPCG(sm.opts.Seed, uint64(ps.idx)+1))}
		sm.pers = append(sm.pers, p)
		var opts []fairsched.JobOption
		if ps.key != "" {
			opts = append(opts, fairsched.WithFairnessKey(ps.key))
		}
		if ps.group != "" {
			opts = append(opts, fairsched.InGroup(ps.group))
		}
		sm.logf("SubmitPeriodic %s every %v", ps.id, ps.every)
		stop, err := s.SubmitPeriodic(sm.cfg.types[ps.typ].name, ps.id, ps.every, sm.perFn(p), opts...)
		sm.opErr("SubmitPeriodic", err)
		p.stop = stop
	case opPeriodicStop:
		for _, p := range sm.pers {
			if p.spec.idx == op.per && p.stop != nil {
				sm.logf("stop periodic %s", p.spec.id)
				p.stop()
			}
		}
	case opClose:
		ctx, cancel := context.WithCancel(context.Background())
		sm.closeCtx = cancel
		if op.abort >= 0 {
			sm.abortAt = sm.now.Add(op.abort)
		}
		sm.closeCalled = true
		for g := range sm.paused {
			sm.endPause(g)
		}
		clear(sm.paused) // Close resumes paused groups so their work drains
		sm.logf("Close (abort after %v)", op.abort)
		go func() {
			err := sm.s.Close(ctx)
			sm.call(func() {
				sm.closeDone, sm.closeErr = true, err
				sm.logf("Close returned %v", err)
				switch {
				case err == nil, errors.Is(err, fairsched.ErrClosed):
				case errors.Is(err, context.Canceled) && sm.closeAbort:
				default:
					sm.violate("Close = %v", err)
				}
			})
		}()
	}
}

// doReleases ends, one at a time, the attempts whose planned duration is
// over, in a fixed order, so a seed replays the same run.
func (sm *sim) doReleases() {
	for {
		var best *attempt
		for _, a := range sm.executing {
			if a.released || a.due.After(sm.now) {
				continue
			}
			if best == nil || a.due.Before(best.due) || a.due.Equal(best.due) && a.order() < best.order() {
				best = a
			}
		}
		if best != nil {
			best.released = true
			close(best.release)
		}
		if best == nil {
			return
		}
		sm.settle()
	}
}

func (a *attempt) order() int {
	if a.per != nil {
		return -1 - a.per.spec.idx
	}
	return a.job.spec.idx
}

func (sm *sim) doCancels() {
	for i := 0; i < len(sm.cancels); {
		j := sm.cancels[i]
		if !sm.due(j.spec.cancelAt) {
			i++
			continue
		}
		sm.cancels = slices.Delete(sm.cancels, i, i+1)
		j.cancelled = true
		sm.logf("cancel RunSync j%d", j.spec.idx)
		j.cancel()
		sm.settle()
	}
}

func (sm *sim) doArrivals() {
	n := sm.respawns
	sm.respawns = 0
	if n > 0 {
		for range n {
			sm.arrivals = append(sm.arrivals, sm.g.streamJob(sm.elapsed()))
		}
		sortJobs(sm.arrivals)
	}
	for len(sm.arrivals) > 0 && sm.due(sm.arrivals[0].at) {
		j := sm.arrivals[0]
		sm.arrivals = sm.arrivals[1:]
		sm.arrive(j)
		sm.settle()
	}
}

func (sm *sim) arrive(spec *jobSpec) {
	t := &sm.cfg.types[spec.typ]
	j := &jobRun{spec: spec, typ: t, key: spec.key, sig: string(t.name) + "/" + spec.id, submitted: sm.mock.Now()}
	var opts []fairsched.JobOption
	if spec.group != "" {
		opts = append(opts, fairsched.InGroup(spec.group))
	}
	if spec.ttl > 0 {
		opts = append(opts, fairsched.WithQueueTimeout(spec.ttl))
	}
	if spec.retry != nil {
		opts = append(opts, fairsched.WithRetry(*spec.retry))
		sm.retryTypes[t.name] = true
	}
	if spec.tokens > 0 {
		opts = append(opts, fairsched.WithTokens(spec.tokens))
	}
	if !spec.fg && spec.key != "" {
		opts = append(opts, fairsched.WithFairnessKey(spec.key))
	}
	if spec.supersede {
		opts = append(opts, fairsched.Supersede())
	}
	if spec.lane != "" {
		opts = append(opts, fairsched.WithLabels(map[string]string{"lane": spec.lane}))
	}
	sm.res.Jobs++
	fn := sm.jobFn(j)
	if !spec.fg {
		sm.logf("Submit j%d %s key=%q group=%q supersede=%v", spec.idx, j.sig, j.key, spec.group, spec.supersede)
		err := sm.s.Submit(t.name, spec.id, fn, opts...)
		sm.submitted(j, err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	j.cancel = cancel
	if spec.cancelAt >= 0 {
		sm.cancels = append(sm.cancels, j)
	}
	sm.fgOut++
	sm.logf("RunSync j%d %s key=%q group=%q", spec.idx, j.sig, j.key, spec.group)
	go func() {
		err := sm.s.RunSync(ctx, t.name, spec.id, spec.key, fn, opts...)
		cancel()
		sm.call(func() { sm.returned(j, err) })
	}()
}

// jobFn is the function of job j: each call is one attempt, which blocks
// until the test releases it at its planned end, or its context ends.
func (sm *sim) jobFn(j *jobRun) func(context.Context) error {
	return func(ctx context.Context) error {
		var a *attempt
		sm.call(func() { a = sm.begin(ctx, j, nil) })
		return sm.block(ctx, a)
	}
}

func (sm *sim) perFn(p *perRun) func(context.Context) error {
	return func(ctx context.Context) error {
		var a *attempt
		sm.call(func() { a = sm.begin(ctx, nil, p) })
		return sm.block(ctx, a)
	}
}

func (sm *sim) block(ctx context.Context, a *attempt) error {
	var err error
	out := outCtx
	select {
	case <-a.release:
		out = a.plan.out
		switch out {
		case outFail, outPanic:
			err = fmt.Errorf("%w: %s", errAttempt, a.name())
		case outPermanent:
			err = fairsched.Permanent(fmt.Errorf("%w: %s", errAttempt, a.name()))
		}
	case <-ctx.Done():
		err = ctx.Err()
	}
	preempted := errors.Is(context.Cause(ctx), fairsched.ErrPreempted)
	sm.call(func() {
		sm.end(a, out, err)
		if preempted && err != nil {
			sm.preemptedAttempt(a)
		}
	})
	if out == outPanic {
		panic(err)
	}
	return err
}

// span is a stretch of virtual time; to is zero while it lasts.
type span struct{ from, to time.Time }

// endPause closes group g's pause, if it is paused.
func (sm *sim) endPause(g string) {
	if ps := sm.pauses[g]; sm.paused[g] && len(ps) > 0 {
		ps[len(ps)-1].to = sm.mock.Now()
	}
}

// pausedSince returns how long group g was paused between from and now.
func (sm *sim) pausedSince(g string, from time.Time) time.Duration {
	now := sm.mock.Now()
	var d time.Duration
	for _, p := range sm.pauses[g] {
		lo, hi := p.from, p.to
		if lo.Before(from) {
			lo = from
		}
		if hi.IsZero() {
			hi = now
		}
		if hi.After(lo) {
			d += hi.Sub(lo)
		}
	}
	return d
}
