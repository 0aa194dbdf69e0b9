package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/fairschedtest"
)

// Weighted groups split the global cap: with weights 3 and 1, group
// "prod" is allocated 3 of 4 slots and "backup" 1 while both have work
// waiting. (Running jobs are never preempted: the split is reached as
// slots free.)
func ExampleWithGroupWeight() {
	s, _ := fairsched.New(fairsched.WithMaxConcurrency(4),
		fairsched.WithGroupWeight("prod", 3), fairsched.WithGroupWeight("backup", 1))
	defer s.Close(context.Background())
	_ = s.RegisterType("sync", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4})
	job := fairschedtest.NewBlocker() // each run waits for the Release
	defer job.Release(nil)
	for i := range 6 {
		_ = s.Submit("sync", fmt.Sprint("backup-", i), job.Run, fairsched.InGroup("backup"))
		_ = s.Submit("sync", fmt.Sprint("prod-", i), job.Run, fairsched.InGroup("prod"))
	}
	snap, _ := s.Snapshot(context.Background())
	for _, g := range snap.Groups {
		fmt.Printf("%s: weight %d, %d slots\n", g.Name, g.Weight, g.Allocation)
	}
	// Output:
	// backup: weight 1, 1 slots
	// prod: weight 3, 3 slots
}

// A fairness key over its pending bound is turned away at once with a
// *RefusalError; nothing is queued.
func ExampleWithTenantLimits() {
	s, _ := fairsched.New(fairsched.WithMaxConcurrency(1), fairsched.WithTenantLimits(fairsched.TenantLimits{MaxPending: 1}))
	defer s.Close(context.Background())
	_ = s.RegisterType("sync", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1})
	job := fairschedtest.NewBlocker() // each run waits for the Release
	defer job.Release(nil)
	_ = s.Submit("sync", "a", job.Run, fairsched.WithFairnessKey("noisy")) // runs
	fairschedtest.Until(context.Background(), s, fairschedtest.Running(1))
	_ = s.Submit("sync", "b", job.Run, fairsched.WithFairnessKey("noisy")) // waits
	err := s.Submit("sync", "c", job.Run, fairsched.WithFairnessKey("noisy"))
	var refusal *fairsched.RefusalError
	fmt.Println(errors.Is(err, fairsched.ErrTenantLimit), errors.As(err, &refusal) && refusal.Reason == fairsched.ReasonTenantLimit)
	// Output:
	// true true
}

// A failing job is retried with backoff; RunSync returns the first success.
func ExampleWithRetry() {
	s, _ := fairsched.New()
	defer s.Close(context.Background())
	_ = s.RegisterType("fetch", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1})
	attempts := 0
	err := s.RunSync(context.Background(), "fetch", "feed", "user", func(context.Context) error {
		attempts++
		if attempts < 3 {
			return errors.New("flaky upstream")
		}
		return nil
	}, fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 5, MinBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond}))
	fmt.Println(attempts, err)
	// Output:
	// 3 <nil>
}

// A job still pending when its time to live runs out never runs: RunSync
// returns ErrExpired. The clock here is a mock, moved by hand.
func ExampleWithQueueTimeout() {
	mock := clock.NewMock()
	s, _ := fairsched.New(fairsched.WithClock(mock), fairsched.WithMaxConcurrency(1))
	defer s.Close(context.Background())
	_ = s.RegisterType("report", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1})
	job := fairschedtest.NewBlocker() // each run waits for the Release
	defer job.Release(nil)
	_ = s.Submit("report", "nightly", job.Run) // holds the one slot
	fairschedtest.Until(context.Background(), s, fairschedtest.Running(1))
	result := make(chan error)
	go func() {
		result <- s.RunSync(context.Background(), "report", "adhoc", "user", func(context.Context) error { return nil },
			fairsched.WithQueueTimeout(30*time.Second))
	}()
	fairschedtest.Until(context.Background(), s, fairschedtest.Pending(1))
	mock.Add(30 * time.Second)
	fmt.Println(errors.Is(<-result, fairsched.ErrExpired))
	// Output:
	// true
}

// The admission policy decides as each job would start: here it denies
// jobs of a blocked tenant.
func ExampleWithAdmissionPolicy() {
	blocked := errors.New("tenant suspended")
	s, _ := fairsched.New(fairsched.WithAdmissionPolicy(func(j fairsched.JobInfo) fairsched.Decision {
		if j.Key == "mallory" {
			return fairsched.Deny(blocked)
		}
		return fairsched.Admit()
	}))
	defer s.Close(context.Background())
	_ = s.RegisterType("sync", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1})
	run := func(context.Context) error { return nil }
	fmt.Println(s.RunSync(context.Background(), "sync", "a", "alice", run))
	fmt.Println(s.RunSync(context.Background(), "sync", "b", "mallory", run))
	// Output:
	// <nil>
	// tenant suspended
}

// With linear scoring a low-priority job waiting long enough goes ahead of
// fresh high-priority work: priority 0 (the lowest priority, valid
// with scoring) ties a fresh priority 5 after 320s, and wins on its
// earlier arrival. The snapshot shows each pending job's score.
func ExampleWithScoring() {
	mock := clock.NewMock()
	s, _ := fairsched.New(fairsched.WithClock(mock), fairsched.WithMaxConcurrency(1), fairsched.WithScoring(fairsched.ScoreConfig{}))
	defer s.Close(context.Background())
	_ = s.RegisterType("batch", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 0})
	_ = s.RegisterType("urgent", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 5})
	job := fairschedtest.NewBlocker() // each run waits for the Release
	defer job.Release(nil)
	_ = s.Submit("urgent", "first", job.Run) // holds the one slot
	_ = s.Submit("batch", "old", job.Run)
	fairschedtest.Until(context.Background(), s, fairschedtest.Pending(1)) // submitted at T=0
	mock.Add(320 * time.Second)
	_ = s.Submit("urgent", "fresh", job.Run)
	snap, _ := s.Snapshot(context.Background())
	for _, p := range snap.Pending {
		fmt.Printf("%s/%s score %.0f\n", p.Type, p.ID, p.Score)
	}
	// Output:
	// batch/old score 5120
	// urgent/fresh score 5120
}

// Priorities that only order: priority 0 registers, no
// tier is capped by its value, and WithTier caps a tier absolutely
// (MaxRunning) where one is wanted.
func ExampleWithPriorityMode() {
	s, _ := fairsched.New(fairsched.WithMaxConcurrency(4),
		fairsched.WithPriorityMode(fairsched.PriorityOrderOnly),
		fairsched.WithTier(2, fairsched.TierConfig{MaxRunning: 1}))
	defer s.Close(context.Background())
	fmt.Println(s.RegisterType("backfill", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 0}))
	fmt.Println(s.RegisterType("copilot", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}))
	fmt.Println(s.RegisterType("incident", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 2}))
	job := fairschedtest.NewBlocker() // each run waits for the Release
	defer job.Release(nil)
	for i, t := range []fairsched.JobType{"incident", "incident", "copilot", "copilot", "copilot", "backfill"} {
		_ = s.Submit(t, fmt.Sprint(i), job.Run)
	}
	fairschedtest.Until(context.Background(), s, fairschedtest.Pending(2)) // an incident (its tier runs its cap) and the backfill (the global cap)
	snap, _ := s.Snapshot(context.Background())
	fmt.Println("running by tier:", snap.RunningByTier)
	// Output:
	// <nil>
	// <nil>
	// <nil>
	// running by tier: map[1:3 2:1]
}

// A load signal read every second: at or above 90 % (the default
// threshold) new work is refused with ErrOverloaded (OverloadRefuse; the
// default, OverloadDefer, holds it in the queue instead). In production
// the signal would be, say, fairsched.MaxLoadSignal(fairsched.CPUSignal(),
// fairsched.WorkerUtilisationSignal()); here it is a fixed 95 %.
func ExampleWithLoadSignal() {
	mock := clock.NewMock()
	read := make(chan struct{}, 1) // the example waits for the first reading
	signal := fairsched.LoadFunc(func(fairsched.LoadState) (float64, error) {
		read <- struct{}{}
		return 0.95, nil
	})
	s, _ := fairsched.New(fairsched.WithClock(mock),
		fairsched.WithLoadSignal(fairsched.LoadConfig{Signal: signal, Every: time.Second, Action: fairsched.OverloadRefuse}))
	defer s.Close(context.Background())
	_ = s.RegisterType("render", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1})
	mock.Add(time.Second) // the first reading
	<-read
	err := s.Submit("render", "a", func(context.Context) error { return nil })
	var refusal *fairsched.RefusalError
	fmt.Println(errors.Is(err, fairsched.ErrOverloaded), errors.As(err, &refusal) && refusal.Reason == fairsched.ReasonOverloaded)
	// Output:
	// true true
}
