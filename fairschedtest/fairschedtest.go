// Package fairschedtest helps test code that schedules its work with
// fairsched: deterministic tests, with no sleeps and no timeouts.
//
// Three pieces:
//
//   - Blocker is a job function that runs until the test releases it, and
//     says whether it has started: the stand-in for a slow clone or a
//     repack whose timing the test decides.
//   - WaitPending, WaitRunning, WaitIdle and Until block until the
//     scheduler reaches a state — a RunSync from another goroutine has
//     arrived, two jobs run, all is done — woken by the scheduler's events,
//     never by polling.
//   - Run sets up a scheduler on a mock clock inside a testing/synctest
//     bubble and closes it at the end; New does the set-up alone, for a
//     test that brings its own clock or bubble.
//
// # Which clock
//
// Inside a synctest bubble (synctest.Test), the real clock is virtual: it
// stands still while any goroutine of the bubble can run and jumps to the
// next timer once all are blocked. A scheduler on it (New inside
// synctest.Test) sees time pass exactly as the jobs' own time.Sleep and
// timers make it pass: choose it when jobs wait on time themselves.
// synctest.Wait then says "everything that can happen now has happened",
// which is how a test checks that something did not.
//
// A mock clock (Run) moves only when the test calls Env.Advance: costs,
// aging, queue timeouts and rate limits see exactly the steps the test makes, whatever
// the jobs do. Choose it for timelines: "at 10 s the repack starts".
package fairschedtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/fairsched/fairsched"
)

// Epoch is where Run's mock clock starts: a fixed instant, so that
// timelines print the same every run.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Blocker is a job function that runs until the test releases it. Pass its
// Run method to RunSync or Submit. A Blocker may run more than once (a
// retried job): every run waits for the same Release. Safe for concurrent
// use.
type Blocker struct {
	started   chan struct{}
	startOnce sync.Once
	released  chan struct{}
	relOnce   sync.Once
	err       error // what Run returns once released: written before released closes
	runs      atomic.Int32
	cancelled atomic.Pointer[error]
}

// NewBlocker returns a Blocker that has not run.
func NewBlocker() *Blocker {
	return &Blocker{started: make(chan struct{}), released: make(chan struct{})}
}

// Run is the job function: it records that it started, then returns the
// error given to Release, or the context's error if the context ends
// first (Cause then tells why it ended).
func (b *Blocker) Run(ctx context.Context) error {
	b.runs.Add(1)
	b.startOnce.Do(func() { close(b.started) })
	select {
	case <-b.released:
		return b.err
	case <-ctx.Done():
		cause := context.Cause(ctx)
		b.cancelled.Store(&cause)
		return ctx.Err()
	}
}

// Started reports whether Run has been called, without waiting.
func (b *Blocker) Started() bool {
	select {
	case <-b.started:
		return true
	default:
		return false
	}
}

// Runs returns how many times Run has been called.
func (b *Blocker) Runs() int { return int(b.runs.Load()) }

// WaitStarted blocks until Run has been called, or t's context ends.
func (b *Blocker) WaitStarted(t testing.TB) {
	t.Helper()
	select {
	case <-b.started:
	case <-t.Context().Done():
		t.Fatal("fairschedtest: the test ended before the blocker started")
	}
}

// Release lets every run, current and future, return err. Only the first
// Release counts.
func (b *Blocker) Release(err error) {
	b.relOnce.Do(func() {
		b.err = err
		close(b.released)
	})
}

// Cause returns why a run's context ended (context.Cause), or nil if no
// run has seen its context end.
func (b *Blocker) Cause() error {
	if p := b.cancelled.Load(); p != nil {
		return *p
	}
	return nil
}

// New returns a scheduler made with opts, which t's cleanup closes at
// once: running jobs' contexts are cancelled (a Blocker returns), pending
// jobs are dropped, and the cleanup waits for the jobs to return and the
// scheduler's last writes to its store. Types are registered by the test.
// Close a store the scheduler uses in a t.Cleanup registered before New
// (cleanups run last in, first out), not with defer, which runs before.
func New(t testing.TB, opts ...fairsched.Option) *fairsched.Scheduler {
	t.Helper()
	s, err := fairsched.New(opts...)
	if err != nil {
		t.Fatalf("fairschedtest: New: %v", err)
	}
	t.Cleanup(func() { closeNow(t, s) })
	return s
}

// closeNow closes s with a context that has already ended: no graceful
// drain to wait for, only the running jobs' return.
func closeNow(t testing.TB, s *fairsched.Scheduler) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Close(ctx); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, fairsched.ErrClosed) {
		t.Errorf("fairschedtest: Close: %v", err)
	}
	_ = s.Close(context.Background()) // returns once the scheduler has stopped and saved
}

// Env is what Run hands its body: the scheduler, its mock clock, and the
// test.
type Env struct {
	*fairsched.Scheduler
	Clock *clock.Mock
	t     *testing.T
}

// Run runs body in a testing/synctest bubble with a scheduler on a mock
// clock set to Epoch, made with opts (after WithClock, so a WithClock among
// them wins). The scheduler is closed when body returns, as New does; the
// bubble then checks that no goroutine is left.
func Run(t *testing.T, body func(t *testing.T, env *Env), opts ...fairsched.Option) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		mock.Set(Epoch)
		s := New(t, append([]fairsched.Option{fairsched.WithClock(mock)}, opts...)...)
		body(t, &Env{Scheduler: s, Clock: mock, t: t})
	})
}

// Settle blocks until every goroutine of the bubble is blocked: whatever
// can happen without the clock moving has happened. Then a job that has
// not started will not start until something changes.
func (e *Env) Settle() { synctest.Wait() }

// Advance settles, moves the mock clock forward by d, firing the
// scheduler's timers due by then, and settles again. Settling first makes
// what is under way at the current time — a job's attempt that just ended,
// a store write — happen at the current time: otherwise it could read the
// clock after the move (a failure recorded at +d, its retry's backoff
// counted from there), and a test would depend on the goroutines' order.
func (e *Env) Advance(d time.Duration) {
	synctest.Wait()
	e.Clock.Add(d)
	synctest.Wait()
}

// Now returns the mock clock's time since Epoch: how far the test has
// advanced it.
func (e *Env) Now() time.Duration { return e.Clock.Now().Sub(Epoch) }

// Go runs fn in a new goroutine of the bubble (a RunSync that waits, say)
// and returns a channel that receives its error, buffered so that nobody
// has to read it.
func (e *Env) Go(fn func() error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	return done
}

// WaitPending, WaitRunning and WaitIdle of the Env's scheduler.
func (e *Env) WaitPending(n int) { e.t.Helper(); WaitPending(e.t, e.Scheduler, n) }
func (e *Env) WaitRunning(n int) { e.t.Helper(); WaitRunning(e.t, e.Scheduler, n) }
func (e *Env) WaitIdle()         { e.t.Helper(); WaitIdle(e.t, e.Scheduler) }

// Pending, Running and Idle are conditions for Until: exactly n jobs
// pending (Snapshot.PendingTotal: queued, deferred, waiting for a retry,
// held for a limit), exactly n running, none of either.
func Pending(n int) func(fairsched.Snapshot) bool {
	return func(snap fairsched.Snapshot) bool { return snap.PendingTotal == n }
}

func Running(n int) func(fairsched.Snapshot) bool {
	return func(snap fairsched.Snapshot) bool { return len(snap.Running) == n }
}

func Idle(snap fairsched.Snapshot) bool { return snap.PendingTotal == 0 && len(snap.Running) == 0 }

// WaitPending blocks until exactly n jobs are pending in s.
func WaitPending(t testing.TB, s *fairsched.Scheduler, n int) {
	t.Helper()
	wait(t, s, fmt.Sprintf("%d pending", n), Pending(n))
}

// WaitRunning blocks until exactly n jobs run in s.
func WaitRunning(t testing.TB, s *fairsched.Scheduler, n int) {
	t.Helper()
	wait(t, s, fmt.Sprintf("%d running", n), Running(n))
}

// WaitIdle blocks until no job is pending or running in s.
func WaitIdle(t testing.TB, s *fairsched.Scheduler) {
	t.Helper()
	wait(t, s, "idle", Idle)
}

func wait(t testing.TB, s *fairsched.Scheduler, what string, cond func(fairsched.Snapshot) bool) {
	t.Helper()
	if snap, err := Until(t.Context(), s, cond); err != nil {
		t.Fatalf("fairschedtest: waiting for %s: %v (last seen: %d pending, %d running)", what, err, snap.PendingTotal, len(snap.Running))
	}
}

// Until blocks until cond holds for a snapshot of s (listing at most one
// pending job: cond reads the totals and the running jobs), and returns
// that snapshot. It looks again after each of the scheduler's events —
// every arrival, start, end, expiry, cancellation is one — so it never
// polls and never misses a state that lasts until its next look. It
// returns ctx's error if ctx ends first, and ErrClosed once s has closed
// without cond holding.
func Until(ctx context.Context, s *fairsched.Scheduler, cond func(fairsched.Snapshot) bool) (fairsched.Snapshot, error) {
	// Subscribe before the first look: an event after it wakes the loop.
	// A lost event (full buffer) loses no wake-up: a buffered one is
	// there, and the look it causes comes after the loss.
	events, cancel := s.Subscribe(64)
	defer cancel()
	for {
		snap, err := s.Snapshot(ctx, fairsched.SnapshotRows(1))
		if err != nil {
			return snap, err
		}
		if cond(snap) {
			return snap, nil
		}
		select {
		case _, ok := <-events:
			if !ok {
				return snap, fairsched.ErrClosed
			}
			for drained := false; !drained; { // one look for a burst
				select {
				case _, ok := <-events:
					drained = !ok
				default:
					drained = true
				}
			}
		case <-ctx.Done():
			return snap, ctx.Err()
		}
	}
}
