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
//
// An empty pool allocates records in blocks (jobBlock, fullBlock) and
// keeps all but the one it returns: when a backlog grows, each job that
// extends it needs a record of its own, and one allocation per block
// costs less than one per record. A block is collected once none of its
// records is reachable, so the memory of a backlog's peak can stay a
// little longer than its records do; every record in a block is in use
// while the backlog holds it, so a pending job costs no more than alone.
var jobs, fulls sync.Pool

const (
	jobBlock  = 36 // 36 records of 224 bytes: 8 064 of the 8 192-byte size class
	fullBlock = 16 // 16 of 592 bytes fill the 9 472-byte class
)

func init() {
	jobs.New = func() any {
		b := new([jobBlock]Job)
		for i := 1; i < len(b); i++ {
			jobs.Put(&b[i])
		}
		return &b[0]
	}
	fulls.New = func() any {
		b := new([fullBlock]full)
		for i := range b {
			f := &b[i]
			f.Extra, f.Rare, f.Flags = &f.x, &f.r, flagInline
			if i > 0 {
				fulls.Put(&f.Job)
			}
		}
		return &b[0].Job
	}
}

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
