// Package actor is the scheduler's owner goroutine in one process: it
// holds the machine (core/machine: the core, the durable records' rules and
// all they cause), turns its callers' calls into messages the machine
// takes in its turns, runs the jobs the machine admits on runner
// goroutines, and hands their ends back. All decisions are the core's;
// cluster mode's leader owns the same machine in its own loop.
//
// Programs use the root package, github.com/fairsched/fairsched: its
// Scheduler drives this owner, and its names for the machine's errors and
// store types are the ones to use.
//
// Every public call hands its message over, gives up when the caller's
// context ends, or learns that the owner has stopped (ErrClosed). Requests
// go through a buffered channel, so a caller rarely waits for the owner; an
// in-flight count makes sure the owner takes every request that made it in
// before it stops.
package actor

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/workers"
)

// doneBuffer lets this many jobs report their end, and requestBuffer this
// many callers hand over a request, without waiting for the owner.
const (
	doneBuffer    = 256
	requestBuffer = 256
)

// Actor is the owner goroutine, its inbox and its runners.
type Actor struct {
	m *machine.Machine

	requests chan messages.Request
	done     chan messages.Done
	stopped  chan struct{}

	// closed turns new calls away before they reach the owner.
	closed atomic.Bool
	// inflight counts requests between a caller's decision to send and the
	// owner's receipt; exiting is set by the owner before it stops. A caller
	// raises inflight before it looks at exiting, and the owner sets exiting
	// before it reads inflight, so the owner never stops with a request on
	// its way: none is left in the buffer.
	inflight      atomic.Int64
	exiting       atomic.Bool
	dropsReported atomic.Bool // the first Close reports the dropped jobs

	// work hands background jobs to parked runner goroutines (runners.go).
	work    chan *messages.Job
	runners sync.WaitGroup
	idle    atomic.Int32
}

// Start launches the owner goroutine over c.
func Start(c *core.Core, cfg machine.Config) *Actor {
	a := newActor(c, cfg)
	go a.run()
	return a
}

// newActor builds the owner over c, not started.
func newActor(c *core.Core, cfg machine.Config) *Actor {
	a := &Actor{
		requests: make(chan messages.Request, requestBuffer),
		done:     make(chan messages.Done, doneBuffer),
		stopped:  make(chan struct{}),
		work:     make(chan *messages.Job),
	}
	cfg.StartLocal = a.startBackground
	a.m = machine.New(c, cfg)
	return a
}

// yieldsBeforePark: how many times the owner yields its processor, looking
// for work after each, before it parks. A slot's cycle is a chain of
// hand-overs (admission → caller → completion → owner → admission); a
// parked owner adds a wake-up to each link, and the completion it waits
// for is often sent while the callers it just woke run. Yielding first
// lets those run and takes their completions without parking: RunSync with
// 64 callers at cap 4 went from 2.1–2.2 to 1.5–1.6 µs a call. Two yields
// took as much as four or eight; the owner parks after them, so an idle
// scheduler costs nothing.
const yieldsBeforePark = 2

func (a *Actor) run() {
	m := a.m
	defer close(a.stopped)
	defer a.stopRunners() // after the last job's end: every runner is parked
	defer m.Shutdown()    // subscribers closed, the final state saved
	defer a.stop()
	defer m.StopTimers()
	for !m.Drained() {
		// While work is waiting, take it with single-case receives, which
		// cost far less than a select over every channel (the ticker's
		// included), one of each kind in turn so neither starves the other;
		// the full select runs only when the owner is about to park.
		took := a.drain()
		select {
		case r := <-m.CommittedC():
			m.Committed(r)
			took = true
		default:
		}
		if m.PollLoad() {
			took = true
		}
		if took {
			m.EndTurn()
			continue
		}
		for range yieldsBeforePark {
			runtime.Gosched()
			if took = a.drain(); took {
				break
			}
		}
		if took {
			m.EndTurn()
			continue
		}
		m.Park() // the next message reads the clock again
		select {
		case r := <-a.requests:
			a.receive(r)
			m.EndTurn()
		case d := <-a.done:
			m.Finish(d)
			m.EndTurn()
		case r := <-m.CommittedC():
			m.Committed(r)
		case <-m.TickC():
			m.Tick()
		case <-m.LoadC():
			m.ReadLoad()
		case <-m.WakeC():
			m.Wake()
		}
	}
}

// receive hands request r, taken from the inbox, to the machine.
func (a *Actor) receive(r messages.Request) {
	a.inflight.Add(-1)
	a.m.Receive(r)
}

// stop is the owner's last step: it turns new requests away and answers the
// ones already on their way. A submission among them raced Close and lost:
// it is refused with ErrClosed like any call after Close.
func (a *Actor) stop() {
	a.exiting.Store(true)
	a.m.RefuseAll() // refuse, do not queue
	for a.inflight.Load() > 0 {
		select {
		case r := <-a.requests:
			a.receive(r)
		default:
			runtime.Gosched() // a caller is between its count and its send
		}
	}
}

// errExited is the error of a job whose function ended its goroutine with
// runtime.Goexit instead of returning.
var errExited = errors.New("fairsched: job function exited its goroutine without returning")

// execute runs an admitted job's function in the calling goroutine — the
// RunSync caller's, or a fresh one for background work — turning a panic
// into a *PanicError, and reports the end to the owner.
func (a *Actor) execute(j *messages.Job) (err error) {
	err = errExited
	panicked := false
	// The attempt's context (attempt) carries the job's effective priority
	// (InheritPriority), its slot and its owner (a nested RunSync, Close);
	// it ends with the attempt, before the owner hears of the end.
	ctx := j.Run()
	defer func() {
		ctx.End()
		a.done <- messages.Done{Job: j, Err: err, Panicked: panicked}
	}()
	panicked, err = call(ctx, j.Fn)
	if err != nil && (!j.Foreground() || j.Worker != nil) && !errors.Is(err, workers.ErrWorkerLost) {
		if cause := context.Cause(ctx); errors.Is(cause, workers.ErrWorkerLost) {
			err = fmt.Errorf("%w: %w", cause, err) // what the function saw, and why
		}
	}
	return err
}

// call runs fn, turning a panic into a *PanicError and reporting it.
func call(ctx context.Context, fn func(context.Context) error) (panicked bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			panicked, err = true, &machine.PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return false, fn(ctx)
}

// executeName is the name of the function that runs every job's function
// (execute), as stack frames show it.
var executeName = runtime.FuncForPC(reflect.ValueOf((*Actor).execute).Pointer()).Name()

// insideJob reports whether the calling goroutine runs a job's function, of
// any scheduler: whether execute is on its stack. Only Close asks, so a job
// pays nothing for it.
func insideJob() bool {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(2, pcs)
	for n == len(pcs) { // the stack may be deeper: look at all of it
		pcs = make([]uintptr, 2*len(pcs))
		n = runtime.Callers(2, pcs)
	}
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if f.Function == executeName {
			return true
		}
		if !more {
			return false
		}
	}
}
