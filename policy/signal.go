package policy

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// ReasonOverloaded: the load signal's last reading is at or above its
// threshold (LoadConfig). With OverloadDefer no pending job is admitted
// until a reading falls below it; with OverloadRefuse, Submit refuses new
// jobs (a RefusalError matching ErrOverloaded) meanwhile.
const ReasonOverloaded Reason = "overloaded"

// LoadState is what the scheduler knows of its own load when it reads a
// load signal; a signal may use it or look elsewhere (the CPU).
type LoadState struct {
	Now     time.Time
	Pending int // jobs waiting
	Running int // jobs running
	// Limit is the global cap (the adaptive limit's current value); 0 when
	// unlimited.
	Limit int
	// WorkerSlots are the registered worker slots, WorkersBusy those of
	// them that run a job.
	WorkerSlots, WorkersBusy int
}

// LoadSignal tells how loaded the service is. The scheduler's owner
// goroutine calls Load every LoadConfig.Every, one call at a time: it must
// be quick and must not block (read a file, an atomic; never the network).
type LoadSignal interface {
	// Load returns the load in [0, 1]: 0 idle, 1 saturated. Values outside
	// are clamped. An error, a NaN or a panic skips the reading: the last
	// good reading stays in force.
	Load(LoadState) (float64, error)
}

// LoadFunc adapts a function to LoadSignal.
type LoadFunc func(LoadState) (float64, error)

// Load calls f.
func (f LoadFunc) Load(s LoadState) (float64, error) { return f(s) }

// QueueLength is a load signal of the queue's length: Pending / bound,
// capped at 1 — at bound jobs waiting, the signal is saturated. bound must
// be at least 1.
func QueueLength(bound int) LoadSignal {
	return LoadFunc(func(s LoadState) (float64, error) {
		if bound < 1 {
			return 0, InvalidConfig("QueueLength bound", bound, "must be at least 1")
		}
		return min(1, float64(s.Pending)/float64(bound)), nil
	})
}

// WorkerUtilisation is a load signal of the slots in use: busy worker slots
// over registered ones when workers are registered, else running jobs over
// the global cap (0 while unlimited). Overload is at 0.9 and above by
// default (LoadConfig's default threshold).
func WorkerUtilisation() LoadSignal {
	return LoadFunc(func(s LoadState) (float64, error) {
		switch {
		case s.WorkerSlots > 0:
			return float64(s.WorkersBusy) / float64(s.WorkerSlots), nil
		case s.Limit > 0:
			return min(1, float64(s.Running)/float64(s.Limit)), nil
		}
		return 0, nil
	})
}

// OverloadAction says what the scheduler does with new work while the load
// signal reads overloaded.
type OverloadAction uint8

const (
	// OverloadDefer, the zero value: pending jobs wait (reason
	// overloaded) until a reading falls below the threshold; running jobs
	// go on.
	OverloadDefer OverloadAction = iota
	// OverloadRefuse: Submit refuses new jobs (RefusalError, reason
	// overloaded, matching ErrOverloaded); jobs already queued are
	// admitted as usual.
	OverloadRefuse
	// OverloadObserve: nothing is held back; the reading only drives the
	// adaptive limit (AdaptiveLimitConfig.LoadTarget), the snapshot and
	// the metrics.
	OverloadObserve
)

// String returns "defer", "refuse" or "observe".
func (a OverloadAction) String() string {
	switch a {
	case OverloadDefer:
		return "defer"
	case OverloadRefuse:
		return "refuse"
	case OverloadObserve:
		return "observe"
	}
	return fmt.Sprintf("OverloadAction(%d)", uint8(a))
}

// MarshalText encodes the action by name, for JSON and YAML.
func (a OverloadAction) MarshalText() ([]byte, error) {
	if a > OverloadObserve {
		return nil, InvalidConfig("OverloadAction", uint8(a), "is not an overload action")
	}
	return []byte(a.String()), nil
}

// UnmarshalText decodes "defer" (or ""), "refuse" and "observe".
func (a *OverloadAction) UnmarshalText(b []byte) error {
	switch string(b) {
	case "", "defer":
		*a = OverloadDefer
	case "refuse":
		*a = OverloadRefuse
	case "observe":
		*a = OverloadObserve
	default:
		return InvalidConfig("OverloadAction", string(b), `must be "defer", "refuse" or "observe"`)
	}
	return nil
}

// LoadConfig reads a load signal on the owner goroutine and says what a
// high reading does.
type LoadConfig struct {
	Signal LoadSignal
	// Every is the period of the readings; default 1 s, at least 1 ms.
	Every time.Duration
	// Threshold: a reading at or above it is overloaded; in (0, 1],
	// default 0.9.
	Threshold float64
	// Action is what an overloaded reading does to new work.
	Action OverloadAction
}

// Defaults of LoadConfig.
const (
	DefaultLoadEvery     = time.Second
	DefaultLoadThreshold = 0.9
)

// WithDefaults fills in the zero fields.
func (l LoadConfig) WithDefaults() LoadConfig {
	if l.Every == 0 {
		l.Every = DefaultLoadEvery
	}
	if l.Threshold == 0 {
		l.Threshold = DefaultLoadThreshold
	}
	return l
}

// Validate checks the signal, period, threshold and action.
func (l LoadConfig) Validate() error {
	switch {
	case l.Signal == nil:
		return InvalidConfig("LoadConfig.Signal", "nil", "a load signal is required")
	case l.Every < time.Millisecond:
		return InvalidConfig("LoadConfig.Every", l.Every, "must be at least 1ms")
	case !(l.Threshold > 0 && l.Threshold <= 1):
		return InvalidConfig("LoadConfig.Threshold", l.Threshold, "must be in (0, 1]")
	case l.Action > OverloadObserve:
		return InvalidConfig("LoadConfig.Action", uint8(l.Action), "is not an overload action")
	}
	return nil
}

// Reading returns a signal's value as the scheduler takes it: clamped to
// [0, 1], and false for a NaN or an error (the reading is skipped).
func Reading(v float64, err error) (float64, bool) {
	if err != nil || math.IsNaN(v) {
		return 0, false
	}
	return min(1, max(0, v)), true
}

// NextLoad returns the adaptive limit after a load reading (LoadTarget
// set): above the target the limit backs off, at or below it grows by one
// when inUse (at least limit jobs running).
func (a AdaptiveLimitConfig) NextLoad(limit int, load float64, inUse bool) int {
	if load > a.LoadTarget {
		return max(a.Min, int(math.Floor(float64(limit)*a.Backoff)))
	}
	if inUse {
		if limit >= a.Max {
			return a.Max
		}
		return limit + 1
	}
	return limit
}

// validateLoad checks the load signal's settings and that an adaptive limit
// that follows load has a signal to follow.
func (l Limits) validateLoad() error {
	if l.Load != nil {
		if err := l.Load.Validate(); err != nil {
			return err
		}
	}
	if a := l.Adaptive; a != nil && a.LoadTarget > 0 && l.Load == nil {
		return InvalidConfig("AdaptiveLimit.LoadTarget", a.LoadTarget, "follows a load signal: configure one (WithLoadSignal)")
	}
	return nil
}

// errNaN is the error of a reading that is not a number.
var errNaN = errors.New("the reading is not a number")

// MaxOf is a load signal of several: the highest of their readings, so
// that the service is overloaded when any of them is (with the default
// threshold: at 90 % of the slots busy or 90 % of the CPU). A signal that fails is left out
// of the reading; MaxOf fails only when all of them do (none at all
// included), with their errors. A panic of one is the whole reading's.
func MaxOf(signals ...LoadSignal) LoadSignal {
	return LoadFunc(func(s LoadState) (float64, error) {
		best, ok := 0.0, false
		var errs []error
		for i, sig := range signals {
			raw, err := sig.Load(s)
			v, good := Reading(raw, err)
			if !good {
				if err == nil {
					err = errNaN
				}
				errs = append(errs, fmt.Errorf("load signal %d of %d: %w", i+1, len(signals), err))
				continue
			}
			best, ok = max(best, v), true
		}
		if !ok {
			return 0, fmt.Errorf("no load signal of %d gave a reading: %w", len(signals), errors.Join(errs...))
		}
		return best, nil
	})
}
