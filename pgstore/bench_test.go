package pgstore_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// BenchmarkDurablePostgres: a durable job's whole life — Enqueue → run →
// complete — on PostgreSQL (the test cluster: fsync off, a Unix socket)
// with 64 concurrent producers and a no-op handler.
func BenchmarkDurablePostgres(b *testing.B) {
	st, err := pgstore.Open(context.Background(), pgtest.URL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	s, err := fairsched.New(fairsched.WithStore(st), fairsched.WithMaxConcurrency(64))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(context.Background())
	if err := s.RegisterType("t", fairsched.JobTypeConfig{DefaultCost: time.Millisecond, Priority: 64}); err != nil {
		b.Fatal(err)
	}
	var done sync.WaitGroup
	done.Add(b.N)
	if err := s.RegisterHandler("t", func(context.Context, fairsched.Job) error { done.Done(); return nil }); err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	b.ResetTimer()
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				if err := s.Enqueue(context.Background(), "t", strconv.FormatInt(i, 10), nil); err != nil {
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
}
