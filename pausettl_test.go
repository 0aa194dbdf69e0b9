package fairsched_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
)

// TestPauseFreezesTTL is spec 2's "freeze while paused, same as TTL freeze"
// through the public API: one slot is taken for 100 s, so jobs with a TTL
// of 10 s can only expire. A job whose group is paused from 2 s to 32 s —
// three times its TTL — does not expire while paused, and expires after 10 s
// of unpaused waiting: at 40 s. Its type's QueueTimeout stands still the
// same way; a job of another group expires at 10 s.
func TestPauseFreezesTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New(fairsched.WithMaxConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		for typ, cfg := range map[fairsched.JobType]fairsched.JobTypeConfig{
			"work":  {DefaultCost: time.Second, Priority: 1},
			"timed": {DefaultCost: time.Second, Priority: 1, QueueTimeout: 10 * time.Second},
		} {
			if err := s.RegisterType(typ, cfg); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		hold := newBlocker()
		if err := s.Submit("work", "hold", hold.fn); err != nil {
			t.Fatal(err)
		}
		<-hold.started
		type outcome struct {
			Job     string
			Expired bool
			At      time.Duration
		}
		results := make(chan outcome, 3)
		wait := func(name string, typ fairsched.JobType, opts ...fairsched.JobOption) {
			go func() {
				err := s.RunSync(context.Background(), typ, name, "", func(context.Context) error { return nil }, opts...)
				results <- outcome{name, errors.Is(err, fairsched.ErrExpired), time.Since(start)}
			}()
		}
		wait("paused-ttl", "work", fairsched.InGroup("g"), fairsched.WithQueueTimeout(10*time.Second))
		wait("paused-timeout", "timed", fairsched.InGroup("g"))
		wait("other", "work", fairsched.InGroup("h"), fairsched.WithQueueTimeout(10*time.Second))
		time.Sleep(2 * time.Second)
		if err := s.PauseGroup("g"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Second)
		if err := s.ResumeGroup("g"); err != nil {
			t.Fatal(err)
		}
		var got []outcome
		for range 3 {
			got = append(got, <-results)
		}
		hold.release <- nil
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := []outcome{
			{"other", true, 10 * time.Second},
			{"paused-timeout", true, 40 * time.Second},
			{"paused-ttl", true, 40 * time.Second},
		}
		if got[1].Job > got[2].Job {
			got[1], got[2] = got[2], got[1]
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("outcomes (-want +got):\n%s", diff)
		}
	})
}

// TestPauseFreezesCoalescedWaitersTTL: RunSync callers that share one
// coalesced run each keep their own time to live, and like the run's it
// stands still while the run's group is paused. The only slot is taken
// for 100 s; group g is paused from 2 s to 32 s. A waiter of 5 s that
// joined at 0 expires at 35 s, one of 20 s at 50 s, and one of 5 s that
// joined during the pause, at 10 s, waits 5 s from the resume: 37 s. A
// waiter of group h, not paused, expires at 5 s.
func TestPauseFreezesCoalescedWaitersTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			"hold":  {DefaultCost: time.Second, Priority: 1},
			"fetch": {DefaultCost: time.Second, Priority: 1, Coalesce: true},
		}, fairsched.WithMaxConcurrency(1))
		hold := newBlocker()
		if err := s.Submit("hold", "h", hold.fn); err != nil {
			t.Fatal(err)
		}
		<-hold.started
		start := time.Now()
		type outcome struct {
			Waiter  string
			Expired bool
			At      time.Duration
		}
		results := make(chan outcome, 4)
		wait := func(name, id, group string, ttl time.Duration) {
			go func() {
				err := s.RunSync(context.Background(), "fetch", id, "", func(context.Context) error { return nil },
					fairsched.InGroup(group), fairsched.WithQueueTimeout(ttl))
				results <- outcome{name, errors.Is(err, fairsched.ErrExpired), time.Since(start)}
			}()
			synctest.Wait()
		}
		wait("g-5s", "repo", "g", 5*time.Second)
		wait("g-20s", "repo", "g", 20*time.Second)
		wait("h-5s", "other", "h", 5*time.Second)
		time.Sleep(2 * time.Second)
		if err := s.PauseGroup("g"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(8 * time.Second)
		wait("g-5s-late", "repo", "g", 5*time.Second)
		time.Sleep(22 * time.Second)
		if err := s.ResumeGroup("g"); err != nil {
			t.Fatal(err)
		}
		var got []outcome
		for range 4 {
			got = append(got, <-results)
		}
		hold.release <- nil
		want := []outcome{
			{"h-5s", true, 5 * time.Second},
			{"g-5s", true, 35 * time.Second},
			{"g-5s-late", true, 37 * time.Second},
			{"g-20s", true, 50 * time.Second},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("outcomes (-want +got):\n%s", diff)
		}
	})
}
