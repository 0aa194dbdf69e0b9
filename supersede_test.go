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

// TestSupersedeReplacesEveryPendingJob: a Supersede replaces every pending
// background job of its (type, id) — one in its retry's backoff and one
// waiting for the slot — not only the latest (the older one ran): only the
// new job runs after it, and each replaced job has its JobSuperseded event.
func TestSupersedeReplacesEveryPendingJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			"t": {DefaultCost: time.Second, Priority: 1},
		}, fairsched.WithMaxConcurrency(1))
		events, stop := s.Subscribe(64)
		runs := map[string]int{}
		job := func(name string, err error) func(context.Context) error {
			return func(context.Context) error { runs[name]++; return err }
		}
		retry := fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: 10 * time.Second, MaxBackoff: 10 * time.Second})
		if err := s.Submit("t", "x", job("backoff", errors.New("fails")), retry); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // its first attempt failed: it waits for its retry
		hold := newBlocker()
		if err := s.Submit("t", "hold", hold.fn); err != nil {
			t.Fatal(err)
		}
		<-hold.started
		if err := s.Submit("t", "x", job("waiting", nil)); err != nil {
			t.Fatal(err)
		}
		if err := s.Submit("t", "x", job("new", nil), fairsched.Supersede()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the Supersede is handled while the slot is held
		hold.release <- nil
		time.Sleep(time.Minute)
		synctest.Wait()
		stop()
		superseded := 0
		for e := range events {
			if e, ok := e.(fairsched.JobSuperseded); ok && e.ID == "x" {
				superseded++
			}
		}
		got := struct {
			Runs       map[string]int
			Superseded int
		}{runs, superseded}
		want := struct {
			Runs       map[string]int
			Superseded int
		}{map[string]int{"backoff": 1, "new": 1}, 2}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("outcome (-want +got):\n%s", diff)
		}
	})
}
