package fairsched_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
)

// TestMemoryReturnsAfterEviction: 100 000 background jobs over distinct
// fairness keys and ids run, their keys and estimates are evicted after
// the key TTL, and the heap in use returns to within 2× of the fresh
// scheduler's: the maps keyed by those strings gave their buckets back.
// (Before, the ledger's, the estimates', the queue's and the Supersede
// index's maps kept their peak size with nothing in them.)
func TestMemoryReturnsAfterEviction(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 100 000 jobs through the scheduler take a while; make check runs it")
	}
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New(fairsched.WithMaxConcurrency(64), fairsched.WithIdleExpiry(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(context.Background())
		if err := s.RegisterType("bg", fairsched.JobTypeConfig{DefaultCost: time.Millisecond, Priority: 8}); err != nil {
			t.Fatal(err)
		}
		fresh := heapInUse()
		nop := func(context.Context) error { return nil }
		for i := range 100_000 {
			if err := s.Submit("bg", fmt.Sprint("job-", i), nop, fairsched.WithFairnessKey(fmt.Sprint("client-", i))); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		peak := heapInUse()
		time.Sleep(3 * time.Minute) // past the TTL and its eviction ticks
		synctest.Wait()
		snap := snapshot(t, s)
		if len(snap.AccumulatedCost) > 1 || len(snap.CostEstimates) > 0 || len(snap.Pending)+len(snap.Running) > 0 {
			t.Fatalf("after eviction: %d keys, %d estimates, %d pending, %d running",
				len(snap.AccumulatedCost), len(snap.CostEstimates), len(snap.Pending), len(snap.Running))
		}
		after := heapInUse()
		t.Logf("heap in use: fresh %d KiB, peak %d KiB, after eviction %d KiB", fresh>>10, peak>>10, after>>10)
		if after > 2*fresh {
			t.Errorf("heap in use after eviction %d KiB, more than twice the fresh scheduler's %d KiB", after>>10, fresh>>10)
		}
	})
}

// TestCostEstimatesBounded: ids made fresh per job keep at most
// WithMaxCostEstimates estimates — the most recent ones — long before the
// idle expiry would drop them (what a dropped id is charged then:
// costmodel's TestEstimatesBounded).
func TestCostEstimatesBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := boundedScheduler(t, fairsched.WithMaxCostEstimates(3), "bg")
		for i := range 10 {
			if err := s.Submit("bg", fmt.Sprint("job-", i), func(context.Context) error {
				time.Sleep(time.Duration(i+1) * time.Millisecond)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			time.Sleep(time.Second) // one at a time: each is the most recent in turn
			synctest.Wait()
		}
		snap := snapshot(t, s)
		type est struct {
			ID   string
			Cost time.Duration
		}
		var got []est
		for _, e := range snap.CostEstimates {
			got = append(got, est{e.ID, e.Cost})
		}
		slices.SortFunc(got, func(a, b est) int { return strings.Compare(a.ID, b.ID) })
		// The first observation of an id smooths from the type's default:
		// 0.3·observed + 0.7·1s.
		smooth := func(ms int) time.Duration { return 700*time.Millisecond + time.Duration(ms)*300*time.Microsecond }
		want := []est{{"job-7", smooth(8)}, {"job-8", smooth(9)}, {"job-9", smooth(10)}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("estimates kept (-want +got):\n%s", diff)
		}
		if snap.EstimatesTotal != 3 {
			t.Errorf("EstimatesTotal %d, want 3", snap.EstimatesTotal)
		}
	})
}

// TestIdleKeysBounded: fairness keys made fresh per request keep at most
// WithMaxIdleKeys idle keys — the most recently used — long before the
// idle expiry would drop them; a pushed-out key returns at the floor
// (costmodel's TestLedgerBoundsIdleKeys).
func TestIdleKeysBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := boundedScheduler(t, fairsched.WithMaxIdleKeys(3), "fg")
		for i := range 10 {
			key := fmt.Sprint("request-", i)
			if err := s.RunSync(context.Background(), "fg", "same", key, func(context.Context) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
		snap := snapshot(t, s)
		var keys []string
		for k := range snap.AccumulatedCost {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if diff := cmp.Diff([]string{"request-7", "request-8", "request-9"}, keys); diff != "" {
			t.Errorf("keys kept (-want +got):\n%s", diff)
		}
	})
}

// boundedScheduler is a scheduler with opt and one type typ (a second's
// default cost), closed when the test ends.
func boundedScheduler(t *testing.T, opt fairsched.Option, typ fairsched.JobType) *fairsched.Scheduler {
	t.Helper()
	s := newScheduler(t, opt)
	if err := s.RegisterType(typ, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8}); err != nil {
		t.Fatal(err)
	}
	return s
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}
