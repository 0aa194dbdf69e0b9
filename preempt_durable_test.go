package fairsched_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/fairschedtest"
)

// TestPreemptedDurableJobKeepsItsAttempt: a durable backfill job (tier 1,
// preemptible, no retries) is preempted by a critical job (tier 3) on the
// one slot. Its handler sees ErrPreempted as its context's cause; the job
// runs again after the critical one with the same attempt number — the
// preempted attempt counts neither as a failure (it would be dead: no
// retries) nor as an interruption — and its success deletes its record.
func TestPreemptedDurableJobKeepsItsAttempt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	ctx := context.Background()
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		st := durableStore(t, path)
		s, err := fairsched.New(fairsched.WithClock(env.Clock), fairsched.WithStore(st), fairsched.WithMaxConcurrency(1),
			fairsched.WithPriorityMode(fairsched.PriorityOrderOnly),
			fairsched.WithTier(3, fairsched.TierConfig{Preempt: &fairsched.PreemptBudget{Max: 1, Window: time.Minute}}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close(ctx) })
		for typ, cfg := range map[fairsched.JobType]fairsched.JobTypeConfig{
			"backfill": {DefaultCost: time.Second, Priority: 1, Preemptible: true},
			"critical": {DefaultCost: time.Second, Priority: 3},
		} {
			if err := s.RegisterType(typ, cfg); err != nil {
				t.Fatal(err)
			}
		}
		var log ranLog
		if err := s.RegisterHandler("backfill", func(ctx context.Context, j fairsched.Job) error {
			if j.Attempt == 1 && log.get() == nil {
				log.add(fmt.Sprintf("%s attempt %d started at %v", j.ID, j.Attempt, env.Now()))
				<-ctx.Done()
				log.add(fmt.Sprintf("%s attempt %d stopped at %v: %v", j.ID, j.Attempt, env.Now(), context.Cause(ctx)))
				return context.Cause(ctx)
			}
			log.add(fmt.Sprintf("%s attempt %d ran at %v", j.ID, j.Attempt, env.Now()))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.Enqueue(ctx, "backfill", "b1", nil); err != nil {
			t.Fatal(err)
		}
		fairschedtest.WaitRunning(t, s, 1)
		env.Advance(5 * time.Second)
		if err := s.Submit("critical", "c1", func(context.Context) error {
			log.add(fmt.Sprintf("c1 ran at %v", env.Now()))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		fairschedtest.WaitIdle(t, s)
		want := []string{
			"b1 attempt 1 started at 0s",
			"b1 attempt 1 stopped at 5s: " + fairsched.ErrPreempted.Error(),
			"c1 ran at 5s",
			"b1 attempt 1 ran at 5s",
		}
		if diff := cmp.Diff(want, log.get()); diff != "" {
			t.Errorf("runs (-want +got):\n%s", diff)
		}
		if err := s.Close(ctx); err != nil { // its last writes committed
			t.Fatal(err)
		}
		n := 0
		if err := st.LoadJobs(func(fairsched.JobRecord) error { n++; return nil }); err != nil || n != 0 {
			t.Errorf("%d records left (%v); want none (b1 succeeded)", n, err)
		}
	})
}
