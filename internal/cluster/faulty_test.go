package cluster_test

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/internal/cluster"
)

// faulty is a Backend whose instance can be cut off from the database (a
// partition: every call fails, as a crashed process's would stop) or have
// its heartbeats stalled (each beat hangs until its context ends).
type faulty struct {
	b    cluster.Backend
	cut  atomic.Bool
	slow atomic.Bool
	// follower: the instance never takes the lease (Acquire finds it
	// held), so that a test chooses its leader.
	follower atomic.Bool
	// blindEnds: the leader's reads of ends (Rows, EndsSince) fail.
	blindEnds atomic.Bool
	// deleted, when set, is told the sequences of the successes each
	// committed turn deleted (Grant's gone), as it returns.
	deleted func(seqs []uint64)
}

var errCut = errors.New("test: cut off from the database")

func (f *faulty) Insert(ctx context.Context, rec *core.JobRecord) error {
	if f.cut.Load() {
		return errCut
	}
	return f.b.Insert(ctx, rec)
}

func (f *faulty) Acquire(ctx context.Context, domain, holder string, ttl time.Duration) (int64, bool, error) {
	if f.cut.Load() {
		return 0, false, errCut
	}
	if f.follower.Load() {
		return 0, false, nil
	}
	return f.b.Acquire(ctx, domain, holder, ttl)
}

func (f *faulty) Renew(ctx context.Context, domain, holder string, epoch int64, ttl time.Duration) (bool, error) {
	if f.cut.Load() {
		return false, errCut
	}
	return f.b.Renew(ctx, domain, holder, epoch, ttl)
}

func (f *faulty) Release(ctx context.Context, domain, holder string, epoch int64) error {
	if f.cut.Load() {
		return errCut
	}
	return f.b.Release(ctx, domain, holder, epoch)
}

func (f *faulty) Heartbeat(ctx context.Context, domain string, in cluster.Instance) (bool, error) {
	if f.cut.Load() {
		return false, errCut
	}
	if f.slow.Load() {
		<-ctx.Done()
		return false, ctx.Err()
	}
	return f.b.Heartbeat(ctx, domain, in)
}

func (f *faulty) Instances(ctx context.Context, domain string) ([]cluster.Instance, error) {
	if f.cut.Load() {
		return nil, errCut
	}
	return f.b.Instances(ctx, domain)
}

func (f *faulty) Lost(ctx context.Context, domain string, epoch int64, deadline time.Duration) ([]string, error) {
	if f.cut.Load() {
		return nil, errCut
	}
	return f.b.Lost(ctx, domain, epoch, deadline)
}

func (f *faulty) Revoke(ctx context.Context, domain string, epoch int64, instance string) ([]uint64, error) {
	if f.cut.Load() {
		return nil, errCut
	}
	return f.b.Revoke(ctx, domain, epoch, instance)
}

func (f *faulty) Domain(ctx context.Context, domain string, epoch int64) (machine.JobStore, []core.JobRecord, cluster.Feed, error) {
	if f.cut.Load() {
		return nil, nil, nil, errCut
	}
	st, recs, feed, err := f.b.Domain(ctx, domain, epoch)
	if err != nil {
		return nil, nil, nil, err
	}
	return &faultyStore{JobStore: st, f: f}, recs, &faultyFeed{Feed: feed, f: f}, nil
}

func (f *faulty) Grant(ctx context.Context, domain string, epoch int64, ops []machine.JobOp, succeeded []cluster.End, grants []cluster.Grant) ([]uint64, []uint64, error) {
	if f.cut.Load() {
		return nil, nil, errCut
	}
	gone, took, err := f.b.Grant(ctx, domain, epoch, ops, succeeded, grants)
	if err == nil && f.deleted != nil && len(gone) > 0 {
		f.deleted(gone)
	}
	return gone, took, err
}

func (f *faulty) Rows(ctx context.Context, seqs []uint64) ([]cluster.Row, error) {
	if f.cut.Load() || f.blindEnds.Load() {
		return nil, errCut
	}
	return f.b.Rows(ctx, seqs)
}

func (f *faulty) Granted(ctx context.Context, instance string) ([]cluster.Grant, error) {
	if f.cut.Load() {
		return nil, errCut
	}
	return f.b.Granted(ctx, instance)
}

func (f *faulty) ReportEnds(ctx context.Context, ends []cluster.End) (int, error) {
	if f.cut.Load() {
		return 0, errCut
	}
	return f.b.ReportEnds(ctx, ends)
}

func (f *faulty) Finals(ctx context.Context, seqs []uint64) ([]cluster.Final, error) {
	if f.cut.Load() {
		return nil, errCut
	}
	return f.b.Finals(ctx, seqs)
}

func (f *faulty) Forget(ctx context.Context, seqs []uint64) error {
	if f.cut.Load() {
		return errCut
	}
	return f.b.Forget(ctx, seqs)
}

// Wake never wakes a faulty instance: it polls, so that a cut is felt at
// once.
func (f *faulty) Wake(ctx context.Context, r cluster.Reader, instance string) (<-chan struct{}, func()) {
	return nil, func() {}
}

type faultyStore struct {
	machine.JobStore
	f *faulty
}

func (s *faultyStore) Save(st core.State) error {
	if s.f.cut.Load() {
		return errCut
	}
	return s.JobStore.Save(st)
}

func (s *faultyStore) ApplyJobs(ops []machine.JobOp) error {
	if s.f.cut.Load() {
		return errCut
	}
	return s.JobStore.ApplyJobs(ops)
}

type faultyFeed struct {
	cluster.Feed
	f *faulty
}

func (r *faultyFeed) Backlog(ctx context.Context) ([]core.JobRecord, bool, error) {
	if r.f.cut.Load() {
		return nil, false, errCut
	}
	return r.Feed.Backlog(ctx)
}

func (r *faultyFeed) Next(ctx context.Context) ([]core.JobRecord, error) {
	if r.f.cut.Load() {
		return nil, errCut
	}
	return r.Feed.Next(ctx)
}

func (f *faulty) Leader(ctx context.Context, domain string) (string, int64, bool, error) {
	if f.cut.Load() {
		return "", 0, false, errCut
	}
	return f.b.Leader(ctx, domain)
}

func (f *faulty) Command(ctx context.Context, domain string, c cluster.Command) (int64, error) {
	if f.cut.Load() {
		return 0, errCut
	}
	return f.b.Command(ctx, domain, c)
}

func (f *faulty) Reply(ctx context.Context, id int64) ([]byte, bool, error) {
	if f.cut.Load() {
		return nil, false, errCut
	}
	return f.b.Reply(ctx, id)
}

func (f *faulty) Commands(ctx context.Context, domain string) ([]cluster.Command, error) {
	if f.cut.Load() {
		return nil, errCut
	}
	return f.b.Commands(ctx, domain)
}

func (f *faulty) Answer(ctx context.Context, domain string, epoch, id int64, reply []byte, reset string, settings map[string][]byte) error {
	if f.cut.Load() {
		return errCut
	}
	return f.b.Answer(ctx, domain, epoch, id, reply, reset, settings)
}

func (f *faulty) Settings(ctx context.Context, domain string) (map[string][]byte, error) {
	if f.cut.Load() {
		return nil, errCut
	}
	return f.b.Settings(ctx, domain)
}

func (f *faulty) RevokeJob(ctx context.Context, domain string, epoch int64, seq uint64, why cluster.RevokeCause) error {
	if f.cut.Load() {
		return errCut
	}
	return f.b.RevokeJob(ctx, domain, epoch, seq, why)
}

func (f *faulty) ForgetOrphans(ctx context.Context, domain string, epoch int64, live []string, after time.Duration) (int, error) {
	if f.cut.Load() {
		return 0, errCut
	}
	return f.b.ForgetOrphans(ctx, domain, epoch, live, after)
}

func (f *faulty) ClaimSlot(ctx context.Context, domain, name string, slot int64) (bool, error) {
	if f.cut.Load() {
		return false, errCut
	}
	return f.b.ClaimSlot(ctx, domain, name, slot)
}

func (f *faulty) DefineTypes(ctx context.Context, domain string, settings map[string][]byte) error {
	if f.cut.Load() {
		return errCut
	}
	return f.b.DefineTypes(ctx, domain, settings)
}

func (f *faulty) Publish(ctx context.Context, payload []byte) error {
	if f.cut.Load() {
		return errCut
	}
	return f.b.Publish(ctx, payload)
}

func (f *faulty) Events(ctx context.Context) (<-chan []byte, func()) { return f.b.Events(ctx) }

func (f *faulty) TellSucceeded(ctx context.Context, ends []cluster.End) error {
	if f.cut.Load() {
		return errCut
	}
	return f.b.TellSucceeded(ctx, ends)
}

func (f *faulty) Successes(ctx context.Context) (<-chan []cluster.End, func()) {
	return f.b.Successes(ctx)
}
