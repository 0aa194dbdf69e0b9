package machine

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// Coalescing. For a type with JobTypeConfig.Coalesce, the requests for one
// (type, id) that arrive while it is pending share one run: the first
// request's function, queued as a run of its own that executes in a
// scheduler goroutine under a context of its own (RunSync callers do not
// run it themselves, since any of them may leave). Each RunSync caller is a
// waiter and gets the run's result; a background Submit only marks the run
// as wanted. A waiter that leaves is answered at once; the run is
// cancelled only when no waiter is left and no background request wants
// it. A run that has started is never joined: later requests queue a run
// of their own, after it.

// coalesce handles request j of a coalescing type: it joins the pending run
// of its (type, id) or starts one (the rules are the core's: coalesce.go).
func (a *Machine) coalesce(now time.Time, j *messages.Job, reply chan error) {
	cr := a.core.Joinable(j.Type, j.ID)
	if cr == nil {
		run := j.Fresh() // with the first request's queue timeout: later ones extend it
		run.Ctx, run.Cancel = context.WithCancel(a.base)
		run.Coalescing = true
		if err := a.core.Submit(now, &run.Job); err != nil {
			a.logDecisions()
			run.Cancel()
			if reply != nil {
				reply <- err
			} else {
				a.refuse(j, err)
			}
			return
		}
		a.core.StartRun(&run.Job)
		a.queued(now, run)
		cr = &run.Job
	} else {
		if ce := a.log.Check(zap.DebugLevel, "coalesced"); ce != nil {
			ce.Write(zap.String("type", string(j.Type)), zap.String("id", j.ID), zap.String("key", j.Key))
		}
		if len(a.subs) > 0 {
			a.emit(messages.JobJoined{Time: now, Type: j.Type, ID: j.ID, FairnessKey: j.Key, Foreground: j.Foreground()})
		}
	}
	if j.Foreground() {
		a.core.Join(now, cr, &j.Job)
	} else {
		a.core.Want(now, cr, j.TTL())
	}
	if reply != nil {
		reply <- nil
	}
	a.dispatch(now)
}

// leave answers waiter w, whose caller left with err, and cancels its run
// if nobody else wants it.
func (a *Machine) leave(now time.Time, w *messages.Job, err error) {
	if a.detach(now, w, err) {
		a.redispatch(now)
	}
}

// detach is leave without the dispatch that follows a withdrawn run: it
// reports whether the run left unrun.
func (a *Machine) detach(now time.Time, w *messages.Job, err error) bool {
	cr, withdrawn, unwanted := a.core.Leave(now, &w.Job)
	w.Answer(err)
	if cr == nil || !unwanted {
		return false
	}
	run := messages.Of(cr)
	if withdrawn { // still pending: it leaves unrun
		a.withdrawn(now, run, err)
		a.ended(run, err)
	}
	run.Cancel() // running: its context ends
	return withdrawn
}

// expireWaiters answers the waiters of coalesced runs whose own time to
// live ran out (core.Watch: it stands still while the run's group is
// paused) while their run is still pending, and cancels the runs nobody
// wants any more. A run that has started is never left: its waiters get
// its result.
func (a *Machine) expireWaiters(now time.Time) {
	expired := a.core.TakeExpiredWaiters()
	if len(expired) == 0 {
		return
	}
	ws := slices.Clone(expired) // detach calls into the core
	withdrawn := false
	for _, cj := range ws {
		w := messages.Of(cj)
		if cr := a.core.Leader(cj); cr == nil || !a.core.IsPending(cr) {
			continue
		}
		err := fmt.Errorf("%w: %s/%s waited %v, its time to live (its group's pauses not counted)", policy.ErrExpired, w.Type, w.ID, w.TTL())
		withdrawn = a.detach(now, w, err) || withdrawn
	}
	if withdrawn {
		a.redispatch(now) // what the withdrawn runs held back may start
	}
}

// answerWaiters gives the waiters of run its result.
func (a *Machine) answerWaiters(run *messages.Job, err error) {
	for _, cw := range a.core.EndRun(&run.Job) {
		messages.Of(cw).Answer(&messages.Joined{Err: err})
	}
	if run.Cancel != nil && run.Coalescing {
		run.Cancel()
	}
}
