package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// BenchmarkCluster measures cluster mode's throughput over PostgreSQL:
// b.N no-op durable jobs enqueued at once (8 goroutines calling Enqueue,
// spread over the instances; there is no bulk API) into a cluster of 1 or
// 3 instances in this process, each with 64 slots, under a cap of 64.
// jobs/s is b.N over the time from the first Enqueue to the last end of a
// handler; enqueue/s the rate of the Enqueue calls alone. The test timings
// (fast) apply: polls every 20 ms, LISTEN wakes the loops at once.
func BenchmarkCluster(b *testing.B) {
	for _, n := range []int{1, 3} {
		b.Run("instances="+strconv.Itoa(n), func(b *testing.B) { benchCluster(b, n) })
	}
}

func benchCluster(b *testing.B, instances int) {
	url := pgtest.URL(b) // skips when there is no PostgreSQL
	var (
		mu    sync.Mutex
		seen  = map[string]bool{}
		done  = make(chan struct{})
		total = b.N
	)
	handler := func(ctx context.Context, j fairsched.Job) error {
		mu.Lock()
		defer mu.Unlock()
		if !seen[j.ID] {
			seen[j.ID] = true
			if len(seen) == total {
				close(done)
			}
		}
		return nil
	}
	var ss []*fairsched.Scheduler
	var st0 *pgstore.Store
	for i := range instances {
		s, st := benchJoin(b, url, fast("bench", fmt.Sprint("b", i+1), 64), fairsched.WithMaxConcurrency(64))
		if err := s.RegisterType("noop", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
			b.Fatal(err)
		}
		if err := s.RegisterHandler("noop", handler); err != nil {
			b.Fatal(err)
		}
		ss = append(ss, s)
		if st0 == nil {
			st0 = st
		}
	}
	// Measure jobs, not the election: wait until one instance leads.
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, _, live, err := st0.ClusterBackend().Leader(context.Background(), "bench"); err == nil && live {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("no leader in 30 s")
		}
		time.Sleep(5 * time.Millisecond) // polling the lease
	}

	ctx := context.Background()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range 8 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(total); i = next.Add(1) {
				if err := ss[int(i)%instances].Enqueue(ctx, "noop", strconv.FormatInt(i, 10), nil); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	enqueued := time.Since(start)
	select {
	case <-done:
	case <-time.After(5*time.Minute + time.Duration(total)*10*time.Millisecond): // a failure guard only
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		b.Fatalf("%d of %d jobs ended", n, total)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(total)/elapsed.Seconds(), "jobs/s")
	b.ReportMetric(float64(total)/enqueued.Seconds(), "enqueue/s")
}

// benchJoin starts an instance over url for a benchmark (join is the
// tests'), closed at the end of b.
func benchJoin(b *testing.B, url string, cfg fairsched.ClusterConfig, opts ...fairsched.Option) (*fairsched.Scheduler, *pgstore.Store) {
	b.Helper()
	st, err := pgstore.Open(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	s, err := fairsched.New(append([]fairsched.Option{fairsched.WithCluster(st, cfg)}, opts...)...)
	if err != nil {
		st.Close()
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = s.Close(ctx)
		st.Close()
	})
	return s, st
}

// BenchmarkRunSyncIdle measures one no-op RunSync on an idle cluster,
// one call after the other, with the default Poll (200 ms): on the only
// instance, and on the leader and a follower of two. Each hop of the call
// is a wake-up, so a call takes a few round trips to the database, not a
// poll. p50-ms and p99-ms are the calls' latencies.
func BenchmarkRunSyncIdle(b *testing.B) {
	for _, c := range []struct {
		name      string
		instances int
		on        int // which instance calls: 0 leads
	}{{"instances=1", 1, 0}, {"instances=2/on=leader", 2, 0}, {"instances=2/on=follower", 2, 1}} {
		b.Run(c.name, func(b *testing.B) {
			url := pgtest.URL(b)
			var ss []*fairsched.Scheduler
			var st0 *pgstore.Store
			for i := range c.instances {
				cfg := fast("idle", fmt.Sprint("i", i), 4)
				cfg.Poll = 200 * time.Millisecond // the default
				s, st := benchJoin(b, url, cfg)
				if err := s.RegisterType("call", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
					b.Fatal(err)
				}
				ss = append(ss, s)
				if st0 == nil {
					st0 = st
					benchWaitLeader(b, st0, "idle")
				}
			}
			ctx := context.Background()
			noop := func(context.Context) error { return nil }
			// Warm: every instance known to the leader.
			for i := 0; i < 3; i++ {
				if err := ss[c.on].RunSync(ctx, "call", fmt.Sprint("warm", i), "k", noop); err != nil {
					b.Fatal(err)
				}
			}
			took := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				if err := ss[c.on].RunSync(ctx, "call", strconv.Itoa(i), "k", noop); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2])/1e6, "p50-ms")
			b.ReportMetric(float64(took[len(took)*99/100])/1e6, "p99-ms")
		})
	}
}

// benchWaitLeader waits until domain has a live leader.
func benchWaitLeader(b *testing.B, st *pgstore.Store, domain string) {
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, _, live, err := st.ClusterBackend().Leader(context.Background(), domain); err == nil && live {
			return
		}
		if time.Now().After(deadline) {
			b.Fatal("no leader in 30 s")
		}
		time.Sleep(5 * time.Millisecond) // polling the lease
	}
}
