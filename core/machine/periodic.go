package machine

import (
	"time"

	"go.uber.org/zap"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/messages"
)

// Periodic jobs. The schedules, and which occurrences are due, are the
// core's (core/periodic.go); the owner makes each occurrence's job, a fresh
// background job copied from the schedule's template, and submits it.

func (a *Machine) addPeriodic(m messages.AddPeriodic) {
	if a.closing {
		m.Reply <- 0
		return
	}
	now := a.now()
	sc := a.core.AddSchedule(now, runKey(m.Job), m.Job, m.Every, m.Jitter, a.rand.Int64N)
	m.Reply <- sc.ID
	a.runSchedules(now)
}

func (a *Machine) stopPeriodic(m messages.StopPeriodic) {
	a.core.StopSchedule(m.ID)
	m.Reply <- struct{}{}
}

// stopSchedules ends every schedule: Close stops new occurrences.
func (a *Machine) stopSchedules() { a.core.StopSchedules() }

// runSchedules submits the occurrences due at now; the core skips a
// schedule whose previous occurrence is still pending or running.
func (a *Machine) runSchedules(now time.Time) {
	due, skipped := a.core.DueOccurrences(now, a.rand.Int64N)
	for _, sc := range skipped {
		tmpl := sc.Template.(*messages.Job)
		a.log.Info("periodic occurrence skipped", zap.String("type", string(tmpl.Type)), zap.String("id", tmpl.ID),
			zap.String("reason", "previous occurrence still pending or running"))
	}
	for _, sc := range due {
		a.occur(now, sc)
	}
}

// occur submits one occurrence of schedule sc.
func (a *Machine) occur(now time.Time, sc *core.Schedule) {
	j := sc.Template.(*messages.Job).Fresh()
	j.OnEnd = func() { a.core.OccurrenceEnded(sc) }
	if err := a.core.Submit(now, &j.Job); err != nil {
		a.logDecisions()
		a.log.Error("periodic occurrence refused", zap.String("type", string(j.Type)), zap.String("id", j.ID), zap.Error(err))
		return
	}
	a.core.Occurred(sc, now)
	a.queued(now, j)
	a.dispatch(now)
}

// ended tells whoever waits that j left the scheduler for good (ran, was
// dropped, superseded, expired or denied).
func (a *Machine) ended(j *messages.Job, err error) {
	if j.Extra == nil {
		return
	}
	if j.Record != nil {
		a.durableEnded(j, err)
	}
	if j.Coalescing {
		a.answerWaiters(j, err)
	}
	if j.OnEnd != nil {
		j.OnEnd()
	}
}

// runKey names a periodic job in the store: "type/id".
func runKey(j *messages.Job) string { return string(j.Type) + "/" + j.ID }
