package core

import (
	"fmt"
	"time"

	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/queue"
)

// Explanation says why a job waits: the rules that hold it, what holds it
// under the binding one by name, when it is expected to start and what it
// has waited on so far. For a running job, only when it started.
type Explanation struct {
	Type        policy.JobType `json:"type"`
	ID          string         `json:"id"`
	FairnessKey string         `json:"fairness_key"`
	Group       string         `json:"group,omitempty"`
	Submitted   time.Time      `json:"submitted"`
	// Running: the job runs, since Started; the rest is empty.
	Running bool      `json:"running,omitempty"`
	Started time.Time `json:"started,omitzero"`
	// Reasons and Reason are the snapshot's (PendingJob).
	Reasons []policy.Reason `json:"reasons,omitempty"`
	Reason  policy.Reason   `json:"reason,omitempty"`
	// Blockers name what holds the job under Reason (at most
	// MaxBlockers).
	Blockers []Blocker `json:"blockers,omitempty"`
	// Estimate is when it is expected to start (nil while running).
	Estimate *StartEstimate `json:"estimate,omitempty"`
	// History is what it has waited on, oldest first (at most
	// HistoryPerJob); HistoryDropped counts the notes it lost to the
	// bounds.
	History        []WaitNote `json:"history,omitempty"`
	HistoryDropped int        `json:"history_dropped,omitempty"`
}

// Explain explains the job of (t, id): the pending one that arrived first,
// else a running one. It costs O(pending) to find the job (a RunSync call
// has no index by id), what EstimateStart does, and O(running). It fails with
// ErrUnknownJobType for a type never registered and ErrUnknownJob when no
// such job is pending or running.
func (c *Core) Explain(now time.Time, t policy.JobType, id string) (Explanation, error) {
	if _, ok := c.usage.Lookup(t); !ok {
		return Explanation{}, fmt.Errorf("%w: %q", policy.ErrUnknownJobType, t)
	}
	if j := c.findPending(t, id); j != nil {
		return c.explainPending(now, j, &holders{c: c}), nil
	}
	for _, r := range c.Running() {
		if r.Type == t && r.ID == id {
			return Explanation{Type: t, ID: id, FairnessKey: r.Key, Group: r.Group,
				Submitted: c.queue.TimeOf(r.Submitted), Running: true, Started: r.Started}, nil
		}
	}
	return Explanation{}, fmt.Errorf("%w: %s/%q", policy.ErrUnknownJob, t, id)
}

// findPending returns the first-arrived pending job of (t, id), nil if none.
func (c *Core) findPending(t policy.JobType, id string) *Job {
	var found *Job
	c.queue.Each(func(qj *queue.Job) {
		if qj.Type == t && qj.ID == id && (found == nil || qj.Seq < found.Seq) {
			found = jobOf(qj)
		}
	})
	return found
}

// explainPending explains pending job j, noting the reason it waits on now
// in its history.
func (c *Core) explainPending(now time.Time, j *Job, h *holders) Explanation {
	e := Explanation{Type: j.Type, ID: j.ID, FairnessKey: j.Key, Group: j.Group,
		Submitted: c.queue.TimeOf(j.Submitted)}
	e.Reasons = c.reasons(now, j, nil)
	if len(e.Reasons) > 0 {
		e.Reason = e.Reasons[0]
		e.Blockers = h.of(j, e.Reason)
		c.noteWait(now, j, e.Reason)
	}
	if est, ok := c.EstimateStart(now, j); ok {
		e.Estimate = &est
	}
	e.History, e.HistoryDropped = waitHistoryOf(j)
	return e
}
