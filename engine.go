package fairsched

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/fairsched/fairsched/actor"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// engine is what checks the API's calls against the types registered and
// runs them: this process's actor (localEngine) or a cluster's leader
// through this instance's node (clusterEngine). The API methods call it
// with no branch on the mode.
type engine interface {
	// check checks a job's type, id and function: ErrInvalidJob,
	// ErrUnknownJobType, or ErrClosed once closed.
	check(t JobType, id string, hasFn bool) error
	registerType(t JobType, cfg JobTypeConfig) error
	registerHandler(t JobType, h Handler) error
	runSync(ctx context.Context, j *messages.Job) error
	submit(j *messages.Job) error
	submitMany(js []*messages.Job) error
	submitPeriodic(j *messages.Job, every time.Duration) (stop func(), err error)
	enqueue(ctx context.Context, j *messages.Job) error
	enqueueMany(ctx context.Context, js []*messages.Job) error
	cancel(ctx context.Context, t JobType, id string) (messages.CancelResult, error)
	setKeyWeight(key string, weight float64) error
	applyPolicy(ctx context.Context, p Policy) error
	group(op messages.GroupOpKind, group string, weight int) error
	registerWorker(id string, slots [][]JobType) error
	unregisterWorker(id string) error
	dead(ctx context.Context, m messages.DeadOp) (messages.DeadResult, error)
	snapshot(ctx context.Context, rows int) (Snapshot, error)
	explain(ctx context.Context, t JobType, id string) (Explanation, error)
	subscribe(buffer int) (<-chan Event, func())
	close(ctx context.Context) error
}

// localEngine schedules in this process: every call goes to its actor.
type localEngine struct{ a *actor.Actor }

var _ engine = localEngine{}

func (e localEngine) check(t JobType, id string, hasFn bool) error { return e.a.Check(t, id, hasFn) }

func (e localEngine) registerType(t JobType, cfg JobTypeConfig) error { return e.a.Register(t, cfg) }

func (e localEngine) registerHandler(t JobType, h Handler) error { return e.a.RegisterHandler(t, h) }

func (e localEngine) runSync(ctx context.Context, j *messages.Job) error { return e.a.RunSync(ctx, j) }

func (e localEngine) submit(j *messages.Job) error { return e.a.Submit(context.Background(), j) }

func (e localEngine) submitMany(js []*messages.Job) error {
	errs, err := e.a.SubmitMany(context.Background(), js)
	if err != nil {
		return err
	}
	return many(errs)
}

func (e localEngine) submitPeriodic(j *messages.Job, every time.Duration) (func(), error) {
	id, err := e.a.AddPeriodic(j, every, j.Jitter)
	if err != nil {
		return nil, err
	}
	var stopped atomic.Bool
	return func() {
		if stopped.CompareAndSwap(false, true) {
			e.a.StopPeriodic(id)
		}
	}, nil
}

func (e localEngine) enqueue(ctx context.Context, j *messages.Job) error { return e.a.Enqueue(ctx, j) }

func (e localEngine) enqueueMany(ctx context.Context, js []*messages.Job) error {
	errs, err := e.a.EnqueueMany(ctx, js)
	if err != nil {
		return err
	}
	return many(errs)
}

func (e localEngine) cancel(ctx context.Context, t JobType, id string) (messages.CancelResult, error) {
	return e.a.Cancel(ctx, messages.Cancel{Type: t, ID: id})
}

func (e localEngine) setKeyWeight(key string, weight float64) error {
	return e.a.SetKeyWeight(key, weight)
}

func (e localEngine) group(op messages.GroupOpKind, group string, weight int) error {
	return e.a.Group(op, group, weight)
}

func (e localEngine) registerWorker(id string, slots [][]policy.JobType) error {
	return e.a.Worker(id, slots, false)
}

func (e localEngine) unregisterWorker(id string) error { return e.a.Worker(id, nil, true) }

func (e localEngine) dead(ctx context.Context, m messages.DeadOp) (messages.DeadResult, error) {
	return e.a.Dead(ctx, m)
}

func (e localEngine) snapshot(ctx context.Context, rows int) (Snapshot, error) {
	return e.a.Snapshot(ctx, rows)
}

func (e localEngine) explain(ctx context.Context, t JobType, id string) (Explanation, error) {
	return e.a.Explain(ctx, t, id)
}

func (e localEngine) subscribe(buffer int) (<-chan Event, func()) { return e.a.Subscribe(buffer) }

func (e localEngine) close(ctx context.Context) error { return e.a.Close(ctx) }
