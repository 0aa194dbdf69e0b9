package machine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/zap"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/records"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// ErrSuperseded answers the waiters of a coalesced run that a Supersede
// replaced.
var ErrSuperseded = errors.New("fairsched: superseded")

// ErrClosed is returned by every call made after Close.
var ErrClosed = errors.New("fairsched: scheduler closed")

// ErrCloseInJob is Close's answer when its context is a job's own (or
// derived from one): Close waits for running jobs, the caller among them,
// so it would never return.
var ErrCloseInJob = errors.New("fairsched: Close called from inside a job of the scheduler, with the job's context: it would wait for itself")

// PanicError is the error of a job whose function panicked.
type PanicError struct {
	Value any    // what the function panicked with
	Stack []byte // the goroutine's stack at the panic
}

func (e *PanicError) Error() string { return fmt.Sprintf("fairsched: job panicked: %v", e.Value) }

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// Config is what the owner goroutine needs besides the core.
type Config struct {
	Clock  clock.Clock
	Logger *zap.Logger
	// Tick is the period of cost-model eviction.
	Tick time.Duration
	// Rand draws the jitter of retry backoffs; nil: seeded from the clock.
	Rand *rand.Rand
	// Store, when not nil, receives the state to keep across restarts on
	// each tick and when the owner stops; State is what it held at start.
	Store Store
	State core.State
	// Jobs are the durable job records the store held at start (Store
	// must be a JobStore); Retention keeps succeeded ones that long.
	Jobs      []core.JobRecord
	Retention time.Duration
	// GrantRecordsAttempt: the durable jobs' handlers count each attempt
	// in the job's stored row themselves (cluster mode, whose grant
	// writes the attempt into the row, where the record's readers take
	// it), so the owner writes nothing when an attempt starts: one write
	// a job fewer, and none to contend with the grant's.
	GrantRecordsAttempt bool
	// OwnerCommits: the owner writes the batches of records itself, in
	// its own write (cluster mode's leader: with the turn's grants, in one
	// transaction): it takes each with TakeBatch and reports it with
	// BatchWritten. Otherwise the store writer commits them.
	OwnerCommits bool
	// StartLocal runs an admitted job that is not started remotely — on
	// a goroutine of the owner's, which reports its end back (Finish). A
	// machine without one ends such a job at once with ErrNoRunner.
	StartLocal func(*messages.Job)
}

// Store keeps a scheduler's state across restarts.
type Store interface {
	Load() (core.State, error)
	Save(core.State) error
}

// Machine is the scheduler without an owner goroutine of its own: the
// core, the durable records' rules, and the attempts, answers, events and
// record batches they cause. Its owner — the actor's goroutine in one
// process, the leader's loop in cluster mode — calls it from one goroutine
// only; every call runs in the owner's turn.
type Machine struct {
	// verdict is the load signal's last good reading's (LoadVerdict).
	verdict atomic.Pointer[LoadVerdict]

	core       *core.Core
	attempts   messages.Attempts       // the attempts' contexts, made in blocks
	refuses    atomic.Bool             // the core may refuse a submission: Submit waits for the verdict
	rand       *rand.Rand              // draws retry jitter
	coalescing map[policy.JobType]bool // the types with JobTypeConfig.Coalesce
	// What the owner keeps of its configuration and its run.
	grantRecords bool            // Config.GrantRecordsAttempt
	spent        []*messages.Job // ended for good this turn: recycled by endTurn
	store        Store           // nil: nothing persisted
	dropped      int             // jobs refused with ErrClosed, for Close's error
	clock        clock.Clock
	// turnNow is the time of the owner's turn, read at its first use
	// (now) and forgotten (zero) when the turn ends or the owner parks.
	turnNow time.Time
	log     *zap.Logger
	tick    time.Duration
	// ticker is the period of eviction and of the state's save (TickC).
	ticker *clock.Ticker
	// startLocal runs an admitted job that is not started remotely
	// (Config.StartLocal).
	startLocal func(*messages.Job)
	unrun      []*messages.Job // admitted with no StartLocal: ended by endTurn

	// saves hands states to the writer goroutine, which closes written
	// when it has returned (store.go).
	saves   chan core.State
	written chan struct{}

	// wake is the one timer, for the earliest deferred job (NextWake);
	// wakeC is its channel, nil (the case off) while nothing is deferred.
	wake   *clock.Timer
	wakeC  <-chan time.Time
	wakeAt time.Time

	// types is the owner's registry, republished after each registration so
	// callers can validate without a round trip.
	types atomic.Pointer[map[policy.JobType]policy.JobTypeConfig]

	// Owner-only state.
	closing, aborted bool
	stopped          bool            // Stop ran: every call is refused
	jobClosers       []chan error    // Close calls from inside jobs, waiting (closeinjob.go)
	nested           []*messages.Job // RunSync calls nested in running jobs, maybe pending (closeinjob.go)
	base             context.Context // background jobs run under it
	cancelBase       context.CancelFunc
	admitted         []*core.Job
	// batching: the owner is taking a batch of submissions and completions
	// (drain); dirty: one of them asked for a dispatch, made once at the
	// batch's end.
	batching, dirty bool
	// subs are the subscribers' channels; lost counts the events dropped
	// because a subscriber's channel was full, once per subscriber that
	// missed one.
	subs messages.Subscribers
	lost uint64
	// dur holds the durable jobs (durable.go); nil until a JobStore or a
	// handler needs it.
	dur *durable
	// remote starts the attempts of the types registered with
	// RegisterRemote (remote.go); nil until one is.
	remote *remote
	// load reads the load signal, nil without one; loadC is its ticker's
	// channel, nil (the cases off) without one (signal.go).
	load  *loadReader
	loadC <-chan time.Time
}

// New builds the machine over c. Its store writer (cfg.Store, when set)
// commits records off the owner's turn and answers on CommittedC; no
// other goroutine runs for it.
func New(c *core.Core, cfg Config) *Machine {
	a := &Machine{
		core:       c,
		clock:      cfg.Clock,
		log:        cfg.Logger,
		tick:       cfg.Tick,
		startLocal: cfg.StartLocal,
	}
	a.base, a.cancelBase = context.WithCancel(context.Background())
	a.refuses.Store(c.Refuses()) // settled by the limits: only ApplyPolicy changes them
	c.SetDecisionLog(a.log.Core().Enabled(zap.InfoLevel))
	a.coalescing = map[policy.JobType]bool{}
	a.store, a.grantRecords = cfg.Store, cfg.GrantRecordsAttempt
	c.RestoreLastRuns(cfg.State.LastRuns)
	a.rand = cfg.Rand
	if a.rand == nil {
		seed := uint64(cfg.Clock.Now().UnixNano())
		a.rand = rand.New(rand.NewPCG(seed, seed>>32|1))
	}
	if st, ok := cfg.Store.(JobStore); ok {
		a.startDurable(st, cfg.Jobs, cfg.Retention)
		a.dur.ownerCommits = cfg.OwnerCommits
	}
	a.publishTypes()
	a.startWriter()
	a.startLoad()
	// The tick is KeyTTL/4, which is 0 for a KeyTTL of 1–3ns (valid: any
	// positive TTL is): a ticker panics on a period that is not positive,
	// and one far below a millisecond would only spin.
	a.ticker = a.clock.Ticker(max(a.tick, time.Millisecond))
	return a
}

// ticked is the turn of the tick: the state saved, idle cost state and
// retained records pruned.
func (a *Machine) ticked() {
	a.save()
	a.pruneRetained(a.now())
	keys, ests := a.core.Evict(a.now())
	a.core.PruneLastRuns(a.now(), 4*max(a.tick, time.Millisecond)) // the key TTL
	if keys+ests > 0 {
		a.log.Debug("evicted idle cost state", zap.Int("keys", keys), zap.Int("estimates", ests))
	}
}

// woken is the turn of the one timer's firing.
func (a *Machine) woken() {
	a.wakeC, a.wake = nil, nil // fired
	if !a.aborted {
		now := a.now()
		a.runSchedules(now)
		a.dispatch(now) // deferred jobs are due, or expiring, or refilled
	}
}

// now returns the time of the owner's turn: the clock is read at the
// turn's first use and that time serves every message the turn handles (up
// to a drained batch's). A read of the clock costs about a quarter of a
// microsecond on a VM — a tenth of a job's whole cost — and a turn lasts
// microseconds, the most any time it stamps (a submission, an admission, a
// job's end) can be early by.
func (a *Machine) now() time.Time {
	if a.turnNow.IsZero() {
		a.turnNow = a.clock.Now()
	}
	return a.turnNow
}

// endTurn is the owner's work after each turn: the batch of records to
// commit, the reports of the jobs that aged, the timer, the closers, and
// last the records of the jobs that ended for good, back to the pool —
// only now, once every report of the turn that may name them (aged jobs,
// decision records) has been made.
func (a *Machine) endTurn() {
	a.turnNow = time.Time{} // the turn's own work reads a fresh time, once
	if a.core.TakeWoken() && !a.aborted {
		// A call of the turn that does not dispatch (a snapshot, a
		// group's resume, a withdrawal…) took time past a deferred job's
		// return: the timer set for it is gone with it, so dispatch now.
		a.dispatch(a.now())
	}
	a.endUnrun()
	a.adoptParked()
	a.flushDurable()
	a.reportAged()
	a.arm()
	a.releaseJobClosers()
	a.dropNestedDeadlock()
	for i, j := range a.spent {
		a.core.Release(&j.Job)
		messages.Recycle(j)
		a.spent[i] = nil
	}
	a.spent = a.spent[:0]
	a.turnNow = time.Time{}
}

func (a *Machine) handle(r messages.Request) {
	switch m := r.(type) {
	case messages.Submit:
		a.submit(m.Job, nil)
	case messages.SubmitChecked:
		a.submit(m.Job, m.Verdict)
	case messages.Withdraw:
		a.withdraw(m)
	case messages.Register:
		err := a.core.RegisterType(m.Type, m.Config)
		if err == nil {
			a.publishTypes()
			if m.Config.Coalesce {
				a.coalescing[m.Type] = true
			}
			a.log.Debug("type registered", zap.String("type", string(m.Type)),
				zap.Int("priority", int(m.Config.Priority)), zap.Int("max_concurrency", m.Config.MaxConcurrency),
				zap.String("conflict_group", string(m.Config.ConflictGroup)), zap.Duration("default_cost", m.Config.DefaultCost))
		}
		m.Reply <- err
	case messages.GroupOp:
		now := a.now()
		var err error
		switch m.Op {
		case messages.SetGroupWeight:
			err = a.core.SetGroupWeight(now, m.Group, m.Weight)
		case messages.ResetGroupWeights:
			err = a.core.ResetGroupWeights(now)
		case messages.PauseGroup:
			err = a.core.PauseGroup(now, m.Group)
		case messages.ResumeGroup:
			err = a.core.ResumeGroup(now, m.Group)
		}
		if err == nil {
			a.log.Debug("group changed", zap.String("group", m.Group), zap.Uint8("op", uint8(m.Op)), zap.Int("weight", m.Weight))
			if !a.aborted {
				a.dispatch(now) // a resumed group, or a larger share, may run now
			}
		}
		m.Reply <- err
	case messages.ApplyPolicy:
		m.Reply <- a.applyPolicy(m.Policy)
	case messages.AddPeriodic:
		a.addPeriodic(m)
	case messages.StopPeriodic:
		a.stopPeriodic(m)
	case messages.WorkerOp:
		m.Reply <- a.worker(m)
	case messages.SetKeyWeight:
		err := a.core.SetKeyWeight(m.Key, m.Weight)
		if err == nil {
			a.log.Debug("key weight changed", zap.String("key", m.Key), zap.Float64("weight", m.Weight))
		}
		m.Reply <- err // it applies from the next admission: nothing to dispatch
	case messages.Cancel:
		a.cancel(m)
	case messages.Enqueue:
		a.enqueue(m)
	case messages.SubmitMany:
		a.submitMany(m)
	case messages.EnqueueMany:
		for i, j := range m.Jobs { // their records go to the writer together: one commit
			a.enqueue(messages.Enqueue{Job: j, Reply: m.Replies[i]})
		}
	case messages.Adopt:
		a.adopt(m)
	case messages.ReplacePending:
		a.replacePending(m)
	case messages.RegisterHandler:
		a.registerHandler(m)
	case messages.DeadOp:
		a.deadOp(m)
	case messages.SnapshotRequest:
		if !done(m.Done) { // else the caller left: no copy for nobody
			s := a.core.SnapshotRows(a.now(), m.Rows)
			a.waitingRows(&s, m.Rows)
			a.reportAged() // what the snapshot saw age is reported before it is seen
			s.EventsLost = a.lost
			m.Reply <- s
		}
	case messages.ExplainRequest:
		a.explain(m)
	case messages.StartCheck:
		m.Job.SetStartBy(a.now().Add(m.Within))
		err := a.core.CheckStart(a.now(), m.Job)
		a.logRefusal(m.Job, err)
		m.Reply <- err
	case messages.Subscribe:
		a.subs = append(a.subs, m.Events)
		m.Reply <- struct{}{}
	case messages.Unsubscribe:
		a.subs = a.subs.Remove(m.Events)
		m.Reply <- struct{}{}
	case messages.Close:
		a.closing = true
		if m.InJob != nil {
			a.jobClosers = append(a.jobClosers, m.InJob)
		}
		a.stopSchedules() // no new occurrence; one under way drains
		if !a.aborted {
			now := a.now()
			a.withdrawDurable(now) // they stay in the store
			a.core.ResumeAll(now)  // pending work drains, paused groups' too
			// No worker can register from now on: jobs that wait for a
			// worker type no slot takes would wait for ever.
			for _, cj := range a.core.WithdrawWorkerless(now) {
				a.refuse(messages.Of(cj), ErrClosed)
			}
			a.dispatch(now)
		}
		a.log.Debug("closing", zap.Int("pending", a.core.Pending()), zap.Int("running", a.core.RunningCount()))
	case messages.Abort:
		a.abort()
	}
}

func (a *Machine) publishTypes() {
	t := a.core.Types()
	a.types.Store(&t)
}

// submit queues j; verdict, when not nil, receives the owner's verdict:
// nil once it is queued, or why it was refused.
func (a *Machine) submit(j *messages.Job, verdict chan error) {
	refuse := func(err error) {
		if verdict != nil { // the caller waits: it gets the error
			verdict <- err
			return
		}
		a.refuse(j, err)
	}
	if a.aborted {
		refuse(ErrClosed)
		return
	}
	if a.dirty && (a.refuses.Load() || !j.StartBy().IsZero()) {
		// A verdict that counts the queue must not depend on how the owner
		// batched: the earlier admissions of this batch are dispatched
		// first, as if each had been handled alone.
		a.flush()
	}
	now := a.now()
	if a.coalescing[j.Type] { // a lookup in a map that is empty unless a type coalesces
		a.coalesce(now, j, verdict)
		return
	}
	if j.Superseding() && !j.Foreground() {
		a.supersede(now, j)
	}
	if err := a.core.Submit(now, &j.Job); err != nil {
		a.logRefusal(&j.Job, err)
		refuse(err)
		return
	}
	if verdict != nil {
		verdict <- nil
	}
	a.queued(now, j)
	if j.Foreground() && j.Parent != nil {
		if len(a.nested) == cap(a.nested) {
			a.nested = a.pendingNested() // amortised: what left is dropped before the slice grows
		}
		a.nested = append(a.nested, j)
	}
	a.dispatch(now)
}

// queued reports job j, which has just entered the queue.
func (a *Machine) queued(now time.Time, j *messages.Job) {
	if len(a.subs) > 0 {
		attempt := int(j.Runs) + 1
		if j.Durable() {
			attempt = j.Record.Attempt + 1 // its interrupted attempts count here, not in Runs
		}
		a.emit(messages.JobQueued{Time: now, Type: j.Type, ID: j.ID, FairnessKey: j.Key, Group: j.Group,
			Foreground: j.Foreground(), Attempt: attempt})
	}
}

// jobRef names a (type, id).
type jobRef struct {
	t  policy.JobType
	id string
}

// logRefusal logs the decision record of a submission the core refused
// with err and reports it (JobRefused): a pending bound's refusal or
// deadline-aware admission's. Other errors (an unknown type) are the
// caller's alone.
func (a *Machine) logRefusal(j *core.Job, err error) {
	var (
		re   *policy.RefusalError
		late *policy.LateStartError
	)
	var reason policy.Reason
	switch {
	case errors.As(err, &re):
		a.logDecisions(zap.Int("limit", re.Limit))
		reason = re.Reason
	case errors.As(err, &late):
		a.logDecisions(zap.Time("estimate", late.Estimate), zap.Time("deadline", late.Deadline))
		reason = policy.ReasonStartAfterDeadline
	default:
		return
	}
	if len(a.subs) > 0 {
		a.emit(messages.JobRefused{Time: a.now(), Type: j.Type, ID: j.ID, FairnessKey: j.Key, Reason: reason})
	}
}

// refuse answers a job that will never run.
func (a *Machine) refuse(j *messages.Job, err error) {
	if j.Durable() && errors.Is(err, ErrClosed) {
		a.ended(j, err) // it stays in the store: not dropped
		return
	}
	a.ended(j, err)
	if errors.Is(err, ErrClosed) {
		a.dropped++
		if len(a.subs) > 0 {
			a.emit(messages.JobDropped{Time: a.now(), Type: j.Type, ID: j.ID, FairnessKey: j.Key})
		}
	}
	if j.Foreground() {
		j.Answer(err)
		return
	}
	a.log.Error("background job dropped", zap.String("type", string(j.Type)), zap.String("id", j.ID), zap.Error(err))
}

func (a *Machine) dispatch(now time.Time) {
	if a.batching {
		a.dirty = true // once, at the end of the batch (drain)
		return
	}
	// Report what moved before the admissions it explains: allocation
	// changes of the last event, jobs that aged up to now.
	a.core.Advance(now)
	a.reportAged()
	a.admitted = a.core.Dispatch(now, a.admitted[:0])
	a.preemptChosen(now)
	a.reportDecisions(now)
	for _, cj := range a.admitted {
		if len(a.subs) > 0 {
			a.emit(messages.JobAdmitted{
				Time: now, Type: cj.Type, ID: cj.ID, FairnessKey: cj.Key,
				BasePriority: cj.Priority(), EffectivePriority: cj.Effective, Group: cj.Group,
				Waited: a.core.Waited(cj, now), Cost: cj.Cost, KeyCost: cj.KeyCost,
			})
		}
		j := messages.Of(cj)
		a.attempt(j)
		if j.Foreground() {
			j.Answer(nil) // its caller runs it
		} else if !j.Durable() || a.startingDurable(j) { // else it starts once its start commits
			a.startBackground(j)
		}
	}
	clear(a.admitted)
	a.expireWaiters(now)
}

func (a *Machine) finish(d messages.Done) {
	if d.Remote != nil && !a.remoteEnded(d) {
		return // the owner ended that attempt itself
	}
	now := a.now()
	j := d.Job
	j.SetRun(nil) // the attempt is over (its runner ended its context)
	done := a.core.Finish(now, &j.Job)
	if done.Preempted && a.preempted(now, j, d) {
		return
	}
	if d.Err == EndWritten {
		d.Err = nil
		if j.Durable() {
			a.endWritten(j)
		}
	}
	if j.Durable() && d.Err != nil {
		// An interruption is no failure: the core's rule (NextStep) runs
		// the job again whatever its retry policy, up to MaxInterruptions.
		// Its Draw is left out: a retry draws its jitter once, below.
		end := core.AttemptEnd{Err: d.Err, Panicked: d.Panicked, Retry: j.Retry(), Unwanted: a.unwanted(j), Durable: true,
			Stopping: a.aborted, Interruptions: j.Record.Interruptions, Unstarted: errors.Is(d.Err, errStartUnwritten)}
		switch step, delay := core.NextStep(end); {
		case step == core.StepKeep:
			// Interrupted by a Close that gave up: it goes back to pending
			// in the store and runs after the restart.
			a.interruptedDurable(j)
			if len(a.subs) > 0 {
				a.emit(messages.JobFailed{Time: now, Type: j.Type, ID: j.ID, FairnessKey: j.Key,
					Elapsed: done.Elapsed, Estimate: done.Estimate, Err: d.Err})
			}
			return
		case step == core.StepRerun, step == core.StepRequeue:
			a.interruptedAgain(now, j, d.Err, step == core.StepRerun, delay)
			return
		case step == core.StepFail && end.Interrupted(): // past MaxInterruptions
			d.Err = records.InterruptedTooOften(j.Record, d.Err)
		}
	}
	if j.Runs < math.MaxInt32 { // int32: stops, never wraps
		j.Runs++
	}
	if d.Err != nil && j.Retry().Retries() {
		if a.retry(now, j, d) {
			return
		}
		final := fmt.Errorf("fairsched: %s/%s failed after %d attempt(s): %w", j.Type, j.ID, j.Runs, d.Err)
		if j.Foreground() { // the caller waits for the verdict: the last error
			j.Answer(final)
		}
		d.Err = final
	}
	a.ended(j, d.Err)
	if ce := a.log.Check(zap.DebugLevel, "complete"); ce != nil {
		ce.Write(zap.String("type", string(j.Type)), zap.String("id", j.ID), zap.String("key", j.Key),
			zap.Duration("elapsed", done.Elapsed), zap.Duration("estimate", done.Estimate), zap.Error(d.Err))
	}
	if len(a.subs) > 0 {
		if d.Err == nil {
			a.emit(messages.JobCompleted{Time: now, Type: j.Type, ID: j.ID, FairnessKey: j.Key,
				Elapsed: done.Elapsed, Estimate: done.Estimate})
		} else {
			a.emit(messages.JobFailed{Time: now, Type: j.Type, ID: j.ID, FairnessKey: j.Key,
				Elapsed: done.Elapsed, Estimate: done.Estimate, Err: d.Err, Panicked: d.Panicked})
		}
	}
	if d.Err != nil && !j.Foreground() {
		fields := []zap.Field{zap.String("type", string(j.Type)), zap.String("id", j.ID), zap.Error(d.Err)}
		if p := (*PanicError)(nil); errors.As(d.Err, &p) {
			fields = append(fields, zap.ByteString("stack", p.Stack))
		}
		a.log.Error("background job failed", fields...)
	}
	a.recycle(j)
	if !a.aborted {
		a.dispatch(now)
	}
}

// recycle gives the record of job j, which has ended for good, back to the
// pool when nothing can reach it: a pooled Submit or RunSync job that is no
// durable record, coalesced run or periodic occurrence, whose RunSync
// caller has returned (no retry: it waits for no further answer), and
// which no nested RunSync may name as its parent.
func (a *Machine) recycle(j *messages.Job) {
	if !j.Pooled() || j.Extra != nil && (j.Record != nil || j.Coalescing || j.OnEnd != nil || j.Parent != nil) ||
		j.Foreground() && j.Retry().Retries() {
		return
	}
	if len(a.nested) > 0 {
		a.nested = a.pendingNested() // those admitted since name their parent no more
		if len(a.nested) > 0 {
			return
		}
	}
	a.spent = append(a.spent, j) // recycled at the end of the turn (endTurn)
}

// reportAged logs and emits the jobs whose effective priority rose, and the
// groups whose allocation changed, while the core handled the last message.
func (a *Machine) reportAged() {
	changes := a.core.TakeAllocationChanges()
	aged := a.core.TakeAged()
	if len(aged)+len(changes) == 0 {
		return
	}
	now := a.now()
	for _, ch := range changes {
		if ce := a.log.Check(zap.DebugLevel, "allocation"); ce != nil {
			ce.Write(zap.String("group", ch.Group), zap.Int("previous", ch.Previous), zap.Int("slots", ch.New),
				zap.String("reason", ch.Reason))
		}
		if len(a.subs) > 0 {
			a.emit(messages.GroupAllocationChanged{Time: now, Group: ch.Group, PreviousSlots: ch.Previous,
				NewSlots: ch.New, Reason: messages.AllocationReason(ch.Reason)})
		}
	}
	for _, ag := range aged { // its copies: the job may have ended and its record been reused
		if ce := a.log.Check(zap.DebugLevel, "aged"); ce != nil {
			ce.Write(zap.String("type", string(ag.Type)), zap.String("id", ag.ID), zap.String("key", ag.Key),
				zap.Int("priority", int(ag.Priority)), zap.Int("effective_priority", int(ag.Effective)),
				zap.Duration("waited", now.Sub(ag.Submitted)))
		}
		if len(a.subs) > 0 {
			a.emit(messages.JobAged{Time: now, Type: ag.Type, ID: ag.ID, FairnessKey: ag.Key,
				BasePriority: ag.Priority, EffectivePriority: ag.Effective, Waited: now.Sub(ag.Submitted)})
		}
	}
}

// emit hands e to every subscriber whose channel has room and counts it
// lost for the others: the owner never waits for a subscriber.
func (a *Machine) emit(e messages.Event) {
	a.lost += a.subs.Deliver(e)
}

// closeSubscribers closes every subscriber's channel: the owner is stopping
// and will send nothing more.
func (a *Machine) closeSubscribers() {
	a.subs.Close()
	a.subs = nil
}

func (a *Machine) withdraw(m messages.Withdraw) {
	if a.core.Leader(&m.Job.Job) != nil { // a waiter of a coalesced run
		a.leave(a.now(), m.Job, m.Err)
		return
	}
	if !a.core.Withdraw(a.now(), &m.Job.Job) {
		return // admitted already: its context is cancelled and it runs to its end
	}
	a.log.Debug("withdrawn", zap.String("type", string(m.Job.Type)), zap.String("id", m.Job.ID),
		zap.String("key", m.Job.Key), zap.Error(m.Err))
	a.withdrawn(a.now(), m.Job, m.Err)
	m.Job.Answer(m.Err)
	a.redispatch(a.now())
}

// redispatch follows the withdrawal of a pending job: its leaving may move
// group shares or let an idle tier lend its reservation, so what it held
// back may start now.
func (a *Machine) redispatch(now time.Time) {
	if !a.aborted {
		a.dispatch(now)
	}
}

// abort ends a Close whose context expired: running jobs are cancelled and
// pending jobs refused; the owner then waits for the running jobs to return.
func (a *Machine) abort() {
	if a.aborted {
		return
	}
	a.aborted, a.closing = true, true
	a.stopSchedules()
	a.cancelBase()
	var remote []*messages.Job
	for _, cj := range a.core.Running() {
		j := messages.Of(cj)
		if j.Extra != nil && j.Cancel != nil { // a coalesced run's own context
			j.Cancel()
		}
		j.Run().Cancel(context.Canceled)
		if a.remote != nil {
			remote = append(remote, j)
		}
	}
	for _, j := range remote { // ended after the walk: finish changes what runs
		a.endRemoteNow(j, context.Canceled)
	}
	a.dropRemoteOps()
	dropped := a.core.WithdrawAll(a.now())
	for _, cj := range dropped {
		a.refuse(messages.Of(cj), ErrClosed)
	}
	a.log.Debug("close deadline passed", zap.Int("dropped", len(dropped)), zap.Int("running", a.core.RunningCount()))
}

// arm sets the one timer for the earliest deferred job, if it changed.
func (a *Machine) arm() {
	at, ok := a.core.NextWake()
	if next, ok2 := a.core.NextOccurrence(); ok2 && (!ok || next.Before(at)) {
		at, ok = next, true
	}
	switch {
	case !ok:
		a.disarm()
	case a.wake == nil || !at.Equal(a.wakeAt):
		a.disarm()
		a.wake, a.wakeAt = a.clock.Timer(at.Sub(a.clock.Now())), at
		a.wakeC = a.wake.C
	}
}

func (a *Machine) disarm() {
	if a.wake != nil {
		a.wake.Stop()
		a.wake, a.wakeC = nil, nil
	}
}

// reportDecisions logs the core's decision records of the last dispatch,
// and answers and reports the admission policy's denials and the expired
// jobs.
func (a *Machine) reportDecisions(now time.Time) {
	a.logDecisions()
	for _, d := range a.core.TakeDenied() {
		j := messages.Of(d.Job)
		if len(a.subs) > 0 && d.Shed {
			a.emit(messages.JobRefused{Time: now, Type: j.Type, ID: j.ID, FairnessKey: j.Key, Reason: policy.ReasonShed})
		} else if len(a.subs) > 0 {
			a.emit(messages.JobDenied{Time: now, Type: j.Type, ID: j.ID, FairnessKey: j.Key, Err: d.Err, Panicked: d.Panicked})
		}
		a.ended(j, d.Err)
		if j.Foreground() {
			j.Answer(d.Err)
		} else {
			a.log.Error("background job denied", zap.Bool("shed", d.Shed), zap.String("type", string(j.Type)), zap.String("id", j.ID), zap.Error(d.Err))
		}
	}
	for _, cj := range a.core.TakeExpired() {
		j := messages.Of(cj)
		waited := a.core.Waited(cj, now)
		err := fmt.Errorf("%w: %s/%s waited %v", policy.ErrExpired, j.Type, j.ID, waited)
		if j.Runs > 0 && j.Extra != nil && j.LastErr != nil {
			// It ran: its queue timeout ran out in a retry's backoff. Its
			// caller is told how its last attempt failed, not that it
			// never ran (ErrExpired).
			err = fmt.Errorf("fairsched: %s/%s failed after %d attempt(s), its queue timeout ran out before the next: %w", j.Type, j.ID, j.Runs, j.LastErr)
			if len(a.subs) > 0 {
				a.emit(messages.JobFailed{Time: now, Type: j.Type, ID: j.ID, FairnessKey: j.Key, Err: err})
			}
			if !j.Foreground() {
				a.log.Error("job failed", zap.String("type", string(j.Type)), zap.String("id", j.ID), zap.Error(err))
			}
			a.ended(j, err)
			if j.Foreground() {
				j.Answer(err)
			}
			continue
		}
		if len(a.subs) > 0 {
			a.emit(messages.JobExpired{Time: now, Type: j.Type, ID: j.ID, FairnessKey: j.Key, Waited: waited})
		}
		a.ended(j, err)
		if j.Foreground() {
			j.Answer(err)
		}
	}
	a.core.TakeDeferred() // logged as decision records
}

// logDecisions logs the core's decision records since the last call, in
// order, each with spec 5's fields — tenant, tier, queue_depth, inflight,
// decision, reason_code, retry_delay_sec (where a delay applies), attempt —
// and the job's type and id; extra is added to every one. Admissions are
// logged at debug level with what they charged, the others at info level.
func (a *Machine) logDecisions(extra ...zap.Field) {
	for _, d := range a.core.TakeDecisions() {
		level, msg := zap.InfoLevel, decisionMessage(d)
		if d.Decision == core.DecisionAdmit {
			level = zap.DebugLevel
		}
		ce := a.log.Check(level, msg)
		if ce == nil {
			continue
		}
		j := d.Job
		fields := []zap.Field{zap.String("tenant", d.Tenant), zap.Int("tier", int(d.Tier)),
			zap.Int("queue_depth", d.QueueDepth), zap.Int("inflight", d.Inflight),
			zap.String("decision", string(d.Decision)), zap.String("reason_code", d.ReasonCode)}
		if d.RetryDelay > 0 {
			fields = append(fields, zap.Float64("retry_delay_sec", d.RetryDelay.Seconds()))
		}
		fields = append(fields, zap.Int("attempt", d.Attempt), zap.String("type", string(j.Type)), zap.String("id", j.ID))
		switch {
		case d.Decision == core.DecisionAdmit:
			// Besides: tier_running and running after the whole dispatch.
			fields = append(fields, zap.String("key", j.Key), zap.String("group", j.Group), zap.Int("priority", int(j.Priority())),
				zap.Int("effective_priority", int(j.Effective)), zap.Duration("cost", j.Cost), zap.Duration("key_cost", j.KeyCost),
				zap.Duration("waited", a.core.Waited(j, d.Time)), zap.Int("tier_running", a.core.TierRunning(j.Priority())),
				zap.Int("running", a.core.RunningCount()))
			if w := j.Worker; w != nil {
				fields = append(fields, zap.String("worker", w.Worker), zap.Int("slot", w.Index))
			}
		case d.ReasonCode == core.CodeExpired:
			fields = append(fields, zap.Duration("waited", a.core.Waited(j, d.Time)))
		}
		ce.Write(append(fields, extra...)...)
	}
}

// decisionMessage is the log message of a decision record.
func decisionMessage(d core.Decision) string {
	switch {
	case d.Decision == core.DecisionAdmit:
		return "admit"
	case d.Decision == core.DecisionRefuse:
		return "job refused"
	case d.ReasonCode == core.CodeExpired:
		return "job expired"
	case d.ReasonCode == core.CodeSuperseded:
		return "job superseded"
	case d.ReasonCode == core.CodeShed:
		return "job shed"
	case d.ReasonCode == core.CodePreempted:
		return preemptMessage(d)
	case d.Decision == core.DecisionDeny:
		return "job denied"
	case d.ReasonCode == string(policy.ReasonBackoff):
		return "job retried"
	}
	return "job deferred"
}

// unwanted reports whether nobody wants another attempt of j: its waiter
// has left (a RunSync caller's context, or a coalesced run's, cancelled
// once no waiter and no Submit wants it), or Cancel cancelled it.
func (a *Machine) unwanted(j *messages.Job) bool {
	return j.Cancelled() || j.Extra != nil && j.Ctx != nil && j.Ctx.Err() != nil
}

// retry sends a failed attempt of j back to the queue for its backoff, if
// its policy allows one more: not after a panic or a Permanent error, not
// past MaxAttempts, not once Close gave up on pending work.
func (a *Machine) retry(now time.Time, j *messages.Job, d messages.Done) bool {
	// Its waiter has left, Cancel cancelled it, or Close gave up: nobody
	// wants another attempt.
	unwanted := a.unwanted(j)
	if !j.Durable() {
		unwanted = unwanted || a.aborted // a durable job wants its retry: after the restart
	}
	step, delay := core.NextStep(core.AttemptEnd{Err: d.Err, Panicked: d.Panicked, Runs: int(j.Runs), Retry: j.Retry(),
		Unwanted: unwanted, Draw: a.rand.Float64})
	if step != core.StepRetry {
		return false
	}
	if j.Durable() {
		a.retryingDurable(j, d.Err)
		if a.closing { // durable work does not start again before Close: it waits in the store
			delete(a.dur.jobs, durableRef(j))
			j.Record = nil
			return true
		}
	}
	j.More().LastErr = d.Err // a retry is rare enough to cost an Extra
	a.core.Retry(now, &j.Job, delay)
	a.logDecisions(zap.Int("runs", int(j.Runs)), zap.Error(d.Err))
	if len(a.subs) > 0 {
		a.emit(messages.JobFailed{Time: now, Type: j.Type, ID: j.ID, FairnessKey: j.Key, Err: d.Err, Retrying: true})
	}
	a.queued(now, j)
	a.dispatch(now)
	return true
}
