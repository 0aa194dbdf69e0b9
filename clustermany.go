package fairsched

import (
	"context"
	"errors"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/messages"
)

// enqueueManyCluster is EnqueueMany in cluster mode: the batch is one
// INSERT and one commit in the database instead of a round trip per job.
// A duplicate (type, id) is joined for a coalescing type and replaced with
// Supersede, as Enqueue does.
func (s *Scheduler) enqueueManyCluster(ctx context.Context, js []*messages.Job) error {
	recs := make([]*core.JobRecord, len(js))
	for i, j := range js {
		recs[i] = s.clusterRecord(j)
	}
	errs, err := s.node.EnqueueMany(ctx, recs)
	if err != nil {
		return err
	}
	for i, err := range errs {
		if !errors.Is(err, ErrDuplicateJob) {
			continue
		}
		switch cfg, _ := s.a.TypeConfig(js[i].Type); {
		case cfg.Coalesce:
			errs[i] = nil // one run serves both, as in one process
		case js[i].Superseding(): // the leader replaces the pending one
			errs[i] = s.node.Supersede(ctx, recs[i])
		}
	}
	return many(errs)
}
