package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/testkit"
	"github.com/google/go-cmp/cmp"
)

// TestRetriesStopWhenTheCallerLeaves: a RunSync whose caller's context
// ends during its first attempt is not put back for another (it was, and
// with a short backoff the next attempt could start before the caller's
// withdrawal arrived: up to MaxAttempts, each charged). The one failure
// event says it is final.
func TestRetriesStopWhenTheCallerLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{"t": {DefaultCost: time.Second, Priority: 1}})
		events, stop := s.Subscribe(16)
		ctx, cancel := context.WithCancel(context.Background())
		runs := 0
		err := s.RunSync(ctx, "t", "x", "", func(context.Context) error {
			runs++
			cancel() // the caller gives up while the attempt runs
			return errors.New("attempt failed")
		}, fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Second, MaxBackoff: time.Second}))
		if err == nil {
			t.Fatal("RunSync = nil; want the failure")
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if runs != 1 {
			t.Errorf("%d attempts ran; want 1 (nobody waits for another)", runs)
		}
		stop()
		for e := range events {
			if f, ok := e.(fairsched.JobFailed); ok && f.Retrying {
				t.Errorf("the failure was reported as retrying: %+v", f)
			}
		}
	})
}

// TestSupersedeJoinsACoalescedRun: for a type with Coalesce, a Submit
// with Supersede is one more request for the pending run of its (type,
// id): it joins it, the run keeps its first function, and the RunSync
// caller waiting for it gets that run's result.
func TestSupersedeJoinsACoalescedRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			"render": {DefaultCost: time.Second, Priority: 4, MaxConcurrency: 1, Coalesce: true}})
		busy := testkit.NewGate()
		if err := s.Submit("render", "busy", busy.Run); err != nil {
			t.Fatal(err)
		}
		var ran []string
		waited := make(chan error, 1)
		go func() {
			waited <- s.RunSync(context.Background(), "render", "dash", "", func(context.Context) error {
				ran = append(ran, "v1")
				return nil
			})
		}()
		synctest.Wait() // the caller waits for the pending run
		if err := s.Submit("render", "dash", func(context.Context) error { ran = append(ran, "v2"); return nil },
			fairsched.Supersede()); err != nil {
			t.Fatal(err)
		}
		busy.Release(nil)
		if err := <-waited; err != nil {
			t.Errorf("RunSync = %v; want the run's nil", err)
		}
		synctest.Wait()
		if diff := cmp.Diff([]string{"v1"}, ran); diff != "" {
			t.Errorf("runs (-want +got):\n%s", diff)
		}
	})
}

// TestTTLInBackoffReportsTheFailure: a RunSync whose time to live runs out
// while it waits for its retry gets its last attempt's error, not
// ErrExpired, which means the job never ran.
func TestTTLInBackoffReportsTheFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{"t": {DefaultCost: time.Second, Priority: 1}})
		failure := errors.New("upstream down")
		start := time.Now()
		err := s.RunSync(context.Background(), "t", "x", "", func(context.Context) error { return failure },
			fairsched.WithQueueTimeout(5*time.Second),
			fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: 10 * time.Second, MaxBackoff: 10 * time.Second}))
		if errors.Is(err, fairsched.ErrExpired) || !errors.Is(err, failure) {
			t.Errorf("RunSync = %v; want the attempt's error, not ErrExpired", err)
		}
		if d := time.Since(start); d != 5*time.Second {
			t.Errorf("RunSync returned after %v; want at the TTL, 5s", d)
		}
	})
}

// TestSupersedeReplacesAJobInBackoff: a background job waiting for its
// retry is pending like any: a Supersede of its (type, id) replaces it (both
// ran), and a JobSuperseded event says so, for subscribers and metrics.
func TestSupersedeReplacesAJobInBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{"t": {DefaultCost: time.Second, Priority: 1}})
		events, stop := s.Subscribe(32)
		oldRuns, newRuns := 0, 0
		retry := fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: 10 * time.Second, MaxBackoff: 10 * time.Second})
		if err := s.Submit("t", "x", func(context.Context) error { oldRuns++; return errors.New("fails") }, retry); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // its first attempt failed: it waits for its retry
		if err := s.Submit("t", "x", func(context.Context) error { newRuns++; return nil }, fairsched.Supersede()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if oldRuns != 1 || newRuns != 1 {
			t.Errorf("old job ran %d times, new %d; want 1 and 1 (the retry was superseded)", oldRuns, newRuns)
		}
		stop()
		superseded := 0
		for e := range events {
			if _, ok := e.(fairsched.JobSuperseded); ok {
				superseded++
			}
		}
		if superseded != 1 {
			t.Errorf("%d JobSuperseded events; want 1", superseded)
		}
	})
}

// TestCoalescedWaitersKeepTheirTTL: requests that share one coalesced run
// each keep their own time to live: the first, of 5 s, expires at 5 s and
// the second, of 20 s, at 20 s (its TTL was ignored: it expired with the
// first's run at 5 s), while the only slot is taken for a minute.
func TestCoalescedWaitersKeepTheirTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			"hold":  {DefaultCost: time.Second, Priority: 1},
			"fetch": {DefaultCost: time.Second, Priority: 1, Coalesce: true},
		}, fairsched.WithMaxConcurrency(1))
		hold := testkit.NewGate()
		if err := s.Submit("hold", "h", hold.Run); err != nil {
			t.Fatal(err)
		}
		hold.WaitStarted()
		start := time.Now()
		type outcome struct {
			TTL     time.Duration
			Expired bool
			At      time.Duration
		}
		results := make(chan outcome, 2)
		for _, ttl := range []time.Duration{5 * time.Second, 20 * time.Second} {
			go func() {
				err := s.RunSync(context.Background(), "fetch", "repo", "", func(context.Context) error { return nil }, fairsched.WithQueueTimeout(ttl))
				results <- outcome{ttl, errors.Is(err, fairsched.ErrExpired), time.Since(start)}
			}()
			synctest.Wait()
		}
		got := []outcome{<-results, <-results}
		hold.Release(nil)
		want := []outcome{{5 * time.Second, true, 5 * time.Second}, {20 * time.Second, true, 20 * time.Second}}
		if got[0] != want[0] || got[1] != want[1] {
			t.Errorf("outcomes %+v; want %+v", got, want)
		}
	})
}

// TestCoalescedRetriesStopWhenEveryWaiterLeft: a coalesced run whose only
// waiter left during its attempt is not retried either (its context is
// cancelled, and nobody wants another attempt).
func TestCoalescedRetriesStopWhenEveryWaiterLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{"t": {DefaultCost: time.Second, Priority: 1, Coalesce: true}})
		ctx, cancel := context.WithCancel(context.Background())
		runs := 0
		started := make(chan struct{}, 8)
		done := make(chan error, 1)
		go func() {
			done <- s.RunSync(ctx, "t", "x", "", func(ctx context.Context) error {
				runs++
				started <- struct{}{}
				<-ctx.Done()
				return errors.New("attempt failed")
			}, fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Second, MaxBackoff: time.Second}))
		}()
		<-started
		cancel() // the only waiter gives up while the attempt runs
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("RunSync = %v; want context.Canceled", err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if runs != 1 {
			t.Errorf("%d attempts ran; want 1 (nobody waits for another)", runs)
		}
	})
}

// TestTTLInBackoffIsReportedAsAFailure: a background job whose time to
// live runs out in its retry's backoff is reported failed (JobFailed,
// final, wrapping its attempt's error), never JobExpired, which says it
// never ran.
func TestTTLInBackoffIsReportedAsAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{"t": {DefaultCost: time.Second, Priority: 1}})
		events, stop := s.Subscribe(16)
		failure := errors.New("upstream down")
		if err := s.Submit("t", "x", func(context.Context) error { return failure },
			fairsched.WithQueueTimeout(5*time.Second),
			fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: 10 * time.Second, MaxBackoff: 10 * time.Second})); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		stop()
		type ending struct {
			Kind     string
			Retrying bool
			Wraps    bool
		}
		var got []ending
		for e := range events {
			switch e := e.(type) {
			case fairsched.JobFailed:
				got = append(got, ending{"failed", e.Retrying, errors.Is(e.Err, failure)})
			case fairsched.JobExpired:
				got = append(got, ending{Kind: "expired"})
			}
		}
		want := []ending{{"failed", true, true}, {"failed", false, true}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("endings (-want +got):\n%s", diff)
		}
	})
}

// admission is one JobAdmitted event, reduced to what the inheritance test
// checks.
type admission struct {
	ID        string
	At        time.Duration // since the test's start
	Base      fairsched.Priority
	Effective fairsched.Priority
}

// TestInheritPriority: a background job that aged to priority 6 spawns two
// children of base priority 1, one with InheritPriority. With one slot, the
// inheriting child runs as soon as its parent ends — ahead of a job of base
// priority 4 that arrived after it — and the other child runs last. The
// snapshot shows the inherited priority; the tier the child counts against
// is still its base priority's.
func TestInheritPriority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			fg fairsched.JobType = "fg"
			bg fairsched.JobType = "bg"
		)
		mock := clock.NewMock()
		t0 := mock.Now()
		aging := fairsched.AgingConfig{GracePeriod: 10 * time.Second, Interval: 5 * time.Second, MaxEffectivePriority: 9}
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			fg: {DefaultCost: time.Second, Priority: 4},
			bg: {DefaultCost: time.Second, Priority: 1},
		}, fairsched.WithClock(mock), fairsched.WithMaxConcurrency(1), fairsched.WithAging(aging))
		events, cancel := s.Subscribe(64)
		defer cancel()

		first := submit(t, s, fg, "first", "")
		child, plain := testkit.NewGate(), testkit.NewGate()
		parentDone := make(chan error, 1)
		parent := func(ctx context.Context) error {
			// A context derived from the job's carries its priority too.
			cctx, stop := context.WithCancel(ctx)
			defer stop()
			if err := s.Submit(bg, "child", child.Run, fairsched.InheritPriority(cctx)); err != nil {
				return err
			}
			if err := s.Submit(bg, "plain", plain.Run); err != nil {
				return err
			}
			return <-parentDone
		}
		if err := s.Submit(bg, "parent", parent); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()

		// The parent waits 35s: 1 + ⌊(35s − 10s)/5s⌋ = 6 when admitted.
		mock.Add(35 * time.Second)
		finish(t, first)
		later := submit(t, s, fg, "later", "") // base 4, after the children

		snap := snapshot(t, s)
		row, ok := pendingRow(snap, "child")
		if !ok || row.InheritedPriority == nil || *row.InheritedPriority != 6 || row.EffectivePriority != 6 || row.Priority != 1 {
			t.Errorf("child pending as %+v; want base 1, inherited and effective 6", row)
		}
		if row, ok := pendingRow(snap, "plain"); !ok || row.InheritedPriority != nil || row.EffectivePriority != 1 {
			t.Errorf("plain child pending as %+v; want effective 1, nothing inherited", row)
		}

		mock.Add(time.Second)
		parentDone <- nil
		synctest.Wait()
		mock.Add(time.Second)
		finish(t, child)
		mock.Add(time.Second)
		finish(t, later)
		mock.Add(time.Second)
		finish(t, plain)

		cancel()
		var got []admission
		for _, e := range keep(collect(events), fairsched.JobAdmitted{}) {
			a := e.(fairsched.JobAdmitted)
			got = append(got, admission{a.ID, a.Time.Sub(t0), a.BasePriority, a.EffectivePriority})
		}
		want := []admission{
			{"first", 0, 4, 4},
			{"parent", 35 * time.Second, 1, 6},
			{"child", 36 * time.Second, 1, 6},
			{"later", 37 * time.Second, 4, 4},
			{"plain", 38 * time.Second, 1, 1},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("admissions (-want +got):\n%s", diff)
		}
	})
}

// TestInheritPriorityForeground: the context RunSync's function receives
// carries the job's priority as well; a context of no job passes nothing on.
func TestInheritPriorityForeground(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			fg fairsched.JobType = "fg"
			bg fairsched.JobType = "bg"
		)
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			fg: {DefaultCost: time.Second, Priority: 7},
			bg: {DefaultCost: time.Second, Priority: 1},
		}, fairsched.WithClock(clock.NewMock()))
		hold := submit(t, s, bg, "hold", "") // bg is full: children wait
		children := []*testkit.Gate{testkit.NewGate(), testkit.NewGate()}
		err := s.RunSync(context.Background(), fg, "request", "user", func(ctx context.Context) error {
			if err := s.Submit(bg, "spawned", children[0].Run, fairsched.InheritPriority(ctx)); err != nil {
				return err
			}
			return s.Submit(bg, "unrelated", children[1].Run, fairsched.InheritPriority(context.Background()))
		})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		type row struct {
			ID                   string
			Effective, Inherited fairsched.Priority
			Reason               fairsched.Reason
		}
		var got []row
		for _, p := range snapshot(t, s).Pending {
			r := row{p.ID, p.EffectivePriority, -1, p.Reason}
			if p.InheritedPriority != nil {
				r.Inherited = *p.InheritedPriority
			}
			got = append(got, r)
		}
		// Inherited 7 orders the spawned job first, but it still waits on
		// the cap of its base priority's tier (1 running job).
		want := []row{{"spawned", 7, 7, fairsched.ReasonTierLimit}, {"unrelated", 1, -1, fairsched.ReasonTierLimit}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("pending (-want +got):\n%s", diff)
		}
		finish(t, hold)
		finish(t, children[0])
		finish(t, children[1])
	})
}

// memStore is a Store in memory that keeps what was saved last.
type memStore struct {
	mu    sync.Mutex
	state fairsched.StoreState
	saves int
}

func (m *memStore) Load() (fairsched.StoreState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state, nil
}

func (m *memStore) Save(s fairsched.StoreState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state, m.saves = s, m.saves+1
	return nil
}

func (m *memStore) lastRuns() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.state.LastRuns)
}

// TestFutureLastRunIsClampedToNow: a saved last run 10 h in the future (the
// clock stepped back since) counts as now: the hourly job runs one interval
// after start, not 11 hours later.
func TestFutureLastRunIsClampedToNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &memStore{state: fairsched.StoreState{LastRuns: map[string]time.Time{"t/tick": time.Now().Add(10 * time.Hour)}}}
		s, err := fairsched.New(fairsched.WithStore(st))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(context.Background())
		if err := s.RegisterType("t", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		runs := make(chan time.Duration, 10)
		start := time.Now()
		stop, err := s.SubmitPeriodic("t", "tick", time.Hour, func(context.Context) error {
			runs <- time.Since(start)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		time.Sleep(90 * time.Minute)
		synctest.Wait()
		if len(runs) != 1 {
			t.Fatalf("%d runs in the first 90 minutes; want 1", len(runs))
		}
		if at := <-runs; at != time.Hour {
			t.Errorf("first run at %v; want 1h (one interval)", at)
		}
	})
}

// TestStoppedSchedulesAreForgotten: the last runs of 200 stopped schedules
// are saved while a restart within their interval still needs them, and
// are gone from the saved state once their interval has passed.
func TestStoppedSchedulesAreForgotten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &memStore{}
		s, err := fairsched.New(fairsched.WithStore(st), fairsched.WithIdleExpiry(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType("t", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		var stops []func()
		for i := range 200 {
			stop, err := s.SubmitPeriodic("t", fmt.Sprint("s", i), 5*time.Minute, func(context.Context) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			stops = append(stops, stop)
		}
		synctest.Wait()
		for _, stop := range stops {
			stop()
		}
		time.Sleep(time.Minute) // saved on each tick: still within the interval
		synctest.Wait()
		if n := st.lastRuns(); n != 200 {
			t.Errorf("saved last runs within the interval: %d; want 200", n)
		}
		time.Sleep(5 * time.Minute) // the interval has passed
		synctest.Wait()
		if n := st.lastRuns(); n != 0 {
			t.Errorf("saved last runs after the interval: %d; want 0", n)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestSupersedeReplacesEveryPendingJob: a Supersede replaces every pending
// background job of its (type, id) — one in its retry's backoff and one
// waiting for the slot — not only the latest (the older one ran): only the
// new job runs after it, and each replaced job has its JobSuperseded event.
func TestSupersedeReplacesEveryPendingJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			"t": {DefaultCost: time.Second, Priority: 1},
		}, fairsched.WithMaxConcurrency(1))
		events, stop := s.Subscribe(64)
		runs := map[string]int{}
		job := func(name string, err error) func(context.Context) error {
			return func(context.Context) error { runs[name]++; return err }
		}
		retry := fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: 10 * time.Second, MaxBackoff: 10 * time.Second})
		if err := s.Submit("t", "x", job("backoff", errors.New("fails")), retry); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // its first attempt failed: it waits for its retry
		hold := testkit.NewGate()
		if err := s.Submit("t", "hold", hold.Run); err != nil {
			t.Fatal(err)
		}
		hold.WaitStarted()
		if err := s.Submit("t", "x", job("waiting", nil)); err != nil {
			t.Fatal(err)
		}
		if err := s.Submit("t", "x", job("new", nil), fairsched.Supersede()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the Supersede is handled while the slot is held
		hold.Release(nil)
		time.Sleep(time.Minute)
		synctest.Wait()
		stop()
		superseded := 0
		for e := range events {
			if e, ok := e.(fairsched.JobSuperseded); ok && e.ID == "x" {
				superseded++
			}
		}
		got := struct {
			Runs       map[string]int
			Superseded int
		}{runs, superseded}
		want := struct {
			Runs       map[string]int
			Superseded int
		}{map[string]int{"backoff": 1, "new": 1}, 2}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("outcome (-want +got):\n%s", diff)
		}
	})
}
