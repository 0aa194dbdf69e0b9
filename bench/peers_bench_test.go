package bench_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fairsched/fairsched/bench/peers"
	"github.com/fairsched/fairsched/internal/benchratio"
)

// fairsched beside its peers, in the same run: Kubernetes API Priority and
// Fairness' queue set (per-request overhead, fairness under a noisy flow)
// and the ants goroutine pool (raw throughput). Ratios are to the peer's
// median in the same run.

var book = benchratio.Book{MinElapsed: 100 * time.Millisecond}

// callersPerProc × GOMAXPROCS goroutines send requests at once (64 on 2
// CPUs, as the root module's RunSync benchmark).
const callersPerProc = 32

// requestFlows is the number of flows (fairness keys, flow distinguishers)
// the callers are spread over.
const requestFlows = 16

func newSync(b *testing.B, peer string, concurrency, flows int) peers.Sync {
	b.Helper()
	var (
		s   peers.Sync
		err error
	)
	switch peer {
	case "apf":
		s, err = peers.NewAPF(concurrency, flows)
	case "fairsched":
		s, err = peers.NewFairsched(concurrency, flows)
	}
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkRequest: 64 callers over 16 flows each run no-op requests in a
// loop through APF's queue set or fairsched's RunSync at the same
// concurrency; fairsched reports x-vs-apf, its time per request over the
// queue set's.
func BenchmarkRequest(b *testing.B) {
	for _, c := range []int{4, 64} {
		for _, peer := range []string{"apf", "fairsched"} {
			name := fmt.Sprintf("%s/cap=%d", peer, c)
			b.Run(name, func(b *testing.B) {
				s := newSync(b, peer, c, requestFlows)
				defer s.Close()
				var callers atomic.Int64
				b.ReportAllocs()
				b.SetParallelism(callersPerProc)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					flow := int(callers.Add(1)) % requestFlows
					ctx := context.Background()
					for pb.Next() {
						if err := s.Do(ctx, flow, func() {}); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.StopTimer()
				ns := book.Record(b, "request/"+name)
				if base := book.Median(fmt.Sprintf("request/apf/cap=%d", c)); peer != "apf" && base > 0 {
					b.ReportMetric(ns/base, "x-vs-apf")
				}
			})
		}
	}
}

// Fairness under one noisy flow: 8 flows share 4 slots; flow 0 has 32
// callers, each other flow 4, every caller always has a request waiting,
// and a request holds its slot for 200 µs. A fair scheduler gives each
// flow an eighth of the completions whatever its callers: jain is Jain's
// index over the flows' completions (1 is equal shares), noisy-share flow
// 0's share (0.125 fair; 32/60 = 0.53 for first come, first served).
const (
	fairFlows        = 8
	fairSlots        = 4
	noisyCallers     = 32
	quietCallers     = 4
	fairRequestHolds = 200 * time.Microsecond
)

func BenchmarkFairness(b *testing.B) {
	for _, peer := range []string{"apf", "fairsched"} {
		b.Run(peer, func(b *testing.B) {
			s := newSync(b, peer, fairSlots, fairFlows)
			defer s.Close()
			var (
				left atomic.Int64
				done [fairFlows]atomic.Int64
				wg   sync.WaitGroup
			)
			left.Store(int64(b.N))
			b.ResetTimer()
			for flow := range fairFlows {
				n := quietCallers
				if flow == 0 {
					n = noisyCallers
				}
				for range n {
					wg.Go(func() {
						for left.Add(-1) >= 0 {
							if err := s.Do(context.Background(), flow, func() { time.Sleep(fairRequestHolds) }); err != nil {
								b.Error(err)
								return
							}
							done[flow].Add(1)
						}
					})
				}
			}
			wg.Wait()
			b.StopTimer()
			var sum, squares float64
			for f := range done {
				x := float64(done[f].Load())
				sum += x
				squares += x * x
			}
			b.ReportMetric(sum*sum/(fairFlows*squares), "jain")
			b.ReportMetric(float64(done[0].Load())/sum, "noisy-share")
		})
	}
}

// BenchmarkThroughput: one producer hands b.N no-op tasks to an ants pool
// of c workers or to fairsched's Submit at cap c, and waits for all;
// fairsched reports x-vs-ants.
func BenchmarkThroughput(b *testing.B) {
	for _, c := range []int{4, 64} {
		for _, peer := range []string{"ants", "fairsched"} {
			name := fmt.Sprintf("%s/cap=%d", peer, c)
			b.Run(name, func(b *testing.B) {
				var (
					s   peers.Async
					err error
				)
				if peer == "ants" {
					s, err = peers.NewAnts(c)
				} else {
					s, err = peers.NewFairsched(c, 1)
				}
				if err != nil {
					b.Fatal(err)
				}
				var wg sync.WaitGroup
				wg.Add(b.N)
				task := func() { wg.Done() }
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if err := s.Go(task); err != nil {
						b.Fatal(err)
					}
				}
				wg.Wait()
				b.StopTimer()
				s.Close()
				ns := book.Record(b, "throughput/"+name)
				if base := book.Median(fmt.Sprintf("throughput/ants/cap=%d", c)); peer != "ants" && base > 0 {
					b.ReportMetric(ns/base, "x-vs-ants")
				}
			})
		}
	}
}
