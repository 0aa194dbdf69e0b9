package cluster

import (
	"context"
	"sync/atomic"
	"time"
)

// fence stops the attempts running on this instance once its heartbeats
// have failed too long: LostAfter − 2 beats after the start of the last
// one that succeeded, the leader being about to declare the instance lost
// and grant its jobs again elsewhere. The attempts' contexts derive from
// the fence's, which its timer cancels on the timer's own goroutine: the
// executor's loop, held up by a slow call to the database, does not hold
// the fence up; nor does it make a fence go up late or early, since the
// lease loop moves the last good beat on directly (lastBeat) and the
// timer reads it when it fires. A fence that went up stays up; when the
// heartbeats succeed again the executor's loop raises a new one.
type fence struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
}

// newFence raises a fence that cancels its context with cause, then
// sends on up (without waiting), margin after the beat in lastBeat (unix
// nanoseconds), which moves on meanwhile.
func newFence(lastBeat *atomic.Int64, margin time.Duration, cause error, up chan<- struct{}) *fence {
	ctx, cancel := context.WithCancelCause(context.Background())
	f := &fence{ctx: ctx, cancel: cancel}
	due := func() time.Duration { return time.Until(time.Unix(0, lastBeat.Load()).Add(margin)) }
	f.timer = time.AfterFunc(time.Hour, func() {
		if d := due(); d > 0 {
			f.timer.Reset(d) // a beat succeeded since it was set
			return
		}
		cancel(cause)
		select {
		case up <- struct{}{}:
		default:
		}
	})
	f.timer.Reset(max(due(), 0))
	return f
}

// isUp reports whether the fence went up.
func (f *fence) isUp() bool { return f.ctx.Err() != nil }

// remove stops the fence's timer and ends its context (the executor stops).
func (f *fence) remove() {
	f.timer.Stop()
	f.cancel(context.Canceled)
}
