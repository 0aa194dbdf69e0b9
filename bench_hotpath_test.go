package fairsched_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/boltstore"
)

// The floor of the design, and what the hot path costs beside it: a job's
// distinct id, bulk calls, the memory of a pending job.

// floorActor is the least an owner goroutine can be: it takes a request,
// answers it, and takes a completion — the three hops of a RunSync (submit,
// admit, done) with nothing decided. BenchmarkActorFloor measures it.
type floorActor struct {
	requests chan chan struct{}
	done     chan struct{}
	stop     chan struct{}
	running  int
}

func startFloorActor() *floorActor {
	a := &floorActor{requests: make(chan chan struct{}, 256), done: make(chan struct{}, 256), stop: make(chan struct{})}
	go func() {
		for {
			select {
			case reply := <-a.requests:
				a.running++
				reply <- struct{}{}
			case <-a.done:
				a.running--
			case <-a.stop:
				return
			}
		}
	}()
	return a
}

// BenchmarkActorFloor: 64 callers (as BenchmarkRunSync) each send a
// request with its reply channel (reused), wait for the answer, run a no-op
// and send a completion: a RunSync through a bare owner goroutine. It is
// the baseline of RunSync at cap 64 (vs-floor), where the semaphore never
// blocks.
func BenchmarkActorFloor(b *testing.B) {
	a := startFloorActor()
	defer close(a.stop)
	noop := func(context.Context) error { return nil }
	b.ReportAllocs()
	b.SetParallelism(runSyncParallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		reply := make(chan struct{}, 1)
		ctx := context.Background()
		for pb.Next() {
			a.requests <- reply
			<-reply
			_ = noop(ctx)
			a.done <- struct{}{}
		}
	})
	b.StopTimer()
	book.Record(b, "floor")
}

// BenchmarkRunSyncVsFloor: RunSync at cap 64 with 64 callers against the
// actor floor measured in the same run (vs-floor).
func BenchmarkRunSyncVsFloor(b *testing.B) {
	ignore := goleak.IgnoreCurrent()
	s := newBenchScheduler(b, 64)
	b.ReportAllocs()
	runSyncClients(b, s)
	closeBenchScheduler(b, s, ignore)
	ns := book.Record(b, "")
	if base := book.Median("floor"); base > 0 {
		b.ReportMetric(ns/base, "vs-floor")
	}
}

// BenchmarkDistinctIDs: Throughput at cap 4 and 64 with a new job id for
// every submission (each a new cost estimate), against the 1 024 repeated
// ids of BenchmarkThroughput measured just before it (x-vs-repeated).
func BenchmarkDistinctIDs(b *testing.B) {
	for _, c := range benchCaps {
		for _, distinct := range []bool{false, true} {
			name := fmt.Sprintf("repeated/cap=%d", c)
			if distinct {
				name = fmt.Sprintf("distinct/cap=%d", c)
			}
			b.Run(name, func(b *testing.B) {
				ids := benchIDs
				if distinct {
					ids = make([]string, b.N)
					for i := range ids {
						ids[i] = "job-" + strconv.Itoa(i)
					}
				}
				ignore := goleak.IgnoreCurrent()
				s := newBenchScheduler(b, c)
				var wg sync.WaitGroup
				wg.Add(b.N)
				fn := func(context.Context) error { wg.Done(); return nil }
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					if err := s.Submit(benchJobType, ids[i%len(ids)], fn); err != nil {
						b.Fatal(err)
					}
				}
				wg.Wait()
				closeBenchScheduler(b, s, ignore)
				ns := book.Record(b, "ids/"+name)
				if base := book.Median(fmt.Sprintf("ids/repeated/cap=%d", c)); distinct && base > 0 {
					b.ReportMetric(ns/base, "x-vs-repeated")
				}
			})
		}
	}
}

// bulkBatch is the number of jobs per SubmitMany or EnqueueMany call.
const bulkBatch = 64

// BenchmarkBulk: one producer queues b.N background jobs with Submit, then
// with SubmitMany in batches of 64, and waits for all to run (cap 64);
// then durable jobs with Enqueue and EnqueueMany on a bbolt file. The
// batched sub-benchmarks report x-faster: the single calls' time per job
// over theirs.
func BenchmarkBulk(b *testing.B) {
	for _, durable := range []bool{false, true} {
		for _, batched := range []bool{false, true} {
			kind := map[bool]string{false: "submit", true: "enqueue"}[durable]
			name := kind + "/single"
			if batched {
				name = kind + "/many"
			}
			b.Run(name, func(b *testing.B) {
				opts := []fairsched.Option{fairsched.WithMaxConcurrency(64)}
				if durable {
					st, err := boltstore.Open(filepath.Join(b.TempDir(), "bench.db"))
					if err != nil {
						b.Fatal(err)
					}
					defer st.Close()
					opts = append(opts, fairsched.WithStore(st))
				}
				s, err := fairsched.New(opts...)
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close(context.Background())
				if err := s.RegisterType(benchJobType, fairsched.JobTypeConfig{DefaultCost: time.Millisecond, Priority: 64}); err != nil {
					b.Fatal(err)
				}
				var wg sync.WaitGroup
				wg.Add(b.N)
				fn := func(context.Context) error { wg.Done(); return nil }
				if durable {
					if err := s.RegisterHandler(benchJobType, func(context.Context, fairsched.Job) error { wg.Done(); return nil }); err != nil {
						b.Fatal(err)
					}
				}
				ctx := context.Background()
				subs := make([]fairsched.Submission, 0, bulkBatch)
				encs := make([]fairsched.Enqueueing, 0, bulkBatch)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i += bulkBatch {
					n := min(bulkBatch, b.N-i)
					var err error
					switch {
					case !batched:
						for k := range n {
							id := benchIDs[(i+k)%len(benchIDs)]
							if durable {
								id = strconv.Itoa(i + k) // unique among unfinished durable jobs
								err = s.Enqueue(ctx, benchJobType, id, nil)
							} else {
								err = s.Submit(benchJobType, id, fn)
							}
							if err != nil {
								break
							}
						}
					case durable:
						encs = encs[:0]
						for k := range n {
							encs = append(encs, fairsched.Enqueueing{Type: benchJobType, ID: strconv.Itoa(i + k)})
						}
						err = s.EnqueueMany(ctx, encs)
					default:
						subs = subs[:0]
						for k := range n {
							subs = append(subs, fairsched.Submission{Type: benchJobType, ID: benchIDs[(i+k)%len(benchIDs)], Fn: fn})
						}
						err = s.SubmitMany(subs)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				wg.Wait()
				b.StopTimer()
				ns := book.Record(b, "bulk/"+name)
				if base := book.Median("bulk/" + kind + "/single"); batched && base > 0 {
					b.ReportMetric(base/ns, "x-faster")
				}
			})
		}
	}
}

// BenchmarkBulkQueue: what one message for N jobs saves where it can
// show — queueing alone, with nothing run. One producer queues background
// jobs behind a job that holds the only slot, with Submit, then with
// SubmitMany in batches of 64, in rounds of 32 768; a round is timed until
// the owner has taken all its jobs (a Cancel after them answers once it
// has), and the jobs run, untimed, before the next. The batched
// sub-benchmark reports x-faster as BenchmarkBulk does.
func BenchmarkBulkQueue(b *testing.B) {
	const round = 1 << 15
	for _, batched := range []bool{false, true} {
		name := map[bool]string{false: "single", true: "many"}[batched]
		b.Run(name, func(b *testing.B) {
			ignore := goleak.IgnoreCurrent()
			s := newBenchScheduler(b, 1)
			ctx := context.Background()
			fn := func(context.Context) error { return nil }
			subs := make([]fairsched.Submission, 0, bulkBatch)
			b.ReportAllocs()
			b.ResetTimer()
			b.StopTimer()
			for queued := 0; queued < b.N; {
				release, ended := make(chan struct{}), make(chan struct{})
				if err := s.Submit(benchJobType, "holder", func(context.Context) error { <-release; return nil }); err != nil {
					b.Fatal(err)
				}
				n := min(round, b.N-queued)
				b.StartTimer()
				for i := 0; i < n; i += bulkBatch {
					var err error
					k := min(bulkBatch, n-i)
					if batched {
						subs = subs[:0]
						for x := range k {
							subs = append(subs, fairsched.Submission{Type: benchJobType, ID: benchIDs[(i+x)%len(benchIDs)], Fn: fn})
						}
						err = s.SubmitMany(subs)
					} else {
						for x := range k {
							if err = s.Submit(benchJobType, benchIDs[(i+x)%len(benchIDs)], fn); err != nil {
								break
							}
						}
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				if c, err := s.Cancel(ctx, benchJobType, "no such job"); err != nil || !c.None() {
					b.Fatalf("Cancel of no job: %+v, %v", c, err)
				}
				b.StopTimer()
				if err := s.Submit(benchJobType, "last", func(context.Context) error { close(ended); return nil }); err != nil {
					b.Fatal(err)
				}
				close(release)
				<-ended
				queued += n
			}
			closeBenchScheduler(b, s, ignore)
			ns := book.Record(b, "bulkqueue/"+name)
			if base := book.Median("bulkqueue/single"); batched && base > 0 {
				b.ReportMetric(base/ns, "x-faster")
			}
		})
	}
}

// BenchmarkPendingMemory: the heap a pending job holds. 100 000 background
// jobs (all sharing one function, so no closure is counted) wait behind a
// job that holds the one slot; B/pending is the heap in use, after a
// collection, over the jobs, less the same scheduler's heap with none
// pending. b.N is not used: one measurement per run.
func BenchmarkPendingMemory(b *testing.B) {
	const pending = 100_000
	for range b.N {
		s, err := fairsched.New(fairsched.WithMaxConcurrency(1))
		if err != nil {
			b.Fatal(err)
		}
		if err := s.RegisterType(benchJobType, fairsched.JobTypeConfig{DefaultCost: time.Millisecond, Priority: 1}); err != nil {
			b.Fatal(err)
		}
		release := make(chan struct{})
		if err := s.Submit(benchJobType, "hold", func(context.Context) error { <-release; return nil }); err != nil {
			b.Fatal(err)
		}
		noop := func(context.Context) error { return nil }
		before := heapInUse()
		for i := range pending {
			if err := s.Submit(benchJobType, benchIDs[i%len(benchIDs)], noop, fairsched.WithFairnessKey(benchIDs[i%100])); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := s.Snapshot(context.Background(), fairsched.SnapshotRows(1)); err != nil { // every job is in
			b.Fatal(err)
		}
		after := heapInUse()
		b.ReportMetric((float64(after)-float64(before))/pending, "B/pending")
		close(release)
		if err := s.Close(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
