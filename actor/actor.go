// Package actor runs the scheduler's owner goroutine: the one goroutine that
// holds the core's state. It turns messages into core calls, starts the jobs
// the core admits and reports their ends back. All decisions are the core's.
//
// Every public call is a select of three: hand the message over, give up
// when the caller's context ends, or learn that the owner has stopped.
package actor

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/zap"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// ErrClosed is returned by every call made after Close.
var ErrClosed = errors.New("fairsched: scheduler closed")

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
}

// Actor is the owner goroutine and its inbox.
type Actor struct {
	core  *core.Core
	clock clock.Clock
	log   *zap.Logger
	tick  time.Duration

	submitc   chan messages.Submit
	donec     chan messages.Done
	withdrawc chan messages.Withdraw
	registerc chan messages.Register
	snapshotc chan messages.SnapshotRequest
	closec    chan struct{}
	abortc    chan struct{}
	stopped   chan struct{}

	// closed turns new calls away before they reach the owner.
	closed atomic.Bool
	// types is the owner's registry, republished after each registration so
	// callers can validate without a round trip.
	types atomic.Pointer[map[policy.JobType]policy.JobTypeConfig]

	// Owner-only state.
	closing, aborted bool
	base             context.Context // background jobs run under it
	cancelBase       context.CancelFunc
	admitted         []*core.Job
}

// Start launches the owner goroutine over c.
func Start(c *core.Core, cfg Config) *Actor {
	a := &Actor{
		core:      c,
		clock:     cfg.Clock,
		log:       cfg.Logger,
		tick:      cfg.Tick,
		submitc:   make(chan messages.Submit),
		donec:     make(chan messages.Done),
		withdrawc: make(chan messages.Withdraw),
		registerc: make(chan messages.Register),
		snapshotc: make(chan messages.SnapshotRequest),
		closec:    make(chan struct{}),
		abortc:    make(chan struct{}),
		stopped:   make(chan struct{}),
	}
	a.base, a.cancelBase = context.WithCancel(context.Background())
	a.publishTypes()
	go a.run()
	return a
}

func (a *Actor) run() {
	defer close(a.stopped)
	defer a.cancelBase()
	ticker := a.clock.Ticker(a.tick)
	defer ticker.Stop()
	for !(a.closing && a.core.Idle()) {
		select {
		case m := <-a.submitc:
			a.submit(m)
		case m := <-a.donec:
			a.finish(m)
		case m := <-a.withdrawc:
			a.withdraw(m)
		case m := <-a.registerc:
			err := a.core.RegisterType(m.Type, m.Config)
			if err == nil {
				a.publishTypes()
				a.log.Debug("type registered", zap.String("type", string(m.Type)),
					zap.Int("priority", int(m.Config.Priority)), zap.Int("max_concurrency", m.Config.MaxConcurrency),
					zap.String("conflict_group", string(m.Config.ConflictGroup)), zap.Duration("default_cost", m.Config.DefaultCost))
			}
			m.Reply <- err
		case m := <-a.snapshotc:
			m.Reply <- a.core.Snapshot(a.clock.Now())
		case <-a.closec:
			a.closing = true
			a.log.Debug("closing", zap.Int("pending", a.core.Pending()), zap.Int("running", a.core.RunningCount()))
		case <-a.abortc:
			a.abort()
		case <-ticker.C:
			keys, ests := a.core.Evict(a.clock.Now())
			if keys+ests > 0 {
				a.log.Debug("evicted idle cost state", zap.Int("keys", keys), zap.Int("estimates", ests))
			}
		}
	}
}

func (a *Actor) publishTypes() {
	t := a.core.Types()
	a.types.Store(&t)
}

func (a *Actor) submit(m messages.Submit) {
	if a.aborted {
		a.refuse(m.Job, ErrClosed)
		return
	}
	now := a.clock.Now()
	if err := a.core.Submit(now, m.Job); err != nil {
		a.refuse(m.Job, err)
		return
	}
	a.dispatch(now)
}

// refuse answers a job that will never run.
func (a *Actor) refuse(j *core.Job, err error) {
	if t := messages.TaskOf(j); t.Reply != nil {
		t.Reply <- err
		return
	}
	a.log.Error("background job dropped", zap.String("type", string(j.Type)), zap.String("id", j.ID), zap.Error(err))
}

func (a *Actor) dispatch(now time.Time) {
	a.admitted = a.core.Dispatch(now, a.admitted[:0])
	for _, j := range a.admitted {
		if ce := a.log.Check(zap.DebugLevel, "admit"); ce != nil {
			ce.Write(zap.String("type", string(j.Type)), zap.String("id", j.ID), zap.String("key", j.Key),
				zap.Int("priority", int(j.Priority)), zap.Duration("cost", j.Cost), zap.Duration("key_cost", j.KeyCost),
				zap.Duration("waited", now.Sub(j.Submitted)), zap.Int("tier_running", a.core.TierRunning(j.Priority)),
				zap.Int("running", a.core.RunningCount()))
		}
		a.start(j)
	}
	clear(a.admitted)
}

func (a *Actor) start(j *core.Job) {
	t := messages.TaskOf(j)
	ctx := a.base
	if t.Ctx != nil {
		ctx, t.Cancel = context.WithCancel(t.Ctx)
	}
	go func() {
		err := call(ctx, t.Fn)
		a.donec <- messages.Done{Job: j, Err: err}
	}()
}

// call runs fn, turning a panic into a *PanicError.
func call(ctx context.Context, fn func(context.Context) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return fn(ctx)
}

func (a *Actor) finish(m messages.Done) {
	now := a.clock.Now()
	j := m.Job
	done := a.core.Finish(now, j)
	t := messages.TaskOf(j)
	if t.Cancel != nil {
		t.Cancel()
	}
	if ce := a.log.Check(zap.DebugLevel, "complete"); ce != nil {
		ce.Write(zap.String("type", string(j.Type)), zap.String("id", j.ID), zap.String("key", j.Key),
			zap.Duration("elapsed", done.Elapsed), zap.Duration("estimate", done.Estimate), zap.Error(m.Err))
	}
	if t.Reply != nil {
		t.Reply <- m.Err
	} else if m.Err != nil {
		fields := []zap.Field{zap.String("type", string(j.Type)), zap.String("id", j.ID), zap.Error(m.Err)}
		if p := (*PanicError)(nil); errors.As(m.Err, &p) {
			fields = append(fields, zap.ByteString("stack", p.Stack))
		}
		a.log.Error("background job failed", fields...)
	}
	if !a.aborted {
		a.dispatch(now)
	}
}

func (a *Actor) withdraw(m messages.Withdraw) {
	if !a.core.Withdraw(a.clock.Now(), m.Job) {
		return // running: its context is cancelled and Done will answer
	}
	a.log.Debug("withdrawn", zap.String("type", string(m.Job.Type)), zap.String("id", m.Job.ID),
		zap.String("key", m.Job.Key), zap.Error(m.Err))
	messages.TaskOf(m.Job).Reply <- m.Err
}

// abort ends a Close whose context expired: running jobs are cancelled and
// pending jobs refused; the owner then waits for the running jobs to return.
func (a *Actor) abort() {
	if a.aborted {
		return
	}
	a.aborted, a.closing = true, true
	a.cancelBase()
	for _, j := range a.core.Running() {
		if c := messages.TaskOf(j).Cancel; c != nil {
			c()
		}
	}
	dropped := a.core.WithdrawAll(a.clock.Now())
	for _, j := range dropped {
		a.refuse(j, ErrClosed)
	}
	a.log.Debug("close deadline passed", zap.Int("dropped", len(dropped)), zap.Int("running", a.core.RunningCount()))
}
