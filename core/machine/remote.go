package machine

import (
	"context"
	"errors"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// Remote starts: the durable jobs of a type registered with RegisterRemote
// run elsewhere (cluster mode's leader grants them to instances). Each
// started attempt, and a Cancel's revoke of one, waits in the outbox, in
// order, until the owner takes it (TakeOps); the attempt's end comes back
// as a completion (EndRemote) like a runner's. No goroutine waits for a
// remote attempt. The outbox holds at most one start per running job and
// one revoke per Cancel of one, so it is bounded by what the caps let run.

// remote is the owner's state of remote starts.
type remote struct {
	types map[policy.JobType]bool
	// running are the attempts started remotely whose end the owner waits
	// for; an end reported for one not here is stale (the owner ended it).
	running map[*messages.Job]*messages.RemoteAttempt
	// deferred are the attempts started once their start commits
	// (startCommitted), as their starter will see them.
	deferred map[*messages.Job]messages.DurableJob
	// out are the ops the owner has not taken yet (TakeOps).
	out []messages.RemoteOp
}

// errRemoteOnly is the handler of a type started remotely: never called.
var errRemoteOnly = errors.New("fairsched: this type's jobs are started remotely")

func remoteOnly(context.Context, messages.DurableJob) error { return errRemoteOnly }

// registerRemote takes the remote half of registration m: its types start
// remotely.
func (a *Machine) registerRemote(m messages.RegisterHandler) {
	if a.remote == nil {
		a.remote = &remote{types: map[policy.JobType]bool{}, running: map[*messages.Job]*messages.RemoteAttempt{},
			deferred: map[*messages.Job]messages.DurableJob{}}
	}
	for t := range m.All {
		a.remote.types[t] = true
		m.All[t] = remoteOnly
	}
}

// startsRemotely reports whether durable job j's attempts start remotely.
func (a *Machine) startsRemotely(j *messages.Job) bool {
	return a.remote != nil && a.remote.types[j.Type]
}

// startRemote hands the attempt of j, admitted, to the starter as view.
func (a *Machine) startRemote(j *messages.Job, view messages.DurableJob) {
	var slot messages.SlotRef
	if w := j.Worker; w != nil {
		slot = messages.SlotRef{Worker: w.Worker, Slot: w.Index}
	}
	at := messages.NewRemoteAttempt(j.Run(), j, view, slot, j.Worker != nil)
	a.remote.running[j] = at
	a.remote.out = append(a.remote.out, messages.RemoteOp{Attempt: at})
}

// takeDeferred returns the view of j's remote start deferred until its
// start commits, if it has one, and forgets it.
func (a *Machine) takeDeferred(j *messages.Job) (messages.DurableJob, bool) {
	if a.remote == nil {
		return messages.DurableJob{}, false
	}
	view, ok := a.remote.deferred[j]
	delete(a.remote.deferred, j)
	return view, ok
}

// revokeRemote asks the starter to take running job j's attempt back, if
// j runs remotely: it holds its slot until the starter reports its end.
func (a *Machine) revokeRemote(j *messages.Job) {
	if a.remote == nil {
		return
	}
	if at := a.remote.running[j]; at != nil {
		a.remote.out = append(a.remote.out, messages.RemoteOp{Attempt: at, Revoke: true})
	}
}

// endRemoteNow ends the remote attempt of j here, if it runs one, with
// cause: its scheduler stops or its worker went, and (as a runner's
// handler returns its context's cause at once) it does not wait for the
// starter, whose later report of it is stale.
func (a *Machine) endRemoteNow(j *messages.Job, cause error) {
	if a.remote == nil {
		return
	}
	if at := a.remote.running[j]; at != nil {
		a.finish(messages.Done{Job: j, Err: cause, Remote: at})
	}
}

// remoteEnded reports whether d, a remote attempt's end, is the end of
// an attempt the owner waits for, and forgets that attempt if so.
func (a *Machine) remoteEnded(d messages.Done) bool {
	if a.remote == nil || a.remote.running[d.Job] != d.Remote {
		return false
	}
	delete(a.remote.running, d.Job)
	d.Job.Run().End()
	return true
}

// dropRemoteOps forgets the ops the owner has not taken: the scheduler
// stops, and every attempt they name has ended.
func (a *Machine) dropRemoteOps() {
	if a.remote != nil {
		clear(a.remote.out)
		a.remote.out = a.remote.out[:0]
	}
}

// SetFreeSlots tells the scheduler how many jobs started remotely its
// owner can place now (n < 0: no bound): it admits at most n more that
// take one of an instance's slots — a durable job any instance runs, not
// a RunSync's or Submit's (Owner set: it runs in its caller) nor one on a
// worker's slot (core.SetOwnerSlots) — and decides the next when the owner
// says a slot is free, not ahead of it. A bound that lets a job be
// admitted that could not be is acted on by the next call's dispatch
// (TakeOps).
func (a *Machine) SetFreeSlots(n int) {
	if a.stopped {
		return
	}
	if a.core.SetOwnerSlots(n, takesInstanceSlot) {
		a.dirty = true
	}
}

// takesInstanceSlot reports whether the leader places cj's attempt on an
// instance's Slots: a durable job no RunSync or Submit made.
func takesInstanceSlot(cj *core.Job) bool {
	j := messages.Of(cj)
	return j.Record != nil && j.Record.Owner == ""
}
