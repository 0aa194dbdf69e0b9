package cluster

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/workers"
)

// The executor runs what the leader grants this instance and reports the
// ends. It is the only owner of its state: the handlers, the functions of
// this instance's RunSync and Submit jobs, the attempts running.

type executor struct {
	n *Node

	handlers chan handlerReg
	closures chan *closure
	ended    chan ended
	beatC    chan time.Time // from the lease loop: when its last heartbeat that succeeded began
	lastBeat atomic.Int64   // the same, in unix nanoseconds, read by the fence's timer (fence)
	// losses counts the times a leader declared this instance lost, as
	// its heartbeats learn it (closure.losses).
	losses       atomic.Uint64
	fenceUp      chan struct{} // from the fence's timer: it went up
	cancelAll    chan struct{} // Close ran out of time
	stopC        chan closeReq
	typesChanged chan struct{} // to the lease loop: beat now
	// said is what this instance's heartbeat says of it, published by the
	// loop at each change: the lease loop reads it without waiting for the
	// loop, which a slow read of the database holds up for a beat or two.
	said    atomic.Pointer[selfInfo]
	workers chan workerReg
	local   chan handoff
	// io brings back the database calls the loop made off its goroutine
	// (execLoop.io): what to do with each one's result, in the loop.
	io   chan func()
	done chan struct{}
}

// handoff is a batch of grants the leader in this process made to this
// instance, committed, handed over with their records: the executor need
// not read them back. Their successes go back the same way (ends, while
// the leader that granted them leads: until leaderDone closes), and the
// leader deletes their rows (in its next Backend.Grant) instead of reading each
// end from its row — one write and two reads a job fewer. Any other end
// is written to the row, as every end of a grant read from the database.
type handoff struct {
	grants     []Grant
	ends       chan<- End
	leaderDone <-chan struct{}
	sent       time.Time // when the leader handed it over: after its grants committed
	// launched: when the leader launched the write of its grants (before
	// they committed; its write is in flight until sent).
	launched time.Time
}

// endedHere is an attempt that ended on this executor: handed, when its
// success went back to the leader in process (handoff).
type endedHere struct {
	attempt int
	handed  bool
}

// selfInfo is what this instance's heartbeat says of it.
type selfInfo struct {
	types   []string
	workers map[string][][]string
}

type workerReg struct {
	id     string
	slots  [][]policy.JobType
	remove bool
	reply  chan error
}

type handlerReg struct {
	t     policy.JobType
	h     messages.Handler
	reply chan struct{}
}

// closure is a RunSync's or Submit's function, waiting here for its grants
// and its end.
type closure struct {
	seq     uint64
	fn      func(context.Context) error
	ctx     context.Context
	done    chan error // the RunSync caller's; nil for Submit
	lastErr error      // of its last attempt here
	running bool
	// succeeded: an attempt here returned nil. Its end may not be read
	// back as final before a Close; the caller is answered nil then.
	succeeded bool
	// losses is the executor's count of losses when the job was inserted
	// (executor.losses). After one more, the leader may have answered the
	// job with an error and, the instance staying silent, forgotten its
	// row (ForgetOrphans): a row gone no longer means the job succeeded.
	losses uint64
}

// attempt is one grant running here.
type attempt struct {
	seq     uint64
	attempt int
	worker  string // the worker slot it runs on, if any
	cancel  context.CancelCauseFunc
	from    *handoff  // the grant came in process; nil: read from the database
	since   time.Time // when it started
}

type ended struct {
	seq     uint64
	attempt int
	err     error
	panic   bool
}

func newExecutor(n *Node) *executor {
	x := &executor{n: n, handlers: make(chan handlerReg), closures: make(chan *closure),
		ended: make(chan ended, 64), beatC: make(chan time.Time, 1), fenceUp: make(chan struct{}, 1), cancelAll: make(chan struct{}, 1), stopC: make(chan closeReq),
		typesChanged: make(chan struct{}, 1), workers: make(chan workerReg),
		local: make(chan handoff, 16), io: make(chan func()), done: make(chan struct{})}
	x.said.Store(&selfInfo{})
	return x
}

// self returns the types this instance has handlers for and the workers
// registered on it, as the executor's loop last published them: none once
// it has stopped.
func (x *executor) self() ([]string, map[string][][]string) {
	select {
	case <-x.done:
		return nil, nil
	default:
	}
	in := x.said.Load()
	return in.types, in.workers
}

// handOver gives the executor grants the leader in this process made to
// this instance (handoff). The executor never waits on the leader, so the
// leader may wait here.
func (x *executor) handOver(h handoff) {
	h.sent = time.Now()
	select {
	case x.local <- h:
	case <-x.done:
	}
}

// workerOp registers or unregisters a worker on this instance.
func (x *executor) workerOp(r workerReg) error {
	r.reply = make(chan error, 1)
	select {
	case x.workers <- r:
		return <-r.reply
	case <-x.done:
		return machine.ErrClosed
	}
}

// beaten tells the executor that a heartbeat begun at t succeeded. The
// leader declares this instance lost LostAfter after its last heartbeat
// (by the database's clock, which read it later than t) and grants its
// jobs again; so from t + LostAfter − 2 Heartbeats on, unless a later beat
// succeeds first, the executor stops the attempts running here and starts
// none, so that none runs on beside its retry elsewhere. The fence's own
// timer decides (fence), not the lease loop's next turn nor the
// executor's loop, which a stalled call delays. Only the lease loop calls
// it; the latest value wins.
func (x *executor) beaten(t time.Time, wasLost bool) {
	if wasLost {
		x.losses.Add(1)
	}
	x.lastBeat.Store(t.UnixNano())
	for {
		select {
		case x.beatC <- t:
			return
		default:
			select {
			case <-x.beatC: // superseded
			default:
			}
		}
	}
}

func (x *executor) stop(ctx context.Context) error {
	reply := make(chan error, 1)
	select {
	case x.stopC <- closeReq{ctx, reply}:
		return <-reply
	case <-x.done:
		return nil
	}
}

func (x *executor) run() {
	defer close(x.done)
	e := newExecLoop(x)
	defer func() { e.fence.remove() }()
	defer func() { e.stopCancelAll() }()
	defer e.stopIO()
	cfg := x.n.cfg
	wake := wakeUps(x.n.b, ExecutorReads, x.n.id)
	defer wake.close()
	finalsWake := wakeUps(x.n.b, OwnerReads, x.n.id)
	defer finalsWake.close()
	poll := time.NewTicker(cfg.Poll)
	defer poll.Stop()
	report := time.NewTicker(cfg.ReportEvery)
	defer report.Stop()
	for {
		select {
		case r := <-x.handlers:
			e.handlers[r.t] = r.h
			r.reply <- struct{}{}
			x.changed(e.self())
		case r := <-x.workers:
			err := e.worker(r)
			r.reply <- err
			if err == nil {
				x.changed(e.self())
			}
		case c := <-x.closures:
			e.closure(c)
		case h := <-x.local:
			e.handedOver(h)
		case apply := <-x.io:
			apply()
		case end := <-x.ended:
			// Group commit: every end waiting goes into one report, sent
			// at once; those that come while it is written share the
			// next. A job's slot is free for the leader only once its end
			// is committed, so holding ends back would hold slots idle.
			e.take(end)
		more:
			for {
				select {
				case end := <-x.ended:
					e.take(end)
				default:
					break more
				}
			}
			e.report()
		case <-report.C:
			e.report()
		case _, ok := <-wake.C:
			if !ok {
				wake.lost() // the listener's connection is gone: poll until the next beat
			}
			e.checkGrants()
		case _, ok := <-finalsWake.C:
			if !ok {
				finalsWake.lost()
			}
			e.checkFinals()
		case <-poll.C:
			e.checkGrants()
			e.checkFinals()
			e.confirm()
		case <-e.retry.c:
			e.retry.fired()
			e.checkGrants()
			e.checkFinals()
		case t := <-x.beatC:
			e.beaten(t)
			e.confirm()
			// Listening again once a connection was lost: what was
			// committed meanwhile is read now.
			if relistened(wake.again(), finalsWake.again()) {
				e.checkGrants()
				e.checkFinals()
			}
		case <-x.fenceUp:
			e.fenceUp()
		case <-x.cancelAll:
			e.cancelRunning(machine.ErrClosed)
		case r := <-x.stopC:
			e.closeReq(r)
		}
		if e.closed() {
			return
		}
	}
}

// changed publishes what this instance's heartbeat says of it (self) and
// tells the lease loop to beat now: its types or workers changed.
func (x *executor) changed(in selfInfo) {
	x.said.Store(&in)
	select {
	case x.typesChanged <- struct{}{}:
	default:
	}
}

// errLostGone answers a job whose row is gone after this instance was
// declared lost while it waited, and whose function did not succeed here:
// it may have succeeded elsewhere (a coalesced run) or been failed with
// the instance and forgotten; not knowing, it is not called a success.
var errLostGone = fmt.Errorf("%w: this instance was declared lost while the job waited and its record is gone: how it ended is unknown", workers.ErrWorkerLost)

// outcome is how a RunSync or Submit job ended, as its caller sees it: its
// last attempt's own error when the record's matches it, so errors.Is and
// errors.As see the function's error.
func outcome(c *closure, f Final, wasLost bool) error {
	switch {
	case f.Gone && wasLost && !c.succeeded:
		return errLostGone
	case f.Gone:
		return nil
	case c.lastErr != nil && carries(f.LastError, c.lastErr):
		// The leader's words around the function's own error.
		return &remoteError{text: f.LastError, err: c.lastErr}
	}
	if policy.ShedText(f.LastError) {
		return &remoteError{text: f.LastError, err: &policy.RefusalError{Reason: policy.ReasonShed}}
	}
	for _, s := range sentinels {
		if strings.Contains(f.LastError, s.Error()) {
			return &remoteError{text: f.LastError, err: s}
		}
	}
	return errors.New(f.LastError)
}

// carries reports whether text, an error text as the database keeps it
// (cleaned, see policy.CleanText), ends with err's own text: whole, or cut
// at the bound on stored text.
func carries(text string, err error) bool {
	own := strings.ReplaceAll(strings.ToValidUTF8(err.Error(), "\uFFFD"), "\x00", "")
	if strings.HasSuffix(text, own) {
		return true
	}
	cut, ok := strings.CutSuffix(text, "…")
	if !ok || len(own) == 0 {
		return false
	}
	// The leader's words come first, and are short.
	for i := 0; i < min(len(cut), 256); i++ {
		if strings.HasPrefix(own, cut[i:]) {
			return true
		}
	}
	return false
}

// sentinels are the errors a RunSync's caller may test for that the
// leader decides: they cross the database as text and are matched back.
var sentinels = []error{ErrFunctionGone, workers.ErrWorkerLost, policy.ErrExpired, policy.ErrDenied, machine.ErrCancelled, machine.ErrClosed,
	machine.ErrRecordRefused}

// remoteError is how a job of this instance ended as the leader wrote it:
// its text, matching (errors.Is, errors.As) the error it stands for.
type remoteError struct {
	text string
	err  error
}

func (e *remoteError) Error() string { return e.text }
func (e *remoteError) Unwrap() error { return e.err }

// call runs fn, turning a panic into an error.
func call(ctx context.Context, fn func(context.Context) error) (panicked bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			panicked, err = true, &machine.PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return false, fn(ctx)
}

// wasLost reports whether a leader declared this instance lost since c's
// job was inserted.
func (x *executor) wasLost(c *closure) bool { return x.losses.Load() != c.losses }
