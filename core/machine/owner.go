package machine

import (
	"errors"
	"time"

	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// The calls of an owner that takes its callers' messages itself, as the
// actor's goroutine does: it hands each request and each end of a job to
// the machine (Receive, Finish), groups a drained batch of them so that
// dispatch runs once (BeginBatch, EndBatch), and ends each turn with
// EndTurn. The turn-based calls (Do's kin in machine.go) end their turn
// themselves.

// Receive handles request r, its dispatch deferred to the batch's end
// when a batch is open.
func (a *Machine) Receive(r messages.Request) {
	switch r.(type) {
	case messages.Submit, messages.SubmitChecked: // a verdict needs no admission first
	default:
		a.flush() // what it asks or answers sees every earlier admission
	}
	a.handle(r)
}

// Finish takes the end of an attempt started by StartLocal.
func (a *Machine) Finish(d messages.Done) { a.finish(d) }

// BeginBatch opens a batch: the dispatches its messages ask for are made
// once, at EndBatch.
func (a *Machine) BeginBatch() { a.batching = true }

// EndBatch closes the batch and makes the dispatch it asked for.
func (a *Machine) EndBatch() {
	a.batching = false
	a.flush()
}

// EndTurn is the owner's work after each turn (endTurn).
func (a *Machine) EndTurn() { a.endTurn() }

// Park tells the machine its owner is about to wait: the next message
// reads the clock again.
func (a *Machine) Park() { a.turnNow = time.Time{} }

// Drained reports whether a Close has begun and nothing is left to run
// or to write: the owner may stop.
func (a *Machine) Drained() bool { return a.closing && a.core.Idle() && a.durableIdle() }

// PollLoad reads the load signal if it is due, without waiting on LoadC;
// it reports whether it read it.
func (a *Machine) PollLoad() bool { return a.loadC != nil && a.pollLoad() }

// Types is the registry of job types; any goroutine may read it.
func (a *Machine) Types() map[policy.JobType]policy.JobTypeConfig { return *a.types.Load() }

// Refuses reports whether the limits may refuse a submission, so that a
// submitter waits for the verdict; any goroutine may read it.
func (a *Machine) Refuses() bool { return a.refuses.Load() }

// RefuseAll turns the machine to refusing every request with ErrClosed:
// its owner answers the requests still on their way before it stops.
func (a *Machine) RefuseAll() { a.aborted = true }

// Dropped is how many jobs were refused with ErrClosed; read it once the
// owner has stopped.
func (a *Machine) Dropped() int { return a.dropped }

// Written is closed once the store writer has stored the final state.
func (a *Machine) Written() <-chan struct{} { return a.written }

// StopTimers stops the machine's timers: the tick, the wake, the load
// signal's.
func (a *Machine) StopTimers() {
	a.ticker.Stop()
	a.disarm()
	a.stopLoad()
}

// Shutdown is the machine's last step: subscribers' channels closed,
// background contexts cancelled, the state saved and the store writer
// told to finish (Written).
func (a *Machine) Shutdown() {
	a.closeSubscribers()
	a.cancelBase()
	a.save()
	a.stopWriter()
}

// flush makes the dispatch the batch so far has asked for, if any.
func (a *Machine) flush() {
	if !a.dirty {
		return
	}
	batching := a.batching
	a.batching, a.dirty = false, false
	a.dispatch(a.now())
	a.batching = batching
}

// ErrNoRunner ends a job admitted by a machine whose owner runs no job
// itself (no Config.StartLocal): a type not started remotely, in cluster
// mode's leader.
var ErrNoRunner = errors.New("fairsched: the scheduler's owner runs no job of this type here")

// startBackground hands background job j, admitted, to the owner's
// runner (Config.StartLocal); without one, j ends with ErrNoRunner at
// the turn's end (endTurn: not within the dispatch that admitted it).
func (a *Machine) startBackground(j *messages.Job) {
	if a.startLocal != nil {
		a.startLocal(j)
		return
	}
	a.unrun = append(a.unrun, j)
}

// endUnrun ends the jobs admitted with no runner to start them.
func (a *Machine) endUnrun() {
	for len(a.unrun) > 0 {
		j := a.unrun[0]
		a.unrun = a.unrun[1:]
		j.Run().End()
		a.finish(messages.Done{Job: j, Err: ErrNoRunner})
	}
	a.unrun = nil
}

// TakeBatch returns the ops of the batch of records waiting to be written
// (Config.OwnerCommits), and whether one waits: the owner writes them in
// its own write, all or none, and reports how with BatchWritten before it
// takes another. A batch may hold no op (an answer that waits for the
// writes before it): it is written all the same.
func (a *Machine) TakeBatch() ([]JobOp, bool) {
	d := a.dur
	if d == nil || !d.ownerCommits || d.taken {
		return nil, false
	}
	if d.flight == nil {
		a.flushDurable()
		if d.flight == nil {
			return nil, false
		}
	}
	d.taken = true
	return d.flight.ops, true
}

// BatchWritten reports the write of the batch TakeBatch returned: nil, it
// is committed; an error matching ErrRecordRefused, nothing is and the
// batch is written again through the store in parts, so that only the
// refused records fail (commitBatch); any other error, nothing is, and
// the records are written again with a later batch.
func (a *Machine) BatchWritten(err error) {
	d := a.dur
	if d == nil || !d.taken {
		return
	}
	d.taken = false
	r := Commit{b: d.flight, err: err}
	if err != nil && refused(err) {
		r = commitBatch(d.store, d.flight)
	}
	a.Committed(r)
}

// commitNow writes the batch waiting, if one does, through the store, in
// the owner's turn: an answer that waits for it, or Stop, cannot wait for
// the owner's next write (Config.OwnerCommits).
func (a *Machine) commitNow() bool {
	if _, ok := a.TakeBatch(); !ok {
		return false
	}
	d := a.dur
	d.taken = false
	a.Committed(commitBatch(d.store, d.flight))
	return true
}

// RecordsWaiting reports whether a batch of records waits for TakeBatch
// (Config.OwnerCommits), or records for the next batch.
func (a *Machine) RecordsWaiting() bool {
	d := a.dur
	return d != nil && d.ownerCommits && !d.taken && (d.flight != nil || len(d.ops) > 0 || len(d.acks) > 0)
}
