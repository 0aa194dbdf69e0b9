package machine

import (
	"context"
	"errors"
	"time"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/messages"
)

// ErrCancelled is the cause of a running job's context that Cancel
// cancelled, and what the waiters of a coalesced run that Cancel removed
// are told.
var ErrCancelled = errors.New("fairsched: job cancelled")

// cancel withdraws every pending background job of the (type, id) — the
// pending coalesced run included — and cancels the running ones' contexts.
// O(jobs of the (type, id) + running jobs).
func (a *Machine) cancel(m messages.Cancel) {
	if done(m.Done) {
		return // the caller left: nothing is cancelled for nobody
	}
	now := a.now()
	var res messages.CancelResult
	if cr := a.core.Joinable(m.Type, m.ID); cr != nil && a.core.Withdraw(now, cr) {
		a.removed(now, messages.Of(cr)) // its waiters get ErrCancelled
		res.Pending++
	}
	for _, cj := range a.core.PendingBackground(m.Type, m.ID) { // the coalesced run has left already
		if a.core.Withdraw(now, cj) {
			a.removed(now, messages.Of(cj))
			res.Pending++
		}
	}
	for _, cj := range a.core.Running() {
		j := messages.Of(cj)
		if cj.Type == m.Type && cj.ID == m.ID && !j.Foreground() && j.Run() != nil && !j.Cancelled() {
			j.SetCancelled()
			j.Run().Cancel(ErrCancelled)
			a.revokeRemote(j) // a remote attempt holds its slot until its starter reports its end
			res.Running++
		}
	}
	m.Reply <- res
	if res.Pending > 0 {
		a.redispatch(now)
	}
}

// removed reports pending job j, which Cancel withdrew.
func (a *Machine) removed(now time.Time, j *messages.Job) {
	a.core.Record(now, &j.Job, core.DecisionDeny, core.CodeCancelled)
	a.logDecisions()
	a.withdrawn(now, j, ErrCancelled)
	a.ended(j, ErrCancelled)
}

// withdrawn reports pending job j, which left unrun because of err.
func (a *Machine) withdrawn(now time.Time, j *messages.Job, err error) {
	if len(a.subs) > 0 {
		a.emit(messages.JobCancelled{Time: now, Type: j.Type, ID: j.ID, FairnessKey: j.Key, Group: j.Group, Err: err})
	}
}

// attempt gives job j, admitted now, the context of its attempt (Run):
// under its own context or the owner's, with the values of
// WithValuesFrom's context, marked with its slot if it has one. Cancel
// and a lost worker cancel it; it costs an allocation only if they do or
// the function asks for its Done channel.
func (a *Machine) attempt(j *messages.Job) {
	var slot messages.SlotRef
	if w := j.Worker; w != nil {
		slot = messages.SlotRef{Worker: w.Worker, Slot: w.Index}
	}
	j.SetRun(a.attempts.Attempt(j, a.parentContext(j), a, j.Effective, slot, j.Worker != nil))
}

// parentContext is what job j's attempt context derives from: its own
// context (a RunSync caller's, a coalesced run's) or the owner's, with the
// values of WithValuesFrom.
func (a *Machine) parentContext(j *messages.Job) context.Context {
	if j.Extra == nil {
		return a.base
	}
	parent := j.Ctx
	if parent == nil {
		parent = a.base
	}
	if j.Values != nil {
		return valuesFrom{Context: parent, values: j.Values}
	}
	return parent
}

// valuesFrom is Context, with the values of values where Context has none:
// a job's cancellation with its submitter's trace ids.
type valuesFrom struct {
	context.Context
	values context.Context
}

func (c valuesFrom) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	return c.values.Value(key)
}
