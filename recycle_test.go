package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
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

// TestSubmitAllocatesLessThanOnceAJob: a backlog of background jobs that
// grows behind a held slot — the case where every job needs a record of
// its own — and then runs down costs less than one heap allocation per
// job in all (the scheduler's records and attempt contexts are made in
// blocks; the caller's function is shared here; nobody subscribes to
// events, which are allocated for their subscribers). Without the blocks it
// was two a job: the record and the attempt's context.
func TestSubmitAllocatesLessThanOnceAJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := fairschedtest.New(t, fairsched.WithMaxConcurrency(1))
		if err := s.RegisterType("bg", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		if err := s.Submit("bg", "holder", func(context.Context) error { <-release; return nil }); err != nil {
			t.Fatal(err)
		}
		ids := make([]string, 1024)
		for i := range ids {
			ids[i] = fmt.Sprint("id-", i)
		}
		const jobs = 20_000
		var ran atomic.Int64
		all := make(chan struct{})
		count := func(context.Context) error {
			if ran.Add(1) == jobs {
				close(all)
			}
			return nil
		}
		synctest.Wait()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		start := m.Mallocs
		for i := range jobs {
			if err := s.Submit("bg", ids[i%len(ids)], count); err != nil {
				t.Fatal(err)
			}
		}
		close(release)
		<-all
		synctest.Wait() // the owner has taken the last completion
		runtime.ReadMemStats(&m)
		perJob := float64(m.Mallocs-start) / jobs
		t.Logf("%.3f allocations a job", perJob)
		if perJob >= 1 {
			t.Fatalf("%.3f heap allocations a job, want fewer than one", perJob)
		}
	})
}
