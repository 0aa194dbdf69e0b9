package machine

import (
	"github.com/fairsched/fairsched/messages"
)

// submitMany queues each job as submit does, with one dispatch for all.
func (a *Machine) submitMany(m messages.SubmitMany) {
	batching := a.batching
	a.batching = true
	for i, j := range m.Jobs {
		var verdict chan error
		if m.Verdicts != nil {
			verdict = m.Verdicts[i]
		}
		a.submit(j, verdict)
	}
	a.batching = batching
	if !batching {
		a.flush()
	}
}
