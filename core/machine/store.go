package machine

import (
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/internal/bisect"
)

// Saving. The owner never waits on the store: it hands a copy of the state
// to a writer goroutine (latest wins: a save not yet started is replaced by
// a newer one) and goes on. A store that blocks holds up its writer only;
// Close waits for the final save as long as its context lets it. A store
// that panics is turned into an error wrapping ErrStore, here or at Load
// (SafeLoad), so that no Store can take the process down.

// Errors of stores. A store's failure wraps ErrStore; the two below say
// more, and match ErrStore too.
var (
	// ErrStore wraps every failure of a Store, a panic included.
	ErrStore = errors.New("fairsched: store")
	// ErrRecordRefused: the store refused a record for what it holds (a
	// value its database cannot keep), not for the state of a connection:
	// writing the same record again fails again. A JobStore returns it
	// (wrapped) from ApplyJobs when any record of the batch is refused so,
	// and the scheduler then commits the batch's records in parts, so that
	// only the refused one fails.
	ErrRecordRefused = errors.New("fairsched: record refused by the store")
	// ErrOutcomeUnknown: the store's reply to a commit was lost — the
	// connection died after the commit was sent — so the write may or may
	// not have happened. Retrying an Enqueue with the same (type, id) is
	// safe: ErrDuplicateJob then means the first one was stored.
	ErrOutcomeUnknown = errors.New("fairsched: outcome of the store's commit unknown")
)

// startWriter starts the writer goroutine when there is a store; written is
// closed when it has returned (at once without a store).
func (a *Machine) startWriter() {
	a.written = make(chan struct{})
	if a.store == nil {
		close(a.written)
		return
	}
	a.saves = make(chan core.State, 1)
	saves := a.saves
	var batches chan *jobBatch
	if a.dur != nil {
		batches = a.dur.batches
	}
	go func() {
		defer close(a.written)
		var pause time.Duration
		for saves != nil || batches != nil {
			select {
			case st, ok := <-saves:
				if !ok {
					saves = nil
					continue
				}
				if err := safeSave(a.store, st); err != nil {
					a.log.Error("saving the scheduler state failed", zap.Error(err))
				}
			case b, ok := <-batches:
				if !ok {
					batches = nil
					continue
				}
				if pause > 0 && !b.awaited() {
					// Only writes queued again after a transient failure:
					// nobody waits on them, so do not hammer a store that
					// is down.
					time.Sleep(pause)
				}
				r := commitBatch(a.dur.store, b)
				switch {
				case r.err != nil:
					a.log.Error("committing durable jobs failed", zap.Error(r.err))
					pause = min(max(2*pause, minPause), maxPause)
				default:
					pause = 0
				}
				a.dur.committed <- r // the owner takes it before it sends another
			}
		}
	}()
}

// The writer's wait before a batch of writes queued again, after each
// transient failure: doubled from minPause up to maxPause.
const (
	minPause = 10 * time.Millisecond
	maxPause = 250 * time.Millisecond
)

// commitBatch commits b's ops. The fast path is one ApplyJobs. When the
// store refuses the batch for a record's data (ErrRecordRefused, or
// ErrDuplicateJob for a (type, id) it holds), the batch is committed in
// parts by bisection, in order — so a put and a later delete of one
// sequence stay in that order —, until each refused unit is alone: every
// other op is written, and each refused one gets the error it got alone.
// A unit is an Enqueue's ops (its put and the delete of the record it
// replaces), never split, or one other op. With one refused unit among n,
// that is at most 2·⌈log2 n⌉ more commits. A transient failure in between
// stops it: the ops from there on fail with it (Commit.err).
func commitBatch(s JobStore, b *jobBatch) Commit {
	err := safeApply(s, b.ops)
	if err == nil || !refused(err) {
		return Commit{b: b, err: err}
	}
	// The units, in op order; so are the acks' ranges.
	var units []unit
	k := 0
	for i := 0; i < len(b.ops); {
		for k < len(b.acks) && (b.acks[k].j == nil || b.acks[k].to <= i) {
			k++
		}
		u := unit{i, i + 1}
		if k < len(b.acks) && b.acks[k].from == i && b.acks[k].to > i {
			u.to = b.acks[k].to
		}
		units = append(units, u)
		i = u.to
	}
	r := Commit{b: b, opErrs: make([]error, len(b.ops))}
	write := func(part []unit) error { return safeApply(s, b.ops[part[0].from:part[len(part)-1].to]) }
	n, _, err := bisect.Settle(units, err, write, refused, func(u unit, err error) error {
		for i := u.from; i < u.to; i++ {
			r.opErrs[i] = err
		}
		return nil
	})
	if err != nil { // transient: what is left is not written
		r.err = err
		for i := units[n].from; i < len(b.ops); i++ {
			r.opErrs[i] = err
		}
	}
	return r
}

// awaited reports whether a caller waits on b's commit.
func (b *jobBatch) awaited() bool {
	for _, k := range b.acks {
		if !k.resolving {
			return true
		}
	}
	return false
}

// refused reports whether err, ApplyJobs', says the data of a record is at
// fault: committing the same record again fails again.
func refused(err error) bool {
	return errors.Is(err, ErrRecordRefused) || errors.Is(err, ErrDuplicateJob)
}

// save hands the state to keep across restarts to the writer, replacing a
// save it has not started yet. Never blocks.
func (a *Machine) save() {
	if a.store == nil {
		return
	}
	st := core.State{Estimates: a.core.Estimates(), LastRuns: a.core.LastRuns(), KeyCosts: a.core.KeyCosts()}
	select {
	case <-a.saves: // superseded
	default:
	}
	a.saves <- st // the owner is the only sender: the slot is free
}

// stopWriter lets the writer finish the saves handed to it and return.
// The owner has stopped with no batch of durable jobs in flight.
func (a *Machine) stopWriter() {
	if a.saves != nil {
		close(a.saves)
	}
	if a.dur != nil && a.dur.batches != nil {
		close(a.dur.batches)
	}
}

// guarded calls f, one call to a Store, turning its error or its panic
// into one wrapping ErrStore that names what: no Store can take the
// process down.
func guarded(what string, f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: %s panicked: %v", ErrStore, what, v)
		}
	}()
	if err := f(); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrStore, what, err)
	}
	return nil
}

// safeApply calls s.ApplyJobs under guarded.
func safeApply(s JobStore, ops []JobOp) error {
	return guarded("committing jobs", func() error { return s.ApplyJobs(ops) })
}

// safeSave calls s.Save under guarded.
func safeSave(s Store, st core.State) error {
	return guarded("save", func() error { return s.Save(st) })
}

// SafeLoadJobs reads every job record of s under guarded; a record that is
// not valid is refused, never misread.
func SafeLoadJobs(s JobStore) (recs []core.JobRecord, err error) {
	err = guarded("loading jobs", func() error {
		return s.LoadJobs(func(r core.JobRecord) error {
			if !r.Valid() {
				return fmt.Errorf("record %d (%s/%s) is not valid", r.Seq, r.Type, r.ID)
			}
			recs = append(recs, r)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return recs, nil
}

// SafeLoad calls s.Load under guarded.
func SafeLoad(s Store) (st core.State, err error) {
	err = guarded("load", func() (err error) { st, err = s.Load(); return err })
	if err != nil {
		return core.State{}, err
	}
	return st, nil
}

// unit is the ops [from, to) of a batch committed together or not at all:
// an Enqueue's put and the delete of the record it replaces, or one op.
type unit struct{ from, to int }
