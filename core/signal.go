package core

import (
	"time"

	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/workers"
)

// loadState is what the core keeps of the load signal's readings
// (Limits.Load): the owner reads the signal and hands the value in (Load);
// the rules it drives live here.
type loadState struct {
	value      float64 // the last good reading, in [0, 1]
	overloaded bool    // value ≥ the threshold
	// holding: the last reading defers admissions (overloaded, with
	// OverloadDefer); Dispatch reads this one flag.
	holding           bool
	readings, skipped uint64
}

// LoadSnapshot is the load signal's state in a Snapshot.
type LoadSnapshot struct {
	// Value is the last good reading, in [0, 1]; 0 before the first.
	Value float64 `json:"value"`
	// Overloaded: Value is at or above Threshold.
	Overloaded bool                  `json:"overloaded"`
	Threshold  float64               `json:"threshold"`
	Action     policy.OverloadAction `json:"action"`
	// Readings counts the good readings, Skipped those skipped (an error,
	// a NaN, a panic of the signal).
	Readings uint64 `json:"readings"`
	Skipped  uint64 `json:"skipped"`
}

// LoadConfig returns the load signal's settings, and false without one:
// the owner reads Signal every Every and hands the result to Load.
func (c *Core) LoadConfig() (policy.LoadConfig, bool) {
	if c.limits.Load == nil {
		return policy.LoadConfig{}, false
	}
	return *c.limits.Load, true
}

// LoadState returns what a load signal is told of the core at now. It
// counts the worker slots: O(slots), once a reading.
func (c *Core) LoadState(now time.Time) policy.LoadState {
	s := policy.LoadState{Now: now, Pending: c.queue.Len(), Running: len(c.running), Limit: c.limits.MaxConcurrency}
	c.pool.Each(func(w *workers.Slot) {
		s.WorkerSlots++
		if w.Busy() {
			s.WorkersBusy++
		}
	})
	return s
}

// Load takes a reading of the load signal at now: ok false skips it (the
// signal failed), leaving the last good reading in force. A good reading
// sets the overload state — which defers or refuses new work as the
// LoadConfig says — and moves an adaptive limit that follows load. Call
// Dispatch next: a reading that clears the overload, or raises the limit,
// lets jobs start.
func (c *Core) Load(now time.Time, value float64, ok bool) {
	l := c.limits.Load
	if l == nil {
		return
	}
	c.queue.At(now)
	if !ok {
		c.load.skipped++
		return
	}
	c.load.readings++
	c.load.value = value
	c.load.overloaded = value >= l.Threshold
	c.load.holding = c.load.overloaded && l.Action == policy.OverloadDefer
	if a := c.limits.Adaptive; a != nil && a.LoadTarget > 0 {
		inUse := len(c.running) >= c.limits.MaxConcurrency
		if next := a.NextLoad(c.limits.MaxConcurrency, value, inUse); next != c.limits.MaxConcurrency {
			c.setLimit(next)
		}
	}
}

// LoadNow returns the last good reading, whether it is overloaded, and the
// global limit (which an adaptive limit that follows load moves).
func (c *Core) LoadNow() (value float64, overloaded bool, limit int) {
	return c.load.value, c.load.overloaded, c.limits.MaxConcurrency
}

// overloadRefuses reports whether Submit refuses new jobs now: the last
// reading is overloaded and the action is OverloadRefuse.
func (c *Core) overloadRefuses() bool {
	return c.load.overloaded && c.limits.Load.Action == policy.OverloadRefuse
}

// holdOverloaded records that the queue's head starts to wait on the
// overload (once per wait, as every defer record): Dispatch admits nothing
// while the load signal reads overloaded with OverloadDefer.
func (c *Core) holdOverloaded(now time.Time) {
	if !c.logDecisions {
		return
	}
	if qj := c.queue.Best(); qj != nil {
		c.startsWaiting(now, jobOf(qj), policy.ReasonOverloaded, 0)
	}
}

// loadSnapshot is the snapshot's copy of the load state; nil without a
// signal.
func (c *Core) loadSnapshot() *LoadSnapshot {
	l := c.limits.Load
	if l == nil {
		return nil
	}
	return &LoadSnapshot{Value: c.load.value, Overloaded: c.load.overloaded, Threshold: l.Threshold,
		Action: l.Action, Readings: c.load.readings, Skipped: c.load.skipped}
}
