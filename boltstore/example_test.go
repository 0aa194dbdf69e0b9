package boltstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/boltstore"
)

// A scheduler persists what it learned in a bbolt file: closed and started
// again on the same file, it still knows that the job costs more than its
// type's default. (The clock is a mock, so the job's 4s take no time.)
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "boltstore-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "fairsched.db")
	cfg := fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4}

	// First run: a 4-second job teaches the estimate of (build, app).
	mock := clock.NewMock()
	st, err := boltstore.Open(path)
	if err != nil {
		panic(err)
	}
	s, _ := fairsched.New(fairsched.WithClock(mock), fairsched.WithStore(st))
	_ = s.RegisterType("build", cfg)
	_ = s.RunSync(context.Background(), "build", "app", "alice", func(context.Context) error {
		mock.Add(4 * time.Second)
		return nil
	})
	printEstimates("before the restart", s)
	_ = s.Close(context.Background()) // saves the state
	_ = st.Close()

	// Second run, on the same file.
	st, err = boltstore.Open(path)
	if err != nil {
		panic(err)
	}
	defer st.Close() // after the scheduler's Close, deferred below
	s, _ = fairsched.New(fairsched.WithClock(clock.NewMock()), fairsched.WithStore(st))
	defer s.Close(context.Background())
	_ = s.RegisterType("build", cfg)
	printEstimates("after the restart", s)
	// Output:
	// before the restart: build/app costs 1.9s
	// after the restart: build/app costs 1.9s
}

// printEstimates prints the learned estimates once no job runs (the
// scheduler has taken in every job that ended).
func printEstimates(when string, s *fairsched.Scheduler) {
	snap, _ := s.Snapshot(context.Background())
	for len(snap.Running) > 0 {
		snap, _ = s.Snapshot(context.Background())
	}
	for _, e := range snap.CostEstimates {
		fmt.Printf("%s: %s/%s costs %v\n", when, e.Type, e.ID, e.Cost)
	}
}
