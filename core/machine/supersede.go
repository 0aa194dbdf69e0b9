package machine

import (
	"time"

	"github.com/fairsched/fairsched/messages"
)

// supersede withdraws every pending background job of j's (type, id) —
// waiting, deferred or in a retry's backoff: j replaces them, with its own
// function and a fresh aging clock (the rule is the core's: Core.Supersede).
// Each leaves unrun (again), uncharged, with a decision record and a
// JobSuperseded event.
func (a *Machine) supersede(now time.Time, j *messages.Job) {
	old := a.core.Supersede(now, j.Type, j.ID)
	if len(old) == 0 {
		return
	}
	a.logDecisions()
	for _, cj := range old {
		o := messages.Of(cj)
		if len(a.subs) > 0 {
			a.emit(messages.JobSuperseded{Time: now, Type: o.Type, ID: o.ID, FairnessKey: o.Key})
		}
		a.ended(o, ErrSuperseded)
	}
}
