package machine

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/workers"
)

// worker registers or unregisters a worker. Unregistering cancels the jobs
// running on its slots with workers.ErrWorkerLost as the cause; each runs
// to its end, then a durable one runs again (core.AttemptEnd.Interrupted:
// its slot went, like an instance lost in cluster mode) and any other
// follows its retry policy.
func (a *Machine) worker(m messages.WorkerOp) error {
	now := a.now()
	if !m.Remove {
		if err := a.core.RegisterWorker(now, m.ID, m.Slots); err != nil {
			return err
		}
		a.log.Debug("worker registered", zap.String("worker", m.ID), zap.Int("slots", len(m.Slots)))
		if !a.aborted {
			a.dispatch(now) // its slots may take waiting work
		}
		return nil
	}
	lost, err := a.core.UnregisterWorker(now, m.ID)
	if err != nil {
		return err
	}
	var remote []*messages.Job
	for _, cj := range lost {
		cause := fmt.Errorf("%w: %q slot %d", workers.ErrWorkerLost, cj.Worker.Worker, cj.Worker.Index)
		j := messages.Of(cj)
		j.Run().Cancel(cause)
		if a.remote != nil {
			remote = append(remote, j)
		}
	}
	for _, j := range remote { // a remote attempt ends now, as a handler returns its context's cause
		a.endRemoteNow(j, context.Cause(j.Run()))
	}
	a.log.Debug("worker unregistered", zap.String("worker", m.ID), zap.Int("jobs_lost", len(lost)))
	return nil
}
