package fairsched_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
)

// TestCloseFromInsideAJob: a job that closes its own scheduler with its
// context (or one derived from it, with a deadline) gets ErrCloseInJob at
// once instead of waiting for itself for ever; the scheduler stays open and
// closes normally from outside.
func TestCloseFromInsideAJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType("t", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		var inside []error
		done := make(chan error, 1)
		go func() {
			done <- s.RunSync(context.Background(), "t", "closer", "", func(ctx context.Context) error {
				dctx, cancel := context.WithTimeout(ctx, time.Second)
				defer cancel()
				inside = append(inside, s.Close(dctx), s.Close(ctx))
				return nil
			})
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("RunSync = %v", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("Close from inside the job still waits after a minute") // it would wait for ever
		}
		for i, err := range inside {
			if !errors.Is(err, fairsched.ErrCloseInJob) {
				t.Errorf("Close %d from inside the job = %v; want ErrCloseInJob", i+1, err)
			}
		}
		if err := s.RunSync(context.Background(), "t", "after", "", func(context.Context) error { return nil }); err != nil {
			t.Errorf("RunSync after the refused Close = %v; want nil", err)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("Close from outside = %v", err)
		}
	})
}
