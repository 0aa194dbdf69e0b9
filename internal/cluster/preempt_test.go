package cluster_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster/memback"
	"github.com/fairsched/fairsched/internal/pgtest"
)

// preemptOpts are the options of both instances of the preemption tests:
// a cluster-wide cap of 1, tier 3 preempts.
func preemptOpts() []fairsched.Option {
	return []fairsched.Option{fairsched.WithMaxConcurrency(1), fairsched.WithPriorityMode(fairsched.PriorityOrderOnly),
		fairsched.WithTier(3, fairsched.TierConfig{Preempt: &fairsched.PreemptBudget{Max: 2, Window: time.Minute}})}
}

// preemptRuns plays the preemption scenario on two instances of one
// domain, whose handlers run on work: a durable batch job (tier 1,
// preemptible, no retries) runs when an urgent job (tier 3) is enqueued.
// It returns the runs in order, the cause the preempted handler saw
// included, once the batch job's second attempt has started.
func preemptRuns(t *testing.T, schedulers []*fairsched.Scheduler) []string {
	t.Helper()
	work := schedulers[1]
	var mu sync.Mutex
	var order []string
	log := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	started := make(chan string, 4)
	for _, s := range schedulers {
		for typ, cfg := range map[fairsched.JobType]fairsched.JobTypeConfig{
			"batch":  {Priority: 1, DefaultCost: time.Millisecond, Preemptible: true, Retry: fairsched.RetryPolicy{MaxAttempts: 1}},
			"urgent": {Priority: 3, DefaultCost: time.Millisecond},
		} {
			if err := s.RegisterType(typ, cfg); err != nil {
				t.Fatal(err)
			}
		}
	}
	first := true
	if err := work.RegisterHandler("batch", func(ctx context.Context, j fairsched.Job) error {
		log(fmt.Sprintf("start %s attempt %d", j.ID, j.Attempt))
		started <- j.ID
		mu.Lock()
		wait := first
		first = false
		mu.Unlock()
		if wait {
			<-ctx.Done()
			log(fmt.Sprintf("stopped %s: %v", j.ID, context.Cause(ctx)))
			return context.Cause(ctx)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := work.RegisterHandler("urgent", func(ctx context.Context, j fairsched.Job) error {
		log(fmt.Sprintf("start %s attempt %d", j.ID, j.Attempt))
		started <- j.ID
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := work.Enqueue(ctx, "batch", "b1", nil); err != nil {
		t.Fatal(err)
	}
	<-started
	if err := work.Enqueue(ctx, "urgent", "u1", nil); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		<-started
	}
	mu.Lock()
	defer mu.Unlock()
	return order
}

// preemptWant: the batch job's handler sees ErrPreempted as its context's
// cause (as in one process), the urgent job runs, and the batch job runs
// again — though it may make no second attempt: the preempted one was no
// failure. (Its attempt number moves on: in cluster mode a number names a
// grant, and the instance saw that one end.)
var preemptWant = []string{"start b1 attempt 1", "stopped b1: " + fairsched.ErrPreempted.Error(), "start u1 attempt 1", "start b1 attempt 2"}

// TestPreemptionInCluster: the leader's scheduler preempts the batch job
// running on another instance: its grant is revoked as preempted, its
// handler stops there with cause ErrPreempted, the urgent job runs, and
// the batch job runs again and succeeds. On PostgreSQL.
func TestPreemptionInCluster(t *testing.T) {
	url := pgtest.URL(t)
	lead := joinLeader(t, url, fast("d", "lead", 2), preemptOpts()...)
	work := join(t, url, fast("d", "work", 2), preemptOpts()...)
	got := preemptRuns(t, []*fairsched.Scheduler{lead.s, work.s})
	waitFor(t, func() bool { n, _ := lead.st.CountJobs(context.Background()); return n == 0 })
	if diff := cmp.Diff(preemptWant, got); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}

// TestPreemptionInClusterMem is TestPreemptionInCluster on the in-memory
// backend, in virtual time.
func TestPreemptionInClusterMem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := memback.New()
		defer b.Close()
		var ss []*fairsched.Scheduler
		for _, name := range []string{"lead", "work"} {
			s, err := fairsched.New(append(preemptOpts(), fairsched.WithCluster(b, fast("d", name, 2)))...)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(context.Background())
			ss = append(ss, s)
			synctest.Wait() // the first instance takes the lease before the second starts
		}
		got := preemptRuns(t, ss)
		if diff := cmp.Diff(preemptWant, got); diff != "" {
			t.Errorf("runs (-want +got):\n%s", diff)
		}
	})
}
