package machine

import (
	"errors"
	"time"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/records"
	"github.com/fairsched/fairsched/messages"
)

// ErrFunctionGone: in cluster mode, an instance was granted a RunSync or
// Submit job whose function it no longer holds (its caller left before
// it started, or the instance restarted).
var ErrFunctionGone = errors.New("fairsched/cluster: the job's function is gone")

// Coalescing across a cluster's instances: the leader's rules for the
// RunSync and Submit jobs of coalescing types (core.Joins).

// joined reports whether durable job j, about to be queued, joined the
// pending run of its (type, id) instead: a RunSync's or Submit's job of a
// coalescing type in cluster mode, not resumed.
func (a *Machine) joined(now time.Time, j *messages.Job) bool {
	d, rec := a.dur, j.Record
	if rec.Owner == "" || rec.Granted != "" || !a.coalescing[j.Type] {
		return false
	}
	run := d.joins.Join(rec, func(run *core.JobRecord) bool {
		rj := d.jobs[recordRef(run)]
		return rj != nil && a.durablePending(rj)
	})
	if run == nil {
		return false
	}
	if len(a.subs) > 0 {
		a.emit(messages.JobJoined{Time: now, Type: j.Type, ID: j.ID, FairnessKey: j.Key, Foreground: rec.OnDemand})
	}
	return true
}

// endWaiters ends the waiters of run, which ended with err, as it did —
// unless its function was gone: then its first waiter runs for the others.
func (a *Machine) endWaiters(now time.Time, run *core.JobRecord, end records.End) {
	d := a.dur
	if errors.Is(end.Err, ErrFunctionGone) {
		if next := d.joins.Promote(run); next != nil {
			if nj := d.jobs[recordRef(next)]; nj != nil {
				_ = a.queueDurable(now, nj) // a refusal deletes its record: its instance reads that
			}
		}
		return
	}
	for _, w := range d.joins.End(run) {
		ref := recordRef(w)
		if d.jobs[ref] == nil {
			continue
		}
		delete(d.jobs, ref)
		d.write(d.table.OwnerEnded(w, end, now))
	}
}
