package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
)

// TestClosedLoopClientKeepsItsHistory is issue 13's measurement through the
// public API, in virtual time: one slot; client A sends one 10 s clone at a
// time (a RunSync loop, as an HTTP client that waits for each answer), client
// B keeps 400 clones of 1 s queued. Over 300 s each must get half the slot
// (150 s ± 20 %). Before returning keys kept their history, A restarted at the
// floor between its requests and took 250 s.
func TestClosedLoopClientKeepsItsHistory(t *testing.T) {
	const horizon = 300 * time.Second
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New(fairsched.WithMaxConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType(clone, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		service := map[string]time.Duration{}
		// Jobs write service one at a time (one slot); the test reads it after
		// Close, when every function has returned.
		run := func(key string, d time.Duration) func(context.Context) error {
			return func(ctx context.Context) error {
				began := time.Now()
				select {
				case <-time.After(d):
				case <-ctx.Done():
				}
				end := time.Now()
				if limit := start.Add(horizon); end.After(limit) {
					end = limit
				}
				if end.After(began) {
					service[key] += end.Sub(began)
				}
				return ctx.Err()
			}
		}
		for i := range 400 {
			if err := s.Submit(clone, fmt.Sprintf("small-%d", i), run("B", time.Second), fairsched.WithFairnessKey("B")); err != nil {
				t.Fatal(err)
			}
		}
		loopDone := make(chan int, 1)
		go func() {
			n := 0
			for time.Since(start) < horizon {
				if err := s.RunSync(context.Background(), clone, "linux", "A", run("A", 10*time.Second)); err != nil {
					break
				}
				n++
			}
			loopDone <- n
		}()
		time.Sleep(horizon)

		ctx, cancel := context.WithCancel(context.Background())
		cancel() // drop what is left, cancel what runs
		if err := s.Close(ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("Close: %v", err)
		}
		<-loopDone
		// Every function has returned: the job running at the horizon counted
		// up to it.
		got := map[string]time.Duration{"A": service["A"], "B": service["B"]}
		t.Logf("service in %v: %v", horizon, got)

		want := 150 * time.Second
		for _, k := range []string{"A", "B"} {
			if d := got[k] - want; d < -want/5 || d > want/5 {
				t.Errorf("client %s got %v of service in %v; want %v ± 20%% (all: %v)", k, got[k], horizon, want, got)
			}
		}
		if diff := cmp.Diff(horizon, got["A"]+got["B"]); diff != "" {
			t.Errorf("the slot was not always busy (-want +got):\n%s", diff)
		}
	})
}
