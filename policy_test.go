package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/testkit"
)

var errNoFreeTier = errors.New("no free tier for acme")

// TestAdmissionPolicy: the policy is asked as each job would start. It
// admits, denies (RunSync gets the error, a background job is dropped and
// reported), defers (the job waits with reason deferred, on one timer, and
// is asked again with Attempt+1), and a panic denies that job only. The
// timeline of what started when, and every decision record, is compared
// whole.
func TestAdmissionPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		t0 := mock.Now()
		var asked []string
		pol := func(info fairsched.JobInfo) fairsched.Decision {
			asked = append(asked, fmt.Sprintf("%s#%d", info.ID, info.Attempt))
			switch {
			case info.Key == "acme":
				return fairsched.Deny(errNoFreeTier)
			case info.ID == "later" && info.Attempt < 2:
				return fairsched.Defer(3 * time.Second)
			case info.ID == "buggy":
				panic("policy bug")
			case info.ID == "quiet":
				return fairsched.Deny(nil)
			}
			return fairsched.Admit()
		}
		logs, records := observer.New(zap.InfoLevel)
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{work: workCfg},
			fairsched.WithClock(mock), fairsched.WithAdmissionPolicy(pol), fairsched.WithLogger(zap.New(logs)))
		events, cancel := s.Subscribe(64)
		noop := func(context.Context) error { return nil }

		if err := s.RunSync(context.Background(), work, "fine", "user", noop); err != nil {
			t.Errorf("admitted RunSync = %v", err)
		}
		if err := s.RunSync(context.Background(), work, "x", "acme", noop); !errors.Is(err, errNoFreeTier) {
			t.Errorf("denied RunSync = %v; want the policy's error", err)
		}
		err := s.RunSync(context.Background(), work, "buggy", "user", noop)
		if !errors.Is(err, fairsched.ErrDenied) || !strings.Contains(err.Error(), "policy bug") {
			t.Errorf("RunSync under a panicking policy = %v; want ErrDenied with the panic", err)
		}
		if err := s.Submit(work, "quiet", noop); err != nil {
			t.Fatal(err)
		}
		later := testkit.NewGate()
		if err := s.Submit(work, "later", later.Run); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if row, ok := pendingRow(snapshot(t, s), "later"); !ok || row.Reason != fairsched.ReasonDeferred {
			t.Errorf("deferred job pending as %+v; want reason deferred", row)
		}
		mock.Add(2 * time.Second)
		synctest.Wait()
		if later.Started() {
			t.Fatal("deferred job started before its delay")
		}
		mock.Add(time.Second) // the first delay ends: asked again, deferred again
		synctest.Wait()
		mock.Add(3 * time.Second) // the second ends: admitted
		synctest.Wait()
		if !later.Started() {
			t.Fatal("deferred job did not start after its delays")
		}
		finish(t, later)
		cancel()

		type ev struct {
			At   time.Duration
			Kind string
			ID   string
		}
		var got []ev
		for _, e := range collect(events) {
			switch e := e.(type) {
			case fairsched.JobAdmitted:
				got = append(got, ev{e.Time.Sub(t0), "admit", e.ID})
			case fairsched.JobDenied:
				got = append(got, ev{e.Time.Sub(t0), "deny", e.ID})
			}
		}
		want := []ev{{0, "admit", "fine"}, {0, "deny", "x"}, {0, "deny", "buggy"}, {0, "deny", "quiet"}, {6 * time.Second, "admit", "later"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"fine#0", "x#0", "buggy#0", "quiet#0", "later#0", "later#1", "later#2"}, asked); diff != "" {
			t.Errorf("policy asked (-want +got):\n%s", diff)
		}
		var decisions []string
		for _, e := range records.All() {
			if d, ok := e.ContextMap()["decision"]; ok {
				decisions = append(decisions, fmt.Sprintf("%s %s attempt=%v", d, e.ContextMap()["id"], e.ContextMap()["attempt"]))
			}
		}
		wantDecisions := []string{"deny x attempt=0", "deny buggy attempt=0", "deny quiet attempt=0",
			"defer later attempt=1", "defer later attempt=2"}
		if diff := cmp.Diff(wantDecisions, decisions); diff != "" {
			t.Errorf("decision records (-want +got):\n%s", diff)
		}
	})
}

// TestRateLimitedTypeLeavesNoSlotIdle: a type limited to one start a second
// (burst 1) waits with reason rate_limited while other work takes the
// slots; each of its jobs starts when a token arrives, on the scheduler's
// one timer, without any other event.
func TestRateLimitedTypeLeavesNoSlotIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limited fairsched.JobType = "limited"
		mock := clock.NewMock()
		t0 := mock.Now()
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			limited: {DefaultCost: time.Second, Priority: 8},
			work:    workCfg,
		}, fairsched.WithClock(mock), fairsched.WithMaxConcurrency(3), fairsched.WithRateLimit(fairsched.RateForType(limited), 1, 1))
		events, cancel := s.Subscribe(64)
		noop := func(context.Context) error { return nil }
		var blockers []*testkit.Gate
		for i := range 3 {
			b := testkit.NewGate()
			blockers = append(blockers, b)
			if err := s.Submit(limited, fmt.Sprintf("l%d", i), b.Run); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 4 {
			if err := s.Submit(work, fmt.Sprintf("w%d", i), noop); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if row, ok := pendingRow(snapshot(t, s), "l1"); !ok || row.Reason != fairsched.ReasonRateLimited {
			t.Errorf("second limited job pending as %+v; want rate_limited", row)
		}
		for range 3 {
			mock.Add(time.Second) // a token: the next limited job starts, on the timer
			synctest.Wait()
		}
		for _, b := range blockers {
			finish(t, b)
		}
		cancel()
		type start struct {
			At time.Duration
			ID string
		}
		var got []start
		for _, e := range keep(collect(events), fairsched.JobAdmitted{}) {
			a := e.(fairsched.JobAdmitted)
			got = append(got, start{a.Time.Sub(t0), a.ID})
		}
		// l0 takes the burst token; the work jobs (instant) take the other
		// slots at once; l1 and l2 start one second apart.
		want := []start{{0, "l0"}, {0, "w0"}, {0, "w1"}, {0, "w2"}, {0, "w3"}, {time.Second, "l1"}, {2 * time.Second, "l2"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("admissions (-want +got):\n%s", diff)
		}
	})
}

// TestRateLimitRejected: bad rates, bursts and scopes are ErrInvalidConfig.
func TestRateLimitRejected(t *testing.T) {
	for name, opts := range map[string][]fairsched.Option{
		"PerSecond": {fairsched.WithRateLimit(fairsched.RateForKey("k"), 0, 1)},
		"Burst":     {fairsched.WithRateLimit(fairsched.RateForGroup("g"), 5, 0)},
		"Scope":     {fairsched.WithRateLimit(fairsched.RateForType(""), 5, 1)},
		"twice":     {fairsched.WithRateLimit(fairsched.RateForKey("k"), 5, 1), fairsched.WithRateLimit(fairsched.RateForKey("k"), 6, 1)},
	} {
		s, err := fairsched.New(opts...)
		if !errors.Is(err, fairsched.ErrInvalidConfig) || s != nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: New = %v, %v; want ErrInvalidConfig naming %s", name, s, err, name)
		}
	}
}

// TestAdaptiveLimit: jobs slower than Tolerance × their learned cost
// shrink the global limit by Backoff, down to Min; jobs on time while the
// limit is fully used grow it back one by one, up to Max. The snapshot
// shows the current limit.
func TestAdaptiveLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{work: workCfg}, // learned cost starts at 1s
			fairsched.WithClock(mock), fairsched.WithCostSmoothing(0.01), // the estimate barely moves
			fairsched.WithAdaptiveLimit(fairsched.AdaptiveLimitConfig{Min: 2, Max: 6, Backoff: 0.5}))
		var limits []int
		round := func(took time.Duration) {
			// Keep 8 jobs queued, let every running job take `took`.
			var running []*testkit.Gate
			for i := range 8 {
				b := testkit.NewGate()
				running = append(running, b)
				if err := s.Submit(work, fmt.Sprintf("j%d", i), b.Run); err != nil {
					t.Fatal(err)
				}
			}
			synctest.Wait()
			// Each pass: the jobs running now take `took`, then end.
			for released := map[*testkit.Gate]bool{}; len(released) < len(running); {
				var now []*testkit.Gate
				for _, b := range running {
					if !released[b] && b.Started() {
						now = append(now, b)
					}
				}
				if len(now) == 0 {
					t.Fatalf("%d of %d jobs done and none running", len(released), len(running))
				}
				mock.Add(took)
				for _, b := range now {
					released[b] = true
					b.Release(nil)
					synctest.Wait()
				}
			}
			limits = append(limits, snapshot(t, s).MaxConcurrency)
		}
		round(3 * time.Second) // slow: 6 → 3 → 2 (Min) …
		round(time.Second)     // on time and saturated: one up per job
		round(time.Second)
		if diff := cmp.Diff([]int{2, 6, 6}, limits); diff != "" {
			t.Errorf("limit after each round (-want +got):\n%s", diff)
		}
	})
}

// TestTTL: a pending job whose time to live runs out is removed on the
// scheduler's timer: RunSync returns ErrExpired, a background job is
// reported (JobExpired, Snapshot.Expired); a job admitted in time runs; a
// negative TTL is refused; a context deadline still ends a RunSync first.
func TestTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		t0 := mock.Now()
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{work: workCfg},
			fairsched.WithClock(mock), fairsched.WithMaxConcurrency(1))
		events, cancel := s.Subscribe(32)
		noop := func(context.Context) error { return nil }
		hold := submit(t, s, work, "hold", "") // holds the one slot
		fg := make(chan error, 1)
		go func() {
			fg <- s.RunSync(context.Background(), work, "fg", "user", noop, fairsched.WithQueueTimeout(2*time.Second))
		}()
		if err := s.Submit(work, "bg", noop, fairsched.WithQueueTimeout(3*time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := s.Submit(work, "patient", noop, fairsched.WithQueueTimeout(time.Hour)); err != nil {
			t.Fatal(err)
		}
		ctx, stop := context.WithTimeout(context.Background(), time.Second) // synctest's clock
		defer stop()
		if err := s.RunSync(ctx, work, "hurried", "user", noop, fairsched.WithQueueTimeout(time.Hour)); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("RunSync with a shorter context deadline = %v; want DeadlineExceeded", err)
		}
		if err := s.Submit(work, "bad", noop, fairsched.WithQueueTimeout(-time.Second)); !errors.Is(err, fairsched.ErrInvalidJob) {
			t.Errorf("negative TTL = %v; want ErrInvalidJob", err)
		}
		synctest.Wait()
		mock.Add(2 * time.Second)
		synctest.Wait()
		if err := <-fg; !errors.Is(err, fairsched.ErrExpired) {
			t.Errorf("expired RunSync = %v; want ErrExpired", err)
		}
		mock.Add(time.Second)
		synctest.Wait()
		if snap := snapshot(t, s); snap.Expired != 2 || len(snap.Pending) != 1 || snap.Pending[0].ID != "patient" {
			t.Errorf("after expiry: %d expired, pending %+v; want 2 and patient only", snap.Expired, snap.Pending)
		}
		finish(t, hold) // patient runs
		cancel()
		type ev struct {
			At time.Duration
			ID string
		}
		var got []ev
		for _, e := range keep(collect(events), fairsched.JobExpired{}) {
			x := e.(fairsched.JobExpired)
			got = append(got, ev{x.Time.Sub(t0), x.ID})
		}
		if diff := cmp.Diff([]ev{{2 * time.Second, "fg"}, {3 * time.Second, "bg"}}, got); diff != "" {
			t.Errorf("JobExpired events (-want +got):\n%s", diff)
		}
	})
}

// TestRetry: a failing job is retried with exponential backoff (jitter
// from a seeded source), waiting with reason backoff and holding no slot;
// RunSync returns the success of a later attempt, or after the last attempt
// an error counting them and wrapping the last; Permanent stops retries at
// once; a policy without bounds is refused.
func TestRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		t0 := mock.Now()
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{work: workCfg},
			fairsched.WithClock(mock), fairsched.WithMaxConcurrency(1), fairsched.WithRandSeed(7))
		events, cancel := s.Subscribe(64)
		policy := fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Second, MaxBackoff: 10 * time.Second, Jitter: 0.5}
		errFlaky, errBroken := errors.New("flaky"), errors.New("broken")
		runs := map[string]int{}
		fn := func(id string, failures int, err error) func(context.Context) error {
			return func(context.Context) error {
				runs[id]++
				if runs[id] <= failures {
					return err
				}
				return nil
			}
		}
		results := make(chan string, 3)
		for _, c := range []struct {
			id       string
			failures int
			err      error
		}{{"flaky", 2, errFlaky}, {"broken", 5, errBroken}, {"fatal", 5, fairsched.Permanent(errBroken)}} {
			go func() {
				err := s.RunSync(context.Background(), work, c.id, "user", fn(c.id, c.failures, c.err), fairsched.WithRetry(policy))
				results <- fmt.Sprintf("%s: %v", c.id, err)
			}()
			synctest.Wait()
		}
		if row, ok := pendingRow(snapshot(t, s), "flaky"); !ok || row.Reason != fairsched.ReasonBackoff {
			t.Errorf("flaky after its first failure: %+v; want pending with reason backoff", row)
		}
		for range 20 {
			mock.Add(time.Second)
			synctest.Wait()
		}
		got := []string{<-results, <-results, <-results}
		want := []string{
			"fatal: fairsched: work/fatal failed after 1 attempt(s): broken", // Permanent: no retry
			"broken: fairsched: work/broken failed after 3 attempt(s): broken",
			"flaky: <nil>",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("RunSync results, in order (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]int{"flaky": 3, "broken": 3, "fatal": 1}, runs); diff != "" {
			t.Errorf("attempts (-want +got):\n%s", diff)
		}
		cancel()
		var timeline []string
		for _, e := range collect(events) {
			switch e := e.(type) {
			case fairsched.JobAdmitted:
				timeline = append(timeline, fmt.Sprintf("%v admit %s", e.Time.Sub(t0), e.ID))
			case fairsched.JobFailed:
				timeline = append(timeline, fmt.Sprintf("%v fail %s retrying=%v", e.Time.Sub(t0), e.ID, e.Retrying))
			}
		}
		// The backoffs: 1s, then 2s, each less up to half of it drawn from
		// the seeded source; each retry competes again as it comes back.
		wantTimeline := []string{
			"0s admit flaky", "0s fail flaky retrying=true",
			"0s admit broken", "0s fail broken retrying=true",
			"0s admit fatal", "0s fail fatal retrying=false",
			"516.043463ms admit broken", "516.043463ms fail broken retrying=true", // 1s·(1 − 0.5·0.97)
			"984.152922ms admit flaky", "984.152922ms fail flaky retrying=true", // 1s·(1 − 0.5·0.03)
			"2.137397543s admit broken", "2.137397543s fail broken retrying=false", // + 2s·(1 − 0.5·0.38)
			"2.461504538s admit flaky",
		}
		if diff := cmp.Diff(wantTimeline, timeline); diff != "" {
			t.Errorf("timeline (-want +got):\n%s", diff)
		}
		bad := fairsched.RetryPolicy{MaxAttempts: 5}
		if err := s.Submit(work, "x", func(context.Context) error { return nil }, fairsched.WithRetry(bad)); !errors.Is(err, fairsched.ErrInvalidConfig) {
			t.Errorf("retries without backoff = %v; want ErrInvalidConfig", err)
		}
	})
}

// TestSubmitPeriodic: occurrences every 10s, each a fresh job; while one
// runs long, the next ones are skipped (no pile-up); stop ends the
// schedule; bad periods are refused; Close ends the rest (goleak checks
// that nothing is left running).
func TestSubmitPeriodic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		t0 := mock.Now()
		logs, records := observer.New(zap.InfoLevel)
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{work: workCfg},
			fairsched.WithClock(mock), fairsched.WithLogger(zap.New(logs)))
		events, cancel := s.Subscribe(64)
		var runs []*testkit.Gate
		fn := func(ctx context.Context) error {
			b := testkit.NewGate()
			runs = append(runs, b)
			return b.Run(ctx)
		}
		stop, err := s.SubmitPeriodic(work, "sweep", 10*time.Second, fn)
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		step := func(d time.Duration) {
			mock.Add(d)
			synctest.Wait()
		}
		step(25 * time.Second) // the first occurrence runs 25s: 10s and 20s are skipped
		finish(t, runs[0])
		step(5 * time.Second) // 30s: the next occurrence
		finish(t, runs[1])
		stop()
		stop() // twice is safe
		step(20 * time.Second)
		if len(runs) != 2 {
			t.Errorf("%d occurrences ran; want 2 (0s and 30s)", len(runs))
		}
		if _, err := s.SubmitPeriodic(work, "bad", 0, fn); !errors.Is(err, fairsched.ErrInvalidJob) {
			t.Errorf("period 0 = %v; want ErrInvalidJob", err)
		}
		if _, err := s.SubmitPeriodic(work, "other", time.Second, fn); err != nil { // Close ends it
			t.Fatal(err)
		}
		synctest.Wait()
		for _, b := range runs[2:] {
			finish(t, b)
		}
		cancel()
		var got []string
		for _, e := range keep(collect(events), fairsched.JobAdmitted{}) {
			a := e.(fairsched.JobAdmitted)
			got = append(got, fmt.Sprintf("%v %s", a.Time.Sub(t0), a.ID))
		}
		if diff := cmp.Diff([]string{"0s sweep", "30s sweep", "50s other"}, got); diff != "" {
			t.Errorf("admissions (-want +got):\n%s", diff)
		}
		if n := records.FilterMessage("periodic occurrence skipped").Len(); n != 2 {
			t.Errorf("%d skipped occurrences logged; want 2 (10s, 20s)", n)
		}
	})
}

// TestSupersede: a Submit with Supersede replaces the pending background
// job of its (type, id): the old function never runs, the new one does,
// and its aging clock starts at the replacement.
func TestSupersede(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		t0 := mock.Now()
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{work: workCfg},
			fairsched.WithClock(mock), fairsched.WithMaxConcurrency(1))
		hold := submit(t, s, work, "hold", "")
		var ran []string
		job := func(name string) func(context.Context) error {
			return func(context.Context) error { ran = append(ran, name); return nil }
		}
		if err := s.Submit(work, "index", job("v1")); err != nil {
			t.Fatal(err)
		}
		mock.Add(5 * time.Second)
		if err := s.Submit(work, "index", job("v2"), fairsched.Supersede()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		snap := snapshot(t, s)
		if len(snap.Pending) != 1 || !snap.Pending[0].Submitted.Equal(t0.Add(5*time.Second)) {
			t.Errorf("pending after supersede: %+v; want one job submitted at +5s", snap.Pending)
		}
		if err := s.Submit(work, "fresh", job("fresh"), fairsched.Supersede()); err != nil { // nothing to replace
			t.Fatal(err)
		}
		finish(t, hold)
		synctest.Wait()
		if diff := cmp.Diff([]string{"v2", "fresh"}, ran); diff != "" {
			t.Errorf("ran (-want +got):\n%s", diff)
		}
	})
}

// TestCoalesce: three RunSync callers for one pending (type, id) share one
// run of the first caller's function; one leaves while it waits and gets
// its context's error, without cancelling the run for the others, who get
// its result. A request arriving while the run runs queues a run of its
// own. When the last waiter leaves a pending run nobody else wants, it is
// dropped unrun.
func TestCoalesce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const fetch fairsched.JobType = "fetch"
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			fetch: {DefaultCost: time.Second, Priority: 4, Coalesce: true},
			work:  workCfg,
		}, fairsched.WithClock(clock.NewMock()), fairsched.WithMaxConcurrency(1))
		hold := submit(t, s, work, "hold", "") // the one slot: fetches wait
		runs := 0
		release := make(chan struct{})
		fetchFn := func(ctx context.Context) error {
			runs++
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		results := map[string]chan error{}
		leaving, leave := context.WithCancel(context.Background())
		for _, c := range []struct {
			name string
			ctx  context.Context
		}{{"a", context.Background()}, {"b", leaving}, {"c", context.Background()}} {
			results[c.name] = make(chan error, 1)
			go func() { results[c.name] <- s.RunSync(c.ctx, fetch, "repo", "user-"+c.name, fetchFn) }()
			synctest.Wait()
		}
		if n := len(snapshot(t, s).Pending); n != 1 {
			t.Errorf("%d pending after three coalescing requests; want their one run", n)
		}
		leave()
		synctest.Wait()
		if err := <-results["b"]; !errors.Is(err, context.Canceled) {
			t.Errorf("leaving waiter = %v; want context.Canceled", err)
		}
		finish(t, hold) // the run starts
		late := make(chan error, 1)
		go func() { late <- s.RunSync(context.Background(), fetch, "repo", "user-d", fetchFn) }()
		synctest.Wait()
		close(release)
		synctest.Wait()
		for _, name := range []string{"a", "c"} {
			if err := <-results[name]; err != nil {
				t.Errorf("waiter %s = %v; want the run's success", name, err)
			}
		}
		if err := <-late; err != nil {
			t.Errorf("request after the run started = %v", err)
		}
		if runs != 2 {
			t.Errorf("%d runs; want 2 (one shared, one for the late request)", runs)
		}

		// The last waiter leaves a pending run: it is dropped unrun.
		hold = submit(t, s, work, "hold2", "")
		alone, stop := context.WithCancel(context.Background())
		lone := make(chan error, 1)
		go func() { lone <- s.RunSync(alone, fetch, "other", "user-e", fetchFn) }()
		synctest.Wait()
		stop()
		synctest.Wait()
		if err := <-lone; !errors.Is(err, context.Canceled) {
			t.Errorf("lone waiter = %v; want context.Canceled", err)
		}
		if n := len(snapshot(t, s).Pending); n != 0 {
			t.Errorf("%d pending after the last waiter left; want the run dropped", n)
		}
		finish(t, hold)
		if runs != 2 {
			t.Errorf("%d runs; the dropped run must not run", runs)
		}
	})
}

// TestRetryKeepsAgingClock: a retried job competes again with its first
// submission's aging clock, so after its backoff it goes ahead of fresher
// jobs of its priority that have not aged as far.
func TestRetryKeepsAgingClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		t0 := mock.Now()
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{work: workCfg},
			fairsched.WithClock(mock), fairsched.WithMaxConcurrency(1),
			fairsched.WithAging(fairsched.AgingConfig{GracePeriod: time.Second, Interval: time.Second, MaxEffectivePriority: 20}))
		events, cancel := s.Subscribe(64)
		failed := false
		flaky := func(context.Context) error {
			if !failed {
				failed = true
				return errors.New("flaky")
			}
			return nil
		}
		hold := testkit.NewGate()
		if err := s.Submit(work, "flaky", flaky, fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 2, MinBackoff: 5 * time.Second, MaxBackoff: 5 * time.Second})); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // flaky ran at once and failed: back in 5s
		if err := s.Submit(work, "hold", hold.Run); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		mock.Add(3 * time.Second)
		for _, id := range []string{"fresh1", "fresh2"} { // submitted at 3s
			if err := s.Submit(work, id, func(context.Context) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		mock.Add(4 * time.Second) // 7s: flaky is back, aged 6 steps; the fresh ones 3
		synctest.Wait()
		finish(t, hold)
		cancel()
		var order []string
		for _, e := range keep(collect(events), fairsched.JobAdmitted{}) {
			a := e.(fairsched.JobAdmitted)
			order = append(order, fmt.Sprintf("%v %s p%d", a.Time.Sub(t0), a.ID, a.EffectivePriority))
		}
		want := []string{"0s flaky p8", "0s hold p8", "7s flaky p14", "7s fresh1 p11", "7s fresh2 p11"}
		if diff := cmp.Diff(want, order); diff != "" {
			t.Errorf("admissions (-want +got):\n%s", diff)
		}
	})
}
