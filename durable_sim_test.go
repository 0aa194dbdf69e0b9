package fairsched_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/boltstore"
	"github.com/fairsched/fairsched/fairschedtest"
)

var durableSeeds = flag.Int("durable.seeds", 0, "seeds TestDurableInvariants plays (0: 300, 60 with -short)")

// TestDurableInvariants plays seeded random workloads of durable jobs —
// random keys, groups, tokens, retry policies, delays, cancellations, and
// handlers that succeed, fail, fail for good, panic or hang — through the
// real scheduler and a bbolt file in virtual time, stopping it abruptly
// (Close with an ended context) at random points and starting a new one on
// the same file, then lets a last one finish everything. For every job
// whose Enqueue returned nil it checks: its attempts are numbered 1, 2, …
// with none missing or repeated; every attempt but the last failed or was
// interrupted by a restart; it ends exactly once — one success, or dead
// (listed with its last error and attempts), or cancelled before it ran —
// and nothing that was not acknowledged ever runs; the store ends holding
// the dead jobs alone.
func TestDurableInvariants(t *testing.T) {
	t.Parallel()
	n := *durableSeeds
	if n <= 0 {
		n = 300
		if testing.Short() {
			n = 60
		}
	}
	dir := t.TempDir()
	var jobs, attempts, restarts, interrupted, dead int
	for seed := 1; seed <= n; seed++ {
		r := playDurable(t, filepath.Join(dir, fmt.Sprintf("seed-%d.db", seed)), uint64(seed))
		if len(r.violations) > 0 {
			t.Errorf("seed %d: %d violation(s):\n  %s\nreplay: go test -run TestDurableInvariants -durable.seeds=%d .",
				seed, len(r.violations), strings.Join(r.violations, "\n  "), seed)
			if len(r.violations) > 0 && t.Failed() {
				break
			}
		}
		jobs += r.jobs
		attempts += r.attempts
		restarts += r.restarts
		interrupted += r.interrupted
		dead += r.dead
	}
	t.Logf("%d seeds: %d acknowledged jobs, %d attempts, %d restarts, %d attempts interrupted, %d dead jobs", n, jobs, attempts, restarts, interrupted, dead)
	if interrupted == 0 || dead == 0 || restarts == 0 {
		t.Errorf("the workload never interrupted an attempt (%d), made a dead job (%d) or restarted (%d)", interrupted, dead, restarts)
	}
}

// outcome is what a handler does on one attempt.
type outcome int

const (
	succeed outcome = iota
	fail
	failForGood
	panics
	hang // until its context ends: a restart interrupts it
)

// decide is the outcome of attempt a of job id under seed: the same every
// time it is asked.
func decide(seed uint64, id string, a int, last bool) outcome {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%d", seed, id, a)
	switch v := h.Sum64() % 100; {
	case last:
		return succeed // the last scheduler finishes what it starts
	case v < 55:
		return succeed
	case v < 80:
		return fail
	case v < 85:
		return failForGood
	case v < 90:
		return panics
	default:
		return hang
	}
}

type attemptEnd struct {
	n   int
	end string // ok, fail, permanent, panic, interrupted
}

type durableResult struct {
	violations                                  []string
	jobs, attempts, restarts, interrupted, dead int
}

func playDurable(t *testing.T, path string, seed uint64) (res durableResult) {
	var mu sync.Mutex
	runs := map[string][]attemptEnd{}
	acked := map[string]bool{}
	cancelled := map[string]bool{}
	violate := func(format string, args ...any) {
		res.violations = append(res.violations, fmt.Sprintf(format, args...))
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	phases := 1 + rng.IntN(3) // scheduler lives before the last one

	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		maxConc := 1 + rng.IntN(4)
		start := func(last bool) (*fairsched.Scheduler, *boltstore.Store) {
			st, err := boltstore.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			s, err := fairsched.New(fairsched.WithStore(st), fairsched.WithMaxConcurrency(maxConc), fairsched.WithRandSeed(seed))
			if err != nil {
				t.Fatal(err)
			}
			for _, ty := range []fairsched.JobType{"a", "b"} {
				if err := s.RegisterType(ty, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 2,
					Retry: fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Second, MaxBackoff: 4 * time.Second}}); err != nil {
					t.Fatal(err)
				}
				if err := s.RegisterHandler(ty, func(ctx context.Context, j fairsched.Job) error {
					name := string(j.Type) + "/" + j.ID
					end := func(e string) {
						mu.Lock()
						runs[name] = append(runs[name], attemptEnd{j.Attempt, e})
						mu.Unlock()
					}
					o := decide(seed, name, j.Attempt, last)
					time.Sleep(time.Duration(1+int(o)%3) * 500 * time.Millisecond) // virtual: the job takes time
					switch o {
					case fail:
						end("fail")
						return errors.New("planned failure")
					case failForGood:
						end("permanent")
						return fairsched.Permanent(errors.New("planned permanent failure"))
					case panics:
						end("panic")
						panic("planned panic")
					case hang:
						<-ctx.Done()
						end("interrupted")
						return ctx.Err()
					}
					end("ok")
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			return s, st
		}
		id := 0
		for phase := 0; phase <= phases; phase++ {
			last := phase == phases
			s, st := start(last)
			if !last {
				for range 5 + rng.IntN(20) {
					time.Sleep(time.Duration(rng.IntN(1500)) * time.Millisecond)
					switch v := rng.IntN(10); {
					case v < 8:
						id++
						ty := []fairsched.JobType{"a", "b"}[rng.IntN(2)]
						name := fmt.Sprintf("%s/j%d", ty, id)
						opts := []fairsched.JobOption{fairsched.WithFairnessKey(fmt.Sprint("k", rng.IntN(3)))}
						if rng.IntN(3) == 0 {
							opts = append(opts, fairsched.InGroup(fmt.Sprint("g", rng.IntN(2))))
						}
						if rng.IntN(4) == 0 {
							opts = append(opts, fairsched.Delay(time.Duration(rng.IntN(5))*time.Second))
						}
						if rng.IntN(4) == 0 {
							opts = append(opts, fairsched.WithTokens(time.Duration(1+rng.IntN(5))*time.Second))
						}
						if err := s.Enqueue(ctx, ty, fmt.Sprint("j", id), nil, opts...); err != nil {
							violate("Enqueue %s: %v", name, err)
							continue
						}
						mu.Lock()
						acked[name] = true
						mu.Unlock()
					case v < 9 && id > 0:
						victim := 1 + rng.IntN(id)
						for _, ty := range []fairsched.JobType{"a", "b"} {
							c, err := s.Cancel(ctx, ty, fmt.Sprint("j", victim))
							if err != nil {
								violate("Cancel: %v", err)
							}
							if c.Pending+c.Running > 0 {
								mu.Lock()
								cancelled[fmt.Sprintf("%s/j%d", ty, victim)] = true
								mu.Unlock()
							}
						}
					default:
						time.Sleep(time.Duration(rng.IntN(5)) * time.Second)
					}
				}
				time.Sleep(time.Duration(rng.IntN(3000)) * time.Millisecond)
				stop, cancel := context.WithCancel(ctx)
				cancel()
				_ = s.Close(stop) // abrupt: running attempts are interrupted
				if err := s.Close(ctx); err != nil && !errors.Is(err, fairsched.ErrClosed) {
					violate("Close after the abrupt one: %v", err)
				}
				res.restarts++
			} else {
				fairschedtest.WaitIdle(t, s)
				deadJobs, err := s.DeadJobs(ctx, 0)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Close(ctx); err != nil {
					violate("the last Close: %v", err)
				}
				checkDurable(deadJobs, acked, cancelled, runs, violate)
				res.dead = len(deadJobs)
				left := 0
				if err := st.LoadJobs(func(fairsched.JobRecord) error { left++; return nil }); err != nil || left != len(deadJobs) {
					violate("the store holds %d records (%v); want the %d dead jobs alone", left, err, len(deadJobs))
				}
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
	res.jobs = len(acked)
	for _, rs := range runs {
		res.attempts += len(rs)
		for _, r := range rs {
			if r.end == "interrupted" {
				res.interrupted++
			}
		}
	}
	return res
}

// checkDurable checks every job's attempts and ending.
func checkDurable(dead []fairsched.DeadJob, acked, cancelled map[string]bool, runs map[string][]attemptEnd, violate func(string, ...any)) {
	deadBy := map[string]fairsched.DeadJob{}
	for _, d := range dead {
		name := string(d.Type) + "/" + d.ID
		if _, dup := deadBy[name]; dup {
			violate("%s is dead twice", name)
		}
		deadBy[name] = d
	}
	for name := range runs {
		if !acked[name] {
			violate("%s ran, but its Enqueue never returned nil", name)
		}
	}
	names := make([]string, 0, len(acked))
	for name := range acked {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		rs := slices.Clone(runs[name])
		slices.SortFunc(rs, func(x, y attemptEnd) int { return x.n - y.n })
		for i, r := range rs {
			if r.n != i+1 {
				violate("%s: attempts %v: attempt %d is missing or repeated", name, rs, i+1)
				break
			}
			if i < len(rs)-1 && r.end != "fail" && r.end != "interrupted" {
				violate("%s: attempt %d ended %s, yet another followed: %v", name, r.n, r.end, rs)
			}
		}
		successes := 0
		for _, r := range rs {
			if r.end == "ok" {
				successes++
			}
		}
		d, isDead := deadBy[name]
		switch {
		case successes > 1:
			violate("%s succeeded %d times: %v", name, successes, rs)
		case successes == 1 && isDead:
			violate("%s succeeded and is dead", name)
		case successes == 1:
		case isDead && cancelled[name]:
			violate("%s was cancelled and is dead", name)
		case isDead:
			last := rs[len(rs)-1]
			if d.Attempt != last.n || d.LastError == "" {
				violate("%s is dead after attempt %d with %q; its attempts: %v", name, d.Attempt, d.LastError, rs)
			}
			if last.end == "fail" && last.n < 3 {
				violate("%s is dead after a retryable failure at attempt %d of 3", name, last.n)
			}
		case cancelled[name]:
		default:
			violate("%s never finished: attempts %v, not dead, not cancelled", name, rs)
		}
	}
}
