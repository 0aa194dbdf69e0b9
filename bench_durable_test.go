package fairsched_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/boltstore"
)

// countingStore counts the commits of durable jobs: each is one fsync.
type countingStore struct {
	*boltstore.Store
	commits atomic.Int64
}

func (c *countingStore) ApplyJobs(ops []fairsched.JobOp) error {
	c.commits.Add(1)
	return c.Store.ApplyJobs(ops)
}

// BenchmarkDurable measures a durable job's whole life — Enqueue (durable
// once it returns) → run → complete (its record deleted) — with 1, 8 and 64
// concurrent producers and a no-op handler, on a bbolt file in the temp
// dir, against in-memory Submit with the same producers in the same run
// (vs-submit: how many times slower). jobs/s is the rate from the first
// Enqueue to the last completion; commits/job the fsyncs each job cost
// (group commit shares them).
func BenchmarkDurable(b *testing.B) {
	for _, producers := range []int{1, 8, 64} {
		for _, durable := range []bool{false, true} {
			name := fmt.Sprintf("producers=%d/submit", producers)
			if durable {
				name = fmt.Sprintf("producers=%d/durable", producers)
			}
			b.Run(name, func(b *testing.B) {
				st, err := boltstore.Open(filepath.Join(b.TempDir(), "bench.db"))
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				cs := &countingStore{Store: st}
				opts := []fairsched.Option{fairsched.WithMaxConcurrency(64)}
				if durable {
					opts = append(opts, fairsched.WithStore(cs))
				}
				s, err := fairsched.New(opts...)
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close(context.Background())
				if err := s.RegisterType("t", fairsched.JobTypeConfig{DefaultCost: time.Millisecond, Priority: 64}); err != nil {
					b.Fatal(err)
				}
				var done sync.WaitGroup
				done.Add(b.N)
				if durable {
					if err := s.RegisterHandler("t", func(context.Context, fairsched.Job) error { done.Done(); return nil }); err != nil {
						b.Fatal(err)
					}
				}
				noop := func(context.Context) error { done.Done(); return nil }
				var next atomic.Int64
				b.ResetTimer()
				var wg sync.WaitGroup
				for range producers {
					wg.Go(func() {
						for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
							id := strconv.FormatInt(i, 10)
							var err error
							if durable {
								err = s.Enqueue(context.Background(), "t", id, nil)
							} else {
								err = s.Submit("t", id, noop)
							}
							if err != nil {
								b.Error(err)
								done.Done()
							}
						}
					})
				}
				wg.Wait()
				done.Wait()
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
				ns := book.Record(b, name)
				if durable {
					b.ReportMetric(float64(cs.commits.Load())/float64(b.N), "commits/job")
					if base := book.Median(fmt.Sprintf("producers=%d/submit", producers)); base > 0 {
						b.ReportMetric(ns/base, "vs-submit")
					}
				}
			})
		}
	}
}

var restoreMillion = flag.Bool("durable.million", false, "BenchmarkDurableRestore: also a store of 1 000 000 pending jobs (minutes to write)")

// BenchmarkDurableRestore measures Open and New over a store holding n
// pending durable jobs (bbolt's consistency check of the file, then every
// record read and checked; none queued until RegisterHandler), and reports
// the file's bytes per pending job. 1 000 000 jobs with -durable.million.
func BenchmarkDurableRestore(b *testing.B) {
	sizes := []int{10_000, 100_000}
	if *restoreMillion {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("pending=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "restore.db")
			st, err := boltstore.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			const chunk = 50_000
			ops := make([]fairsched.JobOp, 0, chunk)
			at := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
			for i := 1; i <= n; i++ {
				ops = append(ops, fairsched.JobOp{Put: &fairsched.JobRecord{Seq: uint64(i), Type: "t", ID: strconv.Itoa(i),
					Key: "tenant-" + strconv.Itoa(i%1000), EnqueuedAt: at}})
				if len(ops) == chunk || i == n {
					if err := st.ApplyJobs(ops); err != nil {
						b.Fatal(err)
					}
					ops = ops[:0]
				}
			}
			st.Close()
			fi, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				st, err := boltstore.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				s, err := fairsched.New(fairsched.WithStore(st))
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				s.Close(context.Background())
				st.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(fi.Size())/float64(n), "bytes/job")
		})
	}
}
