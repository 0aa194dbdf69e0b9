package records

import "github.com/fairsched/fairsched/core"

// The rules below exist for cluster mode only, where the leader's own
// writes (its grant counting an attempt, its fenced delete of a success)
// stand in for the scheduler's.

// EndWritten reports whether the success of rec needs no write of its
// own because the handler's write already deleted its record (cluster
// mode's leader): true unless the record outlives the success — kept for
// retention, or a RunSync's or Submit's job that was cancelled or has
// joined waiters (coalescing: they end with it), whose instance reads why.
func (t *Table) EndWritten(rec *core.JobRecord, cancelled, coalescing bool) bool {
	if rec.Owner != "" {
		return !cancelled && !coalescing
	}
	return t.retention <= 0
}
