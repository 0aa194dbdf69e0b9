package cluster_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
)

// TestPreemptionInCluster: cluster-wide cap 1, a durable batch job (tier
// 1, preemptible, no retries) runs on an instance when an urgent job
// (tier 3, which preempts) is enqueued. The leader's scheduler preempts
// the batch job: its grant is revoked through the cancel path, its
// handler stops on its instance, the urgent job runs, and the batch job
// runs again and succeeds — though it may make no second attempt: the
// preempted one was no failure. (Its attempt number moves on: in cluster
// mode a number names a grant, and the instance saw that one end.)
func TestPreemptionInCluster(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	opts := []fairsched.Option{fairsched.WithMaxConcurrency(1), fairsched.WithPriorityMode(fairsched.PriorityOrderOnly),
		fairsched.WithTier(3, fairsched.TierConfig{Preempt: &fairsched.PreemptBudget{Max: 2, Window: time.Minute}})}
	lead := joinLeader(t, url, fast("d", "lead", 2), opts...)
	work := join(t, url, fast("d", "work", 2), opts...)
	var mu sync.Mutex
	var order []string
	log := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	started := make(chan string, 4)
	for _, m := range []*member{lead, work} {
		for typ, cfg := range map[fairsched.JobType]fairsched.JobTypeConfig{
			"batch":  {Priority: 1, DefaultCost: time.Millisecond, Preemptible: true, Retry: fairsched.RetryPolicy{MaxAttempts: 1}},
			"urgent": {Priority: 3, DefaultCost: time.Millisecond},
		} {
			if err := m.s.RegisterType(typ, cfg); err != nil {
				t.Fatal(err)
			}
		}
	}
	first := true
	if err := work.s.RegisterHandler("batch", func(ctx context.Context, j fairsched.Job) error {
		log(fmt.Sprintf("start %s attempt %d", j.ID, j.Attempt))
		started <- j.ID
		mu.Lock()
		wait := first
		first = false
		mu.Unlock()
		if wait {
			<-ctx.Done()
			log("stopped " + j.ID)
			return context.Cause(ctx)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := work.s.RegisterHandler("urgent", func(ctx context.Context, j fairsched.Job) error {
		log(fmt.Sprintf("start %s attempt %d", j.ID, j.Attempt))
		started <- j.ID
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := work.s.Enqueue(ctx, "batch", "b1", nil); err != nil {
		t.Fatal(err)
	}
	<-started
	if err := work.s.Enqueue(ctx, "urgent", "u1", nil); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		<-started
	}
	waitFor(t, func() bool { n, _ := lead.st.CountJobs(ctx); return n == 0 })
	mu.Lock()
	defer mu.Unlock()
	want := []string{"start b1 attempt 1", "stopped b1", "start u1 attempt 1", "start b1 attempt 2"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}
