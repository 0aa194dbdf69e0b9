package actor

import (
	"context"
	"errors"
	"fmt"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// send hands r to the owner: the three-way select of every call. The
// request channel is buffered, so the owner's stop is guarded by the
// in-flight count (see Actor.inflight) rather than by the stopped channel.
func (a *Actor) send(ctx context.Context, r messages.Request) error {
	a.inflight.Add(1)
	if a.exiting.Load() {
		a.inflight.Add(-1)
		return machine.ErrClosed
	}
	select {
	case a.requests <- r:
		return nil
	default:
	}
	select {
	case a.requests <- r:
		return nil
	case <-ctx.Done():
		a.inflight.Add(-1)
		return ctx.Err()
	}
}

// Check validates a job against the published registry without a round trip
// to the owner: ErrInvalidJob, ErrUnknownJobType, then ErrClosed.
func (a *Actor) Check(t policy.JobType, id string, hasFn bool) error {
	if err := policy.ValidateJob(t, id, hasFn); err != nil {
		return err
	}
	if _, ok := a.m.Types()[t]; !ok {
		return fmt.Errorf("%w: %q", policy.ErrUnknownJobType, t)
	}
	if a.closed.Load() {
		return machine.ErrClosed
	}
	return nil
}

// TypeConfig returns t's configuration from the published registry.
func (a *Actor) TypeConfig(t policy.JobType) (policy.JobTypeConfig, bool) {
	cfg, ok := a.m.Types()[t]
	return cfg, ok
}

// Submit hands a job to the owner. Once it returns nil the job is the
// owner's: a foreground job's Admit channel will receive exactly one value.
func (a *Actor) Submit(ctx context.Context, j *messages.Job) error {
	if !a.m.Refuses() || j.Foreground() {
		return a.send(ctx, messages.Submit{Job: j})
	}
	// The limits may refuse it: the caller waits for the verdict.
	verdict := make(chan error, 1) // j may run, end and be recycled before the verdict is read
	if err := a.send(ctx, messages.SubmitChecked{Job: j, Verdict: verdict}); err != nil {
		return err
	}
	return <-verdict
}

// RunSync submits a foreground job, waits for its admission and runs it in
// the calling goroutine. If ctx ends while the job is pending, the job is
// withdrawn and ctx.Err() returned.
func (a *Actor) RunSync(ctx context.Context, j *messages.Job) error {
	// The job runs under its caller's context: its attempt's context
	// (attempt) is cancellable on its own, for a Close that gives up, and
	// ends when the attempt does.
	x := j.More() // a foreground record has it already (NewPooledFull)
	x.Ctx = ctx
	x.Admit = make(chan struct{}, 1)
	j.OnDemand = true // a caller waits: on-demand work for scoring
	a.m.StartBy(ctx, j)
	if owner, parent := messages.Inside(ctx); owner == a.m {
		j.Parent = parent // nested in a running job of this scheduler
	}
	if err := a.Submit(ctx, j); err != nil {
		return err
	}
	if err := a.await(ctx, j); err != nil {
		// Refused, withdrawn, expired, denied — or, for a coalesced
		// request, the shared run's result (nil on success). A waiter of
		// a coalesced run keeps its own time to live in the owner
		// (coalesce), frozen like the run's while its group is paused.
		var joined *messages.Joined
		if errors.As(err, &joined) {
			return joined.Err
		}
		return err
	}
	// Read before the first attempt: once the end of an attempt that does
	// not retry is reported, the owner may recycle j.
	retries := j.Retry().Retries()
	for {
		err := a.execute(j)
		if err == nil || !retries {
			return err
		}
		// A failed attempt of a job that retries: the owner answers nil
		// when the next attempt is admitted, or the final error.
		if err := a.await(ctx, j); err != nil {
			return err
		}
	}
}

// await waits for the owner's next answer on j.Admit; if ctx ends first,
// the job is withdrawn (the owner still answers exactly once).
func (a *Actor) await(ctx context.Context, j *messages.Job) error {
	select {
	case <-j.Admit:
		return j.Answered()
	case <-ctx.Done():
		_ = a.send(context.Background(), messages.Withdraw{Job: j, Err: ctx.Err()})
		<-j.Admit
		return j.Answered()
	}
}

// ask sends request m and returns the owner's answer on reply.
func (a *Actor) ask(m messages.Request, reply chan error) error {
	if a.closed.Load() {
		return machine.ErrClosed
	}
	if err := a.send(context.Background(), m); err != nil {
		return err
	}
	return <-reply
}

// Register adds a job type.
func (a *Actor) Register(t policy.JobType, cfg policy.JobTypeConfig) error {
	reply := make(chan error, 1)
	return a.ask(messages.Register{Type: t, Config: cfg, Reply: reply}, reply)
}

// Worker registers worker id with slots, or unregisters it (remove).
func (a *Actor) Worker(id string, slots [][]policy.JobType, remove bool) error {
	reply := make(chan error, 1)
	return a.ask(messages.WorkerOp{ID: id, Slots: slots, Remove: remove, Reply: reply}, reply)
}

// Group changes a group's weight, resets all weights, pauses or resumes a
// group.
func (a *Actor) Group(op messages.GroupOpKind, group string, weight int) error {
	reply := make(chan error, 1)
	return a.ask(messages.GroupOp{Op: op, Group: group, Weight: weight, Reply: reply}, reply)
}

// SetKeyWeight changes a fairness key's weight.
func (a *Actor) SetKeyWeight(key string, weight float64) error {
	reply := make(chan error, 1)
	return a.ask(messages.SetKeyWeight{Key: key, Weight: weight, Reply: reply}, reply)
}

// Snapshot asks the owner for a copy of its state with at most rows
// pending jobs (0: all).
func (a *Actor) Snapshot(ctx context.Context, rows int) (core.Snapshot, error) {
	m := messages.SnapshotRequest{Rows: rows, Done: ctx.Done(), Reply: make(chan core.Snapshot, 1)}
	if err := a.send(ctx, m); err != nil {
		return core.Snapshot{}, err
	}
	select {
	case s := <-m.Reply:
		return s, nil
	case <-ctx.Done():
		return core.Snapshot{}, ctx.Err()
	}
}

// Subscribe registers a channel of the given buffer (at least 0) for the
// owner's events and returns it with the function that cancels it. Once
// Subscribe returns, every later event is offered to the channel. After
// Close the channel comes back closed and cancel does nothing.
//
// cancel asks the owner to forget the channel and close it, and returns once
// it is closed; calling it again, or after Close, is safe.
func (a *Actor) Subscribe(buffer int) (<-chan messages.Event, func()) {
	ch := make(chan messages.Event, max(buffer, 0))
	if a.closed.Load() {
		close(ch)
		return ch, func() {}
	}
	m := messages.Subscribe{Events: ch, Reply: make(chan struct{}, 1)}
	if err := a.send(context.Background(), m); err != nil {
		close(ch) // the owner is stopping: it will never see ch
		return ch, func() {}
	}
	<-m.Reply
	return ch, func() { a.unsubscribe(ch) }
}

// unsubscribe removes ch and returns once it is closed: by the owner now,
// or by the owner's last step if it is stopping.
func (a *Actor) unsubscribe(ch chan messages.Event) {
	m := messages.Unsubscribe{Events: ch, Reply: make(chan struct{}, 1)}
	if err := a.send(context.Background(), m); err != nil {
		<-a.stopped // the owner closes every channel before it stops
		return
	}
	<-m.Reply
}

// Close stops taking work and waits until the owner has run out of it. When
// ctx ends first it cancels running jobs, refuses pending ones, waits for the
// running jobs to return and reports ctx.Err(). Called from inside a job (its
// goroutine runs one), it also returns ErrCloseInJob once the running jobs
// are no more than such calls: it may be waiting for its own job.
func (a *Actor) Close(ctx context.Context) error {
	if owner, _ := messages.Inside(ctx); owner == a.m {
		return machine.ErrCloseInJob
	}
	m := messages.Close{}
	if insideJob() {
		m.InJob = make(chan error, 1)
	}
	a.closed.Store(true)
	if err := a.send(ctx, m); err == machine.ErrClosed {
		<-a.stopped // the owner is in its last step
		return a.saved(ctx, a.droppedErr(nil))
	}
	select {
	case <-a.stopped:
		return a.saved(ctx, a.droppedErr(nil))
	case err := <-m.InJob: // a nil channel (not in a job) never answers
		return err
	case <-ctx.Done():
	}
	if a.send(context.Background(), messages.Abort{}) == machine.ErrClosed {
		<-a.stopped
		return a.saved(ctx, a.droppedErr(nil)) // it finished while we were deciding
	}
	select {
	case <-a.stopped:
		return a.droppedErr(ctx.Err())
	case err := <-m.InJob:
		return fmt.Errorf("%w (%w)", err, ctx.Err())
	}
}

// saved waits, once the owner has stopped, for the writer to store the
// final state — until ctx ends, then Close returns ctx's error (the writer
// finishes on its own).
func (a *Actor) saved(ctx context.Context, err error) error {
	select {
	case <-a.m.Written():
		return err
	case <-ctx.Done():
		if err == nil {
			err = fmt.Errorf("fairsched: close: the final save is still running: %w", ctx.Err())
		}
		return err
	}
}

// droppedErr is Close's answer once the owner stopped: cause (the expired
// context, or nil) and how many jobs were dropped unrun, if any — each also
// answered to its caller, logged and reported as JobDropped. (The owner
// has stopped: its counter is settled.)
func (a *Actor) droppedErr(cause error) error {
	switch {
	case a.m.Dropped() == 0 || !a.dropsReported.CompareAndSwap(false, true): // once, to the first Close
		return cause
	case cause == nil:
		return fmt.Errorf("fairsched: close: %d job(s) dropped unrun — they raced Close, or waited for a worker type no slot takes: %w", a.m.Dropped(), machine.ErrClosed)
	}
	return fmt.Errorf("fairsched: close: %d job(s) dropped unrun: %w", a.m.Dropped(), cause)
}
