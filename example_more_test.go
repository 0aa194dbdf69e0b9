package fairsched_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/fairschedtest"
)

// A low-priority job waiting behind higher-priority work ages: after its
// 10s grace period its effective priority rises by one every 5s, until it
// reaches the stream's priority 4 and, having arrived first, goes ahead of
// fresh priority-4 work. The clock is a mock, moved by hand.
func ExampleWithAging() {
	mock := clock.NewMock()
	s, _ := fairsched.New(fairsched.WithClock(mock), fairsched.WithMaxConcurrency(1),
		fairsched.WithAging(fairsched.AgingConfig{GracePeriod: 10 * time.Second, Interval: 5 * time.Second, MaxEffectivePriority: 4}))
	defer s.Close(context.Background())
	_ = s.RegisterType("report", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1})
	_ = s.RegisterType("deploy", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4})

	order := make(chan string, 2)
	record := func(name string) func(context.Context) error {
		return func(context.Context) error { order <- name; return nil }
	}
	job := fairschedtest.NewBlocker()        // runs until Release
	_ = s.Submit("deploy", "first", job.Run) // holds the one slot
	_ = s.Submit("report", "weekly", record("report/weekly"))
	fairschedtest.Until(context.Background(), s, fairschedtest.Pending(1))
	for range 5 {
		mock.Add(5 * time.Second)
		snap, _ := s.Snapshot(context.Background())
		p := snap.Pending[0]
		fmt.Printf("after %v: %s/%s base %d, effective %d\n", snap.Time.Sub(p.Submitted), p.Type, p.ID, p.Priority, p.EffectivePriority)
	}
	_ = s.Submit("deploy", "fresh", record("deploy/fresh"))
	job.Release(nil)
	fmt.Println("ran:", <-order, "then", <-order)
	// Output:
	// after 5s: report/weekly base 1, effective 1
	// after 10s: report/weekly base 1, effective 1
	// after 15s: report/weekly base 1, effective 2
	// after 20s: report/weekly base 1, effective 3
	// after 25s: report/weekly base 1, effective 4
	// ran: report/weekly then deploy/fresh
}

// Tier shares: priority 1 has a quarter of the 4 slots reserved (and may
// burst to half of them), so a saturating stream of priority-8 work runs
// in 3 slots and the low tier keeps one.
func ExampleWithTier() {
	s, _ := fairsched.New(fairsched.WithMaxConcurrency(4),
		fairsched.WithTier(1, fairsched.TierConfig{MinShare: 0.25, BurstShare: 0.5}))
	defer s.Close(context.Background())
	_ = s.RegisterType("interactive", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8})
	_ = s.RegisterType("batch", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1})
	job := fairschedtest.NewBlocker() // each run waits for the Release
	defer job.Release(nil)
	for i := range 6 {
		_ = s.Submit("interactive", fmt.Sprint("i", i), job.Run)
	}
	for i := range 2 {
		_ = s.Submit("batch", fmt.Sprint("b", i), job.Run)
	}
	fairschedtest.Until(context.Background(), s, fairschedtest.Pending(4))
	snap, _ := s.Snapshot(context.Background())
	fmt.Printf("running: interactive %d, batch %d\n", snap.RunningByType["interactive"], snap.RunningByType["batch"])
	for _, p := range snap.Pending {
		fmt.Printf("%s/%s waits: %s\n", p.Type, p.ID, p.Reason)
	}
	// Output:
	// running: interactive 3, batch 1
	// interactive/i3 waits: global_limit
	// interactive/i4 waits: global_limit
	// interactive/i5 waits: global_limit
	// batch/b1 waits: global_limit
}

// A rate limit of one export a second (burst 1): the second export waits
// with reason rate_limited until the bucket refills, though slots are free.
func ExampleWithRateLimit() {
	mock := clock.NewMock()
	t0 := mock.Now()
	s, _ := fairsched.New(fairsched.WithClock(mock), fairsched.WithRateLimit(fairsched.RateForType("export"), 1, 1))
	defer s.Close(context.Background())
	_ = s.RegisterType("export", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4})

	ran := make(chan time.Duration, 2)
	export := func(context.Context) error { ran <- mock.Now().Sub(t0); return nil }
	_ = s.RunSync(context.Background(), "export", "a", "alice", export) // takes the token
	_ = s.Submit("export", "b", export)
	fairschedtest.Until(context.Background(), s, fairschedtest.Pending(1))
	snap, _ := s.Snapshot(context.Background())
	fmt.Printf("export/%s waits: %s\n", snap.Pending[0].ID, snap.Pending[0].Reason)
	mock.Add(time.Second)
	fmt.Println("export/a ran at", <-ran)
	fmt.Println("export/b ran at", <-ran)
	// Output:
	// export/b waits: rate_limited
	// export/a ran at 0s
	// export/b ran at 1s
}

// Fairness key weights: with one slot, "gold" (weight 2) and "silver"
// (weight 1) both waiting, gold is charged half of each job's cost and so
// gets two jobs for each of silver's.
func ExampleWithKeyWeight() {
	s, _ := fairsched.New(fairsched.WithMaxConcurrency(1), fairsched.WithKeyWeight("gold", 2))
	defer s.Close(context.Background())
	_ = s.RegisterType("query", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4})

	job := fairschedtest.NewBlocker()        // runs until Release
	_ = s.Submit("query", "warmup", job.Run) // holds the slot while the queue fills
	order := make(chan string, 9)
	submit := func(key string, n int) {
		for i := range n {
			_ = s.Submit("query", fmt.Sprint(key, i), func(context.Context) error { order <- key; return nil },
				fairsched.WithFairnessKey(key), fairsched.WithTokens(time.Second))
		}
	}
	submit("silver", 3)
	submit("gold", 6)
	fairschedtest.Until(context.Background(), s, fairschedtest.Pending(9))
	job.Release(nil)
	var got []string
	for range 9 {
		got = append(got, <-order)
	}
	fmt.Println(strings.Join(got, " "))
	// Output:
	// silver gold gold silver gold gold silver gold gold
}

// A periodic job runs at once, then every 10s of the (mock) clock, until
// stop is called.
func ExampleScheduler_SubmitPeriodic() {
	mock := clock.NewMock()
	t0 := mock.Now()
	s, _ := fairsched.New(fairsched.WithClock(mock))
	_ = s.RegisterType("sweep", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1})

	ran := make(chan time.Duration, 10)
	stop, _ := s.SubmitPeriodic("sweep", "tmp", 10*time.Second, func(context.Context) error {
		ran <- mock.Now().Sub(t0)
		return nil
	})
	fmt.Println("sweep at", <-ran)
	for range 2 {
		fairschedtest.Until(context.Background(), s, fairschedtest.Idle) // the occurrence has ended: the next one is not skipped
		mock.Add(10 * time.Second)
		fmt.Println("sweep at", <-ran)
	}
	stop()
	mock.Add(30 * time.Second)
	_ = s.Close(context.Background()) // waits for any job under way
	fmt.Println("runs after stop:", len(ran))
	// Output:
	// sweep at 0s
	// sweep at 10s
	// sweep at 20s
	// runs after stop: 0
}

// Coalescing: RunSync callers asking for the same (type, id) while it is
// pending share one run — the first request's function, run once — and
// each gets its result. (The example counts JobJoined events to know that
// every caller has joined.)
func ExampleJobTypeConfig_coalesce() {
	s, _ := fairsched.New(fairsched.WithMaxConcurrency(1))
	defer s.Close(context.Background())
	events, stop := s.Subscribe(16)
	defer stop()
	_ = s.RegisterType("fetch", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4, Coalesce: true})
	_ = s.RegisterType("other", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4})

	job := fairschedtest.NewBlocker()      // runs until Release
	_ = s.Submit("other", "busy", job.Run) // holds the slot: the fetch waits
	var runs atomic.Int32
	fetch := func(context.Context) error { runs.Add(1); return nil }
	results := make(chan error, 3)
	go func() { results <- s.RunSync(context.Background(), "fetch", "feed", "alice", fetch) }()
	fairschedtest.Until(context.Background(), s, fairschedtest.Pending(1)) // alice's request is the run
	for _, user := range []string{"bob", "carol"} {
		go func() { results <- s.RunSync(context.Background(), "fetch", "feed", user, fetch) }()
	}
	for joined := 0; joined < 2; { // bob and carol join it
		if _, ok := (<-events).(fairsched.JobJoined); ok {
			joined++
		}
	}
	job.Release(nil)
	for range 3 {
		fmt.Println("result:", <-results)
	}
	fmt.Println("runs:", runs.Load())
	// Output:
	// result: <nil>
	// result: <nil>
	// result: <nil>
	// runs: 1
}

// Supersede replaces a pending background job of the same (type, id): the
// older one never runs.
func ExampleSupersede() {
	s, _ := fairsched.New(fairsched.WithMaxConcurrency(1))
	_ = s.RegisterType("render", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4})
	job := fairschedtest.NewBlocker()       // runs until Release
	_ = s.Submit("render", "busy", job.Run) // holds the slot
	version := func(v string) func(context.Context) error {
		return func(context.Context) error { fmt.Println("rendering", v); return nil }
	}
	_ = s.Submit("render", "dashboard", version("v1"))
	_ = s.Submit("render", "dashboard", version("v2"), fairsched.Supersede())
	fairschedtest.Until(context.Background(), s, fairschedtest.Pending(1))
	job.Release(nil)
	_ = s.Close(context.Background()) // runs what is pending
	// Output:
	// rendering v2
}

// A paused group's jobs wait with reason paused; ResumeGroup lets them run.
func ExampleScheduler_PauseGroup() {
	s, _ := fairsched.New()
	defer s.Close(context.Background())
	_ = s.RegisterType("index", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4})
	_ = s.PauseGroup("search")
	done := make(chan struct{})
	_ = s.Submit("index", "docs", func(context.Context) error { close(done); return nil }, fairsched.InGroup("search"))
	fairschedtest.Until(context.Background(), s, fairschedtest.Pending(1))
	snap, _ := s.Snapshot(context.Background())
	fmt.Printf("%s/%s in %q waits: %s\n", snap.Pending[0].Type, snap.Pending[0].ID, snap.Pending[0].Group, snap.Pending[0].Reason)
	_ = s.ResumeGroup("search")
	<-done
	fmt.Println("index/docs ran")
	// Output:
	// index/docs in "search" waits: paused
	// index/docs ran
}

// The adaptive limit starts at its maximum and moves with latency: a job
// that takes more than Tolerance (1.5) times its estimated cost shrinks it
// by Backoff (0.9). The snapshot's MaxConcurrency is the current limit.
func ExampleWithAdaptiveLimit() {
	mock := clock.NewMock()
	s, _ := fairsched.New(fairsched.WithClock(mock), fairsched.WithAdaptiveLimit(fairsched.AdaptiveLimitConfig{Min: 2, Max: 8}))
	defer s.Close(context.Background())
	_ = s.RegisterType("query", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8})

	snap, _ := s.Snapshot(context.Background())
	a := snap.Adaptive
	fmt.Printf("limit %d in [%d, %d], tolerance %v, backoff %v\n", snap.MaxConcurrency, a.Min, a.Max, a.Tolerance, a.Backoff)
	_ = s.RunSync(context.Background(), "query", "slow", "alice", func(context.Context) error {
		mock.Add(2 * time.Second) // twice its estimated 1s
		return nil
	})
	fairschedtest.Until(context.Background(), s, fairschedtest.Idle) // the scheduler has seen the job end
	snap, _ = s.Snapshot(context.Background())
	fmt.Println("after a slow job: limit", snap.MaxConcurrency)
	// Output:
	// limit 8 in [2, 8], tolerance 1.5, backoff 0.9
	// after a slow job: limit 7
}

// Conflict exclusion: a clone and a repack share the conflict group "git",
// so they never run at the same time on one repository — the repack waits
// (reason conflict, holding no slot) while a repack of another repository
// runs.
func ExampleJobTypeConfig_conflictGroup() {
	s, _ := fairsched.New()
	defer s.Close(context.Background())
	_ = s.RegisterType("sync-clone", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4, ConflictGroup: "git"})
	_ = s.RegisterType("repack", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4, ConflictGroup: "git"})

	release := make(chan struct{})
	_ = s.Submit("sync-clone", "linux", func(context.Context) error {
		<-release
		fmt.Println("clone of linux ends")
		return nil
	})
	_ = s.Submit("repack", "linux", func(context.Context) error { fmt.Println("repack of linux starts"); return nil })
	_ = s.Submit("repack", "hurd", func(context.Context) error { <-release; return nil })
	fairschedtest.Until(context.Background(), s, func(snap fairsched.Snapshot) bool { return len(snap.Running) == 2 && len(snap.Pending) == 1 })
	snap, _ := s.Snapshot(context.Background())
	for _, r := range snap.Running {
		fmt.Printf("running %s/%s\n", r.Type, r.ID)
	}
	fmt.Printf("%s/%s waits: %s\n", snap.Pending[0].Type, snap.Pending[0].ID, snap.Pending[0].Reason)
	close(release)
	fairschedtest.Until(context.Background(), s, fairschedtest.Idle)
	// Output:
	// running sync-clone/linux
	// running repack/hurd
	// repack/linux waits: conflict
	// clone of linux ends
	// repack of linux starts
}
