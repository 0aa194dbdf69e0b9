package actor

import (
	"context"

	"github.com/fairsched/fairsched/messages"
)

// SubmitMany hands background jobs to the owner in one message; it returns
// each job's verdict (nil: queued), or the error of the hand-over itself
// (ErrClosed, ctx's) when none was handed over. Without pending bounds the
// owner refuses nothing but a Close under way, as with Submit, and no
// verdict is waited for.
func (a *Actor) SubmitMany(ctx context.Context, jobs []*messages.Job) ([]error, error) {
	var verdicts []chan error // jobs may run, end and be recycled before their verdict is read
	if a.refuses.Load() {
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

// submitMany queues each job as submit does, with one dispatch for all.
func (a *Actor) submitMany(m messages.SubmitMany) {
	batching := a.batching
	a.batching = true
	for i, j := range m.Jobs {
		var verdict chan error
		if m.Verdicts != nil {
			verdict = m.Verdicts[i]
		}
		a.submit(j, verdict)
	}
	a.batching = batching
	if !batching {
		a.flush()
	}
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
