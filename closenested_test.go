package fairsched_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
)

// TestGracefulCloseEndsANestedRunSyncDeadlock: a job that holds the only
// slot and waits in a nested RunSync (its own context) for a slot it holds
// itself can never end; a graceful Close — the quick start's
// defer s.Close(context.Background()) — drops the nested call (ErrClosed),
// so the job returns and Close with it, instead of waiting for ever.
func TestGracefulCloseEndsANestedRunSyncDeadlock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New(fairsched.WithMaxConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType("t", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4}); err != nil {
			t.Fatal(err)
		}
		nested := make(chan error, 1)
		outer := make(chan error, 1)
		go func() {
			outer <- s.RunSync(context.Background(), "t", "outer", "", func(ctx context.Context) error {
				err := s.RunSync(ctx, "t", "inner", "", func(context.Context) error { return nil })
				nested <- err
				return err
			})
		}()
		synctest.Wait() // the nested call waits for the slot its parent holds
		closed := make(chan error, 1)
		go func() { closed <- s.Close(context.Background()) }()
		select {
		case err := <-closed:
			if !errors.Is(err, fairsched.ErrClosed) {
				t.Errorf("Close = %v; want the dropped nested call counted (ErrClosed)", err)
			}
		case <-time.After(time.Hour):
			t.Fatal("graceful Close still waits after an hour") // it waited for ever
		}
		if err := <-nested; !errors.Is(err, fairsched.ErrClosed) {
			t.Errorf("nested RunSync = %v; want ErrClosed", err)
		}
		if err := <-outer; !errors.Is(err, fairsched.ErrClosed) {
			t.Errorf("outer RunSync = %v; want its nested call's ErrClosed", err)
		}
	})
}
