package metrics

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fairsched/fairsched"
)

// Defaults of the options.
const (
	// DefaultNamespace prefixes every metric name (WithNamespace).
	DefaultNamespace = "fairsched"
	// DefaultEventBuffer is the capacity of the collector's event
	// subscription (WithEventBuffer).
	DefaultEventBuffer = 4096
	// DefaultSnapshotTimeout bounds the snapshot a scrape takes
	// (WithSnapshotTimeout).
	DefaultSnapshotTimeout = time.Second
)

// DefaultBuckets returns the default buckets of the queue wait and job
// duration histograms, in seconds: prometheus.ExponentialBuckets(0.001, 4,
// 10), that is 1ms, 4ms, 16ms, 64ms, 256ms, 1.024s, 4.096s, 16.384s,
// 65.536s and 262.144s (about 4m22s), and +Inf. Each call returns a fresh
// slice.
func DefaultBuckets() []float64 { return prometheus.ExponentialBuckets(0.001, 4, 10) }

// Option configures New. Options are applied in order; a later option of
// the same kind wins.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	namespace string
	buckets   []float64
	buffer    int
	timeout   time.Duration
	// onEvent, when set, is called by the collector's goroutine with each
	// event before it is recorded. Tests use it to stall the goroutine.
	onEvent func(fairsched.Event)
	err     error
}

func defaultConfig() config {
	return config{
		namespace: DefaultNamespace,
		buckets:   DefaultBuckets(),
		buffer:    DefaultEventBuffer,
		timeout:   DefaultSnapshotTimeout,
	}
}

// fail records the first invalid option; New returns it.
func (c *config) fail(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: metrics."+format, append([]any{fairsched.ErrInvalidConfig}, args...)...)
	}
}

// WithNamespace prefixes every metric name with ns and an underscore
// (default "fairsched"; "" for no prefix). ns must be a valid metric name
// prefix: letters, digits, '_' and ':', not starting with a digit.
func WithNamespace(ns string) Option {
	return optionFunc(func(c *config) {
		if !validNamespace(ns) {
			c.fail("WithNamespace(%q): not a valid metric name prefix", ns)
			return
		}
		c.namespace = ns
	})
}

// WithBuckets sets the upper bounds, in seconds, of the buckets of the
// queue_wait_seconds and job_duration_seconds histograms (default
// DefaultBuckets()). They must be finite and strictly increasing; +Inf is
// always added. b is copied.
func WithBuckets(b []float64) Option {
	return optionFunc(func(c *config) {
		if len(b) == 0 {
			c.fail("WithBuckets: no bucket")
			return
		}
		for i, v := range b {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				c.fail("WithBuckets: bucket %d is %v: must be finite", i, v)
				return
			}
			if i > 0 && v <= b[i-1] {
				c.fail("WithBuckets: bucket %d (%v) not above bucket %d (%v): must increase strictly", i, v, i-1, b[i-1])
				return
			}
		}
		c.buckets = slices.Clone(b)
	})
}

// WithEventBuffer sets the capacity of the collector's event subscription
// (default 4096). The scheduler never waits for the collector: events that
// find the buffer full are dropped and counted in events_lost_total, so the
// buffer should hold the largest burst the collector's goroutine may fall
// behind by. 0 receives only the events that find the goroutine waiting; a
// negative n is ErrInvalidConfig.
func WithEventBuffer(n int) Option {
	return optionFunc(func(c *config) {
		if n < 0 {
			c.fail("WithEventBuffer(%d): must not be negative", n)
			return
		}
		c.buffer = n
	})
}

// WithSnapshotTimeout bounds how long Collect waits for the scheduler's
// snapshot (default 1s). When it passes, or the scheduler is closed, the
// scrape goes on without the snapshot's metrics and snapshot_errors_total
// counts it. d must be positive.
func WithSnapshotTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d <= 0 {
			c.fail("WithSnapshotTimeout(%v): must be positive", d)
			return
		}
		c.timeout = d
	})
}

// withEventHook makes the collector's goroutine call f with each event
// before recording it (tests).
func withEventHook(f func(fairsched.Event)) Option {
	return optionFunc(func(c *config) { c.onEvent = f })
}

// validNamespace reports whether ns is "" or matches
// [a-zA-Z_:][a-zA-Z0-9_:]*.
func validNamespace(ns string) bool {
	for i, r := range ns {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_', r == ':':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
