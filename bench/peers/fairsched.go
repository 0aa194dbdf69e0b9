package peers

import (
	"context"
	"fmt"
	"time"

	"github.com/fairsched/fairsched"
)

const jobType fairsched.JobType = "request"

// Fairsched is a fairsched scheduler whose only limit is the global cap:
// a flow is a fairness key.
type Fairsched struct {
	s    *fairsched.Scheduler
	keys []string
}

// NewFairsched makes a scheduler of the given concurrency for flows flows.
func NewFairsched(concurrency, flows int) (*Fairsched, error) {
	s, err := fairsched.New(fairsched.WithMaxConcurrency(concurrency))
	if err != nil {
		return nil, err
	}
	err = s.RegisterType(jobType, fairsched.JobTypeConfig{DefaultCost: time.Millisecond, Priority: fairsched.Priority(concurrency)})
	if err != nil {
		s.Close(context.Background())
		return nil, err
	}
	f := &Fairsched{s: s}
	for i := range flows {
		f.keys = append(f.keys, fmt.Sprint("flow-", i))
	}
	return f, nil
}

// Do is RunSync with flow's fairness key (and id).
func (f *Fairsched) Do(ctx context.Context, flow int, fn func()) error {
	return f.s.RunSync(ctx, jobType, f.keys[flow], f.keys[flow], func(context.Context) error { fn(); return nil })
}

// Go is Submit.
func (f *Fairsched) Go(fn func()) error {
	return f.s.Submit(jobType, "job", func(context.Context) error { fn(); return nil })
}

// Close closes the scheduler once its jobs are done.
func (f *Fairsched) Close() { _ = f.s.Close(context.Background()) }
