package cluster_test

import (
	"context"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/internal/cluster"
)

func (f *faulty) GrantsSince(ctx context.Context, instance string, c cluster.ReadCursor) ([]cluster.Grant, cluster.ReadCursor, error) {
	if f.cut.Load() {
		return nil, c, errCut
	}
	return f.b.GrantsSince(ctx, instance, c)
}

func (f *faulty) EndsSince(ctx context.Context, c cluster.ReadCursor) ([]cluster.Row, cluster.ReadCursor, error) {
	if f.cut.Load() || f.blindEnds.Load() {
		return nil, c, errCut
	}
	return f.b.EndsSince(ctx, c)
}

func (f *faulty) InsertMany(ctx context.Context, recs []*core.JobRecord) ([]error, error) {
	if f.cut.Load() {
		return nil, errCut
	}
	return f.b.InsertMany(ctx, recs)
}

func (f *faulty) SetOverload(ctx context.Context, domain string, epoch int64, v cluster.Overload) error {
	if f.cut.Load() {
		return errCut
	}
	return f.b.SetOverload(ctx, domain, epoch, v)
}

func (f *faulty) Overload(ctx context.Context, domain string) (cluster.Overload, bool, error) {
	if f.cut.Load() {
		return cluster.Overload{}, false, errCut
	}
	return f.b.Overload(ctx, domain)
}
