package cluster

import "time"

// retryTimer arms one early retry after a failed read or write. A wake-up
// says that something changed; if the read it causes fails (a statement
// timed out under load, a connection dropped), nothing else would look
// again before the next poll — with a long Poll, a RunSync's end or a
// grant would wait that long. A failed write is the converse: every
// wake-up would try it again at once; it waits for the timer instead.
// The retries back off from minRetry to Poll.
type retryTimer struct {
	c    <-chan time.Time // nil: no retry armed
	wait time.Duration
}

const minRetry = 10 * time.Millisecond

// failed arms a retry, unless one is armed already.
func (r *retryTimer) failed(poll time.Duration) {
	if r.c != nil {
		return
	}
	r.wait = min(max(2*r.wait, minRetry), poll)
	r.c = time.After(r.wait)
}

// fired disarms the retry, which is being made.
func (r *retryTimer) fired() { r.c = nil }

// ok notes a read that went through: the next failure retries soon.
func (r *retryTimer) ok() { r.wait = 0 }
