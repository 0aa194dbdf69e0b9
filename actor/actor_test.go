package actor_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/fairsched/fairsched/actor"
	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const work policy.JobType = "work"

func start(t *testing.T, max int) *actor.Actor {
	t.Helper()
	limits := policy.DefaultLimits()
	limits.MaxConcurrency = max
	a := actor.Start(core.New(limits), machine.Config{Clock: clock.NewMock(), Logger: zap.NewNop(), Tick: time.Minute})
	if err := a.Register(work, policy.JobTypeConfig{DefaultCost: time.Second, Priority: 10}); err != nil {
		t.Fatal(err)
	}
	return a
}

// blocking returns a job function that runs until released or cancelled.
func blocking() (func(context.Context) error, chan error) {
	release := make(chan error, 1)
	return func(ctx context.Context) error {
		select {
		case err := <-release:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}, release
}

type state struct{ Running, Pending []string }

func stateOf(t *testing.T, a *actor.Actor) state {
	t.Helper()
	snap, err := a.Snapshot(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var s state
	for _, r := range snap.Running {
		s.Running = append(s.Running, r.ID)
	}
	for _, p := range snap.Pending {
		s.Pending = append(s.Pending, p.ID)
	}
	return s
}

// TestForegroundRunsInCaller: an admitted foreground job runs in its
// caller's goroutine and RunSync returns its error; the next job is
// admitted when it ends.
func TestForegroundRunsInCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := start(t, 1)
		fnA, releaseA := blocking()
		fnB, releaseB := blocking()
		errA, errB := make(chan error, 1), make(chan error, 1)
		go func() { errA <- a.RunSync(context.Background(), messages.NewJob(work, "a", "k", fnA)) }()
		synctest.Wait()
		go func() { errB <- a.RunSync(context.Background(), messages.NewJob(work, "b", "k", fnB)) }()
		synctest.Wait()
		if diff := cmp.Diff(state{Running: []string{"a"}, Pending: []string{"b"}}, stateOf(t, a)); diff != "" {
			t.Errorf("state (-want +got):\n%s", diff)
		}
		boom := errors.New("boom")
		releaseA <- boom
		if err := <-errA; err != boom {
			t.Errorf("RunSync(a) = %v; want boom", err)
		}
		synctest.Wait()
		if diff := cmp.Diff(state{Running: []string{"b"}}, stateOf(t, a)); diff != "" {
			t.Errorf("state after a (-want +got):\n%s", diff)
		}
		releaseB <- nil
		if err := <-errB; err != nil {
			t.Errorf("RunSync(b) = %v", err)
		}
		if err := a.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestBackgroundRunsInOwnGoroutine: Submit returns once the owner has the
// job; the job runs in a goroutine of its own and Close waits for it.
func TestBackgroundRunsInOwnGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := start(t, 0)
		fn, release := blocking()
		if err := a.Submit(context.Background(), messages.NewJob(work, "bg", "", fn)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if diff := cmp.Diff(state{Running: []string{"bg"}}, stateOf(t, a)); diff != "" {
			t.Errorf("state (-want +got):\n%s", diff)
		}
		closed := make(chan error, 1)
		go func() { closed <- a.Close(context.Background()) }()
		synctest.Wait()
		select {
		case err := <-closed:
			t.Fatalf("Close returned %v while a job was running", err)
		default:
		}
		release <- nil
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
	})
}

// TestWithdrawPending: a caller that leaves while pending is answered with
// its context's error and its job never runs.
func TestWithdrawPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := start(t, 1)
		fnA, releaseA := blocking()
		go a.RunSync(context.Background(), messages.NewJob(work, "a", "k", fnA))
		synctest.Wait()
		ran := false
		ctx, cancel := context.WithCancel(context.Background())
		errB := make(chan error, 1)
		go func() {
			errB <- a.RunSync(ctx, messages.NewJob(work, "b", "k", func(context.Context) error { ran = true; return nil }))
		}()
		synctest.Wait()
		cancel()
		if err := <-errB; !errors.Is(err, context.Canceled) {
			t.Fatalf("RunSync = %v; want context.Canceled", err)
		}
		if diff := cmp.Diff(state{Running: []string{"a"}}, stateOf(t, a)); diff != "" {
			t.Errorf("state (-want +got):\n%s", diff)
		}
		releaseA <- nil
		if err := a.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if ran {
			t.Error("the withdrawn job ran")
		}
	})
}

// TestGoexitIsReported: a job function that ends its goroutine without
// returning still frees its slot.
func TestGoexitIsReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := start(t, 1)
		exited := make(chan struct{})
		go func() {
			defer close(exited)
			a.RunSync(context.Background(), messages.NewJob(work, "a", "k", func(context.Context) error {
				runtime.Goexit()
				return nil
			}))
		}()
		<-exited
		if err := a.RunSync(context.Background(), messages.NewJob(work, "b", "k", func(context.Context) error { return nil })); err != nil {
			t.Fatalf("next job = %v; the exited job kept its slot", err)
		}
		if err := a.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestCheck validates against the published registry and the closed flag.
func TestCheck(t *testing.T) {
	a := start(t, 0)
	cases := []struct {
		typ  policy.JobType
		id   string
		fn   bool
		want error
	}{
		{work, "", true, policy.ErrInvalidJob},
		{work, "x", false, policy.ErrInvalidJob},
		{"other", "x", true, policy.ErrUnknownJobType},
	}
	for _, c := range cases {
		if err := a.Check(c.typ, c.id, c.fn); !errors.Is(err, c.want) {
			t.Errorf("Check(%q, %q, %v) = %v; want %v", c.typ, c.id, c.fn, err, c.want)
		}
	}
	if err := a.Check(work, "x", true); err != nil {
		t.Errorf("Check of a valid job = %v", err)
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := a.Check(work, "x", true); !errors.Is(err, machine.ErrClosed) {
		t.Errorf("Check after Close = %v; want ErrClosed", err)
	}
	if _, err := a.Snapshot(context.Background(), 0); !errors.Is(err, machine.ErrClosed) {
		t.Errorf("Snapshot after Close = %v; want ErrClosed", err)
	}
	noop := func(context.Context) error { return nil }
	if err := a.Submit(context.Background(), messages.NewJob(work, "late", "", noop)); !errors.Is(err, machine.ErrClosed) {
		t.Errorf("Submit after Close = %v; want ErrClosed", err)
	}
	if err := a.Register("new", policy.JobTypeConfig{DefaultCost: 1, Priority: 1}); !errors.Is(err, machine.ErrClosed) {
		t.Errorf("Register after Close = %v; want ErrClosed", err)
	}
}

func TestPanicErrorUnwrap(t *testing.T) {
	inner := errors.New("inner")
	if !errors.Is(&machine.PanicError{Value: inner}, inner) {
		t.Error("PanicError does not unwrap to an error panic value")
	}
	if (&machine.PanicError{Value: 42}).Unwrap() != nil {
		t.Error("PanicError unwraps a non-error value")
	}
	if got := (&machine.PanicError{Value: "x"}).Error(); got != "fairsched: job panicked: x" {
		t.Errorf("Error() = %q", got)
	}
}

// TestRegressTinyKeyTTL: any positive KeyTTL is valid, and a scheduler
// owner started with it does not panic although its eviction period
// KeyTTL/4 is 0 (policy/testdata/fuzz/FuzzLimits/regress-keyttl-3ns).
func TestRegressTinyKeyTTL(t *testing.T) {
	for _, ttl := range []time.Duration{1, 2, 3} {
		limits := policy.DefaultLimits()
		limits.KeyTTL = ttl
		if err := limits.Validate(); err != nil {
			t.Fatalf("KeyTTL %d ns rejected: %v", int64(ttl), err)
		}
		// A real clock: its ticker panics on a period that is not positive.
		a := actor.Start(core.New(limits), machine.Config{Clock: clock.New(), Logger: zap.NewNop(), Tick: limits.KeyTTL / 4})
		if err := a.Close(context.Background()); err != nil {
			t.Fatalf("KeyTTL %d ns: Close: %v", int64(ttl), err)
		}
	}
}
