package cluster

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/fairsched/fairsched/actor"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/workers"
)

// The executor runs what the leader grants this instance and reports the
// ends. It is the only owner of its state: the handlers, the functions of
// this instance's RunSync and Submit jobs, the attempts running.

type executor struct {
	n *Node

	handlers     chan handlerReg
	closures     chan *closure
	ended        chan ended
	beatC        chan time.Time // from the lease loop: when its last heartbeat that succeeded began
	cancelAll    chan struct{}  // Close ran out of time
	stopC        chan closeReq
	typesChanged chan struct{} // to the lease loop: beat now
	names        chan chan selfInfo
	workers      chan workerReg
	local        chan handoff
	done         chan struct{}
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
}

// attempt is one grant running here.
type attempt struct {
	seq     uint64
	attempt int
	worker  string // the worker slot it runs on, if any
	cancel  context.CancelCauseFunc
	from    *handoff // the grant came in process; nil: read from the database
}

type ended struct {
	seq     uint64
	attempt int
	err     error
	panic   bool
}

func newExecutor(n *Node) *executor {
	return &executor{n: n, handlers: make(chan handlerReg), closures: make(chan *closure),
		ended: make(chan ended, 64), beatC: make(chan time.Time, 1), cancelAll: make(chan struct{}, 1), stopC: make(chan closeReq),
		typesChanged: make(chan struct{}, 1), names: make(chan chan selfInfo), workers: make(chan workerReg),
		local: make(chan handoff, 16), done: make(chan struct{})}
}

// self returns the types this instance has handlers for and the workers
// registered on it.
func (x *executor) self() ([]string, map[string][][]string) {
	reply := make(chan selfInfo, 1)
	select {
	case x.names <- reply:
		in := <-reply
		return in.types, in.workers
	case <-x.done:
		return nil, nil
	}
}

// handOver gives the executor grants the leader in this process made to
// this instance (handoff). The executor never waits on the leader, so the
// leader may wait here.
func (x *executor) handOver(h handoff) {
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
		return actor.ErrClosed
	}
}

// beaten tells the executor that a heartbeat begun at t succeeded. The
// leader declares this instance lost LostAfter after its last heartbeat
// (by the database's clock, which read it later than t) and grants its
// jobs again; so from t + LostAfter − 2 Heartbeats on, unless a later beat
// succeeds first, the executor stops the attempts running here and starts
// none, so that none runs on beside its retry elsewhere. Its own timer
// decides, not the lease loop's next turn, which a stalled call delays.
// Only the lease loop calls it; the latest value wins.
func (x *executor) beaten(t time.Time) {
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
	cfg := x.n.cfg
	handlers := map[policy.JobType]messages.Handler{}
	workerSlots := map[string][][]string{}
	closures := map[uint64]*closure{}
	running := map[uint64]*attempt{}
	var ends []End
	early := map[uint64]Grant{} // granted before its function arrived
	// The attempts that ended here, in two generations: those of the
	// current period between full reads of the grants and of the one
	// before. A grant of one of them is not started again — a handoff
	// and a read of the same grant may come in either order — and one
	// handed back in process whose row still shows it running at a full
	// read is reported through the database after all (its leader may
	// have lost the lease before deleting the row).
	endedNow, endedBefore := map[uint64]endedHere{}, map[uint64]endedHere{}
	endedAt := func(seq uint64, attempt int) (endedHere, bool) {
		if e, ok := endedNow[seq]; ok && e.attempt == attempt {
			return e, true
		}
		e, ok := endedBefore[seq]
		return e, ok && e.attempt == attempt
	}
	var cursor ReadCursor  // the grants read (GrantsSince)
	var lastFull time.Time // the last read of every grant (Granted)
	wake, stopWake := x.n.b.Wake(context.Background(), ExecutorReads, x.n.id)
	defer func() { stopWake() }()
	finalsWake, stopFinalsWake := x.n.b.Wake(context.Background(), OwnerReads, x.n.id)
	defer func() { stopFinalsWake() }()
	poll := time.NewTicker(cfg.Poll)
	defer poll.Stop()
	report := time.NewTicker(cfg.ReportEvery)
	defer report.Stop()
	var closing *closeReq
	killed, fenced := false, false
	// The fence: safe until the last good beat's start + LostAfter − 2
	// beats (beaten); the first beat is the loop's start.
	margin := cfg.LostAfter - 2*cfg.Heartbeat
	fence := time.NewTimer(margin)
	defer fence.Stop()

	failing := false // since the last report that went through: said once
	flush := func() {
		if len(ends) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), cfg.Heartbeat)
		defer cancel()
		_, err := x.n.b.ReportEnds(ctx, ends)
		done := len(ends)
		if isRefused(err) {
			// A record the database refuses: the others are written, and
			// that one with its text cut (reportApart).
			done, err = reportApart(ctx, x.n.b, x.n.log, ends, err)
		} else if err != nil {
			done = 0
		}
		ends = append(ends[:0], ends[done:]...)
		if err != nil {
			if !failing {
				x.n.log.Warn("reporting ends failed; retrying", zap.Error(err))
			}
			failing = true
			return
		}
		if failing {
			x.n.log.Info("reporting ends again")
		}
		failing = false
	}
	take := func(e ended) {
		a := running[e.seq]
		delete(running, e.seq)
		if a == nil || a.attempt != e.attempt {
			return
		}
		kind, text := EndOK, ""
		switch {
		case e.panic:
			kind, text = EndPanic, e.err.Error()
		case e.err != nil && policy.IsPermanent(e.err):
			kind, text = EndPermanent, e.err.Error()
		case e.err != nil:
			kind, text = EndError, e.err.Error()
		}
		// The text goes to the database and to the leader: a handler's
		// error may hold any bytes, which PostgreSQL's text refuses.
		text = policy.CleanText(text)
		if c := closures[e.seq]; c != nil {
			c.running, c.lastErr = false, e.err
			if c.done != nil && c.ctx.Err() != nil && e.err != nil {
				kind = EndPermanent // its caller left: no retry
			}
		}
		if killed {
			return
		}
		end := End{Seq: e.seq, Instance: x.n.id, Attempt: e.attempt, Kind: kind, Error: text}
		if h := a.from; h != nil && kind == EndOK {
			select {
			case <-h.leaderDone:
			default:
				select {
				case h.ends <- end:
					endedNow[e.seq] = endedHere{attempt: e.attempt, handed: true}
					return
				default: // the leader is behind: through the database
				}
			}
		}
		endedNow[e.seq] = endedHere{attempt: e.attempt}
		ends = append(ends, end)
	}
	start := func(g Grant, from *handoff) {
		ctx, cancel := context.WithCancelCause(context.Background())
		a := &attempt{seq: g.Seq, attempt: g.Attempt, worker: g.Worker, cancel: cancel, from: from}
		if g.Worker != "" { // SlotFromContext tells the job its slot
			ctx = messages.WithSlot(ctx, messages.SlotRef{Worker: g.Worker, Slot: g.Slot})
		}
		rec := g.Record
		var fn func(context.Context) error
		if rec.Owner != "" {
			c := closures[g.Seq]
			if c == nil {
				// Its caller inserted it and is handing the function over:
				// it starts when the function arrives. (A restarted process
				// is a new incarnation, so no grant waits here for a
				// function that will never come.)
				cancel(nil)
				early[g.Seq] = g
				return
			}
			if c.ctx.Err() != nil {
				cancel(nil)
				ends = append(ends, End{Seq: g.Seq, Instance: x.n.id, Attempt: g.Attempt, Kind: EndPermanent,
					Error: ErrFunctionGone.Error()})
				return
			}
			c.running = true
			parent := c.ctx
			stopAfter := context.AfterFunc(parent, func() { cancel(context.Cause(parent)) })
			fn = func(ctx context.Context) error { defer stopAfter(); return c.fn(ctx) }
		} else {
			h := handlers[rec.Type]
			if h == nil {
				cancel(nil)
				ends = append(ends, End{Seq: g.Seq, Instance: x.n.id, Attempt: g.Attempt, Kind: EndError,
					Error: fmt.Sprintf("fairsched/cluster: no handler for %q on %s", rec.Type, x.n.id)})
				return
			}
			view := messages.DurableJob{Type: rec.Type, ID: rec.ID, Payload: rec.Payload, Attempt: g.Attempt,
				FairnessKey: rec.Key, Group: rec.Group, EnqueuedAt: rec.EnqueuedAt, Seq: rec.Seq}
			fn = func(ctx context.Context) error {
				err := h(ctx, view)
				if err != nil && !errors.Is(err, workers.ErrWorkerLost) {
					// A handler that returns ctx.Err() after this executor
					// stopped its attempt (revoked, heartbeats failing, its
					// worker gone) was interrupted, not failed: say why, as
					// the in-process scheduler does (actor.Execute).
					if cause := context.Cause(ctx); errors.Is(cause, workers.ErrWorkerLost) {
						err = fmt.Errorf("%w: %w", cause, err)
					}
				}
				return err
			}
		}
		running[g.Seq] = a
		go func() {
			panicked, err := call(ctx, fn)
			cancel(nil)
			x.ended <- ended{seq: g.Seq, attempt: g.Attempt, err: err, panic: panicked}
		}()
	}
	// checkGrants reads the grants, checkFinals how this instance's
	// RunSync and Submit jobs ended; check does both (a poll).
	checkGrants := func() {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.Heartbeat)
		defer cancel()
		if closing == nil && !fenced {
			// What changed since the last read; everything every Heartbeat
			// (a grant taken back shows only there).
			full := time.Since(lastFull) >= cfg.Heartbeat
			var grants []Grant
			var err error
			if full {
				grants, err = x.n.b.Granted(ctx, x.n.id)
			} else {
				grants, cursor, err = x.n.b.GrantsSince(ctx, x.n.id, cursor)
			}
			if err != nil {
				x.n.log.Warn("reading grants failed", zap.Error(err))
				return
			}
			granted := map[uint64]bool{}
			if full {
				lastFull = time.Now()
				clear(early)
			}
			defer func() {
				if full { // a new period: the one before it is forgotten
					endedBefore, endedNow = endedNow, endedBefore
					clear(endedNow)
				}
			}()
			for _, g := range grants {
				granted[g.Seq] = true
				if a := running[g.Seq]; a != nil && a.attempt == g.Attempt {
					if g.Cancelled {
						a.cancel(actor.ErrCancelled)
					}
					continue
				}
				if slices.ContainsFunc(ends, func(e End) bool { return e.Seq == g.Seq && e.Attempt == g.Attempt }) {
					continue // ended here, report under way
				}
				if e, ok := endedAt(g.Seq, g.Attempt); ok {
					if e.handed && full { // its row still says running: report it here
						endedNow[g.Seq] = endedHere{attempt: g.Attempt}
						ends = append(ends, End{Seq: g.Seq, Instance: x.n.id, Attempt: g.Attempt, Kind: EndOK})
					}
					continue // ended here already
				}
				if g.Cancelled { // cancelled before it started here: it never will
					delete(early, g.Seq)
					ends = append(ends, End{Seq: g.Seq, Instance: x.n.id, Attempt: g.Attempt, Kind: EndPermanent,
						Error: actor.ErrCancelled.Error()})
					continue
				}
				start(g, nil)
			}
			for seq, a := range running {
				if full && !granted[seq] { // taken back: this instance was declared lost
					a.cancel(fmt.Errorf("%w: the grant was revoked", workers.ErrWorkerLost))
				}
			}
		}
	}
	checkFinals := func() {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.Heartbeat)
		defer cancel()
		var waiting []uint64
		for seq, c := range closures {
			if !c.running {
				waiting = append(waiting, seq)
			}
		}
		if len(waiting) == 0 {
			return
		}
		finals, err := x.n.b.Finals(ctx, waiting)
		if err != nil {
			x.n.log.Warn("reading finished jobs failed", zap.Error(err))
			return
		}
		var forget []uint64
		for _, f := range finals {
			c := closures[f.Seq]
			delete(closures, f.Seq)
			if !f.Gone {
				forget = append(forget, f.Seq)
			}
			if c.done == nil {
				if err := outcome(c, f); err != nil {
					x.n.log.Error("background job failed", zap.Uint64("seq", f.Seq), zap.Error(err))
				}
				continue
			}
			c.done <- outcome(c, f)
		}
		if len(forget) > 0 {
			if err := x.n.b.Forget(ctx, forget); err != nil {
				x.n.log.Warn("deleting finished jobs failed", zap.Error(err))
			}
		}
	}

	for {
		select {
		case r := <-x.handlers:
			handlers[r.t] = r.h
			r.reply <- struct{}{}
			select {
			case x.typesChanged <- struct{}{}:
			default:
			}
		case reply := <-x.names:
			names := make([]string, 0, len(handlers))
			for t := range handlers {
				names = append(names, string(t))
			}
			slices.Sort(names)
			ws := make(map[string][][]string, len(workerSlots))
			for id, sl := range workerSlots {
				ws[id] = sl
			}
			reply <- selfInfo{names, ws}
		case r := <-x.workers:
			switch _, ok := workerSlots[r.id]; {
			case r.remove && !ok:
				r.reply <- fmt.Errorf("%w: %q", workers.ErrUnknownWorker, r.id)
				continue
			case !r.remove && ok:
				r.reply <- fmt.Errorf("%w: %q", workers.ErrDuplicateWorker, r.id)
				continue
			case r.remove:
				delete(workerSlots, r.id)
				for _, a := range running {
					if a.worker == r.id {
						a.cancel(fmt.Errorf("%w: %q was unregistered", workers.ErrWorkerLost, r.id))
					}
				}
			default:
				sl := make([][]string, len(r.slots))
				for i, ts := range r.slots {
					for _, t := range ts {
						sl[i] = append(sl[i], string(t))
					}
				}
				workerSlots[r.id] = sl
			}
			r.reply <- nil
			select {
			case x.typesChanged <- struct{}{}:
			default:
			}
		case c := <-x.closures:
			if closing != nil {
				if c.done != nil {
					c.done <- actor.ErrClosed
				}
				continue
			}
			closures[c.seq] = c
			if g, ok := early[c.seq]; ok && !fenced {
				delete(early, c.seq)
				start(g, nil)
			}
		case h := <-x.local:
			if closing != nil || fenced {
				continue // as a read of the grants would not start them
			}
			for _, g := range h.grants {
				if a := running[g.Seq]; a != nil && a.attempt == g.Attempt {
					continue // read from the database first
				}
				if _, ok := endedAt(g.Seq, g.Attempt); ok {
					continue
				}
				start(g, &h)
			}
		case e := <-x.ended:
			// Group commit: every end waiting goes into one report, sent
			// at once; those that come while it is written share the
			// next. A job's slot is free for the leader only once its end
			// is committed, so holding ends back would hold slots idle.
			take(e)
		more:
			for {
				select {
				case e := <-x.ended:
					take(e)
				default:
					break more
				}
			}
			flush()
		case <-report.C:
			flush()
		case _, ok := <-wake:
			if !ok {
				wake = nil // the listener's connection is gone: poll
			}
			checkGrants()
		case _, ok := <-finalsWake:
			if !ok {
				finalsWake = nil
			}
			checkFinals()
		case <-poll.C:
			checkGrants()
			checkFinals()
		case t := <-x.beatC:
			if d := time.Until(t.Add(margin)); d > 0 {
				fence.Reset(d)
				if fenced {
					fenced = false
					x.n.log.Info("heartbeats succeed again: running grants")
				}
			}
		case <-fence.C:
			if !fenced {
				fenced = true
				x.n.log.Warn("heartbeats failing: stopping the jobs running here")
				for _, a := range running {
					a.cancel(fmt.Errorf("%w: %s could not beat its heartbeat", workers.ErrWorkerLost, x.n.id))
				}
			}
		case <-x.cancelAll:
			for _, a := range running {
				a.cancel(actor.ErrClosed)
			}
		case r := <-x.stopC:
			closing = &r
			if r.ctx.Err() != nil { // a kill, or a Close out of time
				killed = true
				for _, a := range running {
					a.cancel(actor.ErrClosed)
				}
			} else {
				stop := context.AfterFunc(r.ctx, func() {
					select {
					case x.cancelAll <- struct{}{}:
					default:
					}
				})
				defer stop()
			}
		}
		if closing != nil && len(running) == 0 {
			if !killed {
				flush()
			}
			for _, c := range closures {
				if c.done != nil {
					c.done <- actor.ErrClosed
				}
			}
			closing.reply <- nil
			return
		}
	}
}

// outcome is how a RunSync or Submit job ended, as its caller sees it: its
// last attempt's own error when the record's matches it, so errors.Is and
// errors.As see the function's error.
func outcome(c *closure, f Final) error {
	switch {
	case f.Gone:
		return nil
	case c.lastErr != nil && carries(f.LastError, c.lastErr):
		// The leader's words around the function's own error.
		return &remoteError{text: f.LastError, err: c.lastErr}
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
var sentinels = []error{ErrFunctionGone, workers.ErrWorkerLost, policy.ErrExpired, policy.ErrDenied, actor.ErrCancelled, actor.ErrClosed,
	actor.ErrRecordRefused}

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
			panicked, err = true, &actor.PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return false, fn(ctx)
}
