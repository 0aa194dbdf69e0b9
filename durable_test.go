package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/boltstore"
	"github.com/fairsched/fairsched/fairschedtest"
)

// durableStore opens a bbolt store in t's temp dir (path reused across
// restarts).
func durableStore(t *testing.T, path string) *boltstore.Store {
	t.Helper()
	st, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// ranLog records handler runs, safe for concurrent handlers.
type ranLog struct {
	mu   sync.Mutex
	runs []string
}

func (l *ranLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs = append(l.runs, s)
}

func (l *ranLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.runs...)
}

// TestDurableJobsSurviveARestart: jobs enqueued before a Close that gives
// up (one of them running, interrupted) come back after a restart with
// their arrival time, options and attempts; they wait (no_handler) until
// RegisterHandler, then run, and each success deletes its record.
func TestDurableJobsSurviveARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	ctx := context.Background()
	var enqueuedAt time.Time
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		st := durableStore(t, path)
		s, err := fairsched.New(fairsched.WithClock(env.Clock), fairsched.WithStore(st), fairsched.WithMaxConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType("mail", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		block := fairschedtest.NewBlocker()
		if err := s.RegisterHandler("mail", func(ctx context.Context, j fairsched.Job) error { return block.Run(ctx) }); err != nil {
			t.Fatal(err)
		}
		enqueuedAt = env.Clock.Now()
		for i, key := range []string{"alice", "bob", "carol"} {
			if err := s.Enqueue(ctx, "mail", fmt.Sprint("m", i), []byte("to "+key), fairsched.WithFairnessKey(key), fairsched.InGroup("mailers")); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Enqueue(ctx, "mail", "m0", nil); !errors.Is(err, fairsched.ErrDuplicateJob) {
			t.Errorf("a second m0: %v; want ErrDuplicateJob", err)
		}
		block.WaitStarted(t) // m0 runs: attempt 1
		env.Advance(time.Minute)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := s.Close(cctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Close: %v", err)
		}
		_ = s.Close(ctx) // waits for the owner and its last writes
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	})
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		env.Clock.Add(time.Hour) // the restart comes later
		st := durableStore(t, path)
		defer st.Close()
		s, err := fairsched.New(fairsched.WithClock(env.Clock), fairsched.WithStore(st), fairsched.WithMaxConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(ctx)
		if err := s.RegisterType("mail", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		snap, err := s.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var waiting []string
		for _, p := range snap.Pending {
			waiting = append(waiting, fmt.Sprintf("%s %s %s %v %s", p.ID, p.FairnessKey, p.Group, p.Submitted.Equal(enqueuedAt), p.Reason))
		}
		want := []string{"m0 alice mailers true no_handler", "m1 bob mailers true no_handler", "m2 carol mailers true no_handler"}
		if diff := cmp.Diff(want, waiting); diff != "" {
			t.Errorf("restored jobs (-want +got):\n%s", diff)
		}
		var log ranLog
		if err := s.RegisterHandler("mail", func(ctx context.Context, j fairsched.Job) error {
			log.add(fmt.Sprintf("%s attempt %d %q key %s group %s since %v", j.ID, j.Attempt, j.Payload, j.FairnessKey, j.Group, env.Clock.Now().Sub(j.EnqueuedAt)))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		fairschedtest.WaitIdle(t, s)
		wantRuns := []string{
			`m0 attempt 2 "to alice" key alice group mailers since 1h0m0s`,
			`m1 attempt 1 "to bob" key bob group mailers since 1h0m0s`,
			`m2 attempt 1 "to carol" key carol group mailers since 1h0m0s`,
		}
		if diff := cmp.Diff(wantRuns, log.get()); diff != "" {
			t.Errorf("runs after the restart (-want +got):\n%s", diff)
		}
	})
	// Every success deleted its record.
	st := durableStore(t, path)
	defer st.Close()
	n := 0
	if err := st.LoadJobs(func(fairsched.JobRecord) error { n++; return nil }); err != nil || n != 0 {
		t.Errorf("%d records left (%v); want none", n, err)
	}
}
