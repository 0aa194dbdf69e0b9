package fairsched_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/invariant"
)

var (
	invSeeds    = flag.Int("invariant.seeds", 0, "seeds TestInvariants plays (0: 1000)")
	invFirst    = flag.Uint64("invariant.first", 1, "the first seed TestInvariants plays")
	invSoak     = flag.Bool("invariant.soak", false, "run TestSoak: one long seeded simulation")
	invSoakJobs = flag.Int("invariant.soakjobs", 1_000_000, "jobs TestSoak streams through the scheduler")
	invSoakSeed = flag.Uint64("invariant.soakseed", 1, "TestSoak's seed")
	invSoakEach = flag.Int("invariant.soakcheck", 4, "TestSoak checks a snapshot every this many steps (the checks at each start and end run always)")
)

// invDefaultSeeds is how many seeds TestInvariants plays by default: a
// thousand, under a minute with -race on this project's 2-vCPU machines
// (make check); a hundred with -short (make test).
func invDefaultSeeds() int {
	if testing.Short() {
		return 100
	}
	return 1000
}

// TestInvariants plays seeded random workloads over every feature through
// the real scheduler in virtual time and checks its invariants at every
// step (see package internal/invariant): no cap of any kind exceeded, no
// conflict overlap, one job per worker slot of a type it takes, no pending
// job without a reason that holds, each attempt once and every outcome
// typed, every caller answered, every accepted job answered exactly once in
// the event stream; for two saturated weighted keys their weighted service
// within one job's cost; with aging every job started within
// MaxWait(base) plus one job duration.
func TestInvariants(t *testing.T) {
	n := *invSeeds
	if n <= 0 {
		n = invDefaultSeeds()
	}
	start := time.Now()
	var jobs, starts, steps, superseded, preempted, shed atomic.Int64
	t.Cleanup(func() {
		t.Logf("%d seeds from %d: %d jobs, %d attempts, %d steps, %d superseded, %d preempted in %v",
			n, *invFirst, jobs.Load(), starts.Load(), steps.Load(), superseded.Load(), preempted.Load(), time.Since(start).Round(time.Millisecond))
		if n >= 100 && superseded.Load() == 0 && !t.Failed() {
			t.Error("no Supersede replaced a job in any seed: the simulation does not exercise it")
		}
		if n >= 100 && preempted.Load() == 0 && !t.Failed() {
			t.Error("no job was preempted in any seed: the simulation does not exercise it")
		}
		if n >= 100 && shed.Load() == 0 && !t.Failed() {
			t.Error("no job was shed in any seed: the simulation does not exercise fair shedding")
		}
	})
	for seed := *invFirst; seed < *invFirst+uint64(n); seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			res := invariant.Play(t, invariant.Options{Seed: seed, Mode: invariant.ModeFor(seed)})
			jobs.Add(int64(res.Jobs))
			starts.Add(int64(res.Starts))
			steps.Add(int64(res.Steps))
			superseded.Add(int64(res.Superseded))
			preempted.Add(int64(res.Preemptions))
			shed.Add(int64(res.Shed))
			replay := fmt.Sprintf("go test -run 'TestInvariants/seed=%d$' -v .", seed)
			if seed >= 1+uint64(invDefaultSeeds()) {
				replay = fmt.Sprintf("go test -run 'TestInvariants/seed=%d$' -v -invariant.first=%d -invariant.seeds=1 .", seed, seed)
			}
			if len(res.Violations) > 0 {
				t.Errorf("seed %d (%s mode): %d invariant violation(s):\n  %s\nconfiguration: %s\nlast actions before the first violation:\n  %s\nreplay: %s",
					seed, res.Mode, len(res.Violations), strings.Join(res.Violations, "\n  "), res.Config,
					strings.Join(res.Trace, "\n  "), replay)
				return
			}
		})
	}
}

// TestSoak streams a million jobs (-invariant.soakjobs) through one
// scheduler in one seeded chaos simulation, with every check of
// TestInvariants, and reports the throughput. Skipped unless
// -invariant.soak is set: `make soak`.
func TestSoak(t *testing.T) {
	if !*invSoak {
		t.Skip("the soak runs with -invariant.soak (make soak)")
	}
	start := time.Now()
	res := invariant.Play(t, invariant.Options{Seed: *invSoakSeed, Jobs: *invSoakJobs, CheckEvery: *invSoakEach})
	took := time.Since(start)
	t.Logf("soak seed %d: %d jobs (%d attempts) over %v of virtual time in %v: %.0f jobs/s, %.0f attempts/s; %d steps, %d snapshots checked",
		*invSoakSeed, res.Jobs, res.Starts, res.Virtual.Round(time.Second), took.Round(time.Millisecond),
		float64(res.Jobs)/took.Seconds(), float64(res.Starts)/took.Seconds(), res.Steps, res.Snapshots)
	t.Logf("configuration: %s", res.Config)
	if len(res.Violations) > 0 {
		t.Errorf("soak seed %d: %d invariant violation(s):\n  %s\nlast actions before the first violation:\n  %s",
			*invSoakSeed, len(res.Violations), strings.Join(res.Violations, "\n  "), strings.Join(res.Trace, "\n  "))
	}
}

// TestStressEveryMethod: 2 000 goroutines call every public method at once
// — RunSync with random cancellations, Submit, SubmitPeriodic and its stop,
// Snapshot, Subscribe and its cancel, SetKeyWeight, SetGroupWeight,
// ResetGroupWeights, PauseGroup and ResumeGroup, RegisterWorker and
// UnregisterWorker, RegisterType — while Close races them. Every call
// returns within the deadline with nil or an error it may return, every
// background job Submit accepted ran, expired or was reported dropped, and
// goleak (TestMain) finds nothing left running. Meant for -race.
func TestStressEveryMethod(t *testing.T) {
	for _, abort := range []bool{false, true} {
		name := "graceful Close"
		if abort {
			name = "Close whose context ends"
		}
		t.Run(name, func(t *testing.T) { invStress(t, abort) })
	}
}

// invStress is one round of TestStressEveryMethod: Close starts half-way
// through the calls; with abort its context ends three quarters of the way.
func invStress(t *testing.T, abort bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	closeCtx, abortClose := context.WithCancel(ctx)
	defer abortClose()
	const (
		callers = 2000
		calls   = 6
		plain   = fairsched.JobType("plain")
		limited = fairsched.JobType("limited")
		coal    = fairsched.JobType("coal")
		onSlot  = fairsched.JobType("onslot")
		retried = fairsched.JobType("retried")
	)
	logs, records := observer.New(zap.InfoLevel)
	s, err := fairsched.New(
		fairsched.WithMaxConcurrency(8),
		fairsched.WithLogger(zap.New(logs)),
		fairsched.WithGroupWeight("ga", 2), fairsched.WithGroupWeight("gb", 1), fairsched.WithGroupLimit("gb", 3),
		fairsched.WithAging(fairsched.AgingConfig{Interval: time.Millisecond, MaxEffectivePriority: 9, UrgentThreshold: 9}),
		fairsched.WithTenantLimits(fairsched.TenantLimits{MaxRunning: 3, MaxPending: 400}),
		fairsched.WithMaxPending(3000),
		fairsched.WithRateLimit(fairsched.RateForKey("k3"), 5000, 50),
		fairsched.WithKeyWeight("k1", 2),
		fairsched.WithTier(6, fairsched.TierConfig{MinShare: 0.25, BurstShare: 0.75, LendIdle: true}),
	)
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[fairsched.JobType]fairsched.JobTypeConfig{
		plain:   {DefaultCost: time.Millisecond, Priority: 6, ConflictGroup: "git"},
		limited: {DefaultCost: time.Millisecond, Priority: 3, MaxConcurrency: 2, ConflictGroup: "git", QueueTimeout: 50 * time.Millisecond},
		coal:    {DefaultCost: time.Millisecond, Priority: 4, Coalesce: true},
		onSlot:  {DefaultCost: time.Millisecond, Priority: 5, RequiresWorker: true},
		retried: {DefaultCost: time.Millisecond, Priority: 2, Retry: fairsched.RetryPolicy{MaxAttempts: 2, MinBackoff: time.Microsecond, MaxBackoff: time.Microsecond}},
	} {
		if err := s.RegisterType(name, cfg); err != nil {
			t.Fatal(err)
		}
	}
	// A worker that never leaves: work on slots can always drain.
	if err := s.RegisterWorker(fairsched.WorkerSpec{ID: "base", Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{onSlot}}}}); err != nil {
		t.Fatal(err)
	}

	var (
		wg                               sync.WaitGroup
		accepted, ran, bgRan, done, outs atomic.Int64
		sharedAccepted, sharedRan        atomic.Int64 // background jobs on a shared id ("rN")
		acceptedIDs, ranIDs              sync.Map     // background jobs on an id of their own ("bg-…")
		closeNow                         = make(chan struct{})
		closeOnce                        sync.Once
		mu                               sync.Mutex
		bad                              []string
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(bad) < 20 {
			bad = append(bad, fmt.Sprintf(format, args...))
		}
	}
	// ok reports whether err is one a call may return while Close races it.
	ok := func(err error, also ...error) bool {
		if err == nil || errors.Is(err, fairsched.ErrClosed) {
			return true
		}
		for _, e := range also {
			if errors.Is(err, e) {
				return true
			}
		}
		return false
	}
	errJob := errors.New("job failed")
	job := func(ctx context.Context) error {
		ran.Add(1)
		runtime.Gosched()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return nil
	}
	types := []fairsched.JobType{plain, limited, coal, onSlot, retried}
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), 7))
			for i := range calls {
				if ctx.Err() != nil {
					fail("caller %d: deadline reached", c)
					return
				}
				switch done.Add(1) {
				case callers * calls / 2:
					closeOnce.Do(func() { close(closeNow) }) // half-way: Close races the rest
				case callers * calls * 3 / 4:
					if abort {
						abortClose() // Close gives up on what is left
					}
				}
				key := fmt.Sprintf("k%d", r.IntN(5))
				id := fmt.Sprintf("r%d", r.IntN(16))
				typ := types[r.IntN(len(types))]
				var opts []fairsched.JobOption
				if g := r.IntN(3); g > 0 {
					opts = append(opts, fairsched.InGroup([]string{"", "ga", "gb"}[g]))
				}
				switch op := r.IntN(16); op {
				case 0, 1, 2, 3, 4:
					jctx, jcancel := context.WithCancel(ctx)
					fn := job
					switch r.IntN(4) {
					case 0:
						jcancel() // the caller has left already
					case 1:
						if typ == coal {
							break // a shared run outlives the caller that leaves
						}
						fn = func(ctx context.Context) error { jcancel(); <-ctx.Done(); return ctx.Err() } // leaves while it runs
					case 2:
						fn = func(context.Context) error { return errJob }
					}
					err := s.RunSync(jctx, typ, id, key, fn, opts...)
					jcancel()
					if !ok(err, context.Canceled, errJob, fairsched.ErrExpired, fairsched.ErrTenantLimit, fairsched.ErrOverloaded, fairsched.ErrWorkerLost) {
						fail("RunSync(%s) = %v", typ, err)
					}
					outs.Add(1)
				case 5, 6, 7:
					bt := []fairsched.JobType{plain, limited, onSlot}[r.IntN(3)]
					if r.IntN(2) == 0 {
						opts = append(opts, fairsched.WithFairnessKey(key))
					}
					bid := fmt.Sprintf("bg-%d-%d", c, i) // unique: its expiry is found in the log by id
					if bt == plain && r.IntN(3) == 0 {
						bid = id // shares a conflict key (plain never expires)
					}
					err := s.Submit(bt, bid, func(ctx context.Context) error {
						bgRan.Add(1)
						if strings.HasPrefix(bid, "bg-") {
							ranIDs.Store(bid, true)
						} else {
							sharedRan.Add(1)
						}
						return job(ctx)
					}, opts...)
					switch {
					case err == nil:
						accepted.Add(1)
						if strings.HasPrefix(bid, "bg-") {
							acceptedIDs.Store(bid, true)
						} else {
							sharedAccepted.Add(1)
						}
					case !ok(err, fairsched.ErrTenantLimit, fairsched.ErrOverloaded):
						fail("Submit(%s) = %v", bt, err)
					}
				case 8:
					stop, err := s.SubmitPeriodic(plain, fmt.Sprintf("per-%d-%d", c, i), time.Millisecond, func(context.Context) error { return nil })
					if !ok(err) {
						fail("SubmitPeriodic = %v", err)
					} else if err == nil {
						runtime.Gosched()
						stop()
						stop()
					}
				case 9:
					sctx, scancel := context.WithCancel(ctx)
					if r.IntN(4) == 0 {
						scancel()
					}
					snap, err := s.Snapshot(sctx)
					scancel()
					if !ok(err, context.Canceled) {
						fail("Snapshot = %v", err)
					} else if err == nil && snap.MaxConcurrency != 8 {
						fail("Snapshot.MaxConcurrency = %d", snap.MaxConcurrency)
					}
				case 10:
					events, stop := s.Subscribe(r.IntN(4))
					for range r.IntN(3) {
						select {
						case <-events:
						default:
						}
					}
					stop()
					stop()
					for range events { // closed by stop: drains what was buffered
					}
				case 11:
					if err := s.SetKeyWeight(key, float64(r.IntN(4))); !ok(err) {
						fail("SetKeyWeight = %v", err)
					}
				case 12:
					var err error
					if r.IntN(5) == 0 {
						err = s.ResetGroupWeights()
					} else {
						err = s.SetGroupWeight([]string{"", "ga", "gb", "gc"}[r.IntN(4)], r.IntN(4))
					}
					if !ok(err) {
						fail("SetGroupWeight = %v", err)
					}
				case 13:
					g := []string{"ga", "gb", "gc"}[r.IntN(3)]
					if err := s.PauseGroup(g); !ok(err) {
						fail("PauseGroup = %v", err)
					}
					runtime.Gosched()
					if err := s.ResumeGroup(g); !ok(err) {
						fail("ResumeGroup = %v", err)
					}
				case 14:
					w := fmt.Sprintf("w-%d-%d", c, i)
					err := s.RegisterWorker(fairsched.WorkerSpec{ID: w, Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{onSlot}}, {Types: []fairsched.JobType{onSlot}}}})
					if !ok(err) {
						fail("RegisterWorker = %v", err)
					} else if err == nil {
						runtime.Gosched()
						if err := s.UnregisterWorker(w); !ok(err) {
							fail("UnregisterWorker = %v", err)
						}
					}
				case 15:
					err := s.RegisterType(fairsched.JobType(fmt.Sprintf("new-%d-%d", c, i)), fairsched.JobTypeConfig{DefaultCost: time.Millisecond, Priority: 1})
					if !ok(err) {
						fail("RegisterType = %v", err)
					}
				}
			}
		}()
	}
	var closeErr error
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		select {
		case <-closeNow:
		case <-ctx.Done():
		}
		closeErr = s.Close(closeCtx)
	}()
	wg.Wait()
	closeOnce.Do(func() { close(closeNow) })
	<-closed
	if closeErr != nil && !errors.Is(closeErr, fairsched.ErrClosed) && !(abort && errors.Is(closeErr, context.Canceled)) {
		t.Errorf("Close = %v", closeErr)
	}
	for _, b := range bad {
		t.Error(b)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Errorf("second Close = %v", err)
	}
	// Every background job Submit accepted ends once: it ran (its last
	// attempt, after one lost with its worker, may be the one dropped),
	// expired, or was reported dropped unrun.
	ended := map[string]string{}
	sharedDropped := 0
	for _, msg := range []string{"background job dropped", "job expired"} {
		for _, e := range records.FilterMessage(msg).All() {
			id, _ := e.ContextMap()["id"].(string)
			switch {
			case strings.HasPrefix(id, "bg-"):
				if was, twice := ended[id]; twice {
					t.Errorf("background job %s reported %q and %q", id, was, msg)
				}
				ended[id] = msg
			case msg == "background job dropped" && !strings.HasPrefix(id, "per-") && e.ContextMap()["type"] == string(plain):
				sharedDropped++ // not a periodic occurrence nor a coalesced run: a Submit
			}
		}
	}
	acceptedIDs.Range(func(k, _ any) bool {
		id := k.(string)
		if _, ran := ranIDs.Load(id); !ran && ended[id] == "" {
			t.Errorf("background job %s was accepted, never ran and was not reported dropped or expired", id)
		}
		delete(ended, id)
		return true
	})
	for id, msg := range ended {
		t.Errorf("background job %s reported %q but never accepted", id, msg)
	}
	// Shared-id jobs are of type plain: no worker, no expiry, one attempt.
	if n := sharedRan.Load() + int64(sharedDropped); n != sharedAccepted.Load() {
		t.Errorf("%d background jobs on shared ids accepted; %d ran and %d were dropped", sharedAccepted.Load(), sharedRan.Load(), sharedDropped)
	}
	dropped, expired := records.FilterMessage("background job dropped").Len(), records.FilterMessage("job expired").Len()
	t.Logf("%d callers × %d calls: %d RunSync answered, %d background jobs accepted (%d ran, %d dropped, %d expired), %d job runs in all; Close = %v",
		callers, calls, outs.Load(), accepted.Load(), bgRan.Load(), dropped, expired, ran.Load(), closeErr)
}

// TestInvariantRegressions replays, reduced to a few calls, each library
// bug the randomized simulation found, and fails if one comes back: a
// pending job with no reason while a slot is free, or nothing running at
// all while jobs wait.
func TestInvariantRegressions(t *testing.T) {
	type scenario struct {
		opts []fairsched.Option
		// play drives the scheduler and returns the snapshot that shows
		// the bug: a pending job with no reason, or nothing running.
		play func(t *testing.T, s *fairsched.Scheduler, mock *clock.Mock) fairsched.Snapshot
	}
	release := make(chan struct{})
	block := func(ctx context.Context) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}
	noop := func(context.Context) error { return nil }
	// withdraw: a job is held by its group's share (or a tier's
	// reservation) because another job waits; that job's caller leaves.
	withdraw := func(t *testing.T, s *fairsched.Scheduler, group, held fairsched.JobType, heldOpts ...fairsched.JobOption) fairsched.Snapshot {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.RunSync(ctx, group, "r", "k", block, fairsched.InGroup("b")) }()
		synctest.Wait()
		invMust(t, s.Submit(held, "z", block, heldOpts...))
		synctest.Wait()
		cancel() // the waiting caller leaves: its job is withdrawn
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("RunSync = %v", err)
		}
		synctest.Wait()
		return invSnapshot(t, s)
	}
	for name, sc := range map[string]scenario{
		// Groups a and b share 2 slots 1:1 while b has work; a runs one
		// job and holds the second. b's only job (kept out by its type's
		// cap) is withdrawn: a's share becomes 2, yet nothing dispatches.
		"withdraw/group share": {[]fairsched.Option{fairsched.WithMaxConcurrency(2),
			fairsched.WithGroupWeight("a", 1), fairsched.WithGroupWeight("b", 1)},
			func(t *testing.T, s *fairsched.Scheduler, _ *clock.Mock) fairsched.Snapshot {
				invMust(t, s.Submit("capped", "x", block, fairsched.InGroup("a")))
				synctest.Wait()
				return withdraw(t, s, "capped", "plain", fairsched.InGroup("a"))
			}},
		// Tier 5 reserves 1 of 2 slots, lent while it has nothing
		// waiting. A tier-5 job waits (conflict) and is withdrawn: the
		// reservation is lendable, yet the tier-3 job is not dispatched.
		"withdraw/tier reservation": {[]fairsched.Option{fairsched.WithMaxConcurrency(2),
			fairsched.WithTier(5, fairsched.TierConfig{MinShare: 0.5, BurstShare: 1, LendIdle: true})},
			func(t *testing.T, s *fairsched.Scheduler, _ *clock.Mock) fairsched.Snapshot {
				invMust(t, s.Submit("low", "r", block))
				synctest.Wait()
				return withdraw(t, s, "high", "low")
			}},
		// The same with a coalescing type: the caller that leaves is the
		// last waiter of a pending shared run, which is withdrawn.
		"withdraw/coalesced run": {[]fairsched.Option{fairsched.WithMaxConcurrency(2),
			fairsched.WithGroupWeight("a", 1), fairsched.WithGroupWeight("b", 1)},
			func(t *testing.T, s *fairsched.Scheduler, _ *clock.Mock) fairsched.Snapshot {
				invMust(t, s.Submit("coalcapped", "x", block, fairsched.InGroup("a")))
				synctest.Wait()
				return withdraw(t, s, "coalcapped", "plain", fairsched.InGroup("a"))
			}},
		// One slot, two groups: a's job needs a worker (none), b's share
		// rounds down to 0. b's job ages past UrgentThreshold after 4s and
		// may borrow the idle slot, but an hour later it still waits.
		"urgent borrow": {[]fairsched.Option{fairsched.WithMaxConcurrency(1),
			fairsched.WithGroupWeight("a", 1), fairsched.WithGroupWeight("b", 1),
			fairsched.WithAging(fairsched.AgingConfig{Interval: time.Second, MaxEffectivePriority: 9, UrgentThreshold: 9})},
			func(t *testing.T, s *fairsched.Scheduler, mock *clock.Mock) fairsched.Snapshot {
				invMust(t, s.Submit("onslot", "w", noop, fairsched.InGroup("a")))
				invMust(t, s.Submit("plain", "p", noop, fairsched.InGroup("b")))
				synctest.Wait()
				mock.Add(time.Hour)
				synctest.Wait()
				return invSnapshot(t, s)
			}},
		// Tiers 8 and 5 reserve 1 of 2 slots each (lent while idle); three
		// groups share the 2 slots, c's share rounding down to 0. c holds
		// the tier-8 and tier-5 jobs, a and b tier-2 jobs: when the two
		// running jobs end, the reservations keep a and b out, the share
		// keeps c out, and nothing ever runs.
		"tier x group deadlock": {[]fairsched.Option{fairsched.WithMaxConcurrency(2),
			fairsched.WithTier(8, fairsched.TierConfig{MinShare: 0.5, BurstShare: 0.5, LendIdle: true}),
			fairsched.WithTier(5, fairsched.TierConfig{MinShare: 0.5, BurstShare: 1, LendIdle: true}),
			fairsched.WithGroupWeight("a", 1), fairsched.WithGroupWeight("b", 1), fairsched.WithGroupWeight("c", 1)},
			func(t *testing.T, s *fairsched.Scheduler, _ *clock.Mock) fairsched.Snapshot {
				invMust(t, s.Submit("low", "xa", block, fairsched.InGroup("a")))
				invMust(t, s.Submit("low", "xb", block, fairsched.InGroup("b")))
				synctest.Wait()
				invMust(t, s.Submit("top", "h8", noop, fairsched.InGroup("c")))
				invMust(t, s.Submit("high", "h5", noop, fairsched.InGroup("c")))
				invMust(t, s.Submit("low", "la", noop, fairsched.InGroup("a")))
				invMust(t, s.Submit("low", "lb", noop, fairsched.InGroup("b")))
				synctest.Wait()
				close(release)
				synctest.Wait()
				return invSnapshot(t, s)
			}},
	} {
		t.Run(name, func(t *testing.T) {
			var snap fairsched.Snapshot
			synctest.Test(t, func(t *testing.T) {
				release = make(chan struct{})
				mock := clock.NewMock()
				s, err := fairsched.New(append(sc.opts, fairsched.WithClock(mock))...)
				if err != nil {
					t.Fatal(err)
				}
				for typ, cfg := range map[fairsched.JobType]fairsched.JobTypeConfig{
					"plain":      {DefaultCost: time.Second, Priority: 5},
					"capped":     {DefaultCost: time.Second, Priority: 5, MaxConcurrency: 1},
					"coalcapped": {DefaultCost: time.Second, Priority: 5, MaxConcurrency: 1, Coalesce: true},
					"onslot":     {DefaultCost: time.Second, Priority: 5, RequiresWorker: true},
					"top":        {DefaultCost: time.Second, Priority: 8},
					"high":       {DefaultCost: time.Second, Priority: 5, ConflictGroup: "git"},
					"low":        {DefaultCost: time.Second, Priority: 3, ConflictGroup: "git"},
				} {
					invMust(t, s.RegisterType(typ, cfg))
				}
				snap = sc.play(t, s, mock)
				select {
				case <-release:
				default:
					close(release)
				}
				ctx, cancel := context.WithCancel(context.Background())
				cancel() // a graceful Close would wait forever in the deadlock
				_ = s.Close(ctx)
			})
			var idle []string
			for _, p := range snap.Pending {
				// With nothing running, no cap or share can hold a job back.
				capped := p.Reason == fairsched.ReasonGlobalLimit || p.Reason == fairsched.ReasonGroupLimit
				if p.Reason == "" || len(snap.Running) == 0 && capped {
					idle = append(idle, fmt.Sprintf("%s/%s (group %q) waits for %q", p.Type, p.ID, p.Group, p.Reason))
				}
			}
			if len(idle) > 0 {
				t.Errorf("%d of %d slots busy, yet: %s", len(snap.Running), snap.MaxConcurrency, strings.Join(idle, "; "))
			}
		})
	}
}

func invMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func invSnapshot(t *testing.T, s *fairsched.Scheduler) fairsched.Snapshot {
	t.Helper()
	snap, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return snap
}
