package actor_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/fairsched/fairsched/actor"
	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const work policy.JobType = "work"

func start(t *testing.T, max int) *actor.Actor {
	t.Helper()
	limits := policy.DefaultLimits()
	limits.MaxConcurrency = max
	a := actor.Start(core.New(limits), actor.Config{Clock: clock.NewMock(), Logger: zap.NewNop(), Tick: time.Minute})
	if err := a.Register(work, policy.JobTypeConfig{DefaultCost: time.Second, Priority: 10}); err != nil {
		t.Fatal(err)
	}
	return a
}

// job builds a foreground job whose function blocks until released.
func job(id string) (*core.Job, *messages.Task, chan error) {
	release := make(chan error, 1)
	task := &messages.Task{
		Ctx:   context.Background(),
		Reply: make(chan error, 1),
		Fn: func(ctx context.Context) error {
			select {
			case err := <-release:
				return err
			case <-ctx.Done():
				return ctx.Err()
			}
		},
	}
	return &core.Job{Type: work, ID: id, Key: "k", Payload: task}, task, release
}

// TestOwnerRunsAndAnswers: a job handed over runs in its own goroutine and
// its outcome comes back on its reply channel exactly once.
func TestOwnerRunsAndAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := start(t, 1)
		first, firstTask, releaseFirst := job("a")
		second, secondTask, releaseSecond := job("b")
		for _, j := range []*core.Job{first, second} {
			if err := a.Submit(context.Background(), j); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		snap, err := a.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		type state struct{ Running, Pending []string }
		got := state{}
		for _, r := range snap.Running {
			got.Running = append(got.Running, r.ID)
		}
		for _, p := range snap.Pending {
			got.Pending = append(got.Pending, p.ID)
		}
		if diff := cmp.Diff(state{Running: []string{"a"}, Pending: []string{"b"}}, got); diff != "" {
			t.Errorf("state (-want +got):\n%s", diff)
		}
		boom := errors.New("boom")
		releaseFirst <- boom
		if err := <-firstTask.Reply; err != boom {
			t.Errorf("first reply = %v; want boom", err)
		}
		releaseSecond <- nil
		if err := <-secondTask.Reply; err != nil {
			t.Errorf("second reply = %v", err)
		}
		if err := a.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestWithdraw: a pending job is removed and answered with the caller's
// error; a running one is left to its cancelled context.
func TestWithdraw(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := start(t, 1)
		running, runningTask, release := job("a")
		pending, pendingTask, _ := job("b")
		for _, j := range []*core.Job{running, pending} {
			if err := a.Submit(context.Background(), j); err != nil {
				t.Fatal(err)
			}
		}
		gone := errors.New("caller left")
		a.Withdraw(pending, gone)
		if err := <-pendingTask.Reply; err != gone {
			t.Fatalf("withdrawn reply = %v; want the caller's error", err)
		}
		a.Withdraw(running, gone) // no effect: it runs
		synctest.Wait()
		select {
		case err := <-runningTask.Reply:
			t.Fatalf("running job answered %v before it returned", err)
		default:
		}
		release <- nil
		if err := <-runningTask.Reply; err != nil {
			t.Fatalf("running reply = %v", err)
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
		{work, "x", true, nil},
	}
	for _, c := range cases {
		if err := a.Check(c.typ, c.id, c.fn); !errors.Is(err, c.want) || (c.want == nil && err != nil) {
			t.Errorf("Check(%q, %q, %v) = %v; want %v", c.typ, c.id, c.fn, err, c.want)
		}
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := a.Check(work, "x", true); !errors.Is(err, actor.ErrClosed) {
		t.Errorf("Check after Close = %v; want ErrClosed", err)
	}
	if _, err := a.Snapshot(context.Background()); !errors.Is(err, actor.ErrClosed) {
		t.Errorf("Snapshot after Close = %v; want ErrClosed", err)
	}
	j, _, _ := job("late")
	if err := a.Submit(context.Background(), j); !errors.Is(err, actor.ErrClosed) {
		t.Errorf("Submit after Close = %v; want ErrClosed", err)
	}
}

// TestSubmitGivesUpWithContext: the send is abandoned when the caller's
// context ends before the owner takes the message.
func TestSubmitGivesUpWithContext(t *testing.T) {
	a := start(t, 0)
	defer a.Close(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	j, task, release := job("x")
	// The owner may win the race and take the job; either outcome is valid,
	// but a taken job must then run and be answered.
	err := a.Submit(ctx, j)
	switch {
	case errors.Is(err, context.Canceled):
	case err == nil:
		release <- nil
		if got := <-task.Reply; got != nil {
			t.Fatalf("taken job answered %v", got)
		}
	default:
		t.Fatalf("Submit = %v; want nil or context.Canceled", err)
	}
}

func TestPanicErrorUnwrap(t *testing.T) {
	inner := errors.New("inner")
	if !errors.Is(&actor.PanicError{Value: inner}, inner) {
		t.Error("PanicError does not unwrap to an error panic value")
	}
	if (&actor.PanicError{Value: 42}).Unwrap() != nil {
		t.Error("PanicError unwraps a non-error value")
	}
	if got := (&actor.PanicError{Value: "x"}).Error(); got != "fairsched: job panicked: x" {
		t.Errorf("Error() = %q", got)
	}
}
