package messages

import (
	"context"
	"sync"

	"github.com/fairsched/fairsched/policy"
)

// jobs recycles the records of Submit and RunSync jobs: a record is about a
// kilobyte, and allocating and collecting one per job was the largest cost
// of the hot path. The owner returns a record (Recycle) only once nothing
// can reach it any more.
var jobs = sync.Pool{New: func() any { return new(Job) }}

// NewPooledJob is NewJob from the pool of records, for a job that only the
// owner and its caller reach: the owner recycles it when the job ends.
func NewPooledJob(t policy.JobType, id, key string, fn func(context.Context) error) *Job {
	j := jobs.Get().(*Job)
	j.Fn, j.Pooled = fn, true
	j.Type, j.ID, j.Key, j.Payload = t, id, key, j
	return j
}

// Recycle gives j's record back to the pool. Only the owner calls it, once
// the job has ended for good and no one holds j: not its caller (a RunSync
// that returned, a Submit), not a runner, not a RunContext (its attempt's
// own, which Attempt made apart from the record and which stops naming j
// when the attempt ends). Channels are not kept: one made in a
// testing/synctest bubble must not serve a job outside it.
func Recycle(j *Job) {
	*j = Job{}
	jobs.Put(j)
}
