package machine

import (
	"time"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/records"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// preemptChosen carries out the preemptions the core chose in the last
// Dispatch: each victim's attempt context is cancelled with cause
// policy.ErrPreempted (a remote one's starter is asked to take it back).
// A handler that ignores its context keeps its slot until it returns.
func (a *Machine) preemptChosen(now time.Time) {
	for _, cj := range a.core.TakePreempted() {
		j := messages.Of(cj)
		if r := j.Run(); r != nil {
			r.Cancel(policy.ErrPreempted)
			a.revokeRemote(j) // a remote attempt holds its slot until its starter reports its end
		}
		if len(a.subs) > 0 {
			a.emit(messages.JobPreempted{Time: now, Type: j.Type, ID: j.ID, FairnessKey: j.Key, Group: j.Group,
				Tier: cj.Priority(), By: cj.PreemptedBy(), Ran: now.Sub(cj.Started)})
		}
	}
}

// preempted handles the end of a preempted attempt of j, which Finish
// just recorded, and reports whether it did: an attempt that returned an
// error (it saw its context end) goes back to the queue at the head of its
// lane, uncounted — no run, no retry, a durable job's attempt number taken
// back. One that succeeded anyway, panicked, or whose job was cancelled or
// given up on ends as any other does.
func (a *Machine) preempted(now time.Time, j *messages.Job, d messages.Done) bool {
	if d.Err == nil || d.Err == EndWritten || d.Panicked || a.aborted || a.unwanted(j) {
		return false
	}
	if j.Durable() {
		a.dur.write(records.Preempted(j.Record, a.grantRecords))
		if a.closing { // durable work does not start again before Close: it waits in the store
			delete(a.dur.jobs, durableRef(j))
			j.Record = nil
			return true
		}
	}
	a.core.Requeue(now, &j.Job)
	a.logDecisions()
	a.queued(now, j)
	a.dispatch(now)
	return true
}

// preemptMessage is the log message of a preemption's decision record.
func preemptMessage(d core.Decision) string {
	if d.Decision == core.DecisionPreempt {
		return "job preempted"
	}
	return "job requeued after preemption"
}
