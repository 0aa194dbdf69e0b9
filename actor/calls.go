package actor

import (
	"context"
	"time"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// Cancel cancels the background jobs of (t, id): see Scheduler.Cancel.
func (a *Actor) Cancel(ctx context.Context, m messages.Cancel) (messages.CancelResult, error) {
	m.Done, m.Reply = ctx.Done(), make(chan messages.CancelResult, 1)
	if err := a.send(ctx, m); err != nil {
		return messages.CancelResult{}, err
	}
	select {
	case r := <-m.Reply:
		return r, nil
	case <-ctx.Done():
		return messages.CancelResult{}, ctx.Err()
	}
}

// Enqueue makes j a durable job: see messages.Enqueue.
func (a *Actor) Enqueue(ctx context.Context, j *messages.Job) error {
	m := messages.Enqueue{Job: j, Reply: make(chan error, 1)}
	if err := a.send(ctx, m); err != nil {
		return err
	}
	return <-m.Reply // the owner answers every Enqueue, at Close too
}

// ReplacePending takes out a pending durable job (messages.ReplacePending).
func (a *Actor) ReplacePending(ctx context.Context, t policy.JobType, id string) (messages.DeadResult, error) {
	m := messages.ReplacePending{Type: t, ID: id, Reply: make(chan messages.DeadResult, 1)}
	if err := a.send(ctx, m); err != nil {
		return messages.DeadResult{}, err
	}
	r := <-m.Reply
	return r, r.Err
}

// Adopt queues durable jobs another instance committed (messages.Adopt).
func (a *Actor) Adopt(ctx context.Context, recs []core.JobRecord) (int, error) {
	m := messages.Adopt{Records: recs, Reply: make(chan int, 1)}
	if err := a.send(ctx, m); err != nil {
		return 0, err
	}
	return <-m.Reply, nil
}

// RegisterHandler runs t's durable jobs with h.
func (a *Actor) RegisterHandler(t policy.JobType, h messages.Handler) error {
	reply := make(chan error, 1)
	return a.ask(messages.RegisterHandler{Type: t, Handler: h, Reply: reply}, reply)
}

// RegisterHandlers runs the durable jobs of each type of all with its
// handler, counting the jobs of all those types still running elsewhere
// before any other starts.
func (a *Actor) RegisterHandlers(all map[policy.JobType]messages.Handler) error {
	reply := make(chan error, 1)
	return a.ask(messages.RegisterHandler{All: all, Reply: reply}, reply)
}

// Dead lists, requeues or deletes dead jobs (messages.DeadOp).
func (a *Actor) Dead(ctx context.Context, m messages.DeadOp) (messages.DeadResult, error) {
	m.Reply = make(chan messages.DeadResult, 1)
	if err := a.send(ctx, m); err != nil {
		return messages.DeadResult{}, err
	}
	r := <-m.Reply // answered at the latest when the batch it joined commits
	return r, r.Err
}

// Explain asks the owner why the job of (t, id) waits: see
// core.Core.Explain.
func (a *Actor) Explain(ctx context.Context, t policy.JobType, id string) (core.Explanation, error) {
	m := messages.ExplainRequest{Type: t, ID: id, Done: ctx.Done(), Reply: make(chan messages.ExplainResult, 1)}
	if err := a.send(ctx, m); err != nil {
		return core.Explanation{}, err
	}
	select {
	case r := <-m.Reply:
		return r.Explanation, r.Err
	case <-ctx.Done():
		return core.Explanation{}, ctx.Err()
	}
}

// CheckStart asks the owner whether j, to be submitted elsewhere, would
// start later than within from now (core.Core.CheckStart).
func (a *Actor) CheckStart(ctx context.Context, j *core.Job, within time.Duration) error {
	m := messages.StartCheck{Job: j, Within: within, Reply: make(chan error, 1)}
	if err := a.send(ctx, m); err != nil {
		return err
	}
	select {
	case err := <-m.Reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SubmitMany hands background jobs to the owner in one message; it returns
// each job's verdict (nil: queued), or the error of the hand-over itself
// (ErrClosed, ctx's) when none was handed over. Without pending bounds the
// owner refuses nothing but a Close under way, as with Submit, and no
// verdict is waited for.
func (a *Actor) SubmitMany(ctx context.Context, jobs []*messages.Job) ([]error, error) {
	var verdicts []chan error // jobs may run, end and be recycled before their verdict is read
	if a.m.Refuses() {
		verdicts = make([]chan error, len(jobs))
		for i := range jobs {
			verdicts[i] = make(chan error, 1)
		}
	}
	if err := a.send(ctx, messages.SubmitMany{Jobs: jobs, Verdicts: verdicts}); err != nil {
		return nil, err
	}
	errs := make([]error, len(jobs))
	for i, v := range verdicts {
		errs[i] = <-v
	}
	return errs, nil
}

// EnqueueMany makes jobs durable in one message and one commit, and returns
// each job's answer (as Enqueue's), or the error of the hand-over itself.
func (a *Actor) EnqueueMany(ctx context.Context, jobs []*messages.Job) ([]error, error) {
	m := messages.EnqueueMany{Jobs: jobs, Replies: make([]chan error, len(jobs))}
	for i := range m.Replies {
		m.Replies[i] = make(chan error, 1)
	}
	if err := a.send(ctx, m); err != nil {
		return nil, err
	}
	errs := make([]error, len(jobs))
	for i, r := range m.Replies {
		errs[i] = <-r // the owner answers every one, at Close too
	}
	return errs, nil
}

// AddPeriodic starts a schedule; it returns its id for StopPeriodic.
func (a *Actor) AddPeriodic(tmpl *messages.Job, every, jitter time.Duration) (uint64, error) {
	if a.closed.Load() {
		return 0, machine.ErrClosed
	}
	m := messages.AddPeriodic{Job: tmpl, Every: every, Jitter: jitter, Reply: make(chan uint64, 1)}
	if err := a.send(context.Background(), m); err != nil {
		return 0, err
	}
	id := <-m.Reply
	if id == 0 {
		return 0, machine.ErrClosed
	}
	return id, nil
}

// StopPeriodic ends schedule id: no occurrence is submitted after it
// returns (one under way runs to its end).
func (a *Actor) StopPeriodic(id uint64) {
	m := messages.StopPeriodic{ID: id, Reply: make(chan struct{}, 1)}
	if a.send(context.Background(), m) == nil {
		<-m.Reply
	}
}

// ApplyPolicy replaces the scheduler's policy through the owner, all of it
// or none (see core.Core.ApplyPolicy). A ctx that ends first returns its
// error; the policy may still apply then.
func (a *Actor) ApplyPolicy(ctx context.Context, p policy.Policy) error {
	if a.closed.Load() {
		return machine.ErrClosed
	}
	reply := make(chan error, 1)
	if err := a.send(ctx, messages.ApplyPolicy{Policy: p, Reply: reply}); err != nil {
		return err
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// LoadVerdict returns the load signal's last good verdict, and false
// before the first (or without a load signal). Any goroutine may call it.
func (a *Actor) LoadVerdict() (machine.LoadVerdict, bool) { return a.m.LoadVerdict() }
