package fairsched_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
)

// FuzzExtremeValues feeds every duration, rate, weight and token the API
// takes from the fuzzer — aging interval and grace, TTL, retry backoff,
// deferral, stated cost, key weight, rate — on a clock in 2026, where
// instants past 2262 used to wrap. Each call either fails with a typed
// error or is taken, and the scheduler keeps answering: a plain RunSync
// completes (a liveness bound, not a timed assertion).
func FuzzExtremeValues(f *testing.F) {
	f.Add(int64(time.Second), int64(250*year), int64(280*year), int64(250*year), int64(math.MaxInt64), int64(math.MaxInt64), 1e-9, 1e-11)
	f.Add(int64(0), int64(1), int64(1), int64(1), int64(1), int64(1), 1.0, 1.0)
	f.Add(int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64), int64(0), int64(math.MaxInt64/2), 1e6, 1e300)
	f.Add(int64(-1), int64(-5), int64(-1), int64(-1), int64(-1), int64(-1), -1.0, math.Inf(1))
	f.Fuzz(func(t *testing.T, grace, interval, ttl, backoff, deferral, tokens int64, weight, rate float64) {
		opts := []fairsched.Option{fairsched.WithAdmissionPolicy(func(info fairsched.JobInfo) fairsched.Decision {
			if info.ID == "deferred" && info.Attempt == 0 {
				return fairsched.Defer(time.Duration(deferral))
			}
			return fairsched.Admit()
		})}
		if interval > 0 {
			opts = append(opts, fairsched.WithAging(fairsched.AgingConfig{GracePeriod: time.Duration(grace), Interval: time.Duration(interval), Step: 1, MaxEffectivePriority: 9}))
		}
		opts = append(opts, fairsched.WithRateLimit(fairsched.RateForType("limited"), rate, 1))
		s, _ := overflowSchedulerOr(t, opts...)
		if s == nil {
			return // refused as invalid configuration
		}
		if err := s.RegisterType("limited", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4}); err != nil {
			t.Fatal(err)
		}
		nop := func(context.Context) error { return nil }
		fail := func(context.Context) error { return errors.New("fails") }
		typed := func(err error) bool {
			return err == nil || errors.Is(err, fairsched.ErrInvalidJob) || errors.Is(err, fairsched.ErrInvalidConfig)
		}
		for _, submit := range []func() error{
			func() error { return s.Submit("t", "ttl", nop, fairsched.WithQueueTimeout(time.Duration(ttl))) },
			func() error {
				return s.Submit("t", "retry", fail, fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Duration(backoff), MaxBackoff: time.Duration(backoff)}))
			},
			func() error { return s.Submit("t", "deferred", nop) },
			func() error {
				return s.Submit("t", "tokens", nop, fairsched.WithTokens(time.Duration(tokens)), fairsched.WithFairnessKey("w"))
			},
			func() error { return s.SetKeyWeight("w", weight) },
			func() error { return s.Submit("limited", "a", nop) },
			func() error { return s.Submit("limited", "b", nop) },
		} {
			if err := submit(); !typed(err) {
				t.Fatalf("a call failed with an untyped error: %v", err)
			}
		}
		if err := within(t, "RunSync", func() error { return s.RunSync(context.Background(), "other", "probe", "", nop) }); err != nil {
			t.Fatalf("RunSync = %v", err)
		}
	})
}

// overflowSchedulerOr is overflowScheduler that reports an invalid
// configuration as a nil scheduler instead of failing.
func overflowSchedulerOr(t *testing.T, opts ...fairsched.Option) (*fairsched.Scheduler, any) {
	t.Helper()
	probe, err := fairsched.New(opts...)
	if err != nil {
		if !errors.Is(err, fairsched.ErrInvalidConfig) {
			t.Fatalf("New = %v; want nil or ErrInvalidConfig", err)
		}
		return nil, nil
	}
	_ = probe.Close(context.Background())
	s, mock := overflowScheduler(t, opts...)
	return s, mock
}
