package actor

import (
	"errors"
	"fmt"
	"maps"

	"go.uber.org/zap"

	"github.com/fairsched/fairsched/core"
)

// Saving. The owner never waits on the store: it hands a copy of the state
// to a writer goroutine (latest wins: a save not yet started is replaced by
// a newer one) and goes on. A store that blocks holds up its writer only;
// Close waits for the final save as long as its context lets it. A store
// that panics is turned into an error wrapping ErrStore, here or at Load
// (SafeLoad), so that no Store can take the process down.

// ErrStore wraps every failure of a Store, a panic included.
var ErrStore = errors.New("fairsched: store")

// startWriter starts the writer goroutine when there is a store; written is
// closed when it has returned (at once without a store).
func (a *Actor) startWriter() {
	a.written = make(chan struct{})
	if a.store == nil {
		close(a.written)
		return
	}
	a.saves = make(chan core.State, 1)
	go func() {
		defer close(a.written)
		for st := range a.saves {
			if err := safeSave(a.store, st); err != nil {
				a.log.Error("saving the scheduler state failed", zap.Error(err))
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
	st := core.State{Estimates: a.core.Estimates(), LastRuns: maps.Clone(a.lastRuns)}
	select {
	case <-a.saves: // superseded
	default:
	}
	a.saves <- st // the owner is the only sender: the slot is free
}

// stopWriter lets the writer finish the saves handed to it and return.
func (a *Actor) stopWriter() {
	if a.saves != nil {
		close(a.saves)
	}
}

// safeSave calls s.Save, turning an error or a panic into one wrapping
// ErrStore.
func safeSave(s Store, st core.State) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: save panicked: %v", ErrStore, v)
		}
	}()
	if err := s.Save(st); err != nil {
		return fmt.Errorf("%w: save: %w", ErrStore, err)
	}
	return nil
}

// SafeLoad calls s.Load, turning an error or a panic into one wrapping
// ErrStore.
func SafeLoad(s Store) (st core.State, err error) {
	defer func() {
		if v := recover(); v != nil {
			st, err = core.State{}, fmt.Errorf("%w: load panicked: %v", ErrStore, v)
		}
	}()
	if st, err = s.Load(); err != nil {
		return core.State{}, fmt.Errorf("%w: loading: %w", ErrStore, err)
	}
	return st, nil
}
