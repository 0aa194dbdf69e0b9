package fairsched_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
)

// TestGracefulCloseDropsJobsNoWorkerCanTake: jobs of a worker type that no
// registered slot takes can never run once Close refuses new workers: a
// graceful Close drops them (ErrClosed to their callers, in Close's error)
// instead of waiting for ever.
func TestGracefulCloseDropsJobsNoWorkerCanTake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New()
		if err != nil {
			t.Fatal(err)
		}
		for typ, cfg := range map[fairsched.JobType]fairsched.JobTypeConfig{
			"render": {DefaultCost: time.Second, Priority: 1, RequiresWorker: true},
			"mail":   {DefaultCost: time.Second, Priority: 1},
		} {
			if err := s.RegisterType(typ, cfg); err != nil {
				t.Fatal(err)
			}
		}
		nop := func(context.Context) error { return nil }
		if err := s.Submit("render", "bg", nop); err != nil {
			t.Fatal(err)
		}
		waited := make(chan error, 1)
		go func() { waited <- s.RunSync(context.Background(), "render", "fg", "", nop) }()
		synctest.Wait()
		mailed := false
		if err := s.Submit("mail", "m", func(context.Context) error { mailed = true; return nil }); err != nil {
			t.Fatal(err)
		}
		err = s.Close(context.Background())
		if !errors.Is(err, fairsched.ErrClosed) {
			t.Errorf("Close = %v; want the dropped jobs reported (ErrClosed)", err)
		}
		if err := <-waited; !errors.Is(err, fairsched.ErrClosed) {
			t.Errorf("RunSync of a workerless type = %v; want ErrClosed", err)
		}
		if !mailed {
			t.Error("the job that could run did not drain")
		}
	})
}
