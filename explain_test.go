package fairsched_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/testkit"
)

func strp(s string) *string { return &s }

// TestExplainNamesTheBlocker: with both slots held by alice's edits, bob's
// edit of the same document names the running edit that holds it, bob's
// other job names alice as the key holding the global cap; both are
// expected when alice's edits' learned cost has run out, and each keeps
// the reason it has waited on since it was first seen.
func TestExplainNamesTheBlocker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const edit fairsched.JobType = "edit"
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			edit: {DefaultCost: time.Second, Priority: 8, ConflictGroup: "doc"},
		}, fairsched.WithMaxConcurrency(2))
		t0 := time.Now()
		var jobs []*testkit.Gate
		add := func(id, key string) {
			b := testkit.NewGate()
			jobs = append(jobs, b)
			if err := s.Submit(edit, id, b.Run, fairsched.WithFairnessKey(key)); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		add("a", "alice")
		add("b", "alice")
		add("a", "bob")
		add("c", "bob")
		time.Sleep(100 * time.Millisecond)
		ctx := context.Background()

		got, err := s.Explain(ctx, edit, "a")
		if err != nil {
			t.Fatal(err)
		}
		want := fairsched.Explanation{Type: edit, ID: "a", FairnessKey: "bob", Submitted: t0,
			Reasons: []fairsched.Reason{fairsched.ReasonConflict, fairsched.ReasonGlobalLimit}, Reason: fairsched.ReasonConflict,
			Blockers: []fairsched.Blocker{{Reason: fairsched.ReasonConflict, Type: edit, ID: "a", Key: strp("alice"), Running: 1}},
			Estimate: &fairsched.StartEstimate{At: t0.Add(time.Second)},
			// The cap was full when it arrived: dispatch never met the
			// conflict, Explain noted it first.
			History: []fairsched.WaitNote{{Reason: fairsched.ReasonConflict, Since: t0.Add(100 * time.Millisecond)}},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Explain(edit/a) (-want +got):\n%s", diff)
		}
		want = fairsched.Explanation{Type: edit, ID: "c", FairnessKey: "bob", Submitted: t0,
			Reasons: []fairsched.Reason{fairsched.ReasonGlobalLimit}, Reason: fairsched.ReasonGlobalLimit,
			Blockers: []fairsched.Blocker{{Reason: fairsched.ReasonGlobalLimit, Key: strp("alice"), Running: 2}},
			Estimate: &fairsched.StartEstimate{At: t0.Add(time.Second)},
			History:  []fairsched.WaitNote{{Reason: fairsched.ReasonGlobalLimit, Since: t0.Add(100 * time.Millisecond)}},
		}
		if got, err = s.Explain(ctx, edit, "c"); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Explain(edit/c) (-want +got):\n%s", diff)
		}
		snap, err := s.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var pending []fairsched.Explanation
		for _, p := range snap.Pending {
			pending = append(pending, fairsched.Explanation{Type: p.Type, ID: p.ID, FairnessKey: p.FairnessKey, Submitted: p.Submitted,
				Reasons: p.Reasons, Reason: p.Reason, Blockers: p.Blockers, Estimate: p.Estimate, History: p.History})
		}
		if diff := cmp.Diff(want, pending[len(pending)-1]); diff != "" {
			t.Errorf("Snapshot's edit/c (-want +got):\n%s", diff)
		}

		if _, err := s.Explain(ctx, edit, "nope"); !errors.Is(err, fairsched.ErrUnknownJob) {
			t.Errorf("Explain(edit/nope) = %v, want ErrUnknownJob", err)
		}
		if _, err := s.Explain(ctx, "print", "a"); !errors.Is(err, fairsched.ErrUnknownJobType) {
			t.Errorf("Explain(print/a) = %v, want ErrUnknownJobType", err)
		}
		for _, b := range jobs {
			b.Release(nil)
		}
		synctest.Wait()
		if _, err := s.Explain(ctx, edit, "a"); !errors.Is(err, fairsched.ErrUnknownJob) {
			t.Errorf("Explain(edit/a) after every job ended = %v, want ErrUnknownJob", err)
		}
	})
}

// TestRunSyncRefusedWhenItWouldStartLate: with the only slot held for a
// learned second, a RunSync that must start within half a second is
// refused at once with the estimate; one that may wait two seconds waits
// and runs; a type that did not opt in queues either.
func TestRunSyncRefusedWhenItWouldStartLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			query fairsched.JobType = "query"
			other fairsched.JobType = "other"
		)
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			query: {DefaultCost: time.Second, Priority: 8, DeadlineAdmission: true},
			other: {DefaultCost: time.Second, Priority: 8},
		}, fairsched.WithMaxConcurrency(1))
		t0 := time.Now()
		busy := testkit.NewGate()
		t.Cleanup(func() { // before Close, should the test stop early
			busy.Release(nil) // after the test's own release it stays unread in the gate's buffer
		})
		if err := s.Submit(query, "busy", busy.Run); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()

		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		err := s.RunSync(ctx, query, "q1", "carol", func(context.Context) error { return nil })
		var late *fairsched.LateStartError
		if !errors.As(err, &late) || !errors.Is(err, fairsched.ErrOverloaded) || !errors.Is(err, fairsched.ErrStartAfterDeadline) {
			t.Fatalf("RunSync due in 500ms behind a 1s job = %v, want a LateStartError matching ErrOverloaded", err)
		}
		want := fairsched.LateStartError{Type: query, ID: "q1", Key: "carol", Estimate: t0.Add(time.Second), Deadline: t0.Add(500 * time.Millisecond)}
		if diff := cmp.Diff(want, *late); diff != "" {
			t.Errorf("LateStartError (-want +got):\n%s", diff)
		}
		if waited := time.Since(t0); waited != 0 {
			t.Errorf("the refusal took %v, want it at once", waited)
		}

		done := make(chan error, 2)
		for _, typ := range []fairsched.JobType{query, other} {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				done <- s.RunSync(ctx, typ, "q2", "carol", func(context.Context) error { return nil })
			}()
		}
		synctest.Wait()
		time.Sleep(time.Second)
		busy.Release(nil)
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("RunSync due in 2s: %v", err)
			}
		}
	})
}

// reasonsOnly returns pending rows without what Explain adds to them
// (blockers, estimate, history): for tests of the rules alone.
func reasonsOnly(ps []fairsched.PendingJob) []fairsched.PendingJob {
	out := make([]fairsched.PendingJob, len(ps))
	for i, p := range ps {
		p.Blockers, p.Estimate, p.History, p.HistoryDropped = nil, nil, nil, 0
		out[i] = p
	}
	return out
}

// TestLateStartRefusalReported: a RunSync refused by deadline-aware
// admission is reported like every other refusal, one JobRefused event
// with reason start_after_deadline, at the time of the refusal.
func TestLateStartRefusalReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const query fairsched.JobType = "query"
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			query: {DefaultCost: time.Second, Priority: 8, DeadlineAdmission: true},
		}, fairsched.WithMaxConcurrency(1))
		events, stop := s.Subscribe(16)
		t0 := time.Now()
		busy := testkit.NewGate()
		t.Cleanup(func() { busy.Release(nil) })
		if err := s.Submit(query, "busy", busy.Run); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		if err := s.RunSync(ctx, query, "q1", "carol", func(context.Context) error { return nil }); !errors.Is(err, fairsched.ErrStartAfterDeadline) {
			t.Fatalf("RunSync due in 500ms behind a 1s job = %v, want ErrStartAfterDeadline", err)
		}
		synctest.Wait()
		stop()
		want := []fairsched.Event{fairsched.JobRefused{Time: t0, Type: query, ID: "q1", FairnessKey: "carol", Reason: fairsched.ReasonStartAfterDeadline}}
		if diff := cmp.Diff(want, keep(collectAll(events), fairsched.JobRefused{})); diff != "" {
			t.Errorf("JobRefused events (-want +got):\n%s", diff)
		}
	})
}
