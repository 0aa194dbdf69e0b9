package cluster_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
)

// TestCancelledJobHoldsItsSlot: a running job that Cancel stops holds its
// place under the cap until its function has returned on its instance,
// as in one process — the leader does not admit the next job on the
// cancellation alone. Cap 1: "slow" is cancelled and takes its time to
// stop; "next" starts only after it has.
func TestCancelledJobHoldsItsSlot(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	lead := joinLeader(t, url, fast("d", "lead", 2), fairsched.WithMaxConcurrency(1))
	work := join(t, url, fast("d", "work", 2), fairsched.WithMaxConcurrency(1))
	cfg := fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}
	var mu sync.Mutex
	var order []string
	log := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	started, seen, stop := make(chan string, 2), make(chan error, 1), make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(stop) }) }
	t.Cleanup(free)
	for _, m := range []*member{lead, work} {
		if err := m.s.RegisterType("work", cfg); err != nil {
			t.Fatal(err)
		}
	}
	if err := work.s.RegisterHandler("work", func(ctx context.Context, j fairsched.Job) error {
		log("start " + j.ID)
		defer log("end " + j.ID)
		started <- j.ID
		if j.ID == "slow" {
			<-ctx.Done()
			seen <- context.Cause(ctx)
			<-stop // it takes its time to stop
			return context.Cause(ctx)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := work.s.Enqueue(ctx, "work", "slow", nil); err != nil {
		t.Fatal(err)
	}
	<-started
	if err := work.s.Enqueue(ctx, "work", "next", nil); err != nil {
		t.Fatal(err)
	}
	if c, err := work.s.Cancel(ctx, "work", "slow"); err != nil || c != (fairsched.Cancelled{Running: 1}) {
		t.Fatalf("cancel: %+v, %v", c, err)
	}
	if err := <-seen; !errors.Is(err, fairsched.ErrCancelled) {
		t.Errorf("the cancelled job's cause: %v", err)
	}
	// Still counted: the leader runs "slow", holds "next" for the cap.
	pgtest.Eventually(t, "next held by the cap", func() bool {
		snap, err := lead.s.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(snap.Running) == 1 && snap.Running[0].ID == "slow" &&
			len(snap.Pending) == 1 && snap.Pending[0].Reason == fairsched.ReasonGlobalLimit
	})
	free()
	if got := <-started; got != "next" {
		t.Fatalf("started %s", got)
	}
	waitFor(t, func() bool { n, _ := lead.st.CountJobs(ctx); return n == 0 })
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"start slow", "end slow", "start next", "end next"}, order); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}
