package fairsched_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/fairschedtest"
	"github.com/fairsched/fairsched/internal/testkit"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

const (
	clone  fairsched.JobType = "sync-clone"
	repack fairsched.JobType = "repack"
)

var (
	cloneCfg  = fairsched.JobTypeConfig{DefaultCost: 10 * time.Second, MaxConcurrency: 8, ConflictGroup: "git", Priority: 8}
	repackCfg = fairsched.JobTypeConfig{DefaultCost: 20 * time.Second, MaxConcurrency: 3, ConflictGroup: "git", Priority: 4}
)

// cloneRepack: the job types clone and repack most tests here use.
var cloneRepack = map[fairsched.JobType]fairsched.JobTypeConfig{clone: cloneCfg, repack: repackCfg}

// openScheduler starts a scheduler with cloneRepack; the test closes it.
func openScheduler(t *testing.T, opts ...fairsched.Option) *fairsched.Scheduler {
	t.Helper()
	return testkit.Open(t, cloneRepack, opts...)
}

// newScheduler is openScheduler closed when the test ends.
func newScheduler(t *testing.T, opts ...fairsched.Option) *fairsched.Scheduler {
	t.Helper()
	return testkit.New(t, cloneRepack, opts...)
}

func snapshot(t *testing.T, s *fairsched.Scheduler) fairsched.Snapshot {
	t.Helper()
	snap, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func TestNewRejectsInvalidOptions(t *testing.T) {
	for name, opt := range map[string]fairsched.Option{
		"MaxConcurrency=0":    fairsched.WithMaxConcurrency(0),
		"MaxConcurrency=-3":   fairsched.WithMaxConcurrency(-3),
		"CostSmoothing=0":     fairsched.WithCostSmoothing(0),
		"CostSmoothing=1.5":   fairsched.WithCostSmoothing(1.5),
		"KeyTTL=0":            fairsched.WithIdleExpiry(0),
		"KeyTTL=-1s":          fairsched.WithIdleExpiry(-time.Second),
		"MaxCostEstimates=-1": fairsched.WithMaxCostEstimates(-1),
		"MaxIdleKeys=-1":      fairsched.WithMaxIdleKeys(-1),
		"Clock=nil":           fairsched.WithClock(nil),
		"Logger=nil":          fairsched.WithLogger(nil),
		"CostSmoothing=NaN":   fairsched.WithCostSmoothing(nan()),
		"MaxConcurrency=-1x":  fairsched.WithMaxConcurrency(-1),
	} {
		t.Run(name, func(t *testing.T) {
			s, err := fairsched.New(opt)
			if !errors.Is(err, fairsched.ErrInvalidConfig) || s != nil {
				t.Fatalf("New(%s) = %v, %v; want nil, ErrInvalidConfig", name, s, err)
			}
			field := strings.SplitN(name, "=", 2)[0]
			if !strings.Contains(err.Error(), field) {
				t.Errorf("error %q does not name the field %s", err, field)
			}
		})
	}
}

func nan() float64 {
	zero := 0.0
	return zero / zero
}

func TestRegisterTypeErrors(t *testing.T) {
	s := newScheduler(t)
	for name, tc := range map[string]struct {
		typ  fairsched.JobType
		cfg  fairsched.JobTypeConfig
		want error
		in   string
	}{
		"duplicate":         {clone, cloneCfg, fairsched.ErrDuplicateType, "sync-clone"},
		"empty name":        {"", cloneCfg, fairsched.ErrInvalidConfig, "JobType"},
		"zero cost":         {"a", fairsched.JobTypeConfig{Priority: 1}, fairsched.ErrInvalidConfig, "DefaultCost = 0s"},
		"negative cap":      {"b", fairsched.JobTypeConfig{DefaultCost: 1, MaxConcurrency: -1, Priority: 1}, fairsched.ErrInvalidConfig, "MaxConcurrency = -1"},
		"zero priority":     {"c", fairsched.JobTypeConfig{DefaultCost: 1}, fairsched.ErrInvalidConfig, "Priority = 0"},
		"negative priority": {"d", fairsched.JobTypeConfig{DefaultCost: 1, Priority: -2}, fairsched.ErrInvalidConfig, "Priority = -2"},
	} {
		t.Run(name, func(t *testing.T) {
			err := s.RegisterType(tc.typ, tc.cfg)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.in) {
				t.Fatalf("RegisterType = %v; want %v mentioning %q", err, tc.want, tc.in)
			}
		})
	}
	if got := snapshot(t, s).Types; len(got) != 2 {
		t.Errorf("rejected registrations changed the registry: %v", got)
	}
}

func TestJobValidation(t *testing.T) {
	s := newScheduler(t)
	ctx := context.Background()
	noop := func(context.Context) error { return nil }
	for name, tc := range map[string]struct {
		typ  fairsched.JobType
		id   string
		fn   func(context.Context) error
		want error
	}{
		"unknown type": {"nope", "r", noop, fairsched.ErrUnknownJobType},
		"empty id":     {clone, "", noop, fairsched.ErrInvalidJob},
		"nil fn":       {clone, "r", nil, fairsched.ErrInvalidJob},
	} {
		t.Run(name, func(t *testing.T) {
			if err := s.RunSync(ctx, tc.typ, tc.id, "k", tc.fn); !errors.Is(err, tc.want) {
				t.Errorf("RunSync = %v; want %v", err, tc.want)
			}
			if err := s.Submit(tc.typ, tc.id, tc.fn); !errors.Is(err, tc.want) {
				t.Errorf("Submit = %v; want %v", err, tc.want)
			}
		})
	}
	if snap := snapshot(t, s); len(snap.Pending)+len(snap.Running) != 0 {
		t.Errorf("rejected jobs were queued: %+v", snap)
	}
}

func TestCallsAfterCloseFail(t *testing.T) {
	s, err := fairsched.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterType(clone, cloneCfg); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // Close twice is safe
		if err := s.Close(context.Background()); err != nil {
			t.Fatalf("Close #%d = %v", i+1, err)
		}
	}
	noop := func(context.Context) error { return nil }
	ctx := context.Background()
	checks := map[string]error{
		"RunSync":      s.RunSync(ctx, clone, "r", "k", noop),
		"Submit":       s.Submit(clone, "r", noop),
		"RegisterType": s.RegisterType(repack, repackCfg),
	}
	_, checks["Snapshot"] = s.Snapshot(ctx)
	for call, err := range checks {
		if !errors.Is(err, fairsched.ErrClosed) {
			t.Errorf("%s after Close = %v; want ErrClosed", call, err)
		}
	}
}

// TestCancelPendingRunSync: a caller that leaves while its job is pending
// gets ctx.Err() at once; the job never runs and its key is never charged.
func TestCancelPendingRunSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, fairsched.WithMaxConcurrency(1), fairsched.WithClock(clock.NewMock()))
		blocker := testkit.NewGate()
		go s.RunSync(context.Background(), clone, "busy", "a", blocker.Run)
		synctest.Wait()

		waiting := testkit.NewGate()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.RunSync(ctx, clone, "later", "b", waiting.Run) }()
		synctest.Wait()
		if got := snapshot(t, s).Pending; len(got) != 1 || got[0].Reason != fairsched.ReasonGlobalLimit {
			t.Fatalf("pending = %+v; want the job waiting on global_limit", got)
		}
		before := snapshot(t, s).AccumulatedCost["b"]

		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("RunSync = %v; want context.Canceled", err)
		}
		snap := snapshot(t, s)
		if len(snap.Pending) != 0 || snap.AccumulatedCost["b"] != before {
			t.Errorf("after cancel: pending %+v, cost of b %v (was %v)", snap.Pending, snap.AccumulatedCost["b"], before)
		}
		blocker.Release(nil)
		synctest.Wait()
		if waiting.Started() {
			t.Error("the cancelled job ran")
		}
	})
}

// TestCancelRunningRunSync: cancelling a running job's caller cancels the
// job's context and RunSync returns what the job returns.
func TestCancelRunningRunSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t)
		errStopped := errors.New("stopped early")
		started := make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- s.RunSync(ctx, clone, "r", "k", func(ctx context.Context) error {
				close(started)
				<-ctx.Done()
				return errStopped
			})
		}()
		<-started
		cancel()
		if err := <-done; err != errStopped {
			t.Fatalf("RunSync = %v; want the job's own error", err)
		}
	})
}

func TestRunSyncReturnsJobError(t *testing.T) {
	s := newScheduler(t)
	want := errors.New("clone failed")
	if err := s.RunSync(context.Background(), clone, "r", "k", func(context.Context) error { return want }); err != want {
		t.Fatalf("RunSync = %v; want %v", err, want)
	}
}

func TestPanicBecomesError(t *testing.T) {
	s := newScheduler(t)
	err := s.RunSync(context.Background(), clone, "r", "k", func(context.Context) error { panic("boom") })
	var pe *fairsched.PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("RunSync = %v; want a *PanicError", err)
	}
	if pe.Value != "boom" || !strings.Contains(string(pe.Stack), "TestPanicBecomesError") {
		t.Errorf("PanicError{Value: %v, Stack: %d bytes} lacks the value or the panicking frame", pe.Value, len(pe.Stack))
	}
	// The scheduler survives and keeps scheduling.
	if err := s.RunSync(context.Background(), clone, "r", "k", func(context.Context) error { return nil }); err != nil {
		t.Fatalf("RunSync after a panic = %v", err)
	}
	// An error panic unwraps to the error.
	sentinel := errors.New("sentinel")
	err = s.RunSync(context.Background(), clone, "r", "k", func(context.Context) error { panic(sentinel) })
	if !errors.Is(err, sentinel) {
		t.Errorf("RunSync = %v; want it to unwrap to the panicked error", err)
	}
}

// TestBackgroundFailuresAreLogged: background jobs have nobody to return to,
// so their errors and panics are logged at error level; admissions and
// completions are logged at debug level with structured fields.
func TestBackgroundFailuresAreLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs, records := observer.New(zap.DebugLevel)
		s := newScheduler(t, fairsched.WithLogger(zap.New(logs)), fairsched.WithClock(clock.NewMock()))
		if err := s.Submit(repack, "r1", func(context.Context) error { return errors.New("disk full") }); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if err := s.Submit(repack, "r2", func(context.Context) error { panic("bad pack") }); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		type entry struct {
			Level           zapcore.Level
			Message, ID     string
			Error           string
			HasStack, HasKC bool
		}
		var got []entry
		for _, e := range records.All() {
			if e.Message == "type registered" {
				continue
			}
			f := e.ContextMap()
			_, stack := f["stack"]
			_, kc := f["key_cost"]
			errText, _ := f["error"].(string)
			got = append(got, entry{e.Level, e.Message, f["id"].(string), errText, stack, kc})
		}
		want := []entry{
			{zapcore.DebugLevel, "admit", "r1", "", false, true},
			{zapcore.DebugLevel, "complete", "r1", "disk full", false, false},
			{zapcore.ErrorLevel, "background job failed", "r1", "disk full", false, false},
			{zapcore.DebugLevel, "admit", "r2", "", false, true},
			{zapcore.DebugLevel, "complete", "r2", "fairsched: job panicked: bad pack", false, false},
			{zapcore.ErrorLevel, "background job failed", "r2", "fairsched: job panicked: bad pack", true, false},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("log entries (-want +got):\n%s", diff)
		}
	})
}

// TestCloseDrains: Close lets pending and running work finish.
func TestCloseDrains(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := openScheduler(t, fairsched.WithMaxConcurrency(1))
		first, second := testkit.NewGate(), testkit.NewGate()
		results := make(chan error, 2)
		go func() { results <- s.RunSync(context.Background(), clone, "r1", "k", first.Run) }()
		synctest.Wait()
		go func() { results <- s.RunSync(context.Background(), clone, "r2", "k", second.Run) }()
		bg := testkit.NewGate()
		synctest.Wait()
		if err := s.Submit(clone, "r3", bg.Run); err != nil {
			t.Fatal(err)
		}
		closed := make(chan error, 1)
		go func() { closed <- s.Close(context.Background()) }()
		synctest.Wait()
		if err := s.Submit(clone, "r4", bg.Run); !errors.Is(err, fairsched.ErrClosed) {
			t.Fatalf("Submit during Close = %v; want ErrClosed", err)
		}
		first.Release(nil)
		synctest.Wait()
		second.Release(nil)
		synctest.Wait()
		bg.Release(nil)
		if err := <-closed; err != nil {
			t.Fatalf("Close = %v", err)
		}
		for range 2 {
			if err := <-results; err != nil {
				t.Errorf("RunSync = %v", err)
			}
		}
		if !first.Started() || !second.Started() || !bg.Started() {
			t.Errorf("ran: %v %v %v; Close must let pending work run", first.Started(), second.Started(), bg.Started())
		}
	})
}

// TestCloseDeadline: when Close's context ends first, running jobs are
// cancelled, pending ones are refused with ErrClosed, and Close reports the
// context's error after the running jobs have returned.
func TestCloseDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs, records := observer.New(zap.ErrorLevel)
		s := openScheduler(t, fairsched.WithMaxConcurrency(1), fairsched.WithLogger(zap.New(logs)))
		running, pending, pendingBG := testkit.NewGate(), testkit.NewGate(), testkit.NewGate()
		runningErr, pendingErr := make(chan error, 1), make(chan error, 1)
		go func() { runningErr <- s.RunSync(context.Background(), clone, "r1", "k", running.Run) }()
		synctest.Wait()
		go func() { pendingErr <- s.RunSync(context.Background(), clone, "r2", "k", pending.Run) }()
		synctest.Wait()
		if err := s.Submit(clone, "r3", pendingBG.Run); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.Close(ctx); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "2 job(s) dropped") {
			t.Fatalf("Close = %v; want DeadlineExceeded counting the 2 pending jobs dropped", err)
		}
		if err := <-runningErr; !errors.Is(err, context.Canceled) {
			t.Errorf("running RunSync = %v; want context.Canceled from its cancelled context", err)
		}
		if err := <-pendingErr; !errors.Is(err, fairsched.ErrClosed) {
			t.Errorf("pending RunSync = %v; want ErrClosed", err)
		}
		if pending.Started() || pendingBG.Started() {
			t.Error("a pending job ran after Close's deadline")
		}
		if n := records.FilterMessage("background job dropped").Len(); n != 1 {
			t.Errorf("%d 'background job dropped' entries; want 1", n)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("second Close = %v", err)
		}
	})
}

// TestClosePendingCallerLeaves: while Close drains, a pending RunSync whose
// context ends gets ctx.Err().
func TestClosePendingCallerLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := openScheduler(t, fairsched.WithMaxConcurrency(1))
		running := testkit.NewGate()
		go s.RunSync(context.Background(), clone, "r1", "k", running.Run)
		synctest.Wait()
		ctx, cancel := context.WithCancel(context.Background())
		result := make(chan error, 1)
		go func() { result <- s.RunSync(ctx, clone, "r2", "k", testkit.NewGate().Run) }()
		synctest.Wait()
		closed := make(chan error, 1)
		go func() { closed <- s.Close(context.Background()) }()
		synctest.Wait()
		cancel()
		if err := <-result; !errors.Is(err, context.Canceled) {
			t.Fatalf("pending RunSync during Close = %v; want context.Canceled", err)
		}
		running.Release(nil)
		if err := <-closed; err != nil {
			t.Fatalf("Close = %v", err)
		}
	})
}

// TestSnapshotReasonsAndJSON: every pending job carries every rule that
// holds it back, the narrowest as its headline, and the snapshot round-trips through JSON with reasons as
// strings.
func TestSnapshotReasonsAndJSON(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const snap fairsched.JobType = "snapshot" // a tier of its own with room for one, no conflict group
		s := newScheduler(t, fairsched.WithClock(clock.NewMock()), fairsched.WithMaxConcurrency(10))
		if err := s.RegisterType(snap, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		var gates []*testkit.Gate
		run := func(typ fairsched.JobType, id, key string) {
			g := testkit.NewGate()
			gates = append(gates, g)
			if key == "" {
				if err := s.Submit(typ, id, g.Run); err != nil {
					t.Fatal(err)
				}
			} else {
				go s.RunSync(context.Background(), typ, id, key, g.Run)
			}
			synctest.Wait()
		}
		type row struct {
			Job     string
			Reason  fairsched.Reason
			Reasons []fairsched.Reason
		}
		rs := func(r ...fairsched.Reason) []fairsched.Reason { return r }
		pending := func() []row {
			var rows []row
			for _, p := range snapshot(t, s).Pending {
				rows = append(rows, row{string(p.Type) + "/" + p.ID, p.Reason, p.Reasons})
			}
			return rows
		}
		for _, id := range []string{"a", "b", "c"} {
			run(repack, id, "") // repack: tier 4, type cap 3
		}
		run(repack, "d", "")   // type cap reached
		run(snap, "s1", "")    // tier 1 now runs 1: full
		run(snap, "s2", "")    // tier cap reached
		run(clone, "a", "dev") // repack(a) holds git/a
		run(clone, "x", "dev") // runs
		want := []row{
			{"sync-clone/a", fairsched.ReasonConflict, rs(fairsched.ReasonConflict)},
			{"repack/d", fairsched.ReasonTypeLimit, rs(fairsched.ReasonTypeLimit)},
			{"snapshot/s2", fairsched.ReasonTierLimit, rs(fairsched.ReasonTierLimit)},
		}
		if diff := cmp.Diff(want, pending()); diff != "" {
			t.Errorf("pending, in rank order (-want +got):\n%s", diff)
		}

		first := snapshot(t, s)
		raw, err := json.Marshal(first)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []string{"conflict", "type_limit", "tier_limit"} {
			if !strings.Contains(string(raw), `"reason":"`+r+`"`) {
				t.Errorf("reason %s does not serialise as a string: %s", r, raw)
			}
		}
		var back fairsched.Snapshot
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(first, back); diff != "" {
			t.Errorf("JSON round trip (-orig +back):\n%s", diff)
		}

		// Five more clones fill the global cap of 10; the sixth waits on it
		// alone. The others still name their own rule first — a bigger
		// global cap would not start them — and list the cap after it.
		for _, id := range []string{"y", "z", "v", "u", "t", "q"} {
			run(clone, id, "dev")
		}
		want = []row{
			{"sync-clone/a", fairsched.ReasonConflict, rs(fairsched.ReasonConflict, fairsched.ReasonGlobalLimit)},
			{"sync-clone/q", fairsched.ReasonGlobalLimit, rs(fairsched.ReasonGlobalLimit)},
			{"repack/d", fairsched.ReasonTypeLimit, rs(fairsched.ReasonTypeLimit, fairsched.ReasonGlobalLimit)},
			{"snapshot/s2", fairsched.ReasonTierLimit, rs(fairsched.ReasonTierLimit, fairsched.ReasonGlobalLimit)},
		}
		if diff := cmp.Diff(want, pending()); diff != "" {
			t.Errorf("pending at the global cap (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[fairsched.Priority]int{1: 1, 4: 3, 8: 6}, snapshot(t, s).RunningByTier); diff != "" {
			t.Errorf("running by tier (-want +got):\n%s", diff)
		}
		for _, g := range gates {
			g.Release(nil)
		}
	})
}

// TestSnapshotIsACopy: changing a snapshot changes nothing in the scheduler.
func TestSnapshotIsACopy(t *testing.T) {
	s := newScheduler(t)
	if err := s.RunSync(context.Background(), clone, "r", "k", func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	a := snapshot(t, s)
	a.AccumulatedCost["k"] = -1
	a.Types[clone] = fairsched.JobTypeConfig{}
	a.CostEstimates[0].Cost = -1
	b := snapshot(t, s)
	if b.AccumulatedCost["k"] == -1 || b.Types[clone] != cloneCfg || b.CostEstimates[0].Cost == -1 {
		t.Errorf("snapshot shares state with the scheduler: %+v", b)
	}
}

// TestCostLearnedAndKeysExpire: each run folds its wall time into the
// estimate with α, and idle keys and estimates go after the TTL.
func TestCostLearnedAndKeysExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		s := newScheduler(t, fairsched.WithClock(mock), fairsched.WithCostSmoothing(0.5), fairsched.WithIdleExpiry(time.Minute))
		runFor := func(d time.Duration) {
			g := testkit.NewGate()
			done := make(chan error, 1)
			go func() { done <- s.RunSync(context.Background(), clone, "linux", "dev", g.Run) }()
			synctest.Wait()
			mock.Add(d)
			g.Release(nil)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		runFor(30 * time.Second) // 0.5·30 + 0.5·10 = 20
		runFor(40 * time.Second) // 0.5·40 + 0.5·20 = 30
		snap := snapshot(t, s)
		want := []fairsched.CostEstimate{{Type: clone, ID: "linux", Cost: 30 * time.Second}}
		if diff := cmp.Diff(want, snap.CostEstimates); diff != "" {
			t.Errorf("estimates (-want +got):\n%s", diff)
		}
		if got := snap.AccumulatedCost["dev"]; got != 30*time.Second {
			t.Errorf("accumulated cost of dev = %v; want 10s + 20s charged at the two admissions", got)
		}
		// The tick runs every TTL/4; after TTL + TTL/4 of idleness both are gone.
		for range 5 {
			mock.Add(15 * time.Second)
			synctest.Wait()
		}
		snap = snapshot(t, s)
		if len(snap.CostEstimates) != 0 || len(snap.AccumulatedCost) != 0 {
			t.Errorf("after the TTL: estimates %v, keys %v; want both empty", snap.CostEstimates, snap.AccumulatedCost)
		}
	})
}

// TestClosedLoopClientKeepsItsHistory is issue 13's measurement through the
// public API, in virtual time: one slot; client A sends one 10 s clone at a
// time (a RunSync loop, as an HTTP client that waits for each answer), client
// B keeps 400 clones of 1 s queued. Over 300 s each must get half the slot
// (150 s ± 20 %). Before returning keys kept their history, A restarted at the
// floor between its requests and took 250 s.
func TestClosedLoopClientKeepsItsHistory(t *testing.T) {
	const horizon = 300 * time.Second
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New(fairsched.WithMaxConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType(clone, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		service := map[string]time.Duration{}
		// Jobs write service one at a time (one slot); the test reads it after
		// Close, when every function has returned.
		run := func(key string, d time.Duration) func(context.Context) error {
			return func(ctx context.Context) error {
				began := time.Now()
				select {
				case <-time.After(d):
				case <-ctx.Done():
				}
				end := time.Now()
				if limit := start.Add(horizon); end.After(limit) {
					end = limit
				}
				if end.After(began) {
					service[key] += end.Sub(began)
				}
				return ctx.Err()
			}
		}
		for i := range 400 {
			if err := s.Submit(clone, fmt.Sprintf("small-%d", i), run("B", time.Second), fairsched.WithFairnessKey("B")); err != nil {
				t.Fatal(err)
			}
		}
		loopDone := make(chan int, 1)
		go func() {
			n := 0
			for time.Since(start) < horizon {
				if err := s.RunSync(context.Background(), clone, "linux", "A", run("A", 10*time.Second)); err != nil {
					break
				}
				n++
			}
			loopDone <- n
		}()
		time.Sleep(horizon)

		ctx, cancel := context.WithCancel(context.Background())
		cancel() // drop what is left, cancel what runs
		if err := s.Close(ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("Close: %v", err)
		}
		<-loopDone
		// Every function has returned: the job running at the horizon counted
		// up to it.
		got := map[string]time.Duration{"A": service["A"], "B": service["B"]}
		t.Logf("service in %v: %v", horizon, got)

		want := 150 * time.Second
		for _, k := range []string{"A", "B"} {
			if d := got[k] - want; d < -want/5 || d > want/5 {
				t.Errorf("client %s got %v of service in %v; want %v ± 20%% (all: %v)", k, got[k], horizon, want, got)
			}
		}
		if diff := cmp.Diff(horizon, got["A"]+got["B"]); diff != "" {
			t.Errorf("the slot was not always busy (-want +got):\n%s", diff)
		}
	})
}

// TestCloseFromInsideAJob: a job that closes its own scheduler with its
// context (or one derived from it, with a deadline) gets ErrCloseInJob at
// once instead of waiting for itself for ever; the scheduler stays open and
// closes normally from outside.
func TestCloseFromInsideAJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType("t", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		var inside []error
		done := make(chan error, 1)
		go func() {
			done <- s.RunSync(context.Background(), "t", "closer", "", func(ctx context.Context) error {
				dctx, cancel := context.WithTimeout(ctx, time.Second)
				defer cancel()
				inside = append(inside, s.Close(dctx), s.Close(ctx))
				return nil
			})
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("RunSync = %v", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("Close from inside the job still waits after a minute") // it would wait for ever
		}
		for i, err := range inside {
			if !errors.Is(err, fairsched.ErrCloseInJob) {
				t.Errorf("Close %d from inside the job = %v; want ErrCloseInJob", i+1, err)
			}
		}
		if err := s.RunSync(context.Background(), "t", "after", "", func(context.Context) error { return nil }); err != nil {
			t.Errorf("RunSync after the refused Close = %v; want nil", err)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("Close from outside = %v", err)
		}
	})
}

// TestCloseFromInsideAJobWithAnotherContext: a job that closes its own
// scheduler with a context of its own making — context.Background(), or one
// with a deadline — gets ErrCloseInJob instead of waiting for itself for ever
// (with a deadline too: the abort waited for the running jobs, the caller
// among them). The scheduler is closed: the job returns, the scheduler stops.
func TestCloseFromInsideAJobWithAnotherContext(t *testing.T) {
	for name, mk := range map[string]func() (context.Context, context.CancelFunc){
		"background": func() (context.Context, context.CancelFunc) { return context.Background(), func() {} },
		"deadline": func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Second)
		},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, err := fairsched.New()
				if err != nil {
					t.Fatal(err)
				}
				if err := s.RegisterType("t", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 2}); err != nil {
					t.Fatal(err)
				}
				closed := make(chan error, 2)
				started, both := make(chan struct{}, 2), make(chan struct{})
				job := func(context.Context) error {
					started <- struct{}{}
					<-both // both jobs run: neither Close can end the scheduler under the other
					ctx, cancel := mk()
					defer cancel()
					closed <- s.Close(ctx)
					return nil
				}
				done := make(chan error, 1)
				go func() { done <- s.RunSync(context.Background(), "t", "fg", "", job) }()
				if err := s.Submit("t", "bg", job); err != nil {
					t.Fatal(err)
				}
				<-started
				<-started
				close(both)
				for range 2 {
					select {
					case err := <-closed:
						if !errors.Is(err, fairsched.ErrCloseInJob) {
							t.Errorf("Close from inside a job = %v; want ErrCloseInJob", err)
						}
					case <-time.After(time.Minute):
						t.Fatal("Close from inside a job still waits after a minute") // it would wait for ever
					}
				}
				if err := <-done; err != nil {
					t.Errorf("RunSync = %v", err)
				}
				if err := s.Close(context.Background()); err != nil {
					t.Errorf("Close from outside = %v", err)
				}
				if err := s.Submit("t", "after", job); !errors.Is(err, fairsched.ErrClosed) {
					t.Errorf("Submit after Close = %v; want ErrClosed", err)
				}
			})
		})
	}
}

// TestGracefulCloseEndsANestedRunSyncDeadlock: a job that holds the only
// slot and waits in a nested RunSync (its own context) for a slot it holds
// itself can never end; a graceful Close — the quick start's
// defer s.Close(context.Background()) — drops the nested call (ErrClosed),
// so the job returns and Close with it, instead of waiting for ever.
func TestGracefulCloseEndsANestedRunSyncDeadlock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New(fairsched.WithMaxConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType("t", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4}); err != nil {
			t.Fatal(err)
		}
		nested := make(chan error, 1)
		outer := make(chan error, 1)
		go func() {
			outer <- s.RunSync(context.Background(), "t", "outer", "", func(ctx context.Context) error {
				err := s.RunSync(ctx, "t", "inner", "", func(context.Context) error { return nil })
				nested <- err
				return err
			})
		}()
		synctest.Wait() // the nested call waits for the slot its parent holds
		closed := make(chan error, 1)
		go func() { closed <- s.Close(context.Background()) }()
		select {
		case err := <-closed:
			if !errors.Is(err, fairsched.ErrClosed) {
				t.Errorf("Close = %v; want the dropped nested call counted (ErrClosed)", err)
			}
		case <-time.After(time.Hour):
			t.Fatal("graceful Close still waits after an hour") // it waited for ever
		}
		if err := <-nested; !errors.Is(err, fairsched.ErrClosed) {
			t.Errorf("nested RunSync = %v; want ErrClosed", err)
		}
		if err := <-outer; !errors.Is(err, fairsched.ErrClosed) {
			t.Errorf("outer RunSync = %v; want its nested call's ErrClosed", err)
		}
	})
}

// TestGracefulCloseDropsJobsNoWorkerCanTake: jobs of a worker type that no
// registered slot takes can never run once Close refuses new workers: a
// graceful Close drops them (ErrClosed to their callers, in Close's error)
// instead of waiting for ever.
func TestGracefulCloseDropsJobsNoWorkerCanTake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New()
		if err != nil {
			t.Fatal(err)
		}
		for typ, cfg := range map[fairsched.JobType]fairsched.JobTypeConfig{
			"render": {DefaultCost: time.Second, Priority: 1, RequiresWorker: true},
			"mail":   {DefaultCost: time.Second, Priority: 1},
		} {
			if err := s.RegisterType(typ, cfg); err != nil {
				t.Fatal(err)
			}
		}
		nop := func(context.Context) error { return nil }
		if err := s.Submit("render", "bg", nop); err != nil {
			t.Fatal(err)
		}
		waited := make(chan error, 1)
		go func() { waited <- s.RunSync(context.Background(), "render", "fg", "", nop) }()
		synctest.Wait()
		mailed := false
		if err := s.Submit("mail", "m", func(context.Context) error { mailed = true; return nil }); err != nil {
			t.Fatal(err)
		}
		err = s.Close(context.Background())
		if !errors.Is(err, fairsched.ErrClosed) {
			t.Errorf("Close = %v; want the dropped jobs reported (ErrClosed)", err)
		}
		if err := <-waited; !errors.Is(err, fairsched.ErrClosed) {
			t.Errorf("RunSync of a workerless type = %v; want ErrClosed", err)
		}
		if !mailed {
			t.Error("the job that could run did not drain")
		}
	})
}

// TestConcurrentCallsAndClose hammers every public method from many
// goroutines while Close runs, and checks that nothing is lost: every call
// returns, every RunSync gets its job's result or a typed refusal, and every
// background job that Submit accepted either ran or was reported dropped.
// Bounded in goroutines and operations; goleak (TestMain) checks that
// nothing is left running.
func TestConcurrentCallsAndClose(t *testing.T) {
	for round := range 5 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			logs, records := observer.New(zap.ErrorLevel)
			s := openScheduler(t, fairsched.WithMaxConcurrency(4), fairsched.WithLogger(zap.New(logs)))
			var accepted, ran atomic.Int64
			var wg sync.WaitGroup
			const workers, ops = 32, 100
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range ops {
						id := fmt.Sprintf("r%d", (w*ops+i)%7)
						switch i % 4 {
						case 0:
							if err := s.Submit(repack, id, func(context.Context) error { ran.Add(1); return nil }); err == nil {
								accepted.Add(1)
							} else if !errors.Is(err, fairsched.ErrClosed) {
								t.Errorf("Submit = %v", err)
							}
						case 1, 2:
							ctx, cancel := context.WithCancel(context.Background())
							if i%8 == 1 {
								cancel() // some callers leave at once
							}
							want := errors.New("done")
							err := s.RunSync(ctx, clone, id, fmt.Sprint("k", w%5), func(context.Context) error { return want })
							cancel()
							if err != want && !errors.Is(err, fairsched.ErrClosed) && !errors.Is(err, context.Canceled) {
								t.Errorf("RunSync = %v", err)
							}
						case 3:
							if _, err := s.Snapshot(context.Background()); err != nil && !errors.Is(err, fairsched.ErrClosed) {
								t.Errorf("Snapshot = %v", err)
							}
						}
					}
				}()
			}
			// Close part-way through, once gracefully or with a short deadline.
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(round)*time.Millisecond)
			defer cancel()
			closeErr := s.Close(ctx)
			// A graceful Close reports the submissions that raced it
			// (ErrClosed), one past its deadline what it dropped.
			if closeErr != nil && !errors.Is(closeErr, context.DeadlineExceeded) && !errors.Is(closeErr, fairsched.ErrClosed) {
				t.Errorf("Close = %v", closeErr)
			}
			wg.Wait()
			dropped := int64(records.FilterMessage("background job dropped").Len())
			if ran.Load()+dropped != accepted.Load() {
				t.Errorf("accepted %d background jobs; %d ran and %d were reported dropped", accepted.Load(), ran.Load(), dropped)
			}
		})
	}
}

// TestLeakedContextStaysEnded: a job's context that a goroutine keeps after
// the job ended is cancelled and stays so while later jobs reuse the
// scheduler's job records.
func TestLeakedContextStaysEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := fairschedtest.New(t, fairsched.WithMaxConcurrency(2))
		if err := s.RegisterType("bg", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 2}); err != nil {
			t.Fatal(err)
		}
		kept := make(chan context.Context, 1)
		if err := s.Submit("bg", "leaks", func(ctx context.Context) error { kept <- ctx; return nil }); err != nil {
			t.Fatal(err)
		}
		ctx := <-kept
		fairschedtest.WaitIdle(t, s)
		for i := range 100 {
			if err := s.Submit("bg", fmt.Sprint("next-", i), func(context.Context) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
		fairschedtest.WaitIdle(t, s)
		if !errors.Is(ctx.Err(), context.Canceled) {
			t.Fatalf("a kept context after its job ended: %v", ctx.Err())
		}
		select {
		case <-ctx.Done():
		default:
			t.Fatal("a kept context's Done is open after its job ended")
		}
	})
}

// TestSubmitAllocatesLessThanOnceAJob: a backlog of background jobs that
// grows behind a held slot — the case where every job needs a record of
// its own — and then runs down costs less than one heap allocation per
// job in all (the scheduler's records and attempt contexts are made in
// blocks; the caller's function is shared here; nobody subscribes to
// events, which are allocated for their subscribers). Without the blocks it
// was two a job: the record and the attempt's context.
func TestSubmitAllocatesLessThanOnceAJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := fairschedtest.New(t, fairsched.WithMaxConcurrency(1))
		if err := s.RegisterType("bg", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		if err := s.Submit("bg", "holder", func(context.Context) error { <-release; return nil }); err != nil {
			t.Fatal(err)
		}
		ids := make([]string, 1024)
		for i := range ids {
			ids[i] = fmt.Sprint("id-", i)
		}
		const jobs = 20_000
		var ran atomic.Int64
		all := make(chan struct{})
		count := func(context.Context) error {
			if ran.Add(1) == jobs {
				close(all)
			}
			return nil
		}
		synctest.Wait()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		start := m.Mallocs
		for i := range jobs {
			if err := s.Submit("bg", ids[i%len(ids)], count); err != nil {
				t.Fatal(err)
			}
		}
		close(release)
		<-all
		synctest.Wait() // the owner has taken the last completion
		runtime.ReadMemStats(&m)
		perJob := float64(m.Mallocs-start) / jobs
		t.Logf("%.3f allocations a job", perJob)
		if perJob >= 1 {
			t.Fatalf("%.3f heap allocations a job, want fewer than one", perJob)
		}
	})
}

// blockingStore's Save blocks until release is closed.
type blockingStore struct {
	started chan struct{} // closed by the first Save
	release chan struct{}
	saves   int
}

func (b *blockingStore) Load() (fairsched.StoreState, error) { return fairsched.StoreState{}, nil }
func (b *blockingStore) Save(fairsched.StoreState) error {
	if b.saves == 0 {
		close(b.started)
	}
	b.saves++
	<-b.release
	return nil
}

// TestSlowStoreNeverStallsTheOwner: while a save blocks on a slow disk, an
// idle scheduler still runs a RunSync at once, and Close with a deadline
// returns at the deadline with its error (it waited a second past it, and
// a RunSync 250 ms, when the owner saved itself).
func TestSlowStoreNeverStallsTheOwner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &blockingStore{started: make(chan struct{}), release: make(chan struct{})}
		s, err := fairsched.New(fairsched.WithStore(st), fairsched.WithIdleExpiry(4*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType("t", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		<-st.started // the first tick's save blocks
		start := time.Now()
		if err := s.RunSync(context.Background(), "t", "x", "", func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("RunSync took %v of virtual time behind a blocked save; want 0", d)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start = time.Now()
		err = s.Close(ctx)
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Second {
			t.Errorf("Close = %v after %v; want DeadlineExceeded after 1s", err, time.Since(start))
		}
		close(st.release) // the writer finishes its saves and returns
		synctest.Wait()
	})
}

// panickyStore panics in whatever it is asked.
type panickyStore struct{ load bool }

func (p panickyStore) Load() (fairsched.StoreState, error) {
	if p.load {
		panic("corrupt page")
	}
	return fairsched.StoreState{}, nil
}
func (panickyStore) Save(fairsched.StoreState) error { panic("page already freed") }

// TestPanickingStoreIsAnError: a Store whose Load panics makes New fail with
// ErrStore; one whose Save panics is logged, and the process goes on.
func TestPanickingStoreIsAnError(t *testing.T) {
	if _, err := fairsched.New(fairsched.WithStore(panickyStore{load: true})); !errors.Is(err, fairsched.ErrStore) {
		t.Errorf("New with a Load that panics = %v; want ErrStore", err)
	}
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New(fairsched.WithStore(panickyStore{}), fairsched.WithIdleExpiry(4*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second) // two ticks, two saves that panic
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("Close = %v", err)
		}
	})
}
