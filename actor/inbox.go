package actor

import (
	"context"
	"fmt"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// send hands m to the owner over ch: the three-way select of every call.
func send[M any](ctx context.Context, a *Actor, ch chan<- M, m M) error {
	select {
	case ch <- m:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-a.stopped:
		return ErrClosed
	}
}

// Check validates a job against the published registry without a round trip
// to the owner: ErrInvalidJob, ErrUnknownJobType, then ErrClosed.
func (a *Actor) Check(t policy.JobType, id string, hasFn bool) error {
	if err := policy.ValidateJob(t, id, hasFn); err != nil {
		return err
	}
	if _, ok := (*a.types.Load())[t]; !ok {
		return fmt.Errorf("%w: %q", policy.ErrUnknownJobType, t)
	}
	if a.closed.Load() {
		return ErrClosed
	}
	return nil
}

// Submit hands a job to the owner. Once it returns nil the job is the
// owner's: a RunSync job's Reply will receive exactly one value.
func (a *Actor) Submit(ctx context.Context, j *core.Job) error {
	return send(ctx, a, a.submitc, messages.Submit{Job: j})
}

// Withdraw tells the owner that a job's caller left with err.
func (a *Actor) Withdraw(j *core.Job, err error) {
	_ = send(context.Background(), a, a.withdrawc, messages.Withdraw{Job: j, Err: err})
}

// Register adds a job type.
func (a *Actor) Register(t policy.JobType, cfg policy.JobTypeConfig) error {
	if a.closed.Load() {
		return ErrClosed
	}
	m := messages.Register{Type: t, Config: cfg, Reply: make(chan error, 1)}
	if err := send(context.Background(), a, a.registerc, m); err != nil {
		return err
	}
	return <-m.Reply
}

// Snapshot asks the owner for a copy of its state.
func (a *Actor) Snapshot(ctx context.Context) (core.Snapshot, error) {
	m := messages.SnapshotRequest{Reply: make(chan core.Snapshot, 1)}
	if err := send(ctx, a, a.snapshotc, m); err != nil {
		return core.Snapshot{}, err
	}
	select {
	case s := <-m.Reply:
		return s, nil
	case <-ctx.Done():
		return core.Snapshot{}, ctx.Err()
	}
}

// Close stops taking work and waits until the owner has run out of it. When
// ctx ends first it cancels running jobs, refuses pending ones, waits for the
// running jobs to return and reports ctx.Err().
func (a *Actor) Close(ctx context.Context) error {
	a.closed.Store(true)
	if err := send(ctx, a, a.closec, struct{}{}); err == ErrClosed {
		return nil
	}
	select {
	case <-a.stopped:
		return nil
	case <-ctx.Done():
	}
	if send(context.Background(), a, a.abortc, struct{}{}) == ErrClosed {
		return nil // finished while we were deciding
	}
	<-a.stopped
	return ctx.Err()
}
