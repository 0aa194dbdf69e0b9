package core

import "time"

// ResumedCode is the reason code of a Resume in the decision log.
const ResumedCode = "resumed"

// Resume starts pending job j at once, whatever the limits say, and
// reports whether it did: j is already running elsewhere — in cluster
// mode, granted by a previous leader on an instance that still runs it —
// and must count against every cap, conflict and tenant limit until it
// ends, so that nothing is admitted beside it that would not have been.
// A limit it fills stays full until it finishes (a cap it finds full runs
// over by one until then: the job runs whatever this core says).
//
// Call it right after Submit, before Dispatch. A job of a worker type with
// no free slot that takes it is not resumed (false): it runs on, uncounted
// by the pool, and its end is reported with Finish all the same.
func (c *Core) Resume(now time.Time, j *Job) bool {
	c.queue.At(now)
	if !j.Job.Queued() || j.slot.Config.RequiresWorker && c.pool.Free(j.Type) == 0 {
		return false
	}
	c.admit(now, j, c.queue.Admit(&j.Job, c.limits.Groups != nil && c.room(j.grp()) <= 1))
	j.setWaiting("")
	c.record(now, j, DecisionAdmit, ResumedCode, 0)
	return true
}
