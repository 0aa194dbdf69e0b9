package cluster_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster/memback"
)

var memsimSeeds = flag.Int("memsim.seeds", 3, "seeds of TestMemSim (make memsim runs thousands)")

// TestMemSim runs 3 instances on one in-memory backend in virtual time
// (testing/synctest), a workload of durable jobs under a global cap and an
// exclusive conflict group, with faults: the leader's grants failing for
// a while, end reports stalled, successes told unheard or not told, an
// instance lost (killed in odd seeds, cut
// off from the backend in even ones). Invariants: never more running than the
// cap, never two on one conflict id, every job succeeded, and more than
// once only if an attempt was interrupted.
func TestMemSim(t *testing.T) {
	for seed := range *memsimSeeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { memsim(t, uint64(seed)) })
		})
	}
}

func memsim(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 33))
	const jobs, capN = 40, 3
	b := memback.New()
	defer b.Close()
	var mu sync.Mutex
	running, peak, ends := 0, 0, 0
	byRepo := map[string]int{}
	var overlaps []string
	succeeded, interrupted := map[string]int{}, map[string]int{}
	ranOn := map[string][]int{} // the instances of each success
	cutInst := -1
	var killed []int // the instances killed: enqueue no more through them
	var nodes []*fairsched.Scheduler
	var links []*faulty
	for i := range 3 {
		f := &faulty{b: b}
		links = append(links, f)
		s, err := fairsched.New(fairsched.WithCluster(link{f}, fast("sim", fmt.Sprint("n", i), 3)), fairsched.WithMaxConcurrency(capN))
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, s)
		if err := s.RegisterType("build", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond, ConflictGroup: "repo"}); err != nil {
			t.Fatal(err)
		}
		inst := i
		if err := s.RegisterHandler("build", func(ctx context.Context, j fairsched.Job) error {
			token := string(j.Payload)
			mu.Lock()
			running++
			peak = max(peak, running)
			if byRepo[j.ID]++; byRepo[j.ID] > 1 {
				overlaps = append(overlaps, j.ID)
			}
			mu.Unlock()
			defer func() {
				mu.Lock()
				running--
				byRepo[j.ID]--
				ends++
				mu.Unlock()
			}()
			select {
			case <-time.After(time.Duration(20+j.Seq*37%100) * time.Millisecond):
				mu.Lock()
				succeeded[token]++
				ranOn[token] = append(ranOn[token], inst)
				mu.Unlock()
				return nil
			case <-ctx.Done():
				mu.Lock()
				interrupted[token]++
				mu.Unlock()
				return context.Cause(ctx)
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		for k, s := range nodes {
			if slices.Contains(killed, k) {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_ = s.Close(ctx)
			cancel()
		}
	}()
	retry := fairsched.RetryPolicy{MaxAttempts: 50, MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
	ctx := context.Background()
	start := time.Now()
	for i := range jobs {
		token := fmt.Sprint("job-", i)
		k := rng.IntN(len(nodes))
		for links[k].cut.Load() || slices.Contains(killed, k) {
			k = (k + 1) % len(nodes)
		}
		s := nodes[k]
		if err := s.Enqueue(ctx, "build", fmt.Sprint("repo-", rng.IntN(4)), []byte(token), fairsched.WithRetry(retry)); err != nil {
			// a (type, id) pending already: a new id instead
			if err := s.Enqueue(ctx, "build", fmt.Sprint("solo-", i), []byte(token), fairsched.WithRetry(retry)); err != nil {
				t.Fatal(err)
			}
		}
		if i == jobs/3 {
			b.Fail("Grant", 1+rng.IntN(5), nil) // the leader's writes fail for a while
		}
		if i == 2*jobs/3 {
			// An instance lost: its lease lapses, it is declared lost,
			// its jobs run elsewhere. In odd seeds it is killed — its
			// Close under a context already ended takes Node.Kill's path:
			// no report, no release, no heartbeat, its runs' contexts
			// cancelled —, in even ones cut off from the backend.
			k := rng.IntN(len(links))
			mu.Lock()
			cutInst = k
			mu.Unlock()
			links[k].cut.Store(true) // no more jobs enqueued through it
			if seed%2 == 1 {
				links[k].cut.Store(false)
				kill(nodes[k])
				killed = append(killed, k)
			}
		}
		if i == jobs/2 {
			release := b.Stall("ReportEnds")
			time.AfterFunc(time.Duration(rng.IntN(500))*time.Millisecond, release)
			// Successes told go unheard (the listening connections lost)
			// or cannot be told for a while.
			if rng.IntN(2) == 0 {
				b.Deafen()
			} else {
				b.Fail("TellSucceeded", 1+rng.IntN(5), nil)
			}
		}
		time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond) // virtual: the producers' pace
	}
	for deadline := time.Now().Add(5 * time.Minute); ; {
		mu.Lock()
		done := len(succeeded)
		mu.Unlock()
		if done == jobs {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d jobs succeeded in 5 virtual minutes", done, jobs)
		}
		time.Sleep(100 * time.Millisecond) // virtual time: waiting for the cluster's progress
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("peak %d running, %d ends, %d interrupted, virtual %v", peak, ends, len(interrupted), time.Since(start))
	if peak > capN {
		t.Errorf("peak %d running, cap %d", peak, capN)
	}
	if len(overlaps) > 0 {
		t.Errorf("two runs at once on %v", overlaps)
	}
	for token, n := range succeeded {
		// A success on the instance lost may never have been reported
		// (its report stalled, then cut or killed): a second run is
		// explained.
		if n > 1 && interrupted[token] == 0 && !slices.Contains(ranOn[token], cutInst) {
			t.Errorf("%s succeeded %d times, never interrupted", token, n)
		}
	}
}

// kill stops s as a crash would: Close under a context already ended is
// Node.Kill's path (the node stops at once, reports nothing, releases
// nothing; its running jobs' contexts are cancelled).
func kill(s *fairsched.Scheduler) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = s.Close(ctx)
}
