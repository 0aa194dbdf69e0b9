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

// TestCloseFromInsideAJobWithAnotherContext: a job that closes its own
// scheduler with a context of its own making — context.Background(), or one
// with a deadline — gets ErrCloseInJob instead of waiting for itself for ever
// (with a deadline too: the abort waited for the running jobs, the caller
// among them). The scheduler is closed: the job returns, the scheduler stops.
func TestCloseFromInsideAJobWithAnotherContext(t *testing.T) {
	for name, mk := range map[string]func() (context.Context, context.CancelFunc){
		"background": func() (context.Context, context.CancelFunc) { return context.Background(), func() {} },
		"deadline": func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Second)
		},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, err := fairsched.New()
				if err != nil {
					t.Fatal(err)
				}
				if err := s.RegisterType("t", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 2}); err != nil {
					t.Fatal(err)
				}
				closed := make(chan error, 2)
				started, both := make(chan struct{}, 2), make(chan struct{})
				job := func(context.Context) error {
					started <- struct{}{}
					<-both // both jobs run: neither Close can end the scheduler under the other
					ctx, cancel := mk()
					defer cancel()
					closed <- s.Close(ctx)
					return nil
				}
				done := make(chan error, 1)
				go func() { done <- s.RunSync(context.Background(), "t", "fg", "", job) }()
				if err := s.Submit("t", "bg", job); err != nil {
					t.Fatal(err)
				}
				<-started
				<-started
				close(both)
				for range 2 {
					select {
					case err := <-closed:
						if !errors.Is(err, fairsched.ErrCloseInJob) {
							t.Errorf("Close from inside a job = %v; want ErrCloseInJob", err)
						}
					case <-time.After(time.Minute):
						t.Fatal("Close from inside a job still waits after a minute") // it would wait for ever
					}
				}
				if err := <-done; err != nil {
					t.Errorf("RunSync = %v", err)
				}
				if err := s.Close(context.Background()); err != nil {
					t.Errorf("Close from outside = %v", err)
				}
				if err := s.Submit("t", "after", job); !errors.Is(err, fairsched.ErrClosed) {
					t.Errorf("Submit after Close = %v; want ErrClosed", err)
				}
			})
		})
	}
}
