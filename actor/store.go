package actor

import (
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/fairsched/fairsched/core"
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
func (a *Actor) startWriter() {
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
				err := safeApply(a.dur.store, b.ops)
				if err != nil {
					a.log.Error("committing durable jobs failed", zap.Error(err))
				}
				a.dur.committed <- batchDone{b, err} // the owner takes it before it sends another
			}
		}
	}()
}

// save hands the state to keep across restarts to the writer, replacing a
// save it has not started yet. Never blocks.
func (a *Actor) save() {
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
func (a *Actor) stopWriter() {
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
