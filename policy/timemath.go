package policy

import (
	"math"
	"time"
)

// Arithmetic on durations that cannot wrap: a sum or a conversion past the
// int64 range saturates, so a deadline, deferral, backoff or refill that far
// off simply never comes, rather than wrapping to the past and coming at
// once. (The queue keeps instants as saturated offsets from its epoch:
// queue.Queue.Nanos.)

// AddSat returns a + b, saturated to the time.Duration range.
func AddSat(a, b time.Duration) time.Duration {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}

// DurationSat converts a float64 number of nanoseconds to a Duration,
// saturated (NaN is 0): Go leaves the conversion of an out-of-range float
// undefined.
func DurationSat(ns float64) time.Duration {
	switch {
	case ns != ns:
		return 0
	case ns >= math.MaxInt64:
		return math.MaxInt64
	case ns <= math.MinInt64:
		return math.MinInt64
	}
	return time.Duration(ns)
}
