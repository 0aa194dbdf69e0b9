package core

import (
	"time"

	"github.com/fairsched/fairsched/policy"
)

// Wait histories: each pending job keeps the reasons it has waited on, with
// when the core saw each begin. Dispatch notes the rules it meets job by
// job (conflict, tenant_limit, rate_limited, workers) and the job's own
// state (backoff, deferred, scheduled); the caps dispatch stops at without
// looking at each job (global, tier, type, group) are noted when a
// snapshot or Explain first sees them hold the job. A history lives with
// its job and goes when the job starts or leaves.
const (
	// HistoryPerJob bounds one job's history: past it the oldest note
	// goes (Dropped counts it).
	HistoryPerJob = 8
	// HistoryTotal bounds the notes of all pending jobs together: past it
	// a job's new notes are counted in its Dropped instead.
	HistoryTotal = 1 << 16
)

// WaitNote is one reason a job has waited on, from Since.
type WaitNote struct {
	Reason policy.Reason `json:"reason"`
	Since  time.Time     `json:"since"`
}

// waitHistory is a job's history, apart: most jobs have none.
type waitHistory struct {
	notes   []WaitNote
	dropped int
}

// noteWait notes that pending job j waits on r from now, unless r is
// already its latest note. O(HistoryPerJob).
func (c *Core) noteWait(now time.Time, j *Job, r policy.Reason) {
	if r == "" {
		return
	}
	h := j.rare().waits
	if h != nil && len(h.notes) > 0 && h.notes[len(h.notes)-1].Reason == r {
		return
	}
	if h == nil {
		h = new(waitHistory)
		j.more().waits = h
	}
	switch {
	case len(h.notes) == HistoryPerJob:
		copy(h.notes, h.notes[1:])
		h.notes[len(h.notes)-1] = WaitNote{Reason: r, Since: now}
		h.dropped++
	case c.waitNotes >= HistoryTotal:
		h.dropped++
	default:
		h.notes = append(h.notes, WaitNote{Reason: r, Since: now})
		c.waitNotes++
	}
}

// forgetWaits drops j's history: it starts or leaves.
func (c *Core) forgetWaits(j *Job) {
	if j.Rare == nil || j.waits == nil {
		return
	}
	c.waitNotes -= len(j.waits.notes)
	j.waits = nil
}

// waitHistoryOf returns a copy of j's history and how many notes it lost.
func waitHistoryOf(j *Job) ([]WaitNote, int) {
	h := j.rare().waits
	if h == nil {
		return nil, 0
	}
	return append([]WaitNote(nil), h.notes...), h.dropped
}
