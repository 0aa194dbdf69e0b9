package machine

import (
	"go.uber.org/zap"

	"github.com/fairsched/fairsched/messages"
)

// releaseJobClosers answers the Close calls made from inside jobs once the
// running jobs are no more than they: each may be waiting for its own job,
// which cannot end while it waits, so waiting on would be for ever. The
// scheduler stays closed and drains on its own: it stops when the jobs
// return. (With no job running, no such call waits for its own job: it
// waits for the drain like any Close.)
func (a *Machine) releaseJobClosers() {
	if len(a.jobClosers) == 0 {
		return
	}
	if n := a.core.RunningCount(); n == 0 || n > len(a.jobClosers) {
		return
	}
	for _, c := range a.jobClosers {
		c <- ErrCloseInJob
	}
	a.jobClosers = nil
}

// pendingNested keeps, in place, the nested calls still pending.
func (a *Machine) pendingNested() []*messages.Job {
	pending := a.nested[:0]
	for _, j := range a.nested {
		if a.core.IsPending(&j.Job) {
			pending = append(pending, j)
		}
	}
	clear(a.nested[len(pending):])
	return pending
}

// dropNestedDeadlock ends, in a graceful Close, the wait of jobs on RunSync
// calls nested in them that cannot be admitted: when every running job is
// the parent of a pending nested call and no timer is left that could
// admit one (deferral, backoff, rate limit, aging, expiry), nothing can
// ever run or end again — each job holds what its nested call waits for.
// The pending nested calls are then dropped (ErrClosed, JobDropped), so
// their parents return and the drain goes on. Outside Close nothing is
// dropped: new work or a caller leaving may still free a slot.
func (a *Machine) dropNestedDeadlock() {
	if !a.closing || a.aborted || len(a.nested) == 0 {
		return
	}
	pending := a.pendingNested()
	a.nested = pending
	running := a.core.RunningCount()
	if len(pending) == 0 || running == 0 {
		return
	}
	if _, ok := a.core.NextWake(); ok {
		return // time may still admit one
	}
	parents := map[*messages.Job]bool{}
	for _, j := range pending {
		if j.Extra != nil {
			parents[j.Parent] = true
		}
	}
	for _, cj := range a.core.Running() {
		if !parents[messages.Of(cj)] {
			return // a job that does not wait on a nested call may end and free its slot
		}
	}
	now := a.now()
	for _, j := range pending {
		if a.core.Withdraw(now, &j.Job) {
			a.refuse(j, ErrClosed)
		}
	}
	a.nested = nil
	a.log.Debug("close: nested calls dropped, their parents held what they waited for", zap.Int("dropped", len(pending)))
	a.dispatch(now)
}
