package messages

import (
	"context"
	"sync"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/policy"
)

// jobs and fulls recycle the records of Submit and RunSync jobs: allocating
// and collecting one per job was the largest cost of the hot path. A
// Submit record is small (a pending background job is most of the
// scheduler's memory); a RunSync record carries its Extra inline (full),
// which a foreground job always needs. The owner returns a record
// (Recycle) only once nothing can reach it any more.
var (
	jobs  = sync.Pool{New: func() any { return new(Job) }}
	fulls = sync.Pool{New: func() any {
		f := new(full)
		f.Extra, f.Rare, f.Flags = &f.x, &f.r, flagInline
		return &f.Job
	}}
)

// NewPooledJob is NewJob from the pool of records, for a job that only the
// owner and its caller reach: the owner recycles it when the job ends. Its
// Extra is nil until More.
func NewPooledJob(t policy.JobType, id, key string, fn func(context.Context) error) *Job {
	return pooled(jobs.Get().(*Job), t, id, key, fn)
}

// NewPooledFull is NewPooledJob with Extra in the record: for a foreground
// job, which uses it.
func NewPooledFull(t policy.JobType, id, key string, fn func(context.Context) error) *Job {
	return pooled(fulls.Get().(*Job), t, id, key, fn)
}

func pooled(j *Job, t policy.JobType, id, key string, fn func(context.Context) error) *Job {
	j.Fn = fn
	j.Flags |= flagPooled
	j.Type, j.ID, j.Key = t, id, key
	return j
}

// Recycle gives j's record back to the pool. Only the owner calls it, once
// the job has ended for good and no one holds j: not its caller (a RunSync
// that returned, a Submit), not a runner, not a RunContext (its attempt's
// own, which Attempt made apart from the record and which stops naming j
// when the attempt ends). Channels are not kept: one made in a
// testing/synctest bubble must not serve a job outside it. An Extra made
// apart (More) is dropped, so that the small pool stays small.
func Recycle(j *Job) {
	if j.inline() {
		x, r := j.Extra, j.Rare
		*x, *r = Extra{}, core.Rare{}
		*j = Job{Job: core.Job{Rare: r, Flags: flagInline}, Extra: x}
		fulls.Put(j)
		return
	}
	*j = Job{}
	jobs.Put(j)
}
