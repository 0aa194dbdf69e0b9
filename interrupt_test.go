package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/fairschedtest"
)

// TestInterruptionsAreNotFailures: a durable job that a Close whose
// context ended interrupts runs again after the restart whatever its
// retry policy — the default one, with no retries, included — with a
// larger Attempt, and its interruptions do not count against
// MaxAttempts. MaxInterruptions bounds them: a job interrupted every time
// is dead at the start after its limit was passed (the default, 3:
// interrupted four times; MaxInterruptions 1: twice), with an error
// matching ErrWorkerLost that counts the interruptions.
func TestInterruptionsAreNotFailures(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	ctx := context.Background()
	policies := map[string]fairsched.RetryPolicy{
		"one": {MaxAttempts: 1, MaxInterruptions: 1},
		// Three interruptions, then a failure, then a success: with
		// MaxAttempts 2 the failure is retried.
		"flaky": {MaxAttempts: 2, MinBackoff: time.Second, MaxBackoff: time.Second, MaxInterruptions: 5},
	}
	var rounds [][]string
	for round := 1; round <= 5; round++ {
		fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
			s := durableEnv(t, env, path, fairsched.WithMaxConcurrency(4))
			if err := s.RegisterType("job", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8}); err != nil {
				t.Fatal(err)
			}
			started := make(chan string, 16)
			if err := s.RegisterHandler("job", func(ctx context.Context, j fairsched.Job) error {
				started <- fmt.Sprintf("%s %d", j.ID, j.Attempt)
				switch {
				case j.ID == "flaky" && j.Attempt == 4:
					return errors.New("smtp 451")
				case j.ID == "flaky" && j.Attempt == 5:
					return nil
				}
				<-ctx.Done() // interrupted by the Close below
				return ctx.Err()
			}); err != nil {
				t.Fatal(err)
			}
			if round == 1 {
				for _, id := range []string{"loop", "one", "flaky"} {
					var opts []fairsched.JobOption
					if p, ok := policies[id]; ok {
						opts = append(opts, fairsched.WithRetry(p))
					}
					if err := s.Enqueue(ctx, "job", id, nil, opts...); err != nil {
						t.Fatal(err)
					}
				}
			}
			env.Settle()
			if round == 4 {
				env.Advance(time.Second) // flaky's retry
				env.Settle()
			}
			var ran []string
			for len(started) > 0 {
				ran = append(ran, <-started)
			}
			slices.Sort(ran)
			rounds = append(rounds, ran)
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			_ = s.Close(cctx)
			_ = s.Close(ctx)
		})
	}
	want := [][]string{
		{"flaky 1", "loop 1", "one 1"},
		{"flaky 2", "loop 2", "one 2"},
		{"flaky 3", "loop 3"},            // one: interrupted twice, past its 1
		{"flaky 4", "flaky 5", "loop 4"}, // flaky's failure retried, then a success
		nil,                              // loop: interrupted four times, past the default 3
	}
	if diff := cmp.Diff(want, rounds); diff != "" {
		t.Errorf("runs in each round (-want +got):\n%s", diff)
	}
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		s := durableEnv(t, env, path)
		if err := s.RegisterType("job", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8}); err != nil {
			t.Fatal(err)
		}
		dead, err := s.DeadJobs(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range dead {
			got = append(got, fmt.Sprintf("%s attempts=%d worker lost=%v %s", d.ID, d.Attempt,
				strings.HasPrefix(d.LastError, fairsched.ErrWorkerLost.Error()),
				d.LastError[strings.Index(d.LastError, "interrupted"):strings.Index(d.LastError, ",")]))
		}
		want := []string{"loop attempts=4 worker lost=true interrupted 4 times", "one attempts=2 worker lost=true interrupted 2 times"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("dead jobs (-want +got):\n%s", diff)
		}
	})
}

// TestDurableJobOnALostWorkerRunsAgain: a durable job whose worker is
// unregistered while it runs was interrupted, not failed: with its type's
// default retry policy (no retries) it waits for a slot and runs again,
// with a larger Attempt, and succeeds; it is not dead.
func TestDurableJobOnALostWorkerRunsAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	ctx := context.Background()
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		s := durableEnv(t, env, path, fairsched.WithMaxConcurrency(4))
		if err := s.RegisterType("render", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8, RequiresWorker: true}); err != nil {
			t.Fatal(err)
		}
		var ran []string
		if err := s.RegisterHandler("render", func(ctx context.Context, j fairsched.Job) error {
			worker, _, _ := fairsched.SlotFromContext(ctx)
			ran = append(ran, fmt.Sprintf("%s attempt %d on %s", j.ID, j.Attempt, worker))
			if worker == "w1" {
				<-ctx.Done() // until w1 goes
				return context.Cause(ctx)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterWorker(fairsched.WorkerSpec{ID: "w1", Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{"render"}}}}); err != nil {
			t.Fatal(err)
		}
		if err := s.Enqueue(ctx, "render", "r1", nil); err != nil {
			t.Fatal(err)
		}
		env.Settle()
		if err := s.UnregisterWorker("w1"); err != nil {
			t.Fatal(err)
		}
		env.Settle()
		if err := s.RegisterWorker(fairsched.WorkerSpec{ID: "w2", Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{"render"}}}}); err != nil {
			t.Fatal(err)
		}
		fairschedtest.WaitIdle(t, s)
		if diff := cmp.Diff([]string{"r1 attempt 1 on w1", "r1 attempt 2 on w2"}, ran); diff != "" {
			t.Errorf("runs (-want +got):\n%s", diff)
		}
		if dead, err := s.DeadJobs(ctx, 0); len(dead) != 0 || err != nil {
			t.Errorf("dead jobs: %+v (%v); want none", dead, err)
		}
	})
}

// startFailingStore refuses the next fails commits that carry an
// attempt's start, as a disk that fails for a moment would.
type startFailingStore struct {
	fairsched.JobStore
	fails  atomic.Int32
	starts atomic.Int32 // commits that carried a start
}

func (f *startFailingStore) ApplyJobs(ops []fairsched.JobOp) error {
	for _, op := range ops {
		if op.Put != nil && op.Put.Attempt > 0 {
			f.starts.Add(1)
			if f.fails.Add(-1) >= 0 {
				return errors.New("disk failed for a moment")
			}
			break
		}
	}
	return f.JobStore.ApplyJobs(ops)
}

// TestUnwrittenStartIsNotRun: a durable job's handler runs only once its
// start is committed. A start the store fails to write is not run: the
// job is admitted again after core.UnwrittenStartDelay (100 ms), nothing
// counted — its handler then sees Attempt 1, it is not dead, and it ran
// once.
func TestUnwrittenStartIsNotRun(t *testing.T) {
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		fs := &startFailingStore{JobStore: durableStore(t, filepath.Join(t.TempDir(), "jobs.db"))}
		fs.fails.Store(2)
		s := fairschedtest.New(t, fairsched.WithClock(env.Clock), fairsched.WithStore(fs))
		if err := s.RegisterType("mail", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		var ran []string
		if err := s.RegisterHandler("mail", func(_ context.Context, j fairsched.Job) error {
			ran = append(ran, fmt.Sprintf("%s attempt %d at %v", j.ID, j.Attempt, env.Now()))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.Enqueue(context.Background(), "mail", "a", nil); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			env.Settle()
			env.Advance(100 * time.Millisecond)
		}
		fairschedtest.WaitIdle(t, s)
		if diff := cmp.Diff([]string{"a attempt 1 at 200ms"}, ran); diff != "" {
			t.Errorf("runs (-want +got):\n%s", diff)
		}
		if n := fs.starts.Load(); n != 3 {
			t.Errorf("%d commits carried a start; want 3 (two failed)", n)
		}
		if dead, err := s.DeadJobs(context.Background(), 0); len(dead) != 0 || err != nil {
			t.Errorf("dead jobs: %+v (%v)", dead, err)
		}
	})
}
