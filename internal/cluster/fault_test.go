package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// joinFaulty starts an instance over url behind a faulty backend.
func joinFaulty(t *testing.T, url string, cfg fairsched.ClusterConfig, opts ...fairsched.Option) (*member, *faulty) {
	t.Helper()
	st, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	f := &faulty{b: st.ClusterBackend()}
	s, err := fairsched.New(append([]fairsched.Option{fairsched.WithCluster(link{f}, cfg)}, opts...)...)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	m := &member{s: s, st: st}
	t.Cleanup(m.close)
	return m, f
}

// TestStalledHeartbeatsStopTheJobs: an instance whose heartbeats stall
// while it runs a job stops that job (its context ends with
// ErrWorkerLost) before the leader declares it lost, and the job runs
// again; the leader's snapshot shows where the job runs, and the instance
// once lost is counted again when its heartbeats resume.
func TestStalledHeartbeatsStopTheJobs(t *testing.T) {
	url := pgtest.URL(t)
	lead, _ := joinFaulty(t, url, fast("d", "lead", 2))
	if l := leaderOf(t, lead); l != lead {
		t.Fatal("the first instance does not lead")
	}
	work, f := joinFaulty(t, url, fast("d", "work", 2))
	cfg := fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}
	for _, m := range []*member{lead, work} {
		if err := m.s.RegisterType("slow", cfg); err != nil {
			t.Fatal(err)
		}
	}
	type attempt struct {
		n     int
		cause error
	}
	started := make(chan int, 4)
	ended := make(chan attempt, 4)
	// Only "work" has the handler: the job runs there.
	if err := work.s.RegisterHandler("slow", func(ctx context.Context, j fairsched.Job) error {
		started <- j.Attempt
		if j.Attempt > 1 {
			ended <- attempt{j.Attempt, nil}
			return nil
		}
		<-ctx.Done()
		ended <- attempt{j.Attempt, context.Cause(ctx)}
		return context.Cause(ctx)
	}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := lead.s.Enqueue(ctx, "slow", "report", nil, fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond})); err != nil {
		t.Fatal(err)
	}
	if n := <-started; n != 1 {
		t.Fatalf("first attempt %d", n)
	}
	snap, err := lead.s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Running) != 1 || snap.Running[0].Instance != "work" {
		t.Errorf("the leader's snapshot runs %+v, want slow/report on work", snap.Running)
	}
	f.slow.Store(true) // its heartbeats hang from now on
	first := <-ended
	if !errors.Is(first.cause, fairsched.ErrWorkerLost) {
		t.Errorf("the stalled attempt ended with %v, want ErrWorkerLost", first.cause)
	}
	f.slow.Store(false) // it beats again: counted again, granted the retry
	if n := <-started; n != 2 {
		t.Errorf("second attempt %d", n)
	}
	if second := <-ended; second.cause != nil {
		t.Errorf("second attempt: %v", second.cause)
	}
}
