package fairschedtest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/fairschedtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	clone  fairsched.JobType = "clone"
	repack fairsched.JobType = "repack"
)

func register(t *testing.T, s *fairsched.Scheduler) {
	t.Helper()
	for typ, cfg := range map[fairsched.JobType]fairsched.JobTypeConfig{
		clone:  {Priority: 8, DefaultCost: 10 * time.Second, ConflictGroup: "repo", ConflictMode: fairsched.ConflictShared},
		repack: {Priority: 4, DefaultCost: 30 * time.Second, ConflictGroup: "repo"},
	} {
		if err := s.RegisterType(typ, cfg); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTimelineOnTheMockClock: the whole flow Run is for. A repack of linux
// runs; two clones of linux arrive from other goroutines and wait for it
// (conflict); WaitPending sees them arrive without polling; Settle proves
// they do not start while the repack runs, whatever the clock does; once
// released, both clones run together (shared) and the scheduler goes idle.
func TestTimelineOnTheMockClock(t *testing.T) {
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		register(t, env.Scheduler)
		var log []string
		note := func(format string, args ...any) {
			log = append(log, fmt.Sprintf("%v ", env.Now())+fmt.Sprintf(format, args...))
		}
		rp := fairschedtest.NewBlocker()
		if err := env.Submit(repack, "linux", rp.Run); err != nil {
			t.Fatal(err)
		}
		rp.WaitStarted(t)
		note("repack started")

		clones := map[string]*fairschedtest.Blocker{"alice": fairschedtest.NewBlocker(), "bob": fairschedtest.NewBlocker()}
		var done []<-chan error
		for _, who := range []string{"alice", "bob"} {
			b := clones[who]
			done = append(done, env.Go(func() error {
				return env.RunSync(context.Background(), clone, "linux", who, b.Run)
			}))
		}
		env.WaitPending(2)
		note("2 clones pending")
		env.Advance(time.Minute)
		if clones["alice"].Started() || clones["bob"].Started() {
			t.Fatal("a clone started while the repack held linux")
		}
		note("clones still waiting")

		rp.Release(nil)
		env.WaitRunning(2)
		note("both clones running")
		env.Advance(5 * time.Second)
		for _, b := range clones {
			b.Release(nil)
		}
		for _, d := range done {
			if err := <-d; err != nil {
				t.Fatal(err)
			}
		}
		env.WaitIdle()
		note("idle")

		want := []string{
			"0s repack started",
			"0s 2 clones pending",
			"1m0s clones still waiting",
			"1m0s both clones running",
			"1m5s idle",
		}
		if diff := cmp.Diff(want, log); diff != "" {
			t.Errorf("timeline (-want +got):\n%s", diff)
		}
	}, fairsched.WithMaxConcurrency(4))
}

// TestWaitOutsideABubble: the waits work on the real clock too, woken by
// the scheduler's events: here a job that another goroutine submits.
func TestWaitOutsideABubble(t *testing.T) {
	s := fairschedtest.New(t, fairsched.WithMaxConcurrency(1))
	register(t, s)
	first, second := fairschedtest.NewBlocker(), fairschedtest.NewBlocker()
	go func() {
		_ = s.Submit(repack, "a", first.Run)
		_ = s.Submit(repack, "b", second.Run)
	}()
	fairschedtest.WaitRunning(t, s, 1)
	fairschedtest.WaitPending(t, s, 1)
	first.Release(nil)
	second.WaitStarted(t)
	second.Release(errors.New("disk full"))
	fairschedtest.WaitIdle(t, s)
	if first.Runs() != 1 || second.Runs() != 1 {
		t.Errorf("runs: %d and %d; want 1 and 1", first.Runs(), second.Runs())
	}
}

// TestUntilEnds: Until returns the context's error when it ends first, and
// ErrClosed once the scheduler has closed without the condition holding.
func TestUntilEnds(t *testing.T) {
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := fairschedtest.Until(ctx, env.Scheduler, func(fairsched.Snapshot) bool { return false }); !errors.Is(err, context.Canceled) {
			t.Errorf("Until with an ended context: %v; want context.Canceled", err)
		}
		never := make(chan error, 1)
		go func() {
			_, err := fairschedtest.Until(context.Background(), env.Scheduler, func(fairsched.Snapshot) bool { return false })
			never <- err
		}()
		env.Settle()
		if err := env.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := <-never; !errors.Is(err, fairsched.ErrClosed) {
			t.Errorf("Until across Close: %v; want ErrClosed", err)
		}
	})
}

// TestBlocker: every run waits for the one Release, whose first error
// wins; a run whose context ends returns its error and keeps its cause.
func TestBlocker(t *testing.T) {
	b := fairschedtest.NewBlocker()
	if b.Started() || b.Runs() != 0 || b.Cause() != nil {
		t.Fatal("a new blocker has run")
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("stop")
	cancel(cause)
	if err := b.Run(ctx); !errors.Is(err, context.Canceled) || !errors.Is(b.Cause(), cause) {
		t.Errorf("Run on an ended context: %v, cause %v", err, b.Cause())
	}
	errFirst := errors.New("first")
	b.Release(errFirst)
	b.Release(errors.New("second"))
	if err := b.Run(context.Background()); !errors.Is(err, errFirst) {
		t.Errorf("Run after Release: %v; want the first error", err)
	}
	if !b.Started() || b.Runs() != 2 {
		t.Errorf("Started %v, Runs %d; want true, 2", b.Started(), b.Runs())
	}
}

// TestCleanupEndsBlockedJobs: a test may end with jobs still blocked: the
// cleanup cancels them, and the bubble finds no goroutine left.
func TestCleanupEndsBlockedJobs(t *testing.T) {
	var b *fairschedtest.Blocker
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		register(t, env.Scheduler)
		b = fairschedtest.NewBlocker()
		if err := env.Submit(repack, "linux", b.Run); err != nil {
			t.Fatal(err)
		}
		b.WaitStarted(t)
	})
	if !errors.Is(b.Cause(), context.Canceled) {
		t.Errorf("the blocked job's context ended with %v; want context.Canceled", b.Cause())
	}
}
