package cluster

import "time"

// readRetry arms one early retry after a failed read. A wake-up says
// that something changed; if the read it causes fails (a statement timed
// out under load, a connection dropped), nothing else would look again
// before the next poll — with a long Poll, a RunSync's end or a grant
// would wait that long. The retries back off from minReadRetry to Poll.
type readRetry struct {
	c    <-chan time.Time // nil: no retry armed
	wait time.Duration
}

const minReadRetry = 10 * time.Millisecond

// failed arms a retry, unless one is armed already.
func (r *readRetry) failed(poll time.Duration) {
	if r.c != nil {
		return
	}
	r.wait = min(max(2*r.wait, minReadRetry), poll)
	r.c = time.After(r.wait)
}

// fired disarms the retry, which is being made.
func (r *readRetry) fired() { r.c = nil }

// ok notes a read that went through: the next failure retries soon.
func (r *readRetry) ok() { r.wait = 0 }
