package fairsched_test

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/fairschedtest"
)

// Issue 14 §2: durations and rates so large that their instants pass the
// year 2262 (where Unix nanoseconds end) used to wrap to the past — a job
// expired, retried or was re-asked at once, or the owner spun for ever.
// Each case runs on a mock clock in 2026, where the wrap bites, and checks
// that the scheduler still answers: these are liveness bounds (a broken
// owner fails the case after 10 s instead of hanging the suite), not timed
// assertions.

const year = 365 * 24 * time.Hour

// overflowScheduler starts a scheduler on a mock clock in 2026 with type t.
func overflowScheduler(t *testing.T, opts ...fairsched.Option) (*fairsched.Scheduler, *clock.Mock) {
	t.Helper()
	mock := clock.NewMock()
	mock.Set(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
	s, err := fairsched.New(append([]fairsched.Option{fairsched.WithClock(mock), fairsched.WithMaxConcurrency(4)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		// Bounded too: a stuck owner never stops, and the case has failed.
		_ = within(t, "Close", func() error { return s.Close(ctx) })
	})
	for _, typ := range []fairsched.JobType{"t", "other"} {
		if err := s.RegisterType(typ, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4}); err != nil {
			t.Fatal(err)
		}
	}
	return s, mock
}

// within fails t unless call returns within 10 s (a hang bound).
func within(t *testing.T, what string, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no answer after 10 s: the scheduler's owner is stuck", what)
		return nil
	}
}

func nopJob(context.Context) error { return nil }

func TestHugeDurationsNeverWrap(t *testing.T) {
	ctx := context.Background()
	t.Run("aging-interval-250y", func(t *testing.T) {
		s, _ := overflowScheduler(t, fairsched.WithAging(fairsched.AgingConfig{GracePeriod: time.Second, Interval: 250 * year, Step: 1, MaxEffectivePriority: 9}))
		if err := within(t, "RunSync", func() error { return s.RunSync(ctx, "t", "x", "", nopJob) }); err != nil {
			t.Errorf("RunSync = %v", err)
		}
	})
	t.Run("ttl-280y", func(t *testing.T) {
		s, _ := overflowScheduler(t)
		if err := within(t, "RunSync", func() error { return s.RunSync(ctx, "t", "x", "", nopJob, fairsched.WithQueueTimeout(280*year)) }); err != nil {
			t.Errorf("RunSync with a 280-year TTL = %v; want it run (it expired at once)", err)
		}
	})
	t.Run("defer-maxint64", func(t *testing.T) {
		asked := atomic.Int64{}
		s, _ := overflowScheduler(t, fairsched.WithAdmissionPolicy(func(info fairsched.JobInfo) fairsched.Decision {
			if info.ID == "later" {
				asked.Add(1)
				return fairsched.Defer(math.MaxInt64)
			}
			return fairsched.Admit()
		}))
		if err := s.Submit("t", "later", nopJob); err != nil {
			t.Fatal(err)
		}
		if err := within(t, "RunSync", func() error { return s.RunSync(ctx, "other", "y", "", nopJob) }); err != nil {
			t.Errorf("RunSync = %v", err)
		}
		if n := asked.Load(); n != 1 {
			t.Errorf("the deferred job was asked %d times; want once (it never comes back)", n)
		}
	})
	t.Run("retry-backoff-250y", func(t *testing.T) {
		s, _ := overflowScheduler(t)
		var runs atomic.Int64
		failing := func(context.Context) error { runs.Add(1); return errors.New("fails") }
		retry := fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: 250 * year, MaxBackoff: 250 * year})
		if err := s.Submit("t", "x", failing, retry); err != nil {
			t.Fatal(err)
		}
		snap, err := func() (fairsched.Snapshot, error) {
			var snap fairsched.Snapshot
			err := within(t, "Snapshot", func() error {
				// The first attempt runs at once and fails: the job waits
				// for its retry (woken by the scheduler's events, no polling).
				var err error
				snap, err = fairschedtest.Until(ctx, s, func(sn fairsched.Snapshot) bool { return runs.Load() > 0 && sn.PendingTotal == 1 })
				return err
			})
			return snap, err
		}()
		if err != nil {
			t.Fatal(err)
		}
		if runs.Load() != 1 || len(snap.Pending) != 1 || snap.Pending[0].Reason != fairsched.ReasonBackoff {
			t.Errorf("after the first failure: %d runs, pending %+v; want 1 run and the job in backoff", runs.Load(), snap.Pending)
		}
	})
	t.Run("rate-1e-11", func(t *testing.T) {
		s, _ := overflowScheduler(t, fairsched.WithRateLimit(fairsched.RateForType("t"), 1e-11, 1))
		for _, id := range []string{"a", "b"} {
			if err := s.Submit("t", id, nopJob); err != nil {
				t.Fatal(err)
			}
		}
		if err := within(t, "RunSync", func() error { return s.RunSync(ctx, "other", "y", "", nopJob) }); err != nil {
			t.Errorf("RunSync = %v", err)
		}
	})
	t.Run("periodic-1ns-with-jitter", func(t *testing.T) {
		s, mock := overflowScheduler(t)
		stop, err := s.SubmitPeriodic("t", "tick", time.Nanosecond, nopJob, fairsched.WithJitter(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		// Up to 6e10 slots pass between occurrences: skipped in one step.
		_ = within(t, "the clock's advance", func() error { mock.Add(10 * time.Minute); return nil })
		if err := within(t, "RunSync", func() error { return s.RunSync(ctx, "other", "y", "", nopJob) }); err != nil {
			t.Errorf("RunSync = %v", err)
		}
		_ = within(t, "stop", func() error { stop(); return nil })
	})
}

// TestAbsurdCostsAndWeightsAreRefused: a stated cost past MaxTokens and a
// key weight outside [MinKeyWeight, MaxKeyWeight] are refused before they
// reach the cost arithmetic (two WithTokens(MaxInt64) wrapped a key's
// accumulated cost negative and inverted the fair order).
func TestAbsurdCostsAndWeightsAreRefused(t *testing.T) {
	s, _ := overflowScheduler(t)
	if err := s.Submit("t", "x", nopJob, fairsched.WithTokens(math.MaxInt64)); !errors.Is(err, fairsched.ErrInvalidJob) {
		t.Errorf("WithTokens(MaxInt64) = %v; want ErrInvalidJob", err)
	}
	if err := s.Submit("t", "x", nopJob, fairsched.WithTokens(fairsched.MaxTokens)); err != nil {
		t.Errorf("WithTokens(MaxTokens) = %v; want nil", err)
	}
	for _, w := range []float64{1e-9, 1e9} {
		if err := s.SetKeyWeight("k", w); !errors.Is(err, fairsched.ErrInvalidConfig) {
			t.Errorf("SetKeyWeight(%g) = %v; want ErrInvalidConfig", w, err)
		}
	}
	if _, err := fairsched.New(fairsched.WithKeyWeight("k", 1e-9)); !errors.Is(err, fairsched.ErrInvalidConfig) {
		t.Errorf("WithKeyWeight(1e-9) = %v; want ErrInvalidConfig", err)
	}
}
