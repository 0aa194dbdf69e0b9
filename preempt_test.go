package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/fairschedtest"
	"github.com/google/go-cmp/cmp"
)

// run is one attempt of a job in a tier-rule timeline: its start and end
// in seconds, and whether a higher tier preempted it.
type run struct {
	Job        string
	Start, End int
	Preempted  bool
}

// tierJob is a job of a tier-rule timeline, submitted at At (seconds).
type tierJob struct {
	At  int
	Typ fairsched.JobType
	ID  string
	Dur int // seconds
}

// runTiers submits the jobs at their times in virtual time and returns
// every attempt, sorted by start then name, once all have ended. A job's
// function sleeps for its duration unless its context ends first (then it
// returns the cause).
func runTiers(t *testing.T, s *fairsched.Scheduler, jobs []tierJob) []run {
	t.Helper()
	start := time.Now()
	runs := make(chan run, 4*len(jobs))
	for _, j := range jobs {
		time.Sleep(start.Add(time.Duration(j.At) * time.Second).Sub(time.Now()))
		name := string(j.Typ) + "/" + j.ID
		fn := func(ctx context.Context) error {
			began := time.Now()
			var err error
			select {
			case <-time.After(time.Duration(j.Dur) * time.Second):
			case <-ctx.Done():
				err = context.Cause(ctx)
			}
			runs <- run{name, int(began.Sub(start) / time.Second), int(time.Since(start) / time.Second),
				errors.Is(err, fairsched.ErrPreempted)}
			return err
		}
		if err := s.Submit(j.Typ, j.ID, fn); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	close(runs)
	var out []run
	for r := range runs {
		out = append(out, r)
	}
	for i := 1; i < len(out); i++ {
		for k := i; k > 0 && (out[k].Start < out[k-1].Start || out[k].Start == out[k-1].Start && out[k].Job < out[k-1].Job); k-- {
			out[k], out[k-1] = out[k-1], out[k]
		}
	}
	return out
}

// tierScheduler returns a scheduler of global cap n whose priorities only
// order, with the types given registered.
func tierScheduler(t *testing.T, n int, types map[fairsched.JobType]fairsched.JobTypeConfig, opts ...fairsched.Option) *fairsched.Scheduler {
	t.Helper()
	opts = append([]fairsched.Option{fairsched.WithMaxConcurrency(n), fairsched.WithPriorityMode(fairsched.PriorityOrderOnly)}, opts...)
	s, err := fairsched.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	for typ, cfg := range types {
		if err := s.RegisterType(typ, cfg); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestStarvationWindow is spec 5's "P1 cannot starve P2 for more than the
// configured window": one slot, a flood of interactive (tier 2) jobs of
// 2 s against batch (tier 1) work, a window of 5 s. Batch gets its first
// admission at 6 s — the window plus at most one interactive job — and
// then one every 5 s, each as an interactive job ends. Without the window
// batch ran only once the flood was over (16 s).
func TestStarvationWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := tierScheduler(t, 1, map[fairsched.JobType]fairsched.JobTypeConfig{
			"interactive": {DefaultCost: 2 * time.Second, Priority: 2},
			"batch":       {DefaultCost: time.Second, Priority: 1},
		}, fairsched.WithTier(2, fairsched.TierConfig{StarvationWindow: 5 * time.Second}))
		var jobs []tierJob
		for i := 1; i <= 8; i++ {
			jobs = append(jobs, tierJob{Typ: "interactive", ID: fmt.Sprint("i", i), Dur: 2})
		}
		for i := 1; i <= 3; i++ {
			jobs = append(jobs, tierJob{Typ: "batch", ID: fmt.Sprint("b", i), Dur: 1})
		}
		want := []run{
			{"interactive/i1", 0, 2, false}, {"interactive/i2", 2, 4, false}, {"interactive/i3", 4, 6, false},
			{"batch/b1", 6, 7, false},
			{"interactive/i4", 7, 9, false}, {"interactive/i5", 9, 11, false},
			{"batch/b2", 11, 12, false},
			{"interactive/i6", 12, 14, false}, {"interactive/i7", 14, 16, false},
			{"batch/b3", 16, 17, false},
			{"interactive/i8", 17, 19, false},
		}
		if diff := cmp.Diff(want, runTiers(t, s, jobs)); diff != "" {
			t.Errorf("timeline (-want +got):\n%s", diff)
		}
	})
}

// TestPreemptionWithinBudget: two slots held by preemptible batch jobs
// (tier 1); critical jobs (tier 3, a budget of 2 preemptions per 100 s)
// arrive at 2, 3 and 4 s. The first two preempt — the most recently
// started batch job first — and run at once; the preempted jobs go back to
// the head of their lane (in their arrival order), ahead of batch jobs
// that never ran, their attempt uncounted (JobQueued's Attempt stays 1).
// The third finds the budget spent and waits like any job, for the first
// slot to free (5 s).
func TestPreemptionWithinBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := tierScheduler(t, 2, map[fairsched.JobType]fairsched.JobTypeConfig{
			"critical": {DefaultCost: 3 * time.Second, Priority: 3},
			"batch":    {DefaultCost: 10 * time.Second, Priority: 1, Preemptible: true},
		}, fairsched.WithTier(3, fairsched.TierConfig{Preempt: &fairsched.PreemptBudget{Max: 2, Window: 100 * time.Second}}))
		events, cancel := s.Subscribe(1000)
		defer cancel()
		jobs := []tierJob{
			{0, "batch", "b1", 10}, {0, "batch", "b2", 10}, {0, "batch", "b3", 10}, {0, "batch", "b4", 10},
			{2, "critical", "c1", 3}, {3, "critical", "c2", 3}, {4, "critical", "c3", 3},
		}
		want := []run{
			{"batch/b1", 0, 3, true}, {"batch/b2", 0, 2, true},
			{"critical/c1", 2, 5, false}, {"critical/c2", 3, 6, false},
			{"critical/c3", 5, 8, false},
			{"batch/b1", 6, 16, false}, {"batch/b2", 8, 18, false},
			{"batch/b3", 16, 26, false}, {"batch/b4", 18, 28, false},
		}
		if diff := cmp.Diff(want, runTiers(t, s, jobs)); diff != "" {
			t.Errorf("timeline (-want +got):\n%s", diff)
		}
		type seen struct {
			Event   string
			ID      string
			At      int
			Attempt int
		}
		var got []seen
		start := time.Time{}
		for e := range events {
			switch e := e.(type) {
			case fairsched.JobQueued:
				if start.IsZero() {
					start = e.Time
				}
				if e.Type == "batch" && (e.ID == "b1" || e.ID == "b2") {
					got = append(got, seen{"queued", e.ID, int(e.Time.Sub(start) / time.Second), e.Attempt})
				}
			case fairsched.JobPreempted:
				got = append(got, seen{fmt.Sprintf("preempted by %d", e.By), e.ID, int(e.Time.Sub(start) / time.Second), 0})
			case fairsched.JobFailed:
				got = append(got, seen{"failed", e.ID, int(e.Time.Sub(start) / time.Second), 0})
			}
		}
		wantEvents := []seen{
			{"queued", "b1", 0, 1}, {"queued", "b2", 0, 1},
			{"preempted by 3", "b2", 2, 0}, {"queued", "b2", 2, 1},
			{"preempted by 3", "b1", 3, 0}, {"queued", "b1", 3, 1},
		}
		if diff := cmp.Diff(wantEvents, got); diff != "" {
			t.Errorf("events of b1, b2 (-want +got):\n%s", diff)
		}
	})
}

// TestPreemptionBudgetReturns: a budget of one preemption per 5 s. The
// critical job at 2 s finds it spent by the one at 1 s and waits; when the
// budget has room again (6 s) the core's one timer wakes the scheduler and
// it preempts then, with no job having ended in between.
func TestPreemptionBudgetReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := tierScheduler(t, 2, map[fairsched.JobType]fairsched.JobTypeConfig{
			"critical": {DefaultCost: 3 * time.Second, Priority: 3},
			"batch":    {DefaultCost: 10 * time.Second, Priority: 1, Preemptible: true},
		}, fairsched.WithTier(3, fairsched.TierConfig{Preempt: &fairsched.PreemptBudget{Max: 1, Window: 5 * time.Second}}))
		jobs := []tierJob{
			{0, "batch", "b1", 10}, {0, "batch", "b2", 10},
			{1, "critical", "c1", 10}, {2, "critical", "c2", 3},
		}
		want := []run{
			{"batch/b1", 0, 6, true}, {"batch/b2", 0, 1, true},
			{"critical/c1", 1, 11, false},
			{"critical/c2", 6, 9, false},
			{"batch/b1", 9, 19, false},
			{"batch/b2", 11, 21, false},
		}
		if diff := cmp.Diff(want, runTiers(t, s, jobs)); diff != "" {
			t.Errorf("timeline (-want +got):\n%s", diff)
		}
	})
}

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

// TestPreemptionHeldByOwnGroup: with groups, a job its group's allocation
// holds does not preempt. Two groups share two slots (one each); g1's
// critical job arrives while g1's slot runs g1's own batch job, and waits
// for that slot (10 s). Preempting g2's batch job would free a global slot
// g1 may not take (the critical job would still wait, the batch job's work
// lost); a rule that allowed it preempts b2 at 2 s and this test fails.
func TestPreemptionHeldByOwnGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := tierScheduler(t, 2, map[fairsched.JobType]fairsched.JobTypeConfig{
			"critical": {DefaultCost: 3 * time.Second, Priority: 3},
			"batch":    {DefaultCost: 10 * time.Second, Priority: 1, Preemptible: true},
		}, fairsched.WithTier(3, fairsched.TierConfig{Preempt: &fairsched.PreemptBudget{Max: 5, Window: 100 * time.Second}}),
			fairsched.WithGroupWeight("g1", 1), fairsched.WithGroupWeight("g2", 1))
		start := time.Now()
		runs := make(chan run, 8)
		submit := func(at int, typ fairsched.JobType, id, group string, dur int) {
			time.Sleep(start.Add(time.Duration(at) * time.Second).Sub(time.Now()))
			err := s.Submit(typ, id, func(ctx context.Context) error {
				began := time.Now()
				var err error
				select {
				case <-time.After(time.Duration(dur) * time.Second):
				case <-ctx.Done():
					err = context.Cause(ctx)
				}
				runs <- run{string(typ) + "/" + id, int(began.Sub(start) / time.Second), int(time.Since(start) / time.Second), errors.Is(err, fairsched.ErrPreempted)}
				return err
			}, fairsched.InGroup(group))
			if err != nil {
				t.Fatal(err)
			}
		}
		submit(0, "batch", "b1", "g1", 10)
		submit(0, "batch", "b2", "g2", 10)
		submit(2, "critical", "c1", "g1", 3)
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		close(runs)
		got := map[string]run{}
		for r := range runs {
			got[r.Job+fmt.Sprint("@", r.Start)] = r
		}
		want := map[string]run{
			"batch/b1@0":     {"batch/b1", 0, 10, false},
			"batch/b2@0":     {"batch/b2", 0, 10, false},
			"critical/c1@10": {"critical/c1", 10, 13, false},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("timeline (-want +got):\n%s", diff)
		}
	})
}
