package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/fairschedtest"
)

// TestLeakedContextStaysEnded: a job's context that a goroutine keeps after
// the job ended is cancelled and stays so while later jobs reuse the
// scheduler's job records.
func TestLeakedContextStaysEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := fairschedtest.New(t, fairsched.WithMaxConcurrency(2))
		if err := s.RegisterType("bg", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 2}); err != nil {
			t.Fatal(err)
		}
		kept := make(chan context.Context, 1)
		if err := s.Submit("bg", "leaks", func(ctx context.Context) error { kept <- ctx; return nil }); err != nil {
			t.Fatal(err)
		}
		ctx := <-kept
		fairschedtest.WaitIdle(t, s)
		for i := range 100 {
			if err := s.Submit("bg", fmt.Sprint("next-", i), func(context.Context) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
		fairschedtest.WaitIdle(t, s)
		if !errors.Is(ctx.Err(), context.Canceled) {
			t.Fatalf("a kept context after its job ended: %v", ctx.Err())
		}
		select {
		case <-ctx.Done():
		default:
			t.Fatal("a kept context's Done is open after its job ended")
		}
	})
}
