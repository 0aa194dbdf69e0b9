package fairsched_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
)

// admission is one JobAdmitted event, reduced to what the inheritance test
// checks.
type admission struct {
	ID        string
	At        time.Duration // since the test's start
	Base      fairsched.Priority
	Effective fairsched.Priority
}

// TestInheritPriority: a background job that aged to priority 6 spawns two
// children of base priority 1, one with InheritPriority. With one slot, the
// inheriting child runs as soon as its parent ends — ahead of a job of base
// priority 4 that arrived after it — and the other child runs last. The
// snapshot shows the inherited priority; the tier the child counts against
// is still its base priority's.
func TestInheritPriority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			fg fairsched.JobType = "fg"
			bg fairsched.JobType = "bg"
		)
		mock := clock.NewMock()
		t0 := mock.Now()
		aging := fairsched.AgingConfig{GracePeriod: 10 * time.Second, Interval: 5 * time.Second, MaxEffectivePriority: 9}
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			fg: {DefaultCost: time.Second, Priority: 4},
			bg: {DefaultCost: time.Second, Priority: 1},
		}, fairsched.WithClock(mock), fairsched.WithMaxConcurrency(1), fairsched.WithAging(aging))
		events, cancel := s.Subscribe(64)
		defer cancel()

		first := submit(t, s, fg, "first", "")
		child, plain := newBlocker(), newBlocker()
		parentDone := make(chan error, 1)
		parent := func(ctx context.Context) error {
			// A context derived from the job's carries its priority too.
			cctx, stop := context.WithCancel(ctx)
			defer stop()
			if err := s.Submit(bg, "child", child.fn, fairsched.InheritPriority(cctx)); err != nil {
				return err
			}
			if err := s.Submit(bg, "plain", plain.fn); err != nil {
				return err
			}
			return <-parentDone
		}
		if err := s.Submit(bg, "parent", parent); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()

		// The parent waits 35s: 1 + ⌊(35s − 10s)/5s⌋ = 6 when admitted.
		mock.Add(35 * time.Second)
		finish(t, first)
		later := submit(t, s, fg, "later", "") // base 4, after the children

		snap := snapshot(t, s)
		row, ok := pendingRow(snap, "child")
		if !ok || row.InheritedPriority == nil || *row.InheritedPriority != 6 || row.EffectivePriority != 6 || row.Priority != 1 {
			t.Errorf("child pending as %+v; want base 1, inherited and effective 6", row)
		}
		if row, ok := pendingRow(snap, "plain"); !ok || row.InheritedPriority != nil || row.EffectivePriority != 1 {
			t.Errorf("plain child pending as %+v; want effective 1, nothing inherited", row)
		}

		mock.Add(time.Second)
		parentDone <- nil
		synctest.Wait()
		mock.Add(time.Second)
		finish(t, child)
		mock.Add(time.Second)
		finish(t, later)
		mock.Add(time.Second)
		finish(t, plain)

		cancel()
		var got []admission
		for _, e := range keep(collect(events), fairsched.JobAdmitted{}) {
			a := e.(fairsched.JobAdmitted)
			got = append(got, admission{a.ID, a.Time.Sub(t0), a.BasePriority, a.EffectivePriority})
		}
		want := []admission{
			{"first", 0, 4, 4},
			{"parent", 35 * time.Second, 1, 6},
			{"child", 36 * time.Second, 1, 6},
			{"later", 37 * time.Second, 4, 4},
			{"plain", 38 * time.Second, 1, 1},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("admissions (-want +got):\n%s", diff)
		}
	})
}

// TestInheritPriorityForeground: the context RunSync's function receives
// carries the job's priority as well; a context of no job passes nothing on.
func TestInheritPriorityForeground(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			fg fairsched.JobType = "fg"
			bg fairsched.JobType = "bg"
		)
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			fg: {DefaultCost: time.Second, Priority: 7},
			bg: {DefaultCost: time.Second, Priority: 1},
		}, fairsched.WithClock(clock.NewMock()))
		hold := submit(t, s, bg, "hold", "") // bg is full: children wait
		children := []*blocker{newBlocker(), newBlocker()}
		err := s.RunSync(context.Background(), fg, "request", "user", func(ctx context.Context) error {
			if err := s.Submit(bg, "spawned", children[0].fn, fairsched.InheritPriority(ctx)); err != nil {
				return err
			}
			return s.Submit(bg, "unrelated", children[1].fn, fairsched.InheritPriority(context.Background()))
		})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		type row struct {
			ID                   string
			Effective, Inherited fairsched.Priority
			Reason               fairsched.Reason
		}
		var got []row
		for _, p := range snapshot(t, s).Pending {
			r := row{p.ID, p.EffectivePriority, -1, p.Reason}
			if p.InheritedPriority != nil {
				r.Inherited = *p.InheritedPriority
			}
			got = append(got, r)
		}
		// Inherited 7 orders the spawned job first, but it still waits on
		// the cap of its base priority's tier (1 running job).
		want := []row{{"spawned", 7, 7, fairsched.ReasonTierLimit}, {"unrelated", 1, -1, fairsched.ReasonTierLimit}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("pending (-want +got):\n%s", diff)
		}
		finish(t, hold)
		finish(t, children[0])
		finish(t, children[1])
	})
}
