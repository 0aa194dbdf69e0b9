package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/workers"
)

// execLoop is the state the executor's loop (executor.run) owns, and its
// steps: read the grants, start them, collect the ends, report them. Only
// the loop's goroutine touches it.
type execLoop struct {
	x           *executor
	cfg         Config
	handlers    map[policy.JobType]messages.Handler
	workerSlots map[string][][]string
	closures    map[uint64]*closure
	running     map[uint64]*attempt
	// superseded counts the attempts still running here whose grant was
	// taken back and granted here again: a later attempt of their job
	// replaced them in running. Their ends are not reported.
	superseded int
	ends       []End // to report
	told       []End // successes to tell the leader (Backend.TellSucceeded)
	reporting  []End // being reported or told (report)
	// The successes told, until a read of their rows (confirm) finds
	// them gone or reports them through the rows.
	unconfirmed []toldEnd
	checking    []toldEnd // those whose rows are being read
	// held are the ends in ends, told, reporting, unconfirmed or
	// checking: a grant of one of them is not started again.
	held  map[endKey]struct{}
	early map[uint64]earlyGrant // granted before its function arrived
	// The attempts that ended here, in two generations: those of the
	// current period between full reads of the grants and of the one
	// before. A grant of one of them is not started again — a handoff and
	// a read of the same grant may come in either order — and one handed
	// back in process whose row still shows it running at a full read is
	// reported through the database after all (its leader may have lost
	// the lease before deleting the row).
	endedNow, endedBefore map[uint64]endedHere
	cursor                ReadCursor // the grants read (GrantsSince)
	lastFull              time.Time  // the last read of every grant (Granted)
	fullFrom              time.Time  // when that read began
	unfenced              time.Time  // when the fence last came down (beaten)
	closing               *closeReq
	killed, fenced        bool
	// The fence: safe until the last good beat's start + LostAfter − 2
	// beats (margin); the first beat is the loop's start.
	margin        time.Duration
	fence         *fence
	failing       bool        // since the last report that went through: said once
	retry         retryTimer  // a failed read of grants or finals, made again soon
	stopCancelAll func() bool // a graceful Close's watch of its deadline
	// The database calls out (io): how many; a read of the grants out,
	// and whether a wake-up came meanwhile (read again once it is back);
	// the same for the finals' read.
	out                      int
	reading, readAgain       bool
	readingFinals, finalsNew bool
	ioCtx                    context.Context
	stopIO                   context.CancelFunc // stops the calls out: the loop is killed or done
}

// endKey names an attempt's end.
type endKey struct {
	seq     uint64
	attempt int
}

// toldEnd is a success told the leader, and when.
type toldEnd struct {
	End
	at time.Time
}

// earlyGrant is a grant of a RunSync or Submit job that came before its
// function, and when it came.
type earlyGrant struct {
	Grant
	at time.Time
}

func newExecLoop(x *executor) *execLoop {
	cfg := x.n.cfg
	margin := cfg.LostAfter - 2*cfg.Heartbeat
	e := &execLoop{x: x, cfg: cfg, handlers: map[policy.JobType]messages.Handler{}, workerSlots: map[string][][]string{},
		closures: map[uint64]*closure{}, running: map[uint64]*attempt{}, early: map[uint64]earlyGrant{},
		endedNow: map[uint64]endedHere{}, endedBefore: map[uint64]endedHere{}, held: map[endKey]struct{}{}, margin: margin,
		stopCancelAll: func() bool { return false }}
	e.ioCtx, e.stopIO = context.WithCancel(context.Background())
	x.lastBeat.Store(time.Now().UnixNano())
	e.raiseFence()
	return e
}

func (e *execLoop) endedAt(seq uint64, attempt int) (endedHere, bool) {
	if h, ok := e.endedNow[seq]; ok && h.attempt == attempt {
		return h, true
	}
	h, ok := e.endedBefore[seq]
	return h, ok && h.attempt == attempt
}

// self is what this instance's heartbeat says of it.
func (e *execLoop) self() selfInfo {
	names := make([]string, 0, len(e.handlers))
	for t := range e.handlers {
		names = append(names, string(t))
	}
	slices.Sort(names)
	ws := make(map[string][][]string, len(e.workerSlots))
	for id, sl := range e.workerSlots {
		ws[id] = sl
	}
	return selfInfo{names, ws}
}

// worker registers or unregisters a worker, checked against the types
// registered on this instance as a scheduler checks it: the attempts on
// the slots of one unregistered are stopped.
func (e *execLoop) worker(r workerReg) error {
	if !r.remove {
		if err := e.x.n.Registry().CheckWorker(r.id, r.slots, e.registered); err != nil {
			return err
		}
	}
	switch _, ok := e.workerSlots[r.id]; {
	case r.remove && !ok:
		return fmt.Errorf("%w: %q", workers.ErrUnknownWorker, r.id)
	case r.remove:
		delete(e.workerSlots, r.id)
		for _, a := range e.running {
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
		e.workerSlots[r.id] = sl
	}
	return nil
}

func (e *execLoop) registered(id string) bool {
	_, ok := e.workerSlots[id]
	return ok
}

// closure keeps a RunSync's or Submit's function until its job ends, and
// starts its grant if it came first.
func (e *execLoop) closure(c *closure) {
	if e.closing != nil {
		if c.done != nil {
			c.done <- machine.ErrClosed
		}
		return
	}
	e.closures[c.seq] = c
	if g, ok := e.early[c.seq]; ok && !e.isFenced() {
		delete(e.early, c.seq)
		e.start(g.Grant, nil)
	}
}

// handedOver starts the grants the leader in this process handed over.
func (e *execLoop) handedOver(h handoff) {
	if e.closing != nil || e.isFenced() {
		return // as a read of the grants would not start them
	}
	if h.launched.Before(e.unfenced) {
		// Written while the fence was up: its grants may have been
		// taken back since (this instance declared lost) and granted
		// elsewhere. The full read that follows the fence (beaten)
		// starts those still granted here.
		return
	}
	if h.sent.Before(e.fullFrom) {
		// A read of every grant began after it was sent, so after its
		// grants committed: that read started them, or found them ended.
		// An attempt that ran here then may be forgotten by now (two
		// periods): handed over again, it would run twice.
		return
	}
	if time.Since(h.launched) >= e.cfg.Heartbeat {
		// Its write was in flight a Heartbeat or more: a full read may
		// have started its grants as soon as they committed, and an
		// attempt's end is remembered only a Heartbeat for sure (two
		// periods of full reads, each at least a Heartbeat) — one
		// started from this handoff could run a second time. The next
		// full read starts those still granted here.
		return
	}
	for _, g := range h.grants {
		if a := e.running[g.Seq]; a != nil && a.attempt == g.Attempt {
			continue // read from the database first
		}
		if _, ok := e.endedAt(g.Seq, g.Attempt); ok {
			continue
		}
		e.start(g, &h)
	}
}

// io makes call — a read or a write of the database — off the loop's
// goroutine, so that a slow one holds up neither the loop nor the other
// calls (a stalled read of the grants does not hold back the ends'
// reports), and brings back what call returns, to run in the loop with
// the result. call touches nothing of the loop's. The loop does not end
// while a call is out (closed).
func (e *execLoop) io(call func(ctx context.Context) func()) {
	e.out++
	ctx, cancel := context.WithTimeout(e.ioCtx, e.cfg.Heartbeat)
	in := e.x.io
	go func() {
		defer cancel()
		apply := call(ctx)
		in <- func() { e.out--; apply() }
	}()
}

// report tells the successes waiting and reports the other ends, unless
// a report is out: those that come meanwhile go in the next, sent once it
// is back (group commit). A success the leader cannot be told is reported.
func (e *execLoop) report() {
	if e.reporting != nil || len(e.ends) == 0 && len(e.told) == 0 {
		return
	}
	batch, told := e.ends, e.told
	e.ends, e.told = nil, nil
	e.reporting = slices.Concat(batch, told)
	b, log := e.x.n.b, e.x.n.log
	e.io(func(ctx context.Context) func() {
		if len(told) > 0 {
			if err := b.TellSucceeded(ctx, told); err != nil {
				batch, told = slices.Concat(batch, told), nil
			}
		}
		done, err := 0, error(nil)
		if len(batch) > 0 {
			done, err = reportEnds(ctx, b, log, batch)
		}
		return func() {
			e.reporting = nil
			now := time.Now()
			for _, d := range told {
				e.unconfirmed = append(e.unconfirmed, toldEnd{d, now})
			}
			e.reported(batch, done, err)
			if err == nil {
				e.report()
			} // else again at the next end or tick: ReportEvery
		}
	})
}

// confirm reads the rows of the successes told a Poll ago or more (a
// Heartbeat, if that is shorter), and reports through its row each that
// still runs: a leader that did not hear it (not listening, or gone)
// leaves it so. It runs at every poll and every heartbeat.
func (e *execLoop) confirm() {
	if e.checking != nil || len(e.unconfirmed) == 0 {
		return
	}
	old := time.Now().Add(-min(e.cfg.Poll, e.cfg.Heartbeat))
	n := 0
	for n < len(e.unconfirmed) && !e.unconfirmed[n].at.After(old) {
		n++
	}
	if n == 0 {
		return
	}
	check := slices.Clone(e.unconfirmed[:n])
	e.unconfirmed = slices.Delete(e.unconfirmed, 0, n)
	seqs := make([]uint64, n)
	for i, d := range check {
		seqs[i] = d.Seq
	}
	e.checking = check
	b := e.x.n.b
	e.io(func(ctx context.Context) func() {
		rows, err := b.Rows(ctx, seqs)
		return func() { e.confirmed(check, rows, err) }
	})
}

// confirmed takes back a read of told successes' rows.
func (e *execLoop) confirmed(check []toldEnd, rows []Row, err error) {
	e.checking = nil
	if err != nil {
		e.x.n.log.Warn("reading the rows of successes failed", zap.Error(err))
		e.unconfirmed = slices.Concat(check, e.unconfirmed)
		return
	}
	runs := map[uint64]Row{}
	for _, r := range rows {
		runs[r.Seq] = r
	}
	for _, d := range check {
		if r, ok := runs[d.Seq]; ok && r.Running && r.Instance == d.Instance && r.Attempt == d.Attempt {
			e.ends = append(e.ends, d.End)
			continue
		}
		e.remember(d.End) // a read begun before its row went may list it still
	}
	e.report()
}

// flush reports the ends waiting, and the successes told or to tell
// through their rows (a row gone matches nothing), in the loop.
func (e *execLoop) flush() {
	for _, d := range e.unconfirmed {
		e.ends = append(e.ends, d.End)
	}
	e.ends = append(e.ends, e.told...)
	e.unconfirmed, e.told = nil, nil
	if len(e.ends) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.Heartbeat)
	defer cancel()
	batch := e.ends
	e.ends = nil
	done, err := reportEnds(ctx, e.x.n.b, e.x.n.log, batch)
	e.reported(batch, done, err)
}

// reportEnds writes ends, and returns how many of them (the first) it
// wrote.
func reportEnds(ctx context.Context, b Backend, log *zap.Logger, ends []End) (int, error) {
	_, err := b.ReportEnds(ctx, ends)
	if isRefused(err) {
		// A record the database refuses: the others are written, and that
		// one with its text cut (reportApart).
		return reportApart(ctx, b, log, ends, err)
	} else if err != nil {
		return 0, err
	}
	return len(ends), nil
}

// reported notes a report of batch of which the first done went through:
// the rest wait, before the ends that came meanwhile.
func (e *execLoop) reported(batch []End, done int, err error) {
	for _, d := range batch[:done] {
		e.remember(d) // a read begun before the report may list it still
	}
	e.ends = slices.Concat(batch[done:], e.ends)
	log := e.x.n.log
	if err != nil {
		if !e.failing {
			log.Warn("reporting ends failed; retrying", zap.Error(err))
		}
		e.failing = true
		return
	}
	if e.failing {
		log.Info("reporting ends again")
	}
	e.failing = false
}

// reportsHold reports whether the end of seq's attempt waits to be
// reported or told, is being so, or was told and not confirmed yet. A
// grant read is not started again while it does, whatever the read; once
// the end leaves these (remember), the ends remembered keep it from
// running again.
func (e *execLoop) reportsHold(seq uint64, attempt int) bool {
	_, ok := e.held[endKey{seq, attempt}]
	return ok
}

// addEnd adds an end to report.
func (e *execLoop) addEnd(d End) {
	e.held[endKey{d.Seq, d.Attempt}] = struct{}{}
	e.ends = append(e.ends, d)
}

// remember notes the end of an attempt reported, or told and confirmed,
// as the current period's: a read of the grants begun before may still
// list it, and the reads of two full periods after cannot.
func (e *execLoop) remember(d End) {
	delete(e.held, endKey{d.Seq, d.Attempt})
	if h, ok := e.endedNow[d.Seq]; !ok || h.attempt <= d.Attempt {
		e.endedNow[d.Seq] = endedHere{attempt: d.Attempt}
	}
}

// endOf is the end an attempt's outcome is reported as. The text goes to
// the database and to the leader: a handler's error may hold any bytes,
// which PostgreSQL's text refuses.
func endOf(instance string, d ended) End {
	kind, text := EndOK, ""
	switch {
	case d.panic:
		kind, text = EndPanic, d.err.Error()
	case d.err != nil && policy.IsPermanent(d.err):
		kind, text = EndPermanent, d.err.Error()
	case d.err != nil:
		kind, text = EndError, d.err.Error()
	}
	return End{Seq: d.seq, Instance: instance, Attempt: d.attempt, Kind: kind, Error: policy.CleanText(text)}
}

// take collects an attempt's end: a success of a grant handed over in
// process goes back to its leader the same way, any other end is reported.
func (e *execLoop) take(d ended) {
	a := e.running[d.seq]
	if a == nil || a.attempt != d.attempt {
		e.superseded-- // a later attempt of its job runs here, or ran
		return
	}
	delete(e.running, d.seq)
	end := endOf(e.x.n.id, d)
	if c := e.closures[d.seq]; c != nil {
		c.running, c.lastErr = false, d.err
		c.succeeded = c.succeeded || d.err == nil
		if c.done != nil && c.ctx.Err() != nil && d.err != nil {
			// Its caller left, which stopped it: no retry; the function is
			// gone, and a waiter that joined its coalesced run runs its
			// own instead (machine.endWaiters), as when the caller leaves
			// before the run starts.
			end.Kind, end.Error = EndPermanent, ErrFunctionGone.Error()
		}
	}
	if e.killed {
		return
	}
	if h := a.from; h != nil && end.Kind == EndOK {
		select {
		case <-h.leaderDone:
		default:
			select {
			case h.ends <- end:
				e.endedNow[d.seq] = endedHere{attempt: d.attempt, handed: true}
				return
			default: // the leader is behind: through the database
			}
		}
	}
	if end.Kind == EndOK {
		// Told, not written: the leader deletes its row (TellSucceeded).
		// Until a read confirms it gone it counts as handed: a full read
		// that finds its row still running reports it there.
		e.endedNow[d.seq] = endedHere{attempt: d.attempt, handed: true}
		e.held[endKey{end.Seq, end.Attempt}] = struct{}{}
		e.told = append(e.told, end)
		return
	}
	e.endedNow[d.seq] = endedHere{attempt: d.attempt}
	e.addEnd(end)
}

// start runs grant g (from: the handoff it came in, nil when read). An
// earlier attempt of its job running here is stopped: its grant was taken
// back (this instance was declared lost) and granted here again.
func (e *execLoop) start(g Grant, from *handoff) {
	if e.isFenced() {
		return // a later read of the grants starts it, once heartbeats succeed again
	}
	if old := e.running[g.Seq]; old != nil {
		if old.attempt >= g.Attempt {
			return // this attempt or a later one runs here already
		}
		old.cancel(fmt.Errorf("%w: the grant was revoked", workers.ErrWorkerLost))
		delete(e.running, g.Seq)
		e.superseded++
	}
	ctx, cancel := context.WithCancelCause(e.fence.ctx) // stopped when the fence goes up
	a := &attempt{seq: g.Seq, attempt: g.Attempt, worker: g.Worker, cancel: cancel, from: from, since: time.Now()}
	if g.Worker != "" { // SlotFromContext tells the job its slot
		ctx = messages.WithSlot(ctx, messages.SlotRef{Worker: g.Worker, Slot: g.Slot})
	}
	var fn func(context.Context) error
	if g.Record.Owner != "" {
		fn = e.owned(g, cancel)
	} else {
		fn = e.handled(g)
	}
	if fn == nil {
		cancel(nil)
		return
	}
	e.running[g.Seq] = a
	go func() {
		panicked, err := call(ctx, fn)
		cancel(nil)
		e.x.ended <- ended{seq: g.Seq, attempt: g.Attempt, err: err, panic: panicked}
	}()
}

// owned is the function a grant of a RunSync or Submit job runs: its
// caller's, stopped with it; nil when it does not run now.
func (e *execLoop) owned(g Grant, cancel context.CancelCauseFunc) func(context.Context) error {
	c := e.closures[g.Seq]
	if c == nil {
		// Its caller inserted it and is handing the function over: it
		// starts when the function arrives. (A restarted process is a new
		// incarnation, so no grant waits here for a function that will
		// never come.)
		e.early[g.Seq] = earlyGrant{g, time.Now()}
		return nil
	}
	if c.ctx.Err() != nil {
		e.addEnd(End{Seq: g.Seq, Instance: e.x.n.id, Attempt: g.Attempt, Kind: EndPermanent,
			Error: ErrFunctionGone.Error()})
		return nil
	}
	c.running = true
	parent := c.ctx
	stopAfter := context.AfterFunc(parent, func() { cancel(context.Cause(parent)) })
	return func(ctx context.Context) error { defer stopAfter(); return c.fn(ctx) }
}

// handled is the function a grant of a durable job runs: its type's
// handler; nil when this instance has none.
func (e *execLoop) handled(g Grant) func(context.Context) error {
	rec := g.Record
	h := e.handlers[rec.Type]
	if h == nil {
		e.addEnd(End{Seq: g.Seq, Instance: e.x.n.id, Attempt: g.Attempt, Kind: EndError,
			Error: fmt.Sprintf("fairsched/cluster: no handler for %q on %s", rec.Type, e.x.n.id)})
		return nil
	}
	view := messages.DurableJob{Type: rec.Type, ID: rec.ID, Payload: rec.Payload, Attempt: g.Attempt,
		FairnessKey: rec.Key, Group: rec.Group, EnqueuedAt: rec.EnqueuedAt, Seq: rec.Seq}
	return func(ctx context.Context) error {
		err := h(ctx, view)
		if err != nil && !errors.Is(err, workers.ErrWorkerLost) {
			// A handler that returns ctx.Err() after this executor stopped
			// its attempt (revoked, heartbeats failing, its worker gone)
			// was interrupted, not failed: say why, as the in-process
			// scheduler does.
			if cause := context.Cause(ctx); errors.Is(cause, workers.ErrWorkerLost) {
				err = fmt.Errorf("%w: %w", cause, err)
			}
		}
		return err
	}
}

// checkGrants reads the grants — what changed since the last read;
// everything every Heartbeat (a grant taken back shows only there) — and
// starts the new ones (grantsCame). One read is out at a time: asked
// while one is, it reads again once that one is back.
func (e *execLoop) checkGrants() {
	if e.closing != nil || e.isFenced() {
		return
	}
	if e.reading {
		e.readAgain = true
		return
	}
	e.reading = true
	full := time.Since(e.lastFull) >= e.cfg.Heartbeat
	b, id, cursor := e.x.n.b, e.x.n.id, e.cursor
	e.io(func(ctx context.Context) func() {
		r := readOfGrants{full: full, began: time.Now()}
		if full {
			r.grants, r.err = b.Granted(ctx, id)
		} else {
			r.grants, r.next, r.err = b.GrantsSince(ctx, id, cursor)
		}
		return func() { e.grantsCame(r) }
	})
}

// readOfGrants is what a read of the grants returned.
type readOfGrants struct {
	full   bool
	began  time.Time
	grants []Grant
	next   ReadCursor // GrantsSince's
	err    error
}

// grantsCame takes a read of the grants back.
func (e *execLoop) grantsCame(r readOfGrants) {
	e.reading = false
	again := e.readAgain
	e.readAgain = false
	if r.err != nil {
		e.x.n.log.Warn("reading grants failed", zap.Error(r.err))
		e.retry.failed(e.cfg.Poll)
		return
	}
	e.retry.ok()
	switch {
	case e.closing != nil:
		return
	case e.isFenced():
		return // the read after the fence comes down reads every grant
	case r.began.Before(e.unfenced):
		// Begun before the fence came down: its grants may have been
		// taken back since (this instance declared lost) and granted
		// elsewhere. The read that follows reads every grant.
		e.checkGrants()
		return
	}
	if r.full {
		e.lastFull, e.fullFrom = time.Now(), r.began
		// Those still granted come again in this read; one that came
		// after it began is not in it.
		maps.DeleteFunc(e.early, func(_ uint64, g earlyGrant) bool { return g.at.Before(r.began) })
	} else {
		e.cursor = r.next
	}
	e.grantsRead(r.grants, r.full, r.began)
	if r.full { // a new period: the one before it is forgotten
		e.endedBefore, e.endedNow = e.endedNow, e.endedBefore
		clear(e.endedNow)
	}
	if again {
		e.checkGrants()
	}
}

// grantsRead starts the grants read that are new here, stops those
// cancelled and — full: every grant, read from began on — those taken
// back.
func (e *execLoop) grantsRead(grants []Grant, full bool, began time.Time) {
	granted := map[uint64]bool{}
	for _, g := range grants {
		granted[g.Seq] = true
		if a := e.running[g.Seq]; a != nil && a.attempt == g.Attempt {
			if g.Cancelled {
				a.cancel(revokedCause(g))
			}
			continue
		}
		if e.reportsHold(g.Seq, g.Attempt) {
			continue // ended here, report under way
		}
		if h, ok := e.endedAt(g.Seq, g.Attempt); ok {
			if h.handed && full { // its row still says running: report it here
				e.endedNow[g.Seq] = endedHere{attempt: g.Attempt}
				e.addEnd(End{Seq: g.Seq, Instance: e.x.n.id, Attempt: g.Attempt, Kind: EndOK})
			}
			continue // ended here already
		}
		if g.Cancelled { // cancelled before it started here: it never will
			delete(e.early, g.Seq)
			e.addEnd(End{Seq: g.Seq, Instance: e.x.n.id, Attempt: g.Attempt, Kind: EndPermanent,
				Error: revokedCause(g).Error()})
			continue
		}
		e.start(g, nil)
	}
	for seq, a := range e.running {
		// Taken back: this instance was declared lost. (One started since
		// the read began came in process, granted after it.)
		if full && !granted[seq] && a.since.Before(began) {
			a.cancel(fmt.Errorf("%w: the grant was revoked", workers.ErrWorkerLost))
		}
	}
}

// checkFinals reads how this instance's RunSync and Submit jobs not
// running ended (finalsCame). One read is out at a time, as of the grants.
func (e *execLoop) checkFinals() {
	if e.readingFinals {
		e.finalsNew = true
		return
	}
	var waiting []uint64
	for seq, c := range e.closures {
		if !c.running {
			waiting = append(waiting, seq)
		}
	}
	if len(waiting) == 0 {
		return
	}
	e.readingFinals = true
	b := e.x.n.b
	e.io(func(ctx context.Context) func() {
		finals, err := b.Finals(ctx, waiting)
		return func() { e.finalsCame(finals, err) }
	})
}

// finalsCame answers the callers of the jobs the read of finals found
// ended, and forgets the finished rows.
func (e *execLoop) finalsCame(finals []Final, err error) {
	e.readingFinals = false
	if e.finalsNew {
		e.finalsNew = false
		defer e.checkFinals()
	}
	if err != nil {
		e.x.n.log.Warn("reading finished jobs failed", zap.Error(err))
		e.retry.failed(e.cfg.Poll)
		return
	}
	e.retry.ok()
	var forget []uint64
	for _, f := range finals {
		c := e.closures[f.Seq]
		if c == nil {
			continue
		}
		if f.Gone && !c.succeeded && e.isFenced() {
			// A row gone means a success unless a leader declared this
			// instance lost meanwhile, which its next heartbeat tells.
			continue
		}
		delete(e.closures, f.Seq)
		if !f.Gone {
			forget = append(forget, f.Seq)
		}
		if c.done == nil {
			if err := outcome(c, f, e.x.wasLost(c)); err != nil {
				e.x.n.log.Error("background job failed", zap.Uint64("seq", f.Seq), zap.Error(err))
			}
			continue
		}
		c.done <- outcome(c, f, e.x.wasLost(c))
	}
	if len(forget) > 0 {
		b, log := e.x.n.b, e.x.n.log
		e.io(func(ctx context.Context) func() {
			if err := b.Forget(ctx, forget); err != nil {
				log.Warn("deleting finished jobs failed", zap.Error(err))
			}
			return func() {}
		})
	}
}

// beaten notes a heartbeat begun at t that succeeded (the fence's timer
// reads it from the executor's lastBeat): if the fence went up and t is
// recent enough, a new one is raised and grants run again.
func (e *execLoop) beaten(t time.Time) {
	if !e.isFenced() || time.Until(t.Add(e.margin)) <= 0 {
		return
	}
	e.raiseFence()
	e.fenced = false
	e.unfenced = time.Now()
	e.lastFull = time.Time{} // the next read of the grants reads every one
	e.x.n.log.Info("heartbeats succeed again: running grants")
}

// raiseFence raises a new fence (fence).
func (e *execLoop) raiseFence() {
	e.fence = newFence(&e.x.lastBeat, e.margin,
		fmt.Errorf("%w: %s could not beat its heartbeat", workers.ErrWorkerLost, e.x.n.id), e.x.fenceUp)
}

// isFenced reports whether the fence went up, and notes it if the loop
// has not yet (fenceUp).
func (e *execLoop) isFenced() bool {
	if !e.fenced && e.fence.isUp() {
		e.fenceUp()
	}
	return e.fenced
}

// fenceUp notes that the fence went up: heartbeats failing, the leader
// is about to grant the jobs running here again elsewhere. Their contexts
// are cancelled already (they derive from the fence's).
func (e *execLoop) fenceUp() {
	if !e.fenced && e.fence.isUp() {
		e.fenced = true
		e.x.n.log.Warn("heartbeats failing: stopping the jobs running here")
	}
}

func (e *execLoop) cancelRunning(cause error) {
	for _, a := range e.running {
		a.cancel(cause)
	}
}

// closeReq starts closing: a kill, or a Close out of time, stops the
// attempts at once; a Close in time lets them end until its deadline.
func (e *execLoop) closeReq(r closeReq) {
	e.closing = &r
	if r.ctx.Err() != nil {
		e.killed = true
		e.stopIO()
		e.cancelRunning(machine.ErrClosed)
		return
	}
	prev := e.stopCancelAll
	stop := context.AfterFunc(r.ctx, func() {
		select {
		case e.x.cancelAll <- struct{}{}:
		default:
		}
	})
	e.stopCancelAll = func() bool { prev(); return stop() }
}

// closed reports whether the executor is closed: closing, and no attempt
// runs any more — then the ends are reported and the callers waiting
// answered.
func (e *execLoop) closed() bool {
	if e.closing == nil || len(e.running) > 0 || e.superseded > 0 || e.out > 0 {
		return false
	}
	if !e.killed {
		e.flushBeforeClose()
	}
	for _, c := range e.closures {
		if c.done == nil {
			continue
		}
		if c.succeeded {
			c.done <- nil // its function ran here and returned nil
		} else {
			c.done <- machine.ErrClosed
		}
	}
	e.closing.reply <- nil
	return true
}

// flushBeforeClose reports the ends waiting, trying again every
// ReportEvery while the report fails, until the Close's context ends or
// LostAfter has passed — by then the leader declares this instance lost
// and refuses its reports: those jobs run again elsewhere.
func (e *execLoop) flushBeforeClose() {
	giveUp := time.Now().Add(e.cfg.LostAfter)
	for e.flush(); len(e.ends) > 0 && e.closing.ctx.Err() == nil && time.Now().Before(giveUp); e.flush() {
		select {
		case <-time.After(e.cfg.ReportEvery):
		case <-e.closing.ctx.Done():
		}
	}
}

// revokedCause is the cause a cancelled grant's attempt ends with: the
// preemption when a higher tier took its slot, else the Cancel.
func revokedCause(g Grant) error {
	if g.Preempted {
		return policy.ErrPreempted
	}
	return machine.ErrCancelled
}
