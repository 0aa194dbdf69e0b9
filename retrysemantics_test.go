package fairsched_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
)

// TestRetriesStopWhenTheCallerLeaves: a RunSync whose caller's context
// ends during its first attempt is not put back for another (it was, and
// with a short backoff the next attempt could start before the caller's
// withdrawal arrived: up to MaxAttempts, each charged). The one failure
// event says it is final.
func TestRetriesStopWhenTheCallerLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{"t": {DefaultCost: time.Second, Priority: 1}})
		events, stop := s.Subscribe(16)
		ctx, cancel := context.WithCancel(context.Background())
		runs := 0
		err := s.RunSync(ctx, "t", "x", "", func(context.Context) error {
			runs++
			cancel() // the caller gives up while the attempt runs
			return errors.New("attempt failed")
		}, fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Second, MaxBackoff: time.Second}))
		if err == nil {
			t.Fatal("RunSync = nil; want the failure")
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if runs != 1 {
			t.Errorf("%d attempts ran; want 1 (nobody waits for another)", runs)
		}
		stop()
		for e := range events {
			if f, ok := e.(fairsched.JobFailed); ok && f.Retrying {
				t.Errorf("the failure was reported as retrying: %+v", f)
			}
		}
	})
}

// TestTTLInBackoffReportsTheFailure: a RunSync whose time to live runs out
// while it waits for its retry gets its last attempt's error, not
// ErrExpired, which means the job never ran.
func TestTTLInBackoffReportsTheFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{"t": {DefaultCost: time.Second, Priority: 1}})
		failure := errors.New("upstream down")
		start := time.Now()
		err := s.RunSync(context.Background(), "t", "x", "", func(context.Context) error { return failure },
			fairsched.WithQueueTimeout(5*time.Second),
			fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: 10 * time.Second, MaxBackoff: 10 * time.Second}))
		if errors.Is(err, fairsched.ErrExpired) || !errors.Is(err, failure) {
			t.Errorf("RunSync = %v; want the attempt's error, not ErrExpired", err)
		}
		if d := time.Since(start); d != 5*time.Second {
			t.Errorf("RunSync returned after %v; want at the TTL, 5s", d)
		}
	})
}

// TestSupersedeReplacesAJobInBackoff: a background job waiting for its
// retry is pending like any: a Supersede of its (type, id) replaces it (both
// ran), and a JobSuperseded event says so, for subscribers and metrics.
func TestSupersedeReplacesAJobInBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{"t": {DefaultCost: time.Second, Priority: 1}})
		events, stop := s.Subscribe(32)
		oldRuns, newRuns := 0, 0
		retry := fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: 10 * time.Second, MaxBackoff: 10 * time.Second})
		if err := s.Submit("t", "x", func(context.Context) error { oldRuns++; return errors.New("fails") }, retry); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // its first attempt failed: it waits for its retry
		if err := s.Submit("t", "x", func(context.Context) error { newRuns++; return nil }, fairsched.Supersede()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if oldRuns != 1 || newRuns != 1 {
			t.Errorf("old job ran %d times, new %d; want 1 and 1 (the retry was superseded)", oldRuns, newRuns)
		}
		stop()
		superseded := 0
		for e := range events {
			if _, ok := e.(fairsched.JobSuperseded); ok {
				superseded++
			}
		}
		if superseded != 1 {
			t.Errorf("%d JobSuperseded events; want 1", superseded)
		}
	})
}

// TestCoalescedWaitersKeepTheirTTL: requests that share one coalesced run
// each keep their own time to live: the first, of 5 s, expires at 5 s and
// the second, of 20 s, at 20 s (its TTL was ignored: it expired with the
// first's run at 5 s), while the only slot is taken for a minute.
func TestCoalescedWaitersKeepTheirTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			"hold":  {DefaultCost: time.Second, Priority: 1},
			"fetch": {DefaultCost: time.Second, Priority: 1, Coalesce: true},
		}, fairsched.WithMaxConcurrency(1))
		hold := newBlocker()
		if err := s.Submit("hold", "h", hold.fn); err != nil {
			t.Fatal(err)
		}
		<-hold.started
		start := time.Now()
		type outcome struct {
			TTL     time.Duration
			Expired bool
			At      time.Duration
		}
		results := make(chan outcome, 2)
		for _, ttl := range []time.Duration{5 * time.Second, 20 * time.Second} {
			go func() {
				err := s.RunSync(context.Background(), "fetch", "repo", "", func(context.Context) error { return nil }, fairsched.WithQueueTimeout(ttl))
				results <- outcome{ttl, errors.Is(err, fairsched.ErrExpired), time.Since(start)}
			}()
			synctest.Wait()
		}
		got := []outcome{<-results, <-results}
		hold.release <- nil
		want := []outcome{{5 * time.Second, true, 5 * time.Second}, {20 * time.Second, true, 20 * time.Second}}
		if got[0] != want[0] || got[1] != want[1] {
			t.Errorf("outcomes %+v; want %+v", got, want)
		}
	})
}

// TestCoalescedRetriesStopWhenEveryWaiterLeft: a coalesced run whose only
// waiter left during its attempt is not retried either (its context is
// cancelled, and nobody wants another attempt).
func TestCoalescedRetriesStopWhenEveryWaiterLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{"t": {DefaultCost: time.Second, Priority: 1, Coalesce: true}})
		ctx, cancel := context.WithCancel(context.Background())
		runs := 0
		started := make(chan struct{}, 8)
		done := make(chan error, 1)
		go func() {
			done <- s.RunSync(ctx, "t", "x", "", func(ctx context.Context) error {
				runs++
				started <- struct{}{}
				<-ctx.Done()
				return errors.New("attempt failed")
			}, fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Second, MaxBackoff: time.Second}))
		}()
		<-started
		cancel() // the only waiter gives up while the attempt runs
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("RunSync = %v; want context.Canceled", err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if runs != 1 {
			t.Errorf("%d attempts ran; want 1 (nobody waits for another)", runs)
		}
	})
}

// TestTTLInBackoffIsReportedAsAFailure: a background job whose time to
// live runs out in its retry's backoff is reported failed (JobFailed,
// final, wrapping its attempt's error), never JobExpired, which says it
// never ran.
func TestTTLInBackoffIsReportedAsAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{"t": {DefaultCost: time.Second, Priority: 1}})
		events, stop := s.Subscribe(16)
		failure := errors.New("upstream down")
		if err := s.Submit("t", "x", func(context.Context) error { return failure },
			fairsched.WithQueueTimeout(5*time.Second),
			fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: 10 * time.Second, MaxBackoff: 10 * time.Second})); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		stop()
		type ending struct {
			Kind     string
			Retrying bool
			Wraps    bool
		}
		var got []ending
		for e := range events {
			switch e := e.(type) {
			case fairsched.JobFailed:
				got = append(got, ending{"failed", e.Retrying, errors.Is(e.Err, failure)})
			case fairsched.JobExpired:
				got = append(got, ending{Kind: "expired"})
			}
		}
		want := []ending{{"failed", true, true}, {"failed", false, true}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("endings (-want +got):\n%s", diff)
		}
	})
}
