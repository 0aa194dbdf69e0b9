package policy

import (
	"math"
	"time"
)

// Time arithmetic that cannot wrap. Instants are kept as time.Time, whose
// range is wide; they become int64 nanoseconds (UnixNano) only where heaps
// order them or a pending job keeps them (queue.Job: 8 B, not 24), and
// UnixNano is undefined past the year 2262. NanosSat
// saturates there instead: an instant past the largest is "never", and a
// deadline, deferral, backoff, promotion or refill that far off simply never
// comes, rather than wrapping to the past and coming at once.

// Never is the largest instant NanosSat represents: anything at or after it
// does not happen.
var Never = time.Unix(0, math.MaxInt64)

var earliest = time.Unix(0, math.MinInt64)

// NanosSat returns t in Unix nanoseconds, saturated to the int64 range.
func NanosSat(t time.Time) int64 {
	switch {
	case !t.Before(Never):
		return math.MaxInt64
	case !t.After(earliest):
		return math.MinInt64
	}
	return t.UnixNano()
}

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
