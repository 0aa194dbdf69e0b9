package fairsched

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/zap"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// clusterEngine schedules on a cluster's leader through this instance's
// node. A call is checked here as in one process before it goes to the
// leader, by package policy's pure checks: against the limits as
// configured (run-time changes live on the leader) and the node's
// registry of the types registered here; the node's executor checks
// workers the same way. The node relays the leader's events to this
// instance's subscribers.
type clusterEngine struct {
	node   *cluster.Node
	clock  clock.Clock
	limits policy.Limits
	closed atomic.Bool // the node is closed: calls are refused as by a closed scheduler
	// learnt is when a call naming a type unknown here last read the
	// domain's policy for it (learnPolicyTypes), in Unix nanoseconds.
	learnt atomic.Int64
}

var _ engine = (*clusterEngine)(nil)

// record is job j's record, for the cluster's database.
func (e *clusterEngine) record(j *messages.Job) *core.JobRecord {
	j.More() // NewRecord reads Extra's durable fields
	return machine.NewRecord(j, e.clock.Now())
}

func (e *clusterEngine) check(t JobType, id string, hasFn bool) error {
	err := e.node.Registry().CheckJob(t, id, hasFn)
	if errors.Is(err, ErrUnknownJobType) && e.learnOnMiss() {
		err = e.node.Registry().CheckJob(t, id, hasFn)
	}
	if err != nil {
		return err
	}
	if e.closed.Load() {
		return ErrClosed
	}
	return nil
}

func (e *clusterEngine) registerType(t JobType, cfg JobTypeConfig) error {
	if e.closed.Load() {
		return ErrClosed
	}
	if err := cfg.ValidateFor(t, e.limits); err != nil {
		return err
	}
	return e.node.RegisterType(t, cfg)
}

func (e *clusterEngine) registerHandler(t JobType, h Handler) error {
	err := e.node.Registry().CheckHandler(t)
	if errors.Is(err, ErrUnknownJobType) && e.learnOnMiss() {
		err = e.node.Registry().CheckHandler(t)
	}
	if err != nil {
		return err
	}
	if e.closed.Load() {
		return ErrClosed
	}
	return e.node.RegisterHandler(t, h)
}

func (e *clusterEngine) runSync(ctx context.Context, j *messages.Job) error {
	return e.node.RunSync(ctx, e.record(j), j.Fn)
}

func (e *clusterEngine) submit(j *messages.Job) error {
	return e.node.Submit(context.Background(), e.record(j), j.Fn)
}

// submitMany submits each job as its own record.
func (e *clusterEngine) submitMany(js []*messages.Job) error {
	errs := make([]error, len(js))
	for i, j := range js {
		errs[i] = e.submit(j)
	}
	return many(errs)
}

// submitPeriodic fires on every instance at the same slots; each slot runs
// once, on the instance that claims it (package cluster).
func (e *clusterEngine) submitPeriodic(j *messages.Job, every time.Duration) (func(), error) {
	return e.node.SubmitPeriodic(func() *core.JobRecord { return e.record(j) }, every, j.Jitter, j.Fn), nil
}

func (e *clusterEngine) enqueue(ctx context.Context, j *messages.Job) error {
	rec := e.record(j)
	return e.settleDuplicate(ctx, j, rec, e.node.Enqueue(ctx, rec))
}

// enqueueMany writes the batch in one INSERT and one commit in the
// database instead of a round trip per job.
func (e *clusterEngine) enqueueMany(ctx context.Context, js []*messages.Job) error {
	recs := make([]*core.JobRecord, len(js))
	for i, j := range js {
		recs[i] = e.record(j)
	}
	errs, err := e.node.EnqueueMany(ctx, recs)
	if err != nil {
		return err
	}
	for i, err := range errs {
		errs[i] = e.settleDuplicate(ctx, js[i], recs[i], err)
	}
	return many(errs)
}

// settleDuplicate is what an enqueue that met an unfinished job of the
// same (type, id) returns, as in one process: nil for a coalescing type
// (one run serves both), the leader's replacement of the pending one for
// Supersede, else the error err.
func (e *clusterEngine) settleDuplicate(ctx context.Context, j *messages.Job, rec *core.JobRecord, err error) error {
	if !errors.Is(err, ErrDuplicateJob) {
		return err
	}
	switch cfg, _ := e.node.Registry().Type(j.Type); {
	case cfg.Coalesce:
		return nil
	case j.Superseding():
		return e.node.Supersede(ctx, rec)
	}
	return err
}

func (e *clusterEngine) cancel(ctx context.Context, t JobType, id string) (messages.CancelResult, error) {
	return e.node.Cancel(ctx, t, id)
}

// setKeyWeight is checked here, applied by the leader.
func (e *clusterEngine) setKeyWeight(key string, weight float64) error {
	if e.closed.Load() {
		return ErrClosed
	}
	if err := policy.CheckKeyWeight(key, weight); err != nil {
		return err
	}
	return e.node.SetKeyWeight(key, weight)
}

// group is checked here, applied by the leader.
func (e *clusterEngine) group(op messages.GroupOpKind, group string, weight int) error {
	if e.closed.Load() {
		return ErrClosed
	}
	if err := checkGroupOp(e.limits.Groups, op, group, weight); err != nil {
		return err
	}
	return e.node.Group(op, group, weight)
}

// checkGroupOp checks a group change as a scheduler would before making it.
func checkGroupOp(gs *policy.GroupsConfig, op messages.GroupOpKind, group string, weight int) error {
	switch op {
	case messages.SetGroupWeight:
		_, err := policy.CheckGroupWeight(gs, group, weight)
		return err
	case messages.ResetGroupWeights:
		return policy.CheckResetGroupWeights(gs)
	case messages.PauseGroup:
		return policy.CheckGroupName("PauseGroup", group)
	case messages.ResumeGroup:
		return policy.CheckGroupName("ResumeGroup", group)
	}
	return fmt.Errorf("%w: unknown group operation %d", ErrInvalidConfig, op)
}

// registerWorker is checked by this instance's node, against the types
// registered here; the worker then joins the leader's index, which spans
// the instances.
func (e *clusterEngine) registerWorker(id string, slots [][]policy.JobType) error {
	return e.node.RegisterWorker(id, slots)
}

func (e *clusterEngine) unregisterWorker(id string) error { return e.node.UnregisterWorker(id) }

func (e *clusterEngine) dead(ctx context.Context, m messages.DeadOp) (messages.DeadResult, error) {
	return e.node.Dead(ctx, m.Op, m.Type, m.ID, m.Limit)
}

func (e *clusterEngine) snapshot(ctx context.Context, rows int) (Snapshot, error) {
	return e.node.Snapshot(ctx, rows)
}

func (e *clusterEngine) explain(ctx context.Context, t JobType, id string) (Explanation, error) {
	return e.node.Explain(ctx, t, id)
}

// subscribe relays the leader's events, published through the database
// while some instance has subscribers: the node's heartbeat tells the
// leader at once when that changes.
func (e *clusterEngine) subscribe(buffer int) (<-chan Event, func()) {
	return e.node.Subscribe(buffer)
}

func (e *clusterEngine) close(ctx context.Context) error {
	if err := e.node.Close(ctx); err != nil {
		return err
	}
	e.closed.Store(true)
	return nil
}

// learnEvery bounds how often calls naming types unknown here read the
// domain's policy: type names are the callers', so a stream of unknown
// ones costs at most one read a learnEvery.
const learnEvery = time.Second

// learnOnMiss reads the domain's policy for types a policy applied
// through another instance added, unless a call did within learnEvery,
// and reports whether it registered any.
func (e *clusterEngine) learnOnMiss() bool {
	now, last := e.clock.Now().UnixNano(), e.learnt.Load()
	if last != 0 && now-last < int64(learnEvery) || !e.learnt.CompareAndSwap(last, now) {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), learnEvery)
	defer cancel()
	n, err := e.learnPolicyTypes(ctx)
	return err == nil && n > 0
}

// learnPolicyTypes registers here the types of the domain's stored policy
// that this instance lacks, each checked as RegisterType checks it, and
// returns how many it registered. A type another call registers meanwhile
// is no error.
func (e *clusterEngine) learnPolicyTypes(ctx context.Context) (int, error) {
	types, err := e.node.PolicyTypes(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range slices.Sorted(maps.Keys(types)) {
		if _, ok := e.node.Registry().Type(t); ok {
			continue
		}
		switch err := e.registerType(t, types[t]); {
		case err == nil:
			n++
		case !errors.Is(err, ErrDuplicateType):
			return n, fmt.Errorf("the domain's policy: %w", err)
		}
	}
	return n, nil
}

// learnAtJoin registers the types of the domain's stored policy as the
// instance joins; one it cannot read now is learnt at its first use
// (learnOnMiss).
func (e *clusterEngine) learnAtJoin(log *zap.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), learnEvery)
	defer cancel()
	if _, err := e.learnPolicyTypes(ctx); err != nil && log != nil {
		log.Warn("learning the types of the domain's policy failed", zap.Error(err))
	}
}
