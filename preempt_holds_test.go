package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/google/go-cmp/cmp"
)

// timeline submits jobs at given times in virtual time and records every
// attempt by its job and start ("batch/b1@0").
type timeline struct {
	t     *testing.T
	s     *fairsched.Scheduler
	start time.Time
	runs  chan run
}

func newTimeline(t *testing.T, s *fairsched.Scheduler) *timeline {
	return &timeline{t: t, s: s, start: time.Now(), runs: make(chan run, 16)}
}

// at sleeps until second sec of the timeline.
func (tl *timeline) at(sec int) {
	time.Sleep(tl.start.Add(time.Duration(sec) * time.Second).Sub(time.Now()))
}

// submit submits at second sec a job that runs dur seconds unless its
// context ends first (it then returns the cause).
func (tl *timeline) submit(sec int, typ fairsched.JobType, id string, dur int, opts ...fairsched.JobOption) {
	tl.at(sec)
	if err := tl.s.Submit(typ, id, tl.job(typ, id, dur, nil), opts...); err != nil {
		tl.t.Fatal(err)
	}
}

// job returns the function of a job that calls then (if not nil) with its
// context and runs dur seconds unless its context ends first (it then
// returns the cause), recording its attempt.
func (tl *timeline) job(typ fairsched.JobType, id string, dur int, then func(context.Context)) func(context.Context) error {
	return func(ctx context.Context) error {
		began := time.Now()
		if then != nil {
			then(ctx)
		}
		var err error
		select {
		case <-time.After(time.Duration(dur) * time.Second):
		case <-ctx.Done():
			err = context.Cause(ctx)
		}
		tl.runs <- run{string(typ) + "/" + id, int(began.Sub(tl.start) / time.Second), int(time.Since(tl.start) / time.Second), errors.Is(err, fairsched.ErrPreempted)}
		return err
	}
}

// close closes the scheduler and returns the attempts.
func (tl *timeline) close() map[string]run {
	if err := tl.s.Close(context.Background()); err != nil {
		tl.t.Fatal(err)
	}
	close(tl.runs)
	got := map[string]run{}
	for r := range tl.runs {
		got[r.Job+fmt.Sprint("@", r.Start)] = r
	}
	return got
}

// TestPreemptionAfterPauseRaisesAllocation: a preempting job its group's
// allocation held preempts once a pause of another group raises that
// allocation. Two groups share two slots (one each), under tier shares
// (so a full cap blocks every tier). g1's critical job arrives at 2 s
// while g1's slot runs its own batch job: held. At 4 s g2 is paused, g1
// is allocated both slots, and the critical job preempts the most
// recently started batch job (b2, g2's) and runs at once; b2 waits for
// its group's resume (12 s). Were the held job not found once its group
// may run more, it would wait for b1 to end (10 s).
func TestPreemptionAfterPauseRaisesAllocation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := tierScheduler(t, 2, map[fairsched.JobType]fairsched.JobTypeConfig{
			"critical": {DefaultCost: 3 * time.Second, Priority: 3},
			"batch":    {DefaultCost: 10 * time.Second, Priority: 1, Preemptible: true},
		}, fairsched.WithTier(3, fairsched.TierConfig{BurstShare: 1, Preempt: &fairsched.PreemptBudget{Max: 5, Window: 100 * time.Second}}),
			fairsched.WithGroupWeight("g1", 1), fairsched.WithGroupWeight("g2", 1))
		tl := newTimeline(t, s)
		tl.submit(0, "batch", "b1", 10, fairsched.InGroup("g1"))
		tl.submit(1, "batch", "b2", 10, fairsched.InGroup("g2"))
		tl.submit(2, "critical", "c1", 3, fairsched.InGroup("g1"))
		tl.at(4)
		if err := s.PauseGroup("g2"); err != nil {
			t.Fatal(err)
		}
		tl.at(12)
		if err := s.ResumeGroup("g2"); err != nil {
			t.Fatal(err)
		}
		want := map[string]run{
			"batch/b1@0":    {"batch/b1", 0, 10, false},
			"batch/b2@1":    {"batch/b2", 1, 4, true},
			"critical/c1@4": {"critical/c1", 4, 7, false},
			"batch/b2@12":   {"batch/b2", 12, 22, false},
		}
		if diff := cmp.Diff(want, tl.close()); diff != "" {
			t.Errorf("timeline (-want +got):\n%s", diff)
		}
	})
}

// TestPreemptionPastRateLimitedHead: the preempting tier's next job waits
// on its key's rate limit, and the job after it only for the slot: that
// one preempts. One slot; key a's bucket (one token per 10 s) is spent by
// a0 at 0 s. At 4 s c1 (key a) waits for its token (10 s) while batch b1
// holds the slot; at 5 s c2 (key b) arrives, preempts b1 and runs; c1 runs
// once c2 is done (its token came meanwhile). Were a rate-limited head to
// end the search, nothing would preempt: c1 and c2 would wait for b1 to
// end (13 s).
func TestPreemptionPastRateLimitedHead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := tierScheduler(t, 1, map[fairsched.JobType]fairsched.JobTypeConfig{
			"critical": {DefaultCost: 3 * time.Second, Priority: 3},
			"batch":    {DefaultCost: 10 * time.Second, Priority: 1, Preemptible: true},
		}, fairsched.WithTier(3, fairsched.TierConfig{Preempt: &fairsched.PreemptBudget{Max: 5, Window: 100 * time.Second}}),
			fairsched.WithRateLimit(fairsched.RateForKey("a"), 0.1, 1))
		tl := newTimeline(t, s)
		tl.submit(0, "critical", "a0", 1, fairsched.WithFairnessKey("a"))
		tl.submit(0, "batch", "x", 1, fairsched.WithFairnessKey("b"))
		tl.submit(3, "batch", "b1", 10, fairsched.WithFairnessKey("z"))
		tl.submit(4, "critical", "c1", 1, fairsched.WithFairnessKey("a"))
		tl.submit(5, "critical", "c2", 10, fairsched.WithFairnessKey("b"))
		want := map[string]run{
			"critical/a0@0":  {"critical/a0", 0, 1, false},
			"batch/x@1":      {"batch/x", 1, 2, false},
			"batch/b1@3":     {"batch/b1", 3, 5, true},
			"critical/c2@5":  {"critical/c2", 5, 15, false},
			"critical/c1@15": {"critical/c1", 15, 16, false},
			"batch/b1@16":    {"batch/b1", 16, 26, false},
		}
		if diff := cmp.Diff(want, tl.close()); diff != "" {
			t.Errorf("timeline (-want +got):\n%s", diff)
		}
	})
}

// TestPreemptionFreesALentReservation: the batch tier reserves one of two
// slots but lends it while none of its jobs waits. At 4 s g2 is paused,
// and g1's critical job, held by g1's allocation until then, preempts g2's
// batch job: that job, waiting again in a paused group (allocated no
// slot), does not count as the batch tier's waiting work, so the slot it
// frees is not owed to the batch tier's reservation and the critical job
// takes it. Were the victim counted as waiting, no preemption would free
// a slot and the critical job would wait for k (10 s).
func TestPreemptionFreesALentReservation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := tierScheduler(t, 2, map[fairsched.JobType]fairsched.JobTypeConfig{
			"critical": {DefaultCost: 3 * time.Second, Priority: 3},
			"batch":    {DefaultCost: 10 * time.Second, Priority: 1, Preemptible: true},
		}, fairsched.WithTier(3, fairsched.TierConfig{Preempt: &fairsched.PreemptBudget{Max: 5, Window: 100 * time.Second}}),
			fairsched.WithTier(1, fairsched.TierConfig{MinShare: 0.5, BurstShare: 1, LendIdle: true}),
			fairsched.WithGroupWeight("g1", 1), fairsched.WithGroupWeight("g2", 1))
		tl := newTimeline(t, s)
		tl.submit(0, "critical", "k", 10, fairsched.InGroup("g1"))
		tl.submit(1, "batch", "b1", 10, fairsched.InGroup("g2"))
		tl.submit(2, "critical", "c1", 3, fairsched.InGroup("g1"))
		tl.at(4)
		if err := s.PauseGroup("g2"); err != nil {
			t.Fatal(err)
		}
		tl.at(12)
		if err := s.ResumeGroup("g2"); err != nil {
			t.Fatal(err)
		}
		want := map[string]run{
			"critical/k@0":  {"critical/k", 0, 10, false},
			"batch/b1@1":    {"batch/b1", 1, 4, true},
			"critical/c1@4": {"critical/c1", 4, 7, false},
			"batch/b1@12":   {"batch/b1", 12, 22, false},
		}
		if diff := cmp.Diff(want, tl.close()); diff != "" {
			t.Errorf("timeline (-want +got):\n%s", diff)
		}
	})
}

// TestPreemptionSparesAnInheritedPriority: a preemptible batch job that
// inherited priority 5 from the urgent job that spawned it is not
// preempted by critical work of tier 3: waiting again it would go first
// and take the slot back, and c1 would wait all the same. One slot: b1
// runs its 10 s, then c1. (Were b1 a victim, it would be preempted at 2 s,
// its first second of work lost, and start again at once.)
func TestPreemptionSparesAnInheritedPriority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := tierScheduler(t, 1, map[fairsched.JobType]fairsched.JobTypeConfig{
			"urgent":   {DefaultCost: time.Second, Priority: 5},
			"critical": {DefaultCost: 3 * time.Second, Priority: 3},
			"batch":    {DefaultCost: 10 * time.Second, Priority: 1, Preemptible: true},
		}, fairsched.WithTier(3, fairsched.TierConfig{Preempt: &fairsched.PreemptBudget{Max: 3, Window: 100 * time.Second}}))
		tl := newTimeline(t, s)
		spawn := func(ctx context.Context) {
			if err := s.Submit("batch", "b1", tl.job("batch", "b1", 10, nil), fairsched.InheritPriority(ctx)); err != nil {
				t.Error(err)
			}
		}
		if err := s.Submit("urgent", "u", tl.job("urgent", "u", 1, spawn)); err != nil {
			t.Fatal(err)
		}
		tl.submit(2, "critical", "c1", 1)
		want := map[string]run{
			"urgent/u@0":     {"urgent/u", 0, 1, false},
			"batch/b1@1":     {"batch/b1", 1, 11, false},
			"critical/c1@11": {"critical/c1", 11, 12, false},
		}
		if diff := cmp.Diff(want, tl.close()); diff != "" {
			t.Errorf("timeline (-want +got):\n%s", diff)
		}
	})
}
