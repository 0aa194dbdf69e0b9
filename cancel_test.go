package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/fairschedtest"
)

// cancelTypes: one slot, so that what is submitted second waits.
func cancelTypes(t *testing.T, s *fairsched.Scheduler) {
	t.Helper()
	for typ, cfg := range map[fairsched.JobType]fairsched.JobTypeConfig{
		"repack": {Priority: 4, DefaultCost: 30 * time.Second},
		"index":  {Priority: 4, DefaultCost: 30 * time.Second, Coalesce: true},
	} {
		if err := s.RegisterType(typ, cfg); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCancel: Cancel removes a pending job (never run, never charged, a
// JobCancelled event), cancels a running one's context with ErrCancelled
// as its cause (not retried), removes a job waiting for its retry, removes
// a pending coalesced run and answers its RunSync waiter, and says which
// it did each time.
func TestCancel(t *testing.T) {
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		cancelTypes(t, env.Scheduler)
		events, stop := env.Subscribe(64)
		defer stop()
		ctx := context.Background()
		cancel := func(typ fairsched.JobType, id string) fairsched.Cancelled {
			t.Helper()
			c, err := env.Cancel(ctx, typ, id)
			if err != nil {
				t.Fatalf("Cancel(%s, %s): %v", typ, id, err)
			}
			return c
		}

		// r1 runs, r2 waits: cancel r2, then r1.
		r1, r2 := fairschedtest.NewBlocker(), fairschedtest.NewBlocker()
		retry := fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Second, MaxBackoff: time.Second})
		if err := env.Submit("repack", "r1", r1.Run, retry); err != nil {
			t.Fatal(err)
		}
		if err := env.Submit("repack", "r2", r2.Run, fairsched.WithFairnessKey("tenant")); err != nil {
			t.Fatal(err)
		}
		env.WaitPending(1)
		got := map[string]fairsched.Cancelled{}
		got["pending r2"] = cancel("repack", "r2")
		got["r2 again"] = cancel("repack", "r2")
		got["running r1"] = cancel("repack", "r1")
		env.WaitIdle()
		if r2.Started() || r1.Runs() != 1 || !errors.Is(r1.Cause(), fairsched.ErrCancelled) {
			t.Errorf("r2 started %v; r1 ran %d times, its context's cause %v; want false, 1, ErrCancelled",
				r2.Started(), r1.Runs(), r1.Cause())
		}

		// r3 fails and waits a second for its retry: cancelled there.
		r3 := fairschedtest.NewBlocker()
		r3.Release(errors.New("disk full"))
		if err := env.Submit("repack", "r3", r3.Run, retry); err != nil {
			t.Fatal(err)
		}
		env.WaitPending(1) // back in the queue, in backoff
		got["r3 in backoff"] = cancel("repack", "r3")
		env.Advance(time.Minute)
		if r3.Runs() != 1 {
			t.Errorf("r3 ran %d times; want 1 (cancelled in backoff)", r3.Runs())
		}

		// A coalesced run pending behind r4, with a RunSync waiter.
		r4 := fairschedtest.NewBlocker()
		if err := env.Submit("repack", "r4", r4.Run); err != nil {
			t.Fatal(err)
		}
		r4.WaitStarted(t)
		ix := fairschedtest.NewBlocker()
		waiter := env.Go(func() error { return env.RunSync(ctx, "index", "linux", "alice", ix.Run) })
		env.WaitPending(1)
		got["coalesced run"] = cancel("index", "linux")
		if err := <-waiter; !errors.Is(err, fairsched.ErrCancelled) {
			t.Errorf("the coalesced run's waiter got %v; want ErrCancelled", err)
		}
		got["nothing"] = cancel("repack", "never")
		r4.Release(nil)
		env.WaitIdle()

		want := map[string]fairsched.Cancelled{
			"pending r2": {Pending: 1}, "r2 again": {}, "running r1": {Running: 1},
			"r3 in backoff": {Pending: 1}, "coalesced run": {Pending: 1}, "nothing": {},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Cancel's answers (-want +got):\n%s", diff)
		}
		if !got["nothing"].None() || got["pending r2"].None() {
			t.Error("None is wrong")
		}

		if err := env.Close(ctx); err != nil {
			t.Fatal(err)
		}
		var timeline []string
		for e := range events {
			switch e := e.(type) {
			case fairsched.JobCancelled:
				timeline = append(timeline, fmt.Sprintf("%v cancelled %s/%s key=%q: %v", e.Time.Sub(fairschedtest.Epoch), e.Type, e.ID, e.FairnessKey, e.Err))
			case fairsched.JobAdmitted:
				timeline = append(timeline, fmt.Sprintf("%v admitted %s/%s", e.Time.Sub(fairschedtest.Epoch), e.Type, e.ID))
			case fairsched.JobFailed:
				timeline = append(timeline, fmt.Sprintf("%v failed %s/%s retrying=%v: %v", e.Time.Sub(fairschedtest.Epoch), e.Type, e.ID, e.Retrying, e.Err))
			}
		}
		wantTimeline := []string{
			`0s admitted repack/r1`,
			`0s cancelled repack/r2 key="tenant": fairsched: job cancelled`,
			`0s failed repack/r1 retrying=false: fairsched: repack/r1 failed after 1 attempt(s): context canceled`,
			`0s admitted repack/r3`,
			`0s failed repack/r3 retrying=true: disk full`,
			`0s cancelled repack/r3 key="": fairsched: job cancelled`,
			`1m0s admitted repack/r4`,
			`1m0s cancelled index/linux key="alice": fairsched: job cancelled`,
		}
		if diff := cmp.Diff(wantTimeline, timeline); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	}, fairsched.WithMaxConcurrency(1))
}

// TestCancelBadCalls: typed errors, nothing cancelled.
func TestCancelBadCalls(t *testing.T) {
	s := fairschedtest.New(t)
	cancelTypes(t, s)
	for name, tc := range map[string]struct {
		ctx  context.Context
		typ  fairsched.JobType
		id   string
		want error
	}{
		"unknown type": {context.Background(), "nope", "x", fairsched.ErrUnknownJobType},
		"empty id":     {context.Background(), "repack", "", fairsched.ErrInvalidJob},
		"nil context":  {nil, "repack", "x", fairsched.ErrInvalidJob},
	} {
		if _, err := s.Cancel(tc.ctx, tc.typ, tc.id); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v; want %v", name, err, tc.want)
		}
	}
	var nilSched *fairsched.Scheduler
	if _, err := nilSched.Cancel(context.Background(), "repack", "x"); !errors.Is(err, fairsched.ErrNilScheduler) {
		t.Errorf("nil scheduler: %v", err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cancel(context.Background(), "repack", "x"); !errors.Is(err, fairsched.ErrClosed) {
		t.Errorf("after Close: %v; want ErrClosed", err)
	}
}

type traceKey struct{}

// TestWithValuesFrom: a background job sees the submitting request's values
// but not its cancellation: the request ends before the job starts, and
// the job's context is still live.
func TestWithValuesFrom(t *testing.T) {
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		cancelTypes(t, env.Scheduler)
		reqCtx, endRequest := context.WithCancel(context.WithValue(context.Background(), traceKey{}, "trace-42"))
		hold := fairschedtest.NewBlocker()
		if err := env.Submit("repack", "first", hold.Run); err != nil {
			t.Fatal(err)
		}
		var seen string
		var live bool
		if err := env.Submit("repack", "second", func(ctx context.Context) error {
			seen, _ = ctx.Value(traceKey{}).(string)
			live = ctx.Err() == nil
			return nil
		}, fairsched.WithValuesFrom(reqCtx)); err != nil {
			t.Fatal(err)
		}
		endRequest()
		hold.Release(nil)
		env.WaitIdle()
		if seen != "trace-42" || !live {
			t.Errorf("the job saw trace %q, live context %v; want trace-42, true", seen, live)
		}
	}, fairsched.WithMaxConcurrency(1))
}

// TestCoalescedRunWaitsForTheLongestRequest: a background request with a
// queue timeout of 2 s creates the run; a RunSync with 10 s joins it. The
// run does not expire at 2 s while the caller still wants it: it runs when
// the slot frees at 5 s and the caller gets its result. (Found by the long
// invariant run: the caller got ErrExpired at 2 s.)
func TestCoalescedRunWaitsForTheLongestRequest(t *testing.T) {
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		cancelTypes(t, env.Scheduler)
		hold := fairschedtest.NewBlocker()
		if err := env.Submit("repack", "hold", hold.Run); err != nil {
			t.Fatal(err)
		}
		ran := make(chan string, 2)
		fn := func(who string) func(context.Context) error {
			return func(context.Context) error { ran <- who; return nil }
		}
		if err := env.Submit("index", "linux", fn("submit"), fairsched.WithQueueTimeout(2*time.Second)); err != nil {
			t.Fatal(err)
		}
		env.WaitPending(1)
		caller := env.Go(func() error {
			return env.RunSync(context.Background(), "index", "linux", "alice", fn("caller"), fairsched.WithQueueTimeout(10*time.Second))
		})
		env.Settle()
		env.Advance(5 * time.Second)
		hold.Release(nil)
		if err := <-caller; err != nil {
			t.Fatalf("the caller got %v; want the run's result", err)
		}
		if got := <-ran; got != "submit" {
			t.Errorf("the run ran %q's function; want the first request's", got)
		}
	}, fairsched.WithMaxConcurrency(1))
}
