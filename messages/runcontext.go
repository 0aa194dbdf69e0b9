package messages

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/fairsched/fairsched/policy"
)

// RunContext is the context one attempt of a job runs under: its parent's
// values and cancellation, the job's effective priority (RunningPriority),
// its worker slot (SlotOf), its owner (Inside), and a cancellation of its
// own (Cancel) for Cancel, a lost worker and the attempt's end.
//
// That cancellation costs nothing until someone needs it: a function that
// never asks for Done, and is never cancelled on its own, runs under its
// parent's cancellation without a context.WithCancelCause of its own.
// Each attempt gets a fresh one, apart from the job's record: a goroutine a
// previous attempt left behind never sees its context change under it,
// and the record can serve another job (Recycle) while it is held.
type RunContext struct {
	parent context.Context
	job    *Job
	owner  any
	prio   policy.Priority
	slot   SlotRef
	onSlot bool
	// scope is the cancellation of the attempt's own, made the first time
	// someone needs it (Done, Cancel); ended when the attempt ended before
	// anyone did.
	scope atomic.Pointer[scope]
	// over: the attempt has ended (End); its context no longer names the
	// job (Inside), whose record may serve another job by now.
	over atomic.Bool
}

type scope struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// ended is the scope of every attempt that ended before its context's own
// cancellation was asked for: already cancelled, with context.Canceled.
var ended = func() *scope {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(context.Canceled)
	return &scope{ctx: ctx, cancel: cancel}
}()

// insideKey is the context key under which a job's function finds its
// RunContext (Inside).
type insideKey struct{}

func (c *RunContext) init(parent context.Context, j *Job, owner any, prio policy.Priority, slot SlotRef, onSlot bool) *RunContext {
	c.parent, c.job, c.owner, c.prio, c.slot, c.onSlot = parent, j, owner, prio, slot, onSlot
	return c
}

// attemptBlock is the number of attempt contexts Attempts allocates at
// once: 32 of 96 bytes fill the 3 072-byte size class.
const attemptBlock = 32

// Attempts makes attempts' contexts, carved from blocks of attemptBlock:
// one allocation per block instead of one per attempt, the largest of a
// background job's allocations otherwise. A context is never reused — a
// goroutine that keeps one after its attempt sees it unchanged —, so a
// block is collected once
// none of its contexts is reachable: one kept for long keeps its block
// (3 KB, and what its 31 neighbours' parents hold) with it. The zero value
// is ready; only its owner uses one.
type Attempts struct {
	block []RunContext
}

// Attempt returns the context of j's next attempt: under parent, at
// effective priority prio, for owner (what Inside reports), on slot when
// onSlot. Only the owner calls it, between attempts.
func (p *Attempts) Attempt(j *Job, parent context.Context, owner any, prio policy.Priority, slot SlotRef, onSlot bool) *RunContext {
	if len(p.block) == 0 {
		p.block = make([]RunContext, attemptBlock)
	}
	c := &p.block[0]
	p.block = p.block[1:]
	return c.init(parent, j, owner, prio, slot, onSlot)
}

// Inside returns the owner and the job whose attempt's context ctx is (or
// derives from), if any.
func Inside(ctx context.Context) (owner any, j *Job) {
	if ctx == nil {
		return nil, nil
	}
	rc, _ := ctx.Value(insideKey{}).(*RunContext)
	if rc == nil || rc.over.Load() {
		return nil, nil
	}
	return rc.owner, rc.job
}

// own returns the attempt's cancellation, making it if it is not made yet.
func (c *RunContext) own() *scope {
	if s := c.scope.Load(); s != nil {
		return s
	}
	ctx, cancel := context.WithCancelCause(c.parent)
	s := &scope{ctx: ctx, cancel: cancel}
	if !c.scope.CompareAndSwap(nil, s) {
		cancel(nil) // another goroutine made it first
		return c.scope.Load()
	}
	return s
}

// Cancel cancels the attempt's context with cause.
func (c *RunContext) Cancel(cause error) { c.own().cancel(cause) }

// End cancels the attempt's context, now that the attempt is over, with
// context.Canceled — without making a cancellation nobody asked for.
func (c *RunContext) End() {
	c.over.Store(true)
	if c.scope.CompareAndSwap(nil, ended) {
		return
	}
	c.scope.Load().cancel(context.Canceled)
}

// Deadline is the parent's: the attempt has none of its own.
func (c *RunContext) Deadline() (time.Time, bool) { return c.parent.Deadline() }

// Done is closed when the parent's is, or when the attempt is cancelled.
func (c *RunContext) Done() <-chan struct{} { return c.own().ctx.Done() }

// Err is the parent's error until the attempt's own cancellation is made,
// which is the only way the attempt can be cancelled on its own.
func (c *RunContext) Err() error {
	if s := c.scope.Load(); s != nil {
		return s.ctx.Err()
	}
	return c.parent.Err()
}

// Value answers the keys of a running job and otherwise asks the attempt's
// own cancellation, if made (context.Cause finds its cause there), then the
// parent.
func (c *RunContext) Value(key any) any {
	switch key.(type) {
	case runningKey:
		return c.prio
	case insideKey:
		return c
	case slotKey:
		if c.onSlot {
			return c.slot
		}
	}
	s := c.scope.Load()
	switch {
	case s == nil:
		return c.parent.Value(key)
	case s == ended: // not derived from the parent: ask both
		if v := s.ctx.Value(key); v != nil {
			return v
		}
		return c.parent.Value(key)
	}
	return s.ctx.Value(key)
}
