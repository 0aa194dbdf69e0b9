package core

import (
	"math"
	"time"
)

// tokensOf returns the tokens job j takes from bucket b at its admission
// (spec 4: one unit for the fair queue and the quota): its stated cost
// (WithTokens) in seconds, rounded up to a whole token — every job takes at
// least one, so a rate limit still bounds admissions — or 1 for a job that
// states none. A job that needs more than the bucket can hold takes the
// whole burst: it waits for a full bucket, never for ever, and the next job
// finds the bucket empty (the tokens past the burst are not owed).
func tokensOf(j *Job, b *bucket) int {
	n := 1
	if t := j.Tokens(); t > 0 {
		// Whole seconds, rounded up, from integer nanoseconds: exact, and
		// at most MaxInt64/1e9 + 1, which int holds.
		secs := t / time.Second
		if t%time.Second != 0 {
			secs++
		}
		n = int(secs)
	}
	return min(n, b.lim.Burst())
}

// waitFor returns how long bucket b takes, from now, to hold n tokens:
// rounded down, at least 1ns — an early look blocks again, a late one would
// keep tokens unused — and at most the largest time.Duration for a rate so
// small the wait does not fit.
func (b *bucket) waitFor(now time.Time, n int) time.Duration {
	need := (float64(n) - b.lim.TokensAt(now)) / float64(b.lim.Limit())
	ns := math.Floor(need * float64(time.Second))
	if !(ns < math.MaxInt64) { // +Inf, NaN, or past the largest Duration
		return math.MaxInt64
	}
	return max(time.Duration(ns), 1)
}

// short reports whether bucket b keeps job j waiting at now: its scope is
// out of dispatch until a refill (for the job that found it short first),
// or it holds fewer than j's tokens.
func (b *bucket) short(now time.Time, j *Job) bool {
	return b.blocked && now.Before(b.until) || b.lim.TokensAt(now) < float64(tokensOf(j, b))
}
