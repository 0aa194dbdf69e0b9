package cluster

import (
	"context"

	"github.com/fairsched/fairsched/core"
)

// BulkInserter is the part of Backend that inserts many jobs at once.
type BulkInserter interface {
	// InsertMany writes recs as new pending jobs in one commit, each
	// numbered by the database (rec.Seq is set), and returns each one's
	// error: nil, or machine.ErrDuplicateJob for a (type, id) pending or
	// running already (or repeated in recs). An invalid record, or a
	// failed commit, writes none and is err.
	InsertMany(ctx context.Context, recs []*core.JobRecord) (errs []error, err error)
}

// EnqueueMany inserts durable jobs recs in one commit; any instance with
// a handler runs them. See BulkInserter.InsertMany for the errors.
func (n *Node) EnqueueMany(ctx context.Context, recs []*core.JobRecord) ([]error, error) {
	if len(recs) > 0 && n.overloadRefusal(recs[0]) != nil {
		errs := make([]error, len(recs))
		for i, rec := range recs {
			errs[i] = n.overloadRefusal(rec)
		}
		return errs, nil
	}
	return n.b.InsertMany(ctx, recs)
}
