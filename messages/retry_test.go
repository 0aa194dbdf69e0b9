package messages

import (
	"context"
	"testing"
	"time"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/policy"
)

// A job's retry policy is its own when it has one, else its type's, read
// from the type (not copied into the job) once it is submitted.
func TestRetryOwnElseType(t *testing.T) {
	typed := policy.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Second, MaxBackoff: time.Minute}
	own := policy.RetryPolicy{MaxAttempts: 5, MinBackoff: time.Millisecond, MaxBackoff: time.Second}
	c := core.New(policy.DefaultLimits())
	if err := c.RegisterType("t", policy.JobTypeConfig{DefaultCost: time.Millisecond, Priority: 1, Retry: typed}); err != nil {
		t.Fatal(err)
	}
	noop := func(context.Context) error { return nil }
	plain, mine, zero := NewPooledJob("t", "a", "", noop), NewJob("t", "b", "", noop), NewJob("t", "c", "", noop)
	mine.OwnRetry, mine.RetrySet = own, true
	zero.RetrySet = true // a zero policy of its own leaves its type's
	if got := plain.Retry(); got != (policy.RetryPolicy{}) {
		t.Errorf("before Submit: %+v, want none", got)
	}
	now := time.Unix(1_000, 0)
	for _, j := range []*Job{plain, mine, zero} {
		if err := c.Submit(now, &j.Job); err != nil {
			t.Fatal(err)
		}
	}
	if got := plain.Retry(); got != typed {
		t.Errorf("without its own: %+v, want its type's %+v", got, typed)
	}
	if got := mine.Retry(); got != own {
		t.Errorf("with its own: %+v, want %+v", got, own)
	}
	if got := zero.Retry(); got != typed {
		t.Errorf("with a zero policy of its own: %+v, want its type's %+v", got, typed)
	}
}
