package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster/memback"
)

// TestExplainInCluster (virtual time, in-memory backend): the leader
// explains a job held by the cap from its scheduler, the other instance
// gets the same answer from the leader through the database; an unknown
// job is ErrUnknownJob on both.
func TestExplainInCluster(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := memback.New()
		defer b.Close()
		ctx := context.Background()
		release := make(chan struct{})
		var nodes []*fairsched.Scheduler
		for i := range 2 {
			s, err := fairsched.New(fairsched.WithCluster(b, fast("explain", fmt.Sprint("n", i), 1)), fairsched.WithMaxConcurrency(1))
			if err != nil {
				t.Fatal(err)
			}
			nodes = append(nodes, s)
			if err := s.RegisterType("build", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Minute}); err != nil {
				t.Fatal(err)
			}
			if err := s.RegisterHandler("build", func(ctx context.Context, j fairsched.Job) error {
				select {
				case <-release:
				case <-ctx.Done():
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		defer func() {
			close(release)
			for _, s := range nodes {
				if err := s.Close(ctx); err != nil {
					t.Error(err)
				}
			}
		}()
		for _, id := range []string{"first", "second"} {
			if err := nodes[1].Enqueue(ctx, "build", id, nil, fairsched.WithFairnessKey("team")); err != nil {
				t.Fatal(err)
			}
			time.Sleep(3 * time.Second) // a leader is elected, "first" is granted
			synctest.Wait()
		}
		var leader, follower *fairsched.Scheduler
		var started time.Time
		for _, s := range nodes {
			snap, err := s.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if snap.Cluster.Leading {
				leader, started = s, snap.Running[0].Started
			} else {
				follower = s
			}
		}
		if leader == nil || follower == nil {
			t.Fatal("no leader and follower")
		}
		fromLeader, err := leader.Explain(ctx, "build", "second")
		if err != nil {
			t.Fatal(err)
		}
		want := fairsched.Explanation{Type: "build", ID: "second", FairnessKey: "team", Submitted: fromLeader.Submitted,
			Reasons: []fairsched.Reason{fairsched.ReasonGlobalLimit}, Reason: fairsched.ReasonGlobalLimit,
			Blockers: []fairsched.Blocker{{Reason: fairsched.ReasonGlobalLimit, Key: strp("team"), Running: 1}},
			Estimate: &fairsched.StartEstimate{At: started.Add(time.Minute)},
			History:  []fairsched.WaitNote{{Reason: fairsched.ReasonGlobalLimit, Since: time.Now()}},
		}
		if diff := cmp.Diff(want, fromLeader); diff != "" {
			t.Errorf("the leader's Explain (-want +got):\n%s", diff)
		}
		fromFollower, err := follower.Explain(ctx, "build", "second")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(fromLeader, fromFollower); diff != "" {
			t.Errorf("the follower's Explain differs from the leader's (-leader +follower):\n%s", diff)
		}
		for _, s := range nodes {
			if _, err := s.Explain(ctx, "build", "nope"); !errors.Is(err, fairsched.ErrUnknownJob) {
				t.Errorf("Explain(build/nope) = %v, want ErrUnknownJob", err)
			}
		}
	})
}

func strp(s string) *string { return &s }

// TestDeadlineAdmissionInCluster (virtual time, in-memory backend): with
// the only slot held for a learned minute, a RunSync due in 30 s is
// refused at once with the leader's estimate, on the leader and on the
// other instance alike; one due in two minutes is queued and runs.
func TestDeadlineAdmissionInCluster(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := memback.New()
		defer b.Close()
		ctx := context.Background()
		release := make(chan struct{})
		var nodes []*fairsched.Scheduler
		for i := range 2 {
			s, err := fairsched.New(fairsched.WithCluster(b, fast("late", fmt.Sprint("n", i), 1)), fairsched.WithMaxConcurrency(1))
			if err != nil {
				t.Fatal(err)
			}
			nodes = append(nodes, s)
			if err := s.RegisterType("query", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Minute, DeadlineAdmission: true}); err != nil {
				t.Fatal(err)
			}
			if err := s.RegisterHandler("query", func(ctx context.Context, j fairsched.Job) error {
				select {
				case <-release:
				case <-ctx.Done():
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		defer func() {
			for _, s := range nodes {
				if err := s.Close(ctx); err != nil {
					t.Error(err)
				}
			}
		}()
		var events []<-chan fairsched.Event
		for _, s := range nodes {
			c, stop := s.Subscribe(256)
			defer stop()
			events = append(events, c)
		}
		if err := nodes[0].Enqueue(ctx, "query", "busy", nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second) // a leader is elected, "busy" is granted, the subscriptions are known
		synctest.Wait()
		for i, s := range nodes {
			due, cancel := context.WithTimeout(ctx, 30*time.Second)
			err := s.RunSync(due, "query", fmt.Sprint("q", i), "carol", func(context.Context) error { return nil })
			cancel()
			var late *fairsched.LateStartError
			if !errors.As(err, &late) || !errors.Is(err, fairsched.ErrOverloaded) {
				t.Fatalf("n%d: RunSync due in 30s behind a minute's job = %v, want a LateStartError", i, err)
			}
			if late.Estimate.Sub(late.Deadline) < 20*time.Second || late.Ahead != 0 {
				t.Errorf("n%d: refused with estimate %v after the deadline, %d ahead; want about 30s after, 0 ahead", i, late.Estimate.Sub(late.Deadline), late.Ahead)
			}
		}
		time.Sleep(time.Second) // the leader's events are relayed
		synctest.Wait()
		for i, c := range events {
			var got []string
			for len(c) > 0 {
				if r, ok := (<-c).(fairsched.JobRefused); ok {
					got = append(got, r.ID+" "+string(r.Reason))
				}
			}
			if diff := cmp.Diff([]string{"q0 start_after_deadline", "q1 start_after_deadline"}, got); diff != "" {
				t.Errorf("n%d: JobRefused events (-want +got):\n%s", i, diff)
			}
		}
		done := make(chan error, 1)
		go func() {
			due, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			done <- nodes[1].RunSync(due, "query", "patient", "carol", func(context.Context) error { return nil })
		}()
		time.Sleep(5 * time.Second)
		close(release)
		if err := <-done; err != nil {
			t.Errorf("RunSync due in 2 minutes: %v", err)
		}
	})
}
