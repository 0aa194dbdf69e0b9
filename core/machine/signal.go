package machine

import (
	"fmt"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/zap"

	"github.com/fairsched/fairsched/policy"
)

// loadReader reads the load signal (policy.LoadConfig) on its own ticker:
// the owner's other tick is the key TTL's quarter, minutes by default, far
// too slow to follow a load. The actor only reads the signal and hands the
// value to the core, whose rules it drives.
type loadReader struct {
	signal policy.LoadSignal
	ticker *clock.Ticker
	// failing: the last reading was skipped; a run of skipped readings
	// is logged once, at its start.
	failing bool
}

// startLoad starts the load ticker when the core has a load signal; loadC
// stays nil (its select cases off, no cost) otherwise.
func (a *Machine) startLoad() {
	lc, ok := a.core.LoadConfig()
	if !ok {
		return
	}
	a.load = &loadReader{signal: lc.Signal, ticker: a.clock.Ticker(lc.Every)}
	a.loadC = a.load.ticker.C
}

// stopLoad stops the load ticker, if any.
func (a *Machine) stopLoad() {
	if a.load != nil {
		a.load.ticker.Stop()
	}
}

// pollLoad takes a reading when one is due, without waiting: the owner
// calls it between batches, as a busy owner never parks on its select
// (where the ticker's case is) — and a busy owner is when the reading
// matters. It reports whether it took one.
func (a *Machine) pollLoad() bool {
	if a.loadC == nil {
		return false
	}
	select {
	case <-a.loadC:
		a.readLoad()
		return true
	default:
		return false
	}
}

// readLoad reads the signal and hands the value to the core, then
// dispatches: a reading that clears the overload or raises the limit lets
// jobs start.
func (a *Machine) readLoad() {
	// A fresh time: the turn's may be a batch's, read before the tick (it
	// would stamp the reading's admissions early).
	a.turnNow = time.Time{}
	now := a.now()
	v, err := a.callSignal(a.core.LoadState(now))
	value, ok := policy.Reading(v, err)
	if !ok && !a.load.failing {
		a.log.Warn("load signal reading skipped, the last good one stays in force", zap.Float64("value", v), zap.Error(err))
	}
	a.load.failing = !ok
	_, wasOver, wasLimit := a.core.LoadNow()
	a.core.Load(now, value, ok)
	if _, over, _ := a.core.LoadNow(); ok {
		a.verdict.Store(&LoadVerdict{Overloaded: over, At: now})
	}
	if _, over, limit := a.core.LoadNow(); ok && (over != wasOver || limit != wasLimit) {
		a.log.Debug("load reading", zap.Float64("value", value), zap.Bool("overloaded", over),
			zap.Int("limit", limit), zap.Int("previous_limit", wasLimit))
	}
	if !a.aborted {
		a.dispatch(now)
	}
}

// callSignal calls the signal, turning a panic into an error: it is the
// application's code, run on the owner goroutine.
func (a *Machine) callSignal(s policy.LoadState) (v float64, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = 0, fmt.Errorf("load signal panicked: %v", p)
		}
	}()
	return a.load.signal.Load(s)
}
