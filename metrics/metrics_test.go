package metrics

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	clone  fairsched.JobType = "clone"  // tier 8, one at a time, conflict group git
	repack fairsched.JobType = "repack" // tier 4, conflict group git
)

// gitTypes: clone at tier 8, one at a time, and repack at tier 4, both in
// conflict group git.
var gitTypes = map[fairsched.JobType]fairsched.JobTypeConfig{
	clone:  {DefaultCost: time.Second, Priority: 8, MaxConcurrency: 1, ConflictGroup: "git"},
	repack: {DefaultCost: time.Second, Priority: 4, ConflictGroup: "git"},
}

// openScheduler returns a scheduler with gitTypes; the test closes it.
func openScheduler(t *testing.T, opts ...fairsched.Option) *fairsched.Scheduler {
	t.Helper()
	return testkit.Open(t, gitTypes, opts...)
}

// newScheduler is openScheduler closed when the test ends.
func newScheduler(t *testing.T, opts ...fairsched.Option) *fairsched.Scheduler {
	t.Helper()
	return testkit.New(t, gitTypes, opts...)
}

// collectorOf returns a collector of s closed when the test ends (before
// s: cleanups run last first).
func collectorOf(t *testing.T, s *fairsched.Scheduler, opts ...Option) *Collector {
	t.Helper()
	c, err := New(s, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func ok(context.Context) error { return nil }
func submit(t *testing.T, s *fairsched.Scheduler, typ fairsched.JobType, id string, fn func(context.Context) error, opts ...fairsched.JobOption) {
	t.Helper()
	if err := s.Submit(typ, id, fn, opts...); err != nil {
		t.Fatalf("Submit(%s, %s): %v", typ, id, err)
	}
}

// compare checks the named metrics of c against the exposition text want,
// its samples only: the # HELP and # TYPE lines are added from the specs.
func compare(t *testing.T, c prometheus.Collector, want string, names ...string) {
	t.Helper()
	if err := testutil.CollectAndCompare(c, strings.NewReader(withHeaders(want)), names...); err != nil {
		t.Error(err)
	}
}

// withHeaders puts before the first sample of each metric in samples its
// # HELP and # TYPE lines, from the metric's spec.
func withHeaders(samples string) string {
	var b strings.Builder
	seen := map[string]bool{}
	for line := range strings.Lines(samples) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, _, _ := strings.Cut(line, "{")
		name, _, _ = strings.Cut(name, " ")
		if m, family, ok := specOf(name); ok && !seen[family] {
			seen[family] = true
			fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", family, m.help, family, m.kind)
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// specOf returns the spec of the metric a sample named name belongs to,
// and the metric's full name.
func specOf(name string) (spec, string, bool) {
	for _, m := range specs {
		for _, suffix := range []string{"", "_bucket", "_sum", "_count"} {
			family, ok := strings.CutSuffix(name, suffix)
			if !ok || suffix != "" && m.kind != histogram {
				continue
			}
			if ns, ok := strings.CutSuffix(family, m.name); ok && (ns == "" || strings.HasSuffix(ns, "_")) {
				return m, family, true
			}
		}
	}
	return spec{}, "", false
}

// TestEventCounts: admissions, completions and failures per type, and the
// queue wait and duration histograms of a scripted run whose waits the
// mock clock makes exact.
func TestEventCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		s := newScheduler(t, fairsched.WithClock(mock), fairsched.WithMaxConcurrency(1))
		c := collectorOf(t, s, WithBuckets([]float64{1, 5, 10}))

		// t0: c1 runs at once; r1 waits for the only slot.
		c1 := testkit.NewGate()
		submit(t, s, clone, "c1", c1.Run)
		r1 := testkit.NewGate()
		submit(t, s, repack, "r1", r1.Run, fairsched.InGroup("batch"))
		synctest.Wait()
		// t0+3s: c1 completes after 3s; r1 starts, having waited 3s.
		mock.Add(3 * time.Second)
		c1.Release(nil)
		synctest.Wait()
		// t0+5s: r1 fails after 2s; c2 runs at once and completes.
		mock.Add(2 * time.Second)
		r1.Release(errors.New("disk full"))
		synctest.Wait()
		if err := s.RunSync(context.Background(), clone, "c2", "alice", ok); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()

		compare(t, c, `
fairsched_admitted_total{type="clone"} 2
fairsched_admitted_total{type="repack"} 1
fairsched_completed_total{type="clone"} 2
fairsched_failed_total{type="repack"} 1
fairsched_queue_wait_seconds_bucket{group="",tier="8",type="clone",le="1"} 2
fairsched_queue_wait_seconds_bucket{group="",tier="8",type="clone",le="5"} 2
fairsched_queue_wait_seconds_bucket{group="",tier="8",type="clone",le="10"} 2
fairsched_queue_wait_seconds_bucket{group="",tier="8",type="clone",le="+Inf"} 2
fairsched_queue_wait_seconds_sum{group="",tier="8",type="clone"} 0
fairsched_queue_wait_seconds_count{group="",tier="8",type="clone"} 2
fairsched_queue_wait_seconds_bucket{group="batch",tier="4",type="repack",le="1"} 0
fairsched_queue_wait_seconds_bucket{group="batch",tier="4",type="repack",le="5"} 1
fairsched_queue_wait_seconds_bucket{group="batch",tier="4",type="repack",le="10"} 1
fairsched_queue_wait_seconds_bucket{group="batch",tier="4",type="repack",le="+Inf"} 1
fairsched_queue_wait_seconds_sum{group="batch",tier="4",type="repack"} 3
fairsched_queue_wait_seconds_count{group="batch",tier="4",type="repack"} 1
fairsched_job_duration_seconds_bucket{type="clone",le="1"} 1
fairsched_job_duration_seconds_bucket{type="clone",le="5"} 2
fairsched_job_duration_seconds_bucket{type="clone",le="10"} 2
fairsched_job_duration_seconds_bucket{type="clone",le="+Inf"} 2
fairsched_job_duration_seconds_sum{type="clone"} 3
fairsched_job_duration_seconds_count{type="clone"} 2
fairsched_job_duration_seconds_bucket{type="repack",le="1"} 0
fairsched_job_duration_seconds_bucket{type="repack",le="5"} 1
fairsched_job_duration_seconds_bucket{type="repack",le="10"} 1
fairsched_job_duration_seconds_bucket{type="repack",le="+Inf"} 1
fairsched_job_duration_seconds_sum{type="repack"} 2
fairsched_job_duration_seconds_count{type="repack"} 1
fairsched_admitted_effective_priority{type="clone"} 8
fairsched_admitted_effective_priority{type="repack"} 4
fairsched_events_lost_total 0
fairsched_max_concurrency 1
`, "fairsched_admitted_total", "fairsched_completed_total", "fairsched_failed_total",
			"fairsched_queue_wait_seconds", "fairsched_job_duration_seconds",
			"fairsched_admitted_effective_priority", "fairsched_events_lost_total", "fairsched_max_concurrency")
		// Nothing runs or waits any more, and no adaptive limit is set.
		for _, name := range []string{"fairsched_running_jobs", "fairsched_pending_jobs", "fairsched_adaptive_limit"} {
			if n := testutil.CollectAndCount(c, name); n != 0 {
				t.Errorf("%s: %d series; want none", name, n)
			}
		}
	})
}

// TestPendingByReason: at a moment when one job waits for a conflict and
// one for its type's cap, the snapshot gauges say so.
func TestPendingByReason(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, fairsched.WithClock(clock.NewMock()))
		c := collectorOf(t, s)

		cloneA, repackB, repackA2 := testkit.NewGate(), testkit.NewGate(), testkit.NewGate()
		submit(t, s, clone, "a", cloneA.Run)                              // runs
		submit(t, s, repack, "b", repackB.Run)                            // runs: no conflict on b
		submit(t, s, clone, "c", ok)                                      // waits: clone runs one at a time
		submit(t, s, repack, "a", ok, fairsched.InGroup("gc"))            // waits: clone a runs, same group git
		submit(t, s, repack, "a2", repackA2.Run, fairsched.InGroup("gc")) // runs
		synctest.Wait()

		compare(t, c, `
fairsched_running_jobs{group="",tier="8",type="clone"} 1
fairsched_running_jobs{group="",tier="4",type="repack"} 1
fairsched_running_jobs{group="gc",tier="4",type="repack"} 1
fairsched_pending_jobs{group="",reason="type_limit",tier="8",type="clone"} 1
fairsched_pending_jobs{group="gc",reason="conflict",tier="4",type="repack"} 1
fairsched_max_concurrency 0
`, "fairsched_running_jobs", "fairsched_pending_jobs", "fairsched_max_concurrency")

		cloneA.Release(nil)
		repackB.Release(nil)
		repackA2.Release(nil)
		synctest.Wait()
		compare(t, c, `
fairsched_admitted_total{type="clone"} 2
fairsched_admitted_total{type="repack"} 3
fairsched_completed_total{type="clone"} 2
fairsched_completed_total{type="repack"} 3
`, "fairsched_admitted_total", "fairsched_completed_total", "fairsched_running_jobs", "fairsched_pending_jobs")
	})
}

// TestGroups: the groups' slots by weight and their running jobs, the
// allocation changes, and the slots a drained group hands on.
func TestGroups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, fairsched.WithClock(clock.NewMock()), fairsched.WithMaxConcurrency(4),
			fairsched.WithGroupWeight("a", 3), fairsched.WithGroupWeight("b", 1))
		c := collectorOf(t, s)

		// a has one job, so its weight 3 gets it 1 slot; b takes the other 3.
		a := testkit.NewGate()
		submit(t, s, repack, "a0", a.Run, fairsched.InGroup("a"))
		b := testkit.NewGate()
		for i := range 5 {
			submit(t, s, repack, fmt.Sprintf("b%d", i), b.Run, fairsched.InGroup("b"))
		}
		synctest.Wait()
		compare(t, c, `
fairsched_group_slots{group="a"} 1
fairsched_group_slots{group="b"} 3
fairsched_group_running{group="a"} 1
fairsched_group_running{group="b"} 3
fairsched_running_jobs{group="a",tier="4",type="repack"} 1
fairsched_running_jobs{group="b",tier="4",type="repack"} 3
fairsched_pending_jobs{group="b",reason="group_limit",tier="4",type="repack"} 2
fairsched_group_allocation_changes_total{group="a",reason="rebalance"} 1
fairsched_group_allocation_changes_total{group="b",reason="rebalance"} 3
fairsched_excess_slots_redistributed_total 0
`, "fairsched_group_slots", "fairsched_group_running", "fairsched_running_jobs", "fairsched_pending_jobs",
			"fairsched_group_allocation_changes_total", "fairsched_excess_slots_redistributed_total")

		// a drains: its slot goes to b, which runs 4.
		a.Release(nil)
		synctest.Wait()
		compare(t, c, `
fairsched_group_slots{group="b"} 4
fairsched_group_running{group="b"} 4
fairsched_pending_jobs{group="b",reason="group_limit",tier="4",type="repack"} 1
fairsched_group_allocation_changes_total{group="a",reason="rebalance"} 1
fairsched_group_allocation_changes_total{group="a",reason="group_drained"} 1
fairsched_group_allocation_changes_total{group="b",reason="rebalance"} 4
fairsched_excess_slots_redistributed_total 1
`, "fairsched_group_slots", "fairsched_group_running", "fairsched_pending_jobs",
			"fairsched_group_allocation_changes_total", "fairsched_excess_slots_redistributed_total")
		for range 5 {
			b.Release(nil)
		}
		synctest.Wait()
	})
}

// TestRefusedExpiredDenied: a refusal by a pending bound, an expiry and an
// admission policy's denial each count.
func TestRefusedExpiredDenied(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		s := newScheduler(t, fairsched.WithClock(mock), fairsched.WithMaxConcurrency(1), fairsched.WithMaxPending(1),
			fairsched.WithAdmissionPolicy(func(j fairsched.JobInfo) fairsched.Decision {
				if j.ID == "bad" {
					return fairsched.Deny(nil)
				}
				return fairsched.Admit()
			}))
		c := collectorOf(t, s)

		c1 := testkit.NewGate()
		submit(t, s, clone, "c1", c1.Run)
		submit(t, s, repack, "r1", ok, fairsched.WithQueueTimeout(2*time.Second)) // the one pending
		var refusal *fairsched.RefusalError
		if err := s.Submit(repack, "r2", ok); !errors.As(err, &refusal) || refusal.Reason != fairsched.ReasonPoolOverloaded {
			t.Fatalf("Submit over WithMaxPending(1): %v; want a pool_overloaded refusal", err)
		}
		synctest.Wait()
		mock.Add(2 * time.Second) // r1's time to live runs out
		synctest.Wait()
		c1.Release(nil)
		synctest.Wait()
		if err := s.RunSync(context.Background(), clone, "bad", "mallory", ok); !errors.Is(err, fairsched.ErrDenied) {
			t.Fatalf("RunSync of a denied job: %v; want ErrDenied", err)
		}
		synctest.Wait()

		compare(t, c, `
fairsched_refused_total{reason="pool_overloaded",type="repack"} 1
fairsched_expired_total{type="repack"} 1
fairsched_denied_total{type="clone"} 1
fairsched_admitted_total{type="clone"} 1
fairsched_completed_total{type="clone"} 1
`, "fairsched_refused_total", "fairsched_expired_total", "fairsched_denied_total", "fairsched_dropped_total",
			"fairsched_admitted_total", "fairsched_completed_total", "fairsched_failed_total")
	})
}

// TestLateStartRefused: a RunSync refused by deadline-aware admission
// counts as refused, with its reason.
func TestLateStartRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const query fairsched.JobType = "query"
		s := testkit.New(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			query: {DefaultCost: time.Second, Priority: 8, DeadlineAdmission: true},
		}, fairsched.WithMaxConcurrency(1))
		c := collectorOf(t, s)
		busy := testkit.NewGate()
		submit(t, s, query, "busy", busy.Run)
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		if err := s.RunSync(ctx, query, "late", "carol", ok); !errors.Is(err, fairsched.ErrStartAfterDeadline) {
			t.Fatalf("RunSync due in 500ms behind a 1s job: %v; want ErrStartAfterDeadline", err)
		}
		synctest.Wait()
		compare(t, c, `
fairsched_refused_total{reason="start_after_deadline",type="query"} 1
`, "fairsched_refused_total", "fairsched_shed_total")
		busy.Release(nil)
		synctest.Wait()
	})
}

// TestDropped: a job dropped by a Close whose context ends first counts.
func TestDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := openScheduler(t, fairsched.WithClock(clock.NewMock()), fairsched.WithMaxConcurrency(1))
		c := collectorOf(t, s)
		submit(t, s, clone, "c1", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
		submit(t, s, repack, "r1", ok) // never runs
		synctest.Wait()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := s.Close(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Close: %v; want context.Canceled", err)
		}
		c.Close() // the scheduler closed the channel after its last event
		compare(t, c, `
fairsched_dropped_total{type="repack"} 1
fairsched_failed_total{type="clone"} 1
fairsched_snapshot_errors_total 1
`, "fairsched_dropped_total", "fairsched_failed_total", "fairsched_snapshot_errors_total", "fairsched_running_jobs",
			"fairsched_max_concurrency")
	})
}

// TestAgingCountsEveryJob: five jobs age in one lane (one type, key and
// group), where the JobAged events see only the head; the counter counts
// every step of every one of them, exactly, and keeps the steps of a job
// that leaves the queue.
func TestAgingCountsEveryJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		s := newScheduler(t, fairsched.WithClock(mock), fairsched.WithMaxConcurrency(1),
			fairsched.WithAging(fairsched.AgingConfig{Interval: time.Second, Step: 1, MaxEffectivePriority: 10}))
		c := collectorOf(t, s)
		hold := testkit.NewGate()
		submit(t, s, clone, "hold", hold.Run) // holds the one slot
		gates := map[string]*testkit.Gate{}
		add := func(id string) {
			gates[id] = testkit.NewGate()
			submit(t, s, repack, id, gates[id].Run)
		}
		for _, id := range []string{"r1", "r2", "r3", "r4"} {
			add(id) // at t0
		}
		synctest.Wait()
		mock.Add(time.Second)
		add("r5") // at t1
		synctest.Wait()
		mock.Add(2 * time.Second)
		// t3: r1–r4 have risen 3 steps each, r5 2.
		compare(t, c, `
fairsched_aging_promotions_total{type="repack"} 14
`, "fairsched_aging_promotions_total")

		hold.Release(nil) // r1 runs: its 3 steps stay counted, it rises no more
		synctest.Wait()
		mock.Add(2 * time.Second)
		// t5: r1 3, r2–r4 5 each, r5 4.
		compare(t, c, `
fairsched_aging_promotions_total{type="repack"} 22
`, "fairsched_aging_promotions_total")

		for _, id := range []string{"r1", "r2", "r3", "r4", "r5"} {
			gates[id].Release(nil)
			synctest.Wait()
		}
		// Each ran as the one before ended, all at t5: nothing is waiting.
		compare(t, c, `
fairsched_aging_promotions_total{type="repack"} 22
`, "fairsched_aging_promotions_total")
	})
}

// TestAging: each rise of a waiting job's effective priority counts, and
// the job is admitted at the priority it aged to.
func TestAging(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		s := newScheduler(t, fairsched.WithClock(mock), fairsched.WithMaxConcurrency(1),
			fairsched.WithAging(fairsched.AgingConfig{Interval: time.Second, Step: 1, MaxEffectivePriority: 10}))
		c := collectorOf(t, s, WithBuckets([]float64{1, 5}))

		c1 := testkit.NewGate()
		submit(t, s, clone, "c1", c1.Run)
		submit(t, s, repack, "r1", ok)
		synctest.Wait() // both are in, at t0
		for range 3 {   // a second at a time; the scheduler sees it at its next call
			mock.Add(time.Second)
			if _, err := s.Snapshot(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		compare(t, c, `
fairsched_aging_promotions_total{type="repack"} 3
fairsched_pending_jobs{group="",reason="global_limit",tier="4",type="repack"} 1
`, "fairsched_aging_promotions_total", "fairsched_pending_jobs")

		c1.Release(nil)
		synctest.Wait()
		compare(t, c, `
fairsched_admitted_effective_priority{type="clone"} 8
fairsched_admitted_effective_priority{type="repack"} 7
fairsched_queue_wait_seconds_bucket{group="",tier="4",type="repack",le="1"} 0
fairsched_queue_wait_seconds_bucket{group="",tier="4",type="repack",le="5"} 1
fairsched_queue_wait_seconds_bucket{group="",tier="4",type="repack",le="+Inf"} 1
fairsched_queue_wait_seconds_sum{group="",tier="4",type="repack"} 3
fairsched_queue_wait_seconds_count{group="",tier="4",type="repack"} 1
fairsched_queue_wait_seconds_bucket{group="",tier="8",type="clone",le="1"} 1
fairsched_queue_wait_seconds_bucket{group="",tier="8",type="clone",le="5"} 1
fairsched_queue_wait_seconds_bucket{group="",tier="8",type="clone",le="+Inf"} 1
fairsched_queue_wait_seconds_sum{group="",tier="8",type="clone"} 0
fairsched_queue_wait_seconds_count{group="",tier="8",type="clone"} 1
`, "fairsched_admitted_effective_priority", "fairsched_queue_wait_seconds")
	})
}

// TestAdaptiveLimit: the adaptive limit and the global limit follow a slow
// job's backoff.
func TestAdaptiveLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		s := newScheduler(t, fairsched.WithClock(mock), fairsched.WithAdaptiveLimit(fairsched.AdaptiveLimitConfig{Min: 2, Max: 10}))
		c := collectorOf(t, s)
		compare(t, c, `
fairsched_adaptive_limit 10
fairsched_max_concurrency 10
`, "fairsched_adaptive_limit", "fairsched_max_concurrency")

		// A clone learned at 1s takes 2s: more than 1.5 times, so the limit
		// shrinks to ⌊10·0.9⌋.
		c1 := testkit.NewGate()
		submit(t, s, clone, "c1", c1.Run)
		synctest.Wait()
		mock.Add(2 * time.Second)
		c1.Release(nil)
		synctest.Wait()
		compare(t, c, `
fairsched_adaptive_limit 9
fairsched_max_concurrency 9
`, "fairsched_adaptive_limit", "fairsched_max_concurrency")
	})
}

// TestNamespace: metric names take the namespace, or none.
func TestNamespace(t *testing.T) {
	for _, tc := range []struct{ ns, name string }{
		{"myapp", "myapp_admitted_total"},
		{"", "admitted_total"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newScheduler(t, fairsched.WithClock(clock.NewMock()))
				c := collectorOf(t, s, WithNamespace(tc.ns))
				if err := s.RunSync(context.Background(), clone, "c1", "alice", ok); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				compare(t, c, tc.name+`{type="clone"} 1`, tc.name)
				if n := testutil.CollectAndCount(c, "fairsched_admitted_total"); n != 0 {
					t.Errorf("fairsched_admitted_total: %d series under namespace %q; want none", n, tc.ns)
				}
			})
		})
	}
}

// TestInvalidOptions: New refuses what it cannot use.
func TestInvalidOptions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, fairsched.WithClock(clock.NewMock()))
		for _, tc := range []struct {
			name string
			s    *fairsched.Scheduler
			opts []Option
		}{
			{"nil scheduler", nil, nil},
			{"namespace starting with a digit", s, []Option{WithNamespace("9lives")}},
			{"namespace with a dash", s, []Option{WithNamespace("my-app")}},
			{"no bucket", s, []Option{WithBuckets(nil)}},
			{"decreasing buckets", s, []Option{WithBuckets([]float64{1, 5, 2})}},
			{"equal buckets", s, []Option{WithBuckets([]float64{1, 1})}},
			{"infinite bucket", s, []Option{WithBuckets([]float64{1, math.Inf(1)})}},
			{"negative buffer", s, []Option{WithEventBuffer(-1)}},
			{"zero timeout", s, []Option{WithSnapshotTimeout(0)}},
		} {
			c, err := New(tc.s, tc.opts...)
			if !errors.Is(err, fairsched.ErrInvalidConfig) || c != nil {
				t.Errorf("%s: New = %v, %v; want nil, ErrInvalidConfig", tc.name, c, err)
			}
		}
	})
}

// TestPedanticRegistry: a pedantic registry accepts every metric the
// collector reports, each matching a description.
func TestPedanticRegistry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		s := newScheduler(t, fairsched.WithClock(mock), fairsched.WithGroupWeight("a", 2),
			fairsched.WithAdaptiveLimit(fairsched.AdaptiveLimitConfig{Min: 1, Max: 2}),
			fairsched.WithAging(fairsched.AgingConfig{Interval: time.Second, MaxEffectivePriority: 9}),
			fairsched.WithMaxPending(1))
		c := collectorOf(t, s)
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(c)

		g := testkit.NewGate()
		submit(t, s, clone, "a", g.Run, fairsched.InGroup("a"))                                // runs
		submit(t, s, repack, "c", func(context.Context) error { return errors.New("failed") }) // runs, fails
		submit(t, s, clone, "b", ok, fairsched.WithQueueTimeout(3*time.Second))                // waits, ages, expires
		if err := s.Submit(repack, "d", ok); err == nil {
			t.Error("Submit over the pending bound: nil error")
		}
		mock.Add(time.Second)
		synctest.Wait()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, mf := range mfs {
			got[mf.GetName()] = true
		}
		mock.Add(2 * time.Second) // b expires
		g.Release(nil)
		synctest.Wait()
		mfs, err = reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			got[mf.GetName()] = true
		}
		for _, name := range []string{
			"queue_wait_seconds", "job_duration_seconds", "admitted_effective_priority", "admitted_total",
			"completed_total", "failed_total", "refused_total", "expired_total", "aging_promotions_total",
			"group_allocation_changes_total", "excess_slots_redistributed_total", "running_jobs", "pending_jobs",
			"group_slots", "group_running", "max_concurrency", "adaptive_limit", "events_lost_total",
			"snapshot_errors_total",
		} {
			if !got["fairsched_"+name] {
				t.Errorf("fairsched_%s never gathered", name)
			}
		}
	})
}

// TestStalledCollectorNeverBlocksScheduler: while the collector's goroutine
// is stuck, its two-event buffer fills, the scheduler runs every job all the
// same, and the events it could not deliver show in events_lost_total.
func TestStalledCollectorNeverBlocksScheduler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, fairsched.WithClock(clock.NewMock()))
		hold := make(chan struct{})
		c := collectorOf(t, s, WithEventBuffer(2), withEventHook(func(fairsched.Event) { <-hold }))

		// r0's queueing, which the goroutine takes and sticks on, and its
		// admission, which stays in the buffer (both are sent at once).
		g := testkit.NewGate()
		submit(t, s, repack, "r0", g.Run)
		synctest.Wait()

		// A burst of 10 jobs, 3 events each: the first fills the buffer,
		// the other 29 are lost, as is r0's completion.
		const jobs = 10
		var ran atomic.Int32
		for i := range jobs {
			err := s.RunSync(context.Background(), clone, fmt.Sprint("c", i), "k", func(context.Context) error {
				ran.Add(1)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		g.Release(nil)
		synctest.Wait()
		if ran.Load() != jobs {
			t.Fatalf("%d jobs ran; want %d", ran.Load(), jobs)
		}
		snap, err := s.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		const lost = 3*jobs - 1 + 1
		if snap.EventsLost != lost {
			t.Fatalf("EventsLost = %d; want %d", snap.EventsLost, lost)
		}

		close(hold) // the goroutine records the three events it got
		synctest.Wait()
		compare(t, c, fmt.Sprintf(`
fairsched_admitted_total{type="repack"} 1
fairsched_events_lost_total %d
fairsched_queued_total{type="clone"} 1
fairsched_queued_total{type="repack"} 1
`, lost), "fairsched_queued_total", "fairsched_admitted_total", "fairsched_completed_total", "fairsched_events_lost_total")
	})
}

// TestConcurrentScrapes: scrapes racing the collector's goroutine see
// consistent metrics (the race detector watches), and the counts end exact.
func TestConcurrentScrapes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, fairsched.WithClock(clock.NewMock()), fairsched.WithMaxConcurrency(2))
		c := collectorOf(t, s)
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(c)

		const jobs, scrapers = 50, 4
		done := make(chan error, scrapers)
		for range scrapers {
			go func() {
				for range jobs {
					if _, err := reg.Gather(); err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
		}
		for i := range jobs {
			typ := clone
			if i%2 == 1 {
				typ = repack
			}
			go func() { _ = s.RunSync(context.Background(), typ, fmt.Sprint("j", i), fmt.Sprint("k", i%3), ok) }()
		}
		for range scrapers {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		compare(t, c, `
fairsched_admitted_total{type="clone"} 25
fairsched_admitted_total{type="repack"} 25
fairsched_completed_total{type="clone"} 25
fairsched_completed_total{type="repack"} 25
fairsched_events_lost_total 0
`, "fairsched_admitted_total", "fairsched_completed_total", "fairsched_events_lost_total")
	})
}

// TestCloseLeavesNoGoroutine: Close stops the collector's goroutine while
// the scheduler runs on, is safe to repeat, and the collector can still be
// scraped; once the scheduler is closed too no goroutine is left.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	before := goleak.IgnoreCurrent()
	synctest.Test(t, func(t *testing.T) {
		s := openScheduler(t, fairsched.WithClock(clock.NewMock()))
		c, err := New(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RunSync(context.Background(), clone, "c1", "alice", ok); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the completion's event is recorded
		c.Close()
		select {
		case <-c.done:
		default:
			t.Fatal("Close returned with the collector's goroutine running")
		}
		c.Close() // again: nothing to do

		// Events after Close are not recorded; the snapshot metrics still are.
		if err := s.RunSync(context.Background(), clone, "c2", "alice", ok); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		compare(t, c, `
fairsched_admitted_total{type="clone"} 1
fairsched_completed_total{type="clone"} 1
fairsched_max_concurrency 0
`, "fairsched_admitted_total", "fairsched_completed_total", "fairsched_max_concurrency")
		if got := testutil.ToFloat64(c.completed.WithLabelValues(string(clone))); got != 1 {
			t.Errorf("completed_total{type=clone} = %v; want 1", got)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	goleak.VerifyNone(t, before)
}

// TestClosedScheduler: a collector of a scheduler that closed first keeps
// no goroutine, and its scrapes count the missing snapshot.
func TestClosedScheduler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := openScheduler(t, fairsched.WithClock(clock.NewMock()))
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		c, err := New(s)
		if err != nil {
			t.Fatal(err)
		}
		<-c.done // the subscription came back closed
		compare(t, c, `fairsched_snapshot_errors_total 1`, "fairsched_snapshot_errors_total", "fairsched_max_concurrency")
		c.Close()
	})
}

// TestSnapshotTimeout: a scrape waits at most WithSnapshotTimeout for a
// scheduler that does not answer, then goes on without the snapshot.
func TestSnapshotTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		unblock := make(chan struct{})
		s := newScheduler(t, fairsched.WithClock(clock.NewMock()),
			fairsched.WithAdmissionPolicy(func(fairsched.JobInfo) fairsched.Decision {
				<-unblock // holds the owner goroutine: it answers nothing meanwhile
				return fairsched.Admit()
			}))
		c := collectorOf(t, s, WithSnapshotTimeout(50*time.Millisecond))
		submit(t, s, clone, "c1", ok)
		synctest.Wait()

		start := time.Now()
		compare(t, c, `fairsched_snapshot_errors_total 1`, "fairsched_snapshot_errors_total", "fairsched_max_concurrency")
		if waited := time.Since(start); waited != 50*time.Millisecond {
			t.Errorf("the scrape took %v; want the timeout, 50ms", waited)
		}
		close(unblock)
		synctest.Wait()
		compare(t, c, `
fairsched_admitted_total{type="clone"} 1
fairsched_max_concurrency 0
fairsched_snapshot_errors_total 1
`, "fairsched_admitted_total", "fairsched_snapshot_errors_total", "fairsched_max_concurrency")
	})
}

// TestDocTable: the package documentation's tables list every metric, with
// its type and labels, and nothing else.
func TestDocTable(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^//\t(\S+) +(\S+) +(\S.*?)  +\S`)
	documented := map[string][]string{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		if m[1] == "name" {
			continue // a header
		}
		documented[m[1]] = []string{m[2], m[3]}
	}
	for _, m := range specs {
		labels := strings.Join(m.labels, ", ")
		if labels == "" {
			labels = "-"
		}
		if got, want := documented[m.name], []string{string(m.kind), labels}; !slices.Equal(got, want) {
			t.Errorf("doc.go documents %s as %q; want %q", m.name, got, want)
		}
		delete(documented, m.name)
	}
	for name := range documented {
		t.Errorf("doc.go documents %s, which the collector does not report", name)
	}
}
