package fairsched_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/benchratio"
	"go.uber.org/goleak"
	"golang.org/x/sync/semaphore"
)

// End-to-end overhead of the scheduler against the least a concurrency cap
// can cost: a golang.org/x/sync/semaphore runner with the same cap. Jobs do
// nothing, so what is measured is the cost of the machinery per job.

const benchJobType fairsched.JobType = "bench"

var benchIDs = func() []string {
	ids := make([]string, 1024)
	for i := range ids {
		ids[i] = fmt.Sprintf("repo-%04d", i)
	}
	return ids
}()

var benchCaps = []int{4, 64}

// newBenchScheduler starts a scheduler whose only limit is the global cap c
// (the tier cap, the priority value, is c too).
func newBenchScheduler(b *testing.B, c int) *fairsched.Scheduler {
	b.Helper()
	s, err := fairsched.New(fairsched.WithMaxConcurrency(c))
	if err != nil {
		b.Fatal(err)
	}
	err = s.RegisterType(benchJobType, fairsched.JobTypeConfig{DefaultCost: time.Millisecond, Priority: fairsched.Priority(c)})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// closeBenchScheduler closes s and fails b if any goroutine started since
// ignore was taken is left.
func closeBenchScheduler(b *testing.B, s *fairsched.Scheduler, ignore goleak.Option) {
	b.Helper()
	if err := s.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	goleak.VerifyNone(b, ignore)
}

// BenchmarkThroughput submits b.N background jobs and waits until all have
// completed: through the scheduler (Submit) or through a semaphore runner
// (Acquire; go func() { fn(); Release }()). The scheduler's Close is timed
// too: it returns once the last completion is accounted for. The scheduler
// sub-benchmarks report vs-semaphore: their ns/op over the median ns/op of
// the semaphore at the same cap.
func BenchmarkThroughput(b *testing.B) {
	for _, c := range benchCaps {
		sem := fmt.Sprintf("semaphore/cap=%d", c)
		b.Run(sem, func(b *testing.B) {
			var wg sync.WaitGroup
			wg.Add(b.N)
			fn := func(context.Context) error { wg.Done(); return nil }
			ctx := context.Background()
			w := semaphore.NewWeighted(int64(c))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := w.Acquire(ctx, 1); err != nil {
					b.Fatal(err)
				}
				go func() {
					_ = fn(ctx)
					w.Release(1)
				}()
			}
			wg.Wait()
			if err := w.Acquire(ctx, int64(c)); err != nil { // every goroutine released
				b.Fatal(err)
			}
			b.StopTimer()
			book.Record(b, "throughput/"+sem)
		})
		b.Run(fmt.Sprintf("scheduler/cap=%d", c), func(b *testing.B) {
			ignore := goleak.IgnoreCurrent()
			s := newBenchScheduler(b, c)
			var wg sync.WaitGroup
			wg.Add(b.N)
			fn := func(context.Context) error { wg.Done(); return nil }
			b.ReportAllocs()
			mallocs := countMallocs()
			b.ResetTimer()
			for i := range b.N {
				if err := s.Submit(benchJobType, benchIDs[i%len(benchIDs)], fn); err != nil {
					b.Fatal(err)
				}
			}
			wg.Wait()
			perJob := mallocs(b.N) // before Close, whose leak check allocates
			closeBenchScheduler(b, s, ignore)
			b.ReportMetric(perJob, "allocs/job")
			ns := book.Record(b, "")
			if base := book.Median("throughput/" + sem); base > 0 {
				b.ReportMetric(ns/base, "vs-semaphore")
			}
		})
	}
}

// runSyncParallelism × GOMAXPROCS goroutines call RunSync at once.
const runSyncParallelism = 32

// BenchmarkRunSync: many goroutines each run jobs synchronously, through the
// scheduler's RunSync (one fairness key per goroutine) or through semaphore
// Acquire / run / Release. The scheduler sub-benchmarks report vs-semaphore
// as BenchmarkThroughput does.
func BenchmarkRunSync(b *testing.B) {
	noop := func(context.Context) error { return nil }
	for _, c := range benchCaps {
		sem := fmt.Sprintf("semaphore/cap=%d", c)
		b.Run(sem, func(b *testing.B) {
			w := semaphore.NewWeighted(int64(c))
			b.ReportAllocs()
			b.SetParallelism(runSyncParallelism)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				for pb.Next() {
					if err := w.Acquire(ctx, 1); err != nil {
						b.Error(err)
						return
					}
					_ = noop(ctx)
					w.Release(1)
				}
			})
			b.StopTimer()
			book.Record(b, "runsync/"+sem)
		})
		b.Run(fmt.Sprintf("scheduler/cap=%d", c), func(b *testing.B) {
			ignore := goleak.IgnoreCurrent()
			s := newBenchScheduler(b, c)
			b.ReportAllocs()
			mallocs := countMallocs()
			runSyncClients(b, s)
			perCall := mallocs(b.N) // before Close, whose leak check allocates
			closeBenchScheduler(b, s, ignore)
			b.ReportMetric(perCall, "allocs/job")
			ns := book.Record(b, "")
			if base := book.Median("runsync/" + sem); base > 0 {
				b.ReportMetric(ns/base, "vs-semaphore")
			}
		})
	}
}

// runSyncClients times RunSync calls of no-op jobs on s by
// runSyncParallelism callers per CPU, each its own fairness key, cycling
// through benchIDs.
func runSyncClients(b *testing.B, s *fairsched.Scheduler) {
	var clients atomic.Int64
	noop := func(context.Context) error { return nil }
	b.SetParallelism(runSyncParallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		n := int(clients.Add(1))
		key := fmt.Sprintf("client-%d", n)
		for i := n; pb.Next(); i++ {
			if err := s.RunSync(ctx, benchJobType, benchIDs[i%len(benchIDs)], key, noop); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// book keeps ns/op per sub-benchmark across -count repetitions, so a later
// sub-benchmark can report its ratio to an earlier one.
var book = benchratio.Book{MinElapsed: 100 * time.Millisecond}

// countMallocs starts counting the heap allocations of the process and
// returns the function that reports their mean over n jobs: the exact mean,
// where allocs/op is rounded down to an integer. (Everything the process
// allocates meanwhile counts, the benchmark's own goroutines included.)
func countMallocs() func(n int) float64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	start := m.Mallocs
	return func(n int) float64 {
		runtime.ReadMemStats(&m)
		return float64(m.Mallocs-start) / float64(n)
	}
}

// BenchmarkRunSyncAfterManyGroups: a RunSync in a weighted group, on a
// scheduler that has seen no other group name, then on one that has seen
// 50 000 (one job each, all ended). Reallocation walks only the groups with
// work, so the ratio x-vs-fresh stays near 1 (it was 1.09 ms against 62 µs
// after 20 000 names, and 3.39 ms after 50 000).
func BenchmarkRunSyncAfterManyGroups(b *testing.B) {
	for _, seen := range []int{0, 50_000} {
		b.Run(fmt.Sprintf("groups-seen=%d", seen), func(b *testing.B) {
			s, err := fairsched.New(fairsched.WithMaxConcurrency(8), fairsched.WithGroupWeight("api", 2))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close(context.Background())
			if err := s.RegisterType(benchJobType, fairsched.JobTypeConfig{DefaultCost: time.Millisecond, Priority: 8}); err != nil {
				b.Fatal(err)
			}
			nop := func(context.Context) error { return nil }
			ctx := context.Background()
			for i := range seen {
				if err := s.RunSync(ctx, benchJobType, "x", "", nop, fairsched.InGroup(fmt.Sprint("tenant-", i))); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for b.Loop() {
				if err := s.RunSync(ctx, benchJobType, "x", "k", nop, fairsched.InGroup("api")); err != nil {
					b.Fatal(err)
				}
			}
			ns := book.Record(b, fmt.Sprint("groups-seen/", seen))
			if base := book.Median("groups-seen/0"); seen > 0 && base > 0 {
				b.ReportMetric(ns/base, "x-vs-fresh")
			}
		})
	}
}
