package cluster_test

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
)

// TestRunSyncAcrossInstances: RunSync calls on different instances behave
// as in one process. Two calls with one id of an ordinary type both run
// (each its own function). Of a coalescing type, a call that arrives
// while another instance's call of its (type, id) is pending joins it:
// one function runs and both callers get its result — a success, or its
// error's text; and when the run's own caller leaves before it starts,
// the waiter's function runs instead.
func TestRunSyncAcrossInstances(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	a := join(t, url, fast("d", "a", 2), fairsched.WithMaxConcurrency(1))
	if leaderOf(t, a) != a {
		t.Fatal("a does not lead")
	}
	b := join(t, url, fast("d", "b", 2), fairsched.WithMaxConcurrency(1))
	for _, m := range []*member{a, b} {
		for typ, coalesce := range map[fairsched.JobType]bool{"fetch": true, "clone": false, "block": false} {
			if err := m.s.RegisterType(typ, fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond, Coalesce: coalesce}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var mu sync.Mutex
	var ran []string
	fn := func(what string, err error) func(context.Context) error {
		return func(context.Context) error {
			mu.Lock()
			ran = append(ran, what)
			mu.Unlock()
			return err
		}
	}
	took := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := ran
		ran = nil
		sort.Strings(out)
		return out
	}
	// block holds the cap of 1 until released, so that calls stay pending.
	block := func() (release func(), done <-chan error) {
		held, free := make(chan struct{}), make(chan struct{})
		c := make(chan error, 1)
		go func() {
			c <- a.s.RunSync(ctx, "block", "b", "", func(context.Context) error { close(held); <-free; return nil })
		}()
		<-held
		return func() { close(free) }, c
	}
	pendingOnLeader := func(n int) {
		t.Helper()
		waitFor(t, func() bool { snap, _ := a.s.Snapshot(ctx); return snap.PendingTotal == n })
	}
	call := func(m *member, ctx context.Context, typ fairsched.JobType, f func(context.Context) error) <-chan error {
		c := make(chan error, 1)
		go func() { c <- m.s.RunSync(ctx, typ, "linux", "", f) }()
		return c
	}

	// One id, an ordinary type: both run.
	release, blocked := block()
	ca := call(a, ctx, "clone", fn("clone on a", nil))
	cb := call(b, ctx, "clone", fn("clone on b", nil))
	pendingOnLeader(2)
	release()
	for _, c := range []<-chan error{blocked, ca, cb} {
		if err := <-c; err != nil {
			t.Errorf("clone: %v", err)
		}
	}
	if diff := cmp.Diff([]string{"clone on a", "clone on b"}, took()); diff != "" {
		t.Errorf("two RunSync calls of one id (-want +got):\n%s", diff)
	}

	// b's call has joined a's pending run once the leader says so: its
	// row being written is not enough, the leader reads it when woken.
	evs, stopEvents := a.s.Subscribe(1024)
	defer stopEvents()
	joined := func() {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case e := <-evs:
				if j, ok := e.(fairsched.JobJoined); ok && j.Type == "fetch" {
					return
				}
			case <-deadline:
				t.Fatal("b's call never joined a's run")
			}
		}
	}

	// A coalescing type: b's call joins a's pending run; it fails, both see why.
	for _, runErr := range []error{nil, errors.New("remote: not found")} {
		release, blocked = block()
		ca = call(a, ctx, "fetch", fn("fetch on a", runErr))
		pendingOnLeader(1)
		cb = call(b, ctx, "fetch", fn("fetch on b", nil))
		joined()
		waitFor(t, func() bool { n, _ := a.st.CountJobs(ctx); return n == 3 }) // block, the run, the waiter
		release()
		if err := <-blocked; err != nil {
			t.Fatal(err)
		}
		ea, eb := <-ca, <-cb
		if runErr == nil && (ea != nil || eb != nil) || runErr != nil && (ea == nil || eb == nil || ea.Error() != eb.Error()) {
			t.Errorf("run ending with %v: the callers got %v and %v", runErr, ea, eb)
		}
		if diff := cmp.Diff([]string{"fetch on a"}, took()); diff != "" {
			t.Errorf("a coalesced RunSync ending with %v ran (-want +got):\n%s", runErr, diff)
		}
	}

	// The run's caller leaves before it starts: the waiter's function runs.
	release, blocked = block()
	leave, cancel := context.WithCancel(ctx)
	ca = call(a, leave, "fetch", fn("fetch on a", nil))
	pendingOnLeader(1)
	cb = call(b, ctx, "fetch", fn("fetch on b", nil))
	joined()
	waitFor(t, func() bool { n, _ := a.st.CountJobs(ctx); return n == 3 })
	cancel()
	if err := <-ca; !errors.Is(err, context.Canceled) {
		t.Errorf("the caller that left: %v", err)
	}
	release()
	if err := <-blocked; err != nil {
		t.Fatal(err)
	}
	if err := <-cb; err != nil {
		t.Errorf("the waiter: %v", err)
	}
	if diff := cmp.Diff([]string{"fetch on b"}, took()); diff != "" {
		t.Errorf("after the run's caller left (-want +got):\n%s", diff)
	}
	waitFor(t, func() bool { n, _ := a.st.CountJobs(ctx); return n == 0 })
}
