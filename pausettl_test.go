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
		wait("paused-ttl", "work", fairsched.InGroup("g"), fairsched.WithTTL(10*time.Second))
		wait("paused-timeout", "timed", fairsched.InGroup("g"))
		wait("other", "work", fairsched.InGroup("h"), fairsched.WithTTL(10*time.Second))
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
