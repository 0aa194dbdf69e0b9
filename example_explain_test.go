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

// Explain says why a job waits: the rule, what holds it by name, when it
// should start — here when the running export's learned cost (a minute)
// has run out — and what it has waited on since.
func ExampleScheduler_Explain() {
	mock := clock.NewMock()
	s, _ := fairsched.New(fairsched.WithClock(mock), fairsched.WithMaxConcurrency(1))
	defer s.Close(context.Background())
	_ = s.RegisterType("export", fairsched.JobTypeConfig{DefaultCost: time.Minute, Priority: 4})
	job := fairschedtest.NewBlocker() // each run waits for the Release
	defer job.Release(nil)
	start := mock.Now()
	_ = s.Submit("export", "big", job.Run, fairsched.WithFairnessKey("acme"))   // runs
	_ = s.Submit("export", "small", job.Run, fairsched.WithFairnessKey("bolt")) // waits
	_, _ = s.Snapshot(context.Background())                                     // both are in
	mock.Add(10 * time.Second)

	e, _ := s.Explain(context.Background(), "export", "small")
	fmt.Println("waits on:", e.Reason)
	for _, b := range e.Blockers {
		fmt.Printf("held by key %s (%d slot)\n", *b.Key, b.Running)
	}
	fmt.Println("expected to start in:", e.Estimate.At.Sub(mock.Now()), "with", e.Estimate.Ahead, "ahead")
	for _, n := range e.History {
		fmt.Printf("history: %s since +%v\n", n.Reason, n.Since.Sub(start))
	}
	_, err := s.Explain(context.Background(), "export", "gone")
	fmt.Println(errors.Is(err, fairsched.ErrUnknownJob))
	// Output:
	// waits on: global_limit
	// held by key acme (1 slot)
	// expected to start in: 50s with 0 ahead
	// history: global_limit since +0s
	// true
}

// With DeadlineAdmission, a RunSync that could not start before its
// context's deadline is refused at once with the estimate, instead of
// waiting to time out.
func ExampleJobTypeConfig_deadlineAdmission() {
	mock := clock.NewMock()
	s, _ := fairsched.New(fairsched.WithClock(mock), fairsched.WithMaxConcurrency(1))
	defer s.Close(context.Background())
	_ = s.RegisterType("report", fairsched.JobTypeConfig{DefaultCost: time.Minute, Priority: 4, DeadlineAdmission: true})
	job := fairschedtest.NewBlocker()
	defer job.Release(nil)
	_ = s.Submit("report", "nightly", job.Run) // holds the only slot for a learned minute
	_, _ = s.Snapshot(context.Background())    // it runs

	// The time left to the deadline is counted on the scheduler's clock.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := s.RunSync(ctx, "report", "adhoc", "alice", func(context.Context) error { return nil })
	var late *fairsched.LateStartError
	if errors.As(err, &late) {
		fmt.Println(errors.Is(err, fairsched.ErrOverloaded), late.Estimate.Sub(mock.Now()) == time.Minute, late.Ahead)
	}
	// Output:
	// true true 0
}
