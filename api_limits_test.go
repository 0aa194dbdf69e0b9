package fairsched_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
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
	"go.uber.org/zap/zaptest/observer"
)

// TestKeyWeightRejected: a key weight that is not a positive finite number
// makes New fail with ErrInvalidConfig naming the key; SetKeyWeight refuses
// the same values and changes nothing.
func TestKeyWeightRejected(t *testing.T) {
	for _, w := range []float64{-1, nan(), math.Inf(1), math.Inf(-1)} {
		s, err := fairsched.New(fairsched.WithKeyWeight("acme", w))
		if !errors.Is(err, fairsched.ErrInvalidConfig) || s != nil || !strings.Contains(err.Error(), `KeyWeight["acme"]`) {
			t.Errorf("New(WithKeyWeight(acme, %v)) = %v, %v; want ErrInvalidConfig naming KeyWeight[\"acme\"]", w, s, err)
		}
	}
	if _, err := fairsched.New(fairsched.WithKeyWeight("acme", 0)); !errors.Is(err, fairsched.ErrInvalidConfig) {
		t.Errorf("New(WithKeyWeight(acme, 0)) = %v; want ErrInvalidConfig", err)
	}

	s := newScheduler(t, fairsched.WithKeyWeight("acme", 2))
	for _, w := range []float64{-0.5, nan(), math.Inf(1)} {
		if err := s.SetKeyWeight("acme", w); !errors.Is(err, fairsched.ErrInvalidConfig) {
			t.Errorf("SetKeyWeight(acme, %v) = %v; want ErrInvalidConfig", w, err)
		}
	}
	if got := snapshot(t, s).KeyWeights; !cmp.Equal(got, map[string]float64{"acme": 2}) {
		t.Errorf("weights after refused changes = %v; want acme 2", got)
	}
	if err := s.SetKeyWeight("beta", 0.5); err != nil {
		t.Fatal(err)
	}
	if err := s.SetKeyWeight("acme", 0); err != nil { // back to the default
		t.Fatal(err)
	}
	if got := snapshot(t, s).KeyWeights; !cmp.Equal(got, map[string]float64{"beta": 0.5}) {
		t.Errorf("weights = %v; want beta 0.5 only", got)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.SetKeyWeight("acme", 3); !errors.Is(err, fairsched.ErrClosed) {
		t.Errorf("SetKeyWeight after Close = %v; want ErrClosed", err)
	}
}

// TestTokensAndTenantCharges: a job's stated tokens are charged instead of
// its type's estimate, divided by its key's weight; a background job given
// a fairness key is charged to that key; bad tokens are refused before
// anything is queued.
func TestTokensAndTenantCharges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{work: workCfg},
			fairsched.WithClock(clock.NewMock()), fairsched.WithKeyWeight("acme", 4))
		events, cancel := s.Subscribe(16)
		noop := func(context.Context) error { return nil }
		if err := s.RunSync(context.Background(), work, "big", "acme", noop, fairsched.WithTokens(8*time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := s.RunSync(context.Background(), work, "plain", "acme", noop); err != nil {
			t.Fatal(err)
		}
		if err := s.Submit(work, "nightly", noop, fairsched.WithFairnessKey("beta")); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // nightly ran: no key is active when shared arrives
		if err := s.Submit(work, "shared", noop); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		err := s.Submit(work, "bad", noop, fairsched.WithTokens(-time.Second))
		if !errors.Is(err, fairsched.ErrInvalidJob) || !strings.Contains(err.Error(), "WithTokens") {
			t.Errorf("Submit with negative tokens = %v; want ErrInvalidJob naming WithTokens", err)
		}
		if err := s.RunSync(context.Background(), work, "bad", "acme", noop, fairsched.WithTokens(-1)); !errors.Is(err, fairsched.ErrInvalidJob) {
			t.Errorf("RunSync with negative tokens = %v; want ErrInvalidJob", err)
		}
		cancel()

		type charge struct {
			ID, Key       string
			Cost, KeyCost time.Duration
		}
		var got []charge
		for _, e := range keep(collect(events), fairsched.JobAdmitted{}) {
			a := e.(fairsched.JobAdmitted)
			got = append(got, charge{a.ID, a.FairnessKey, a.Cost, a.KeyCost})
		}
		// acme (weight 4) pays a quarter: 8s of tokens → 2s, then the type's
		// 1s estimate → 250ms. A key that arrives when none is active starts
		// at the last lowest cost (acme's 2.25s, then beta's 3.25s) and beta
		// and "" pay in full.
		want := []charge{
			{"big", "acme", 8 * time.Second, 2 * time.Second},
			{"plain", "acme", time.Second, 2250 * time.Millisecond},
			{"nightly", "beta", time.Second, 3250 * time.Millisecond},
			{"shared", "", time.Second, 4250 * time.Millisecond},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("admissions (-want +got):\n%s", diff)
		}
		if snap := snapshot(t, s); len(snap.Pending) != 0 || len(snap.Running) != 0 {
			t.Errorf("after the refusals: %d pending, %d running; want nothing queued", len(snap.Pending), len(snap.Running))
		}
	})
}

// TestPendingBoundsRejected: negative bounds are ErrInvalidConfig naming
// the field.
func TestPendingBoundsRejected(t *testing.T) {
	for field, opt := range map[string]fairsched.Option{
		"MaxPending":                   fairsched.WithMaxPending(-1),
		"TenantLimits.MaxPending":      fairsched.WithTenantLimits(fairsched.TenantLimits{MaxPending: -2}),
		`KeyLimits["acme"].MaxPending`: fairsched.WithKeyLimits("acme", fairsched.TenantLimits{MaxPending: -1}),
	} {
		s, err := fairsched.New(opt)
		if !errors.Is(err, fairsched.ErrInvalidConfig) || s != nil || !strings.Contains(err.Error(), field) {
			t.Errorf("New with a negative %s = %v, %v; want ErrInvalidConfig naming it", field, s, err)
		}
	}
}

// TestPendingBounds: a submission over its key's pending bound, or over the
// queue's, returns at once with a *RefusalError naming the rule and
// matching its sentinel, queues nothing, and is logged as a decision
// record; the key's bound is checked first. Submit waits for the verdict.
func TestPendingBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs, records := observer.New(zap.InfoLevel)
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{work: workCfg},
			fairsched.WithClock(clock.NewMock()), fairsched.WithMaxConcurrency(1), fairsched.WithMaxPending(4),
			fairsched.WithTenantLimits(fairsched.TenantLimits{MaxPending: 2}),
			fairsched.WithKeyLimits("", fairsched.TenantLimits{MaxPending: 3}), fairsched.WithLogger(zap.New(logs)))
		events, cancel := s.Subscribe(32)
		hold := submit(t, s, work, "hold", "") // runs; everything after waits
		var blockers []*testkit.Gate
		try := func(id, key string) error {
			b := testkit.NewGate()
			blockers = append(blockers, b)
			return s.Submit(work, id, b.Run, fairsched.WithFairnessKey(key))
		}
		type outcome struct {
			ID     string
			Reason fairsched.Reason // "" when queued
		}
		var got []outcome
		for _, c := range []struct{ id, key string }{
			{"a1", "acme"}, {"a2", "acme"}, {"a3", "acme"}, // acme's third: over its 2
			{"b1", ""}, {"b2", ""}, // the queue holds 4
			{"b3", ""},  // "" may hold 3, but the queue is full
			{"c1", "c"}, // c has room, the queue does not
		} {
			err := try(c.id, c.key)
			var re *fairsched.RefusalError
			switch {
			case err == nil:
				got = append(got, outcome{c.id, ""})
			case errors.As(err, &re) && re.Key == c.key && re.ID == c.id:
				got = append(got, outcome{c.id, re.Reason})
				sentinel := map[fairsched.Reason]error{fairsched.ReasonTenantLimit: fairsched.ErrTenantLimit,
					fairsched.ReasonPoolOverloaded: fairsched.ErrOverloaded}[re.Reason]
				if !errors.Is(err, sentinel) {
					t.Errorf("%s: %v does not match the sentinel of %s", c.id, err, re.Reason)
				}
			default:
				t.Fatalf("Submit %s = %v; want nil or a *RefusalError for it", c.id, err)
			}
		}
		err := s.RunSync(context.Background(), work, "fg", "acme", func(context.Context) error { return nil })
		if !errors.Is(err, fairsched.ErrTenantLimit) {
			t.Errorf("RunSync over acme's bound = %v; want ErrTenantLimit", err)
		}
		want := []outcome{{"a1", ""}, {"a2", ""}, {"a3", fairsched.ReasonTenantLimit},
			{"b1", ""}, {"b2", ""}, {"b3", fairsched.ReasonPoolOverloaded}, {"c1", fairsched.ReasonPoolOverloaded}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("verdicts (-want +got):\n%s", diff)
		}
		if n := len(snapshot(t, s).Pending); n != 4 {
			t.Errorf("%d pending; want the 4 queued", n)
		}
		var reasons []string
		for _, e := range records.FilterMessage("job refused").All() {
			f := e.ContextMap()
			if f["decision"] != "refuse" || f["queue_depth"] == nil || f["inflight"] != int64(1) {
				t.Errorf("decision record %v lacks decision, queue depth or inflight", f)
			}
			reasons = append(reasons, f["tenant"].(string)+":"+f["reason_code"].(string))
		}
		wantLogs := []string{"acme:tenant_limit", ":pool_overloaded", "c:pool_overloaded", "acme:tenant_limit"}
		if diff := cmp.Diff(wantLogs, reasons); diff != "" {
			t.Errorf("decision records (-want +got):\n%s", diff)
		}
		cancel()
		var refused []string
		for _, e := range keep(collect(events), fairsched.JobRefused{}) {
			r := e.(fairsched.JobRefused)
			refused = append(refused, r.FairnessKey+":"+string(r.Reason))
		}
		if diff := cmp.Diff(wantLogs, refused); diff != "" {
			t.Errorf("JobRefused events (-want +got):\n%s", diff)
		}
		finish(t, hold)
		// One slot: release the queued jobs one by one as each starts.
		for done := map[*testkit.Gate]bool{}; len(done) < 4; {
			progressed := false
			for _, b := range blockers {
				if !done[b] && b.Started() {
					done[b], progressed = true, true
					finish(t, b)
				}
			}
			if !progressed {
				t.Fatalf("%d of the 4 queued jobs ran; none is running now", len(done))
			}
		}
	})
}

// TestTenantMaxRunning: a key that runs its MaxRunning jobs waits (reason
// tenant_limit, before the global cap) while another key takes the free
// slots; a key with its own limits (WithKeyLimits) is not bound by the
// default.
func TestTenantMaxRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{work: workCfg},
			fairsched.WithClock(clock.NewMock()), fairsched.WithMaxConcurrency(4),
			fairsched.WithTenantLimits(fairsched.TenantLimits{MaxRunning: 2}),
			fairsched.WithKeyLimits("vip", fairsched.TenantLimits{}))
		jobs := map[string]*testkit.Gate{}
		for _, id := range []string{"n1", "n2", "n3", "n4"} {
			jobs[id] = testkit.NewGate()
			if err := s.Submit(work, id, jobs[id].Run, fairsched.WithFairnessKey("noisy")); err != nil {
				t.Fatal(err)
			}
		}
		for _, id := range []string{"v1", "v2", "v3"} {
			jobs[id] = testkit.NewGate()
			if err := s.Submit(work, id, jobs[id].Run, fairsched.WithFairnessKey("vip")); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		type row struct {
			ID     string
			Reason fairsched.Reason
		}
		state := func() (running []string, pending []row) {
			snap := snapshot(t, s)
			for _, r := range snap.Running {
				running = append(running, r.ID)
			}
			// Which jobs run, not in what order: that depends on how the
			// submissions fell into the owner's turns.
			slices.Sort(running)
			for _, p := range snap.Pending {
				pending = append(pending, row{p.ID, p.Reason})
			}
			return running, pending
		}
		running, pending := state()
		// noisy runs its 2; vip (no limit) takes the other 2 slots. n3 and
		// n4 wait on their tenant even though the global cap is full too.
		if diff := cmp.Diff([]string{"n1", "n2", "v1", "v2"}, running); diff != "" {
			t.Errorf("running (-want +got):\n%s", diff)
		}
		want := []row{{"n3", fairsched.ReasonTenantLimit}, {"n4", fairsched.ReasonTenantLimit}, {"v3", fairsched.ReasonGlobalLimit}}
		if diff := cmp.Diff(want, pending); diff != "" {
			t.Errorf("pending (-want +got):\n%s", diff)
		}
		// A vip slot frees: v3 takes it, not a noisy job.
		finish(t, jobs["v1"])
		if running, _ := state(); !jobs["v3"].Started() || len(running) != 4 {
			t.Errorf("after v1: running %v; want v3 in v1's slot", running)
		}
		// A noisy job ends: the next noisy job may run.
		finish(t, jobs["n1"])
		if !jobs["n3"].Started() || jobs["n4"].Started() {
			t.Errorf("after n1: n3 running %v, n4 running %v; want n3 only", jobs["n3"].Started(), jobs["n4"].Started())
		}
		for _, id := range []string{"v2", "v3", "n2", "n3"} {
			finish(t, jobs[id])
		}
		finish(t, jobs["n4"])
	})
}

// TestTierSharesRejected: tier shares need a global cap, shares in range,
// MinShare ≤ BurstShare and reservations that fit together; a tier config
// must cap something (BurstShare or MaxRunning).
func TestTierSharesRejected(t *testing.T) {
	for name, opts := range map[string][]fairsched.Option{
		"MaxConcurrency":     {fairsched.WithTier(3, fairsched.TierConfig{MinShare: 0.2, BurstShare: 0.5})},
		"Tier[3].MinShare":   {fairsched.WithMaxConcurrency(10), fairsched.WithTier(3, fairsched.TierConfig{MinShare: -0.1, BurstShare: 0.5})},
		"Tier[3].BurstShare": {fairsched.WithMaxConcurrency(10), fairsched.WithTier(3, fairsched.TierConfig{MinShare: 0.1, BurstShare: 0})},
		"Tier[6] = no cap":   {fairsched.WithMaxConcurrency(10), fairsched.WithTier(6, fairsched.TierConfig{MinShare: 0, BurstShare: 0})},
		"Tier[4].BurstShare": {fairsched.WithMaxConcurrency(10), fairsched.WithTier(4, fairsched.TierConfig{MinShare: 0.1, BurstShare: 1.5})},
		"Tier[5].MinShare":   {fairsched.WithMaxConcurrency(10), fairsched.WithTier(5, fairsched.TierConfig{MinShare: 0.6, BurstShare: 0.5})},
		"Tier MinShares": {fairsched.WithMaxConcurrency(10), fairsched.WithTier(1, fairsched.TierConfig{MinShare: 0.6, BurstShare: 0.7}),
			fairsched.WithTier(2, fairsched.TierConfig{MinShare: 0.5, BurstShare: 0.7})},
	} {
		s, err := fairsched.New(opts...)
		if !errors.Is(err, fairsched.ErrInvalidConfig) || s != nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: New = %v, %v; want ErrInvalidConfig naming %s", name, s, err, name)
		}
	}
	s := newScheduler(t, fairsched.WithMaxConcurrency(10), fairsched.WithTier(3, fairsched.TierConfig{MinShare: 0.2, BurstShare: 0.5, LendIdle: true}))
	want := map[fairsched.Priority]fairsched.TierConfig{3: {MinShare: 0.2, BurstShare: 0.5, LendIdle: true}}
	if diff := cmp.Diff(want, snapshot(t, s).Tiers); diff != "" {
		t.Errorf("snapshot tiers (-want +got):\n%s", diff)
	}
}

// start is one admission of a timeline: when, after the test's start, and
// which job.
type start struct {
	At time.Duration
	ID string
}

// starts returns the admissions among events, in order.
func starts(events []fairsched.Event, t0 time.Time) []start {
	var got []start
	for _, e := range keep(events, fairsched.JobAdmitted{}) {
		a := e.(fairsched.JobAdmitted)
		got = append(got, start{a.Time.Sub(t0), a.ID})
	}
	return got
}

// TestPriorityZeroRegisters: priority 0 is refused while a priority's value
// is its tier's cap, with an error that names the option to use; it
// registers with WithScoring and with PriorityOrderOnly. A negative
// priority is refused in every mode, and so is a mode that is none.
func TestPriorityZeroRegisters(t *testing.T) {
	for name, tc := range map[string]struct {
		opts    []fairsched.Option
		p       fairsched.Priority
		wantErr string // "" for success
	}{
		"default, priority 0":    {nil, 0, "WithPriorityMode(PriorityOrderOnly)"},
		"default, priority 1":    {nil, 1, ""},
		"default, negative":      {nil, -1, "must not be negative"},
		"scoring, priority 0":    {[]fairsched.Option{fairsched.WithScoring(fairsched.ScoreConfig{})}, 0, ""},
		"scoring, negative":      {[]fairsched.Option{fairsched.WithScoring(fairsched.ScoreConfig{})}, -3, "must not be negative"},
		"order only, priority 0": {[]fairsched.Option{fairsched.WithPriorityMode(fairsched.PriorityOrderOnly)}, 0, ""},
		"order only, negative":   {[]fairsched.Option{fairsched.WithPriorityMode(fairsched.PriorityOrderOnly)}, -1, "must not be negative"},
	} {
		t.Run(name, func(t *testing.T) {
			s := startScheduler(t, nil, tc.opts...)
			err := s.RegisterType("t", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: tc.p})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("RegisterType(priority %d) = %v; want success", tc.p, err)
			case tc.wantErr != "" && (!errors.Is(err, fairsched.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("RegisterType(priority %d) = %v; want ErrInvalidConfig saying %q", tc.p, err, tc.wantErr)
			}
		})
	}
	if _, err := fairsched.New(fairsched.WithPriorityMode(fairsched.PriorityMode(7))); !errors.Is(err, fairsched.ErrInvalidConfig) {
		t.Errorf("New(WithPriorityMode(7)) = %v; want ErrInvalidConfig", err)
	}
}

// TestPriorityZeroPassesFreshPriorityFiveAt320s: spec 3's crossover with
// its own numbers. With the default scoring and one slot, a priority-0 job
// waits under a stream of fresh priority-5 jobs, one arriving as each
// ends, every 10s. Its score grows 16 a second: at 320s it ties a fresh
// priority-5 job (5·1024) and wins on arrival — not a second earlier.
func TestPriorityZeroPassesFreshPriorityFiveAt320s(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		t0 := mock.Now()
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			"low":  {DefaultCost: 10 * time.Second, Priority: 0},
			"high": {DefaultCost: 10 * time.Second, Priority: 5},
		}, fairsched.WithClock(mock), fairsched.WithMaxConcurrency(1), fairsched.WithScoring(fairsched.ScoreConfig{}))
		events, cancel := s.Subscribe(128)
		running := testkit.NewGate()
		if err := s.Submit("high", "h0", running.Run); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		patient := testkit.NewGate()
		if err := s.Submit("low", "patient", patient.Run); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // queued at T=0
		want := []start{{0, "h0"}}
		var fresh *testkit.Gate // the priority-5 job the patient one passed
		for i := 1; !patient.Started(); i++ {
			if i > 40 {
				t.Fatal("the priority-0 job never started")
			}
			mock.Add(10 * time.Second)
			next := testkit.NewGate() // a fresh priority-5 job arrives as the running one ends
			id := fmt.Sprintf("h%d", i)
			if err := s.Submit("high", id, next.Run); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			finish(t, running)
			if at := time.Duration(i) * 10 * time.Second; at < 320*time.Second {
				want = append(want, start{at, id})
				running = next
			} else {
				want = append(want, start{at, "patient"}, start{at, id}) // id right after
				fresh = next
			}
		}
		finish(t, patient)
		finish(t, fresh)
		cancel()
		if diff := cmp.Diff(want, starts(collect(events), t0)); diff != "" {
			t.Errorf("admissions (-want +got):\n%s", diff)
		}
	})
}

// TestPriorityOrderOnly: with PriorityOrderOnly priorities only order.
// Priority 1 caps nothing (under the default it would run one job at a
// time), so high-priority work takes every slot it finds; WithTier's
// MaxRunning (spec 5's max_inflight) then caps a tier absolutely, without
// shares, and the lower tier gets the rest.
func TestPriorityOrderOnly(t *testing.T) {
	types := map[fairsched.JobType]fairsched.JobTypeConfig{
		"batch":       {DefaultCost: time.Second, Priority: 0},
		"interactive": {DefaultCost: time.Second, Priority: 1},
	}
	for name, tc := range map[string]struct {
		opts []fairsched.Option
		want map[fairsched.Priority]int // running by tier once all are submitted
	}{
		"no tier caps":        {nil, map[fairsched.Priority]int{1: 3}},
		"MaxRunning 2":        {[]fairsched.Option{fairsched.WithTier(1, fairsched.TierConfig{MaxRunning: 2})}, map[fairsched.Priority]int{0: 1, 1: 2}},
		"priority 0 capped":   {[]fairsched.Option{fairsched.WithTier(0, fairsched.TierConfig{MaxRunning: 1}), fairsched.WithTier(1, fairsched.TierConfig{MaxRunning: 1})}, map[fairsched.Priority]int{0: 1, 1: 1}},
		"shares and absolute": {[]fairsched.Option{fairsched.WithTier(1, fairsched.TierConfig{BurstShare: 1, MaxRunning: 1})}, map[fairsched.Priority]int{0: 2, 1: 1}},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := append([]fairsched.Option{fairsched.WithMaxConcurrency(3), fairsched.WithPriorityMode(fairsched.PriorityOrderOnly)}, tc.opts...)
				s := startScheduler(t, types, opts...)
				var blockers []*testkit.Gate
				for _, typ := range []fairsched.JobType{"interactive", "batch"} {
					for i := range 3 {
						b := testkit.NewGate()
						blockers = append(blockers, b)
						if err := s.Submit(typ, fmt.Sprint(typ, i), b.Run); err != nil {
							t.Fatal(err)
						}
					}
				}
				synctest.Wait()
				snap := snapshot(t, s)
				if diff := cmp.Diff(tc.want, snap.RunningByTier); diff != "" {
					t.Errorf("running by tier (-want +got):\n%s", diff)
				}
				for _, b := range blockers {
					b.Release(nil)
				}
				synctest.Wait()
			})
		})
	}
}

// TestTierMaxRunningOptions: MaxRunning must not be negative and a tier
// must cap something; a tier with MaxRunning alone needs no global cap,
// shares still do.
func TestTierMaxRunningOptions(t *testing.T) {
	for name, tc := range map[string]struct {
		opts    []fairsched.Option
		wantErr string
	}{
		"alone, no global cap": {[]fairsched.Option{fairsched.WithTier(2, fairsched.TierConfig{MaxRunning: 3})}, ""},
		"negative":             {[]fairsched.Option{fairsched.WithTier(2, fairsched.TierConfig{MaxRunning: -1})}, "Tier[2].MaxRunning = -1"},
		"nothing":              {[]fairsched.Option{fairsched.WithTier(2, fairsched.TierConfig{LendIdle: true})}, "Tier[2] = no cap"},
		"shares, no cap":       {[]fairsched.Option{fairsched.WithTier(2, fairsched.TierConfig{BurstShare: 0.5, MaxRunning: 3})}, "need a global cap"},
		"MinShare alone":       {[]fairsched.Option{fairsched.WithMaxConcurrency(4), fairsched.WithTier(2, fairsched.TierConfig{MinShare: 0.5})}, "Tier[2].BurstShare = 0"},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := fairsched.New(tc.opts...)
			if err == nil {
				defer s.Close(context.Background())
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("New = %v; want success", err)
			case tc.wantErr != "" && (!errors.Is(err, fairsched.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("New = %v; want ErrInvalidConfig saying %q", err, tc.wantErr)
			}
		})
	}
}

// span is one job's run in a timeline: seconds from the start.
type span struct {
	Job        string
	Start, End int
}

// runTimeline submits each job at its time (seconds from the start) in
// virtual time (a probe is called instead) and returns every run, sorted by start then name, once all
// have ended. Each job sleeps for its duration.
func runTimeline(t *testing.T, s *fairsched.Scheduler, jobs []timedJob) []span {
	t.Helper()
	start := time.Now()
	spans := make(chan span, len(jobs))
	for _, j := range jobs {
		time.Sleep(start.Add(time.Duration(j.at) * time.Second).Sub(time.Now()))
		if j.probe != nil {
			synctest.Wait() // what is due at this time has happened
			j.probe()
			continue
		}
		name := string(j.typ) + "/" + j.id + "#" + j.tag
		fn := func(ctx context.Context) error {
			began := time.Now()
			time.Sleep(time.Duration(j.dur) * time.Second)
			spans <- span{name, int(began.Sub(start) / time.Second), int(time.Since(start) / time.Second)}
			return nil
		}
		if err := s.Submit(j.typ, j.id, fn, j.opts...); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(context.Background()); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("Close: %v", err)
	}
	close(spans)
	var out []span
	for sp := range spans {
		out = append(out, sp)
	}
	sortSpans(out)
	return out
}

type timedJob struct {
	at      int // seconds
	typ     fairsched.JobType
	id, tag string
	dur     int // seconds
	opts    []fairsched.JobOption
	probe   func() // instead of a job: called at its time
}

func sortSpans(s []span) {
	for i := 1; i < len(s); i++ {
		for k := i; k > 0 && (s[k].Start < s[k-1].Start || s[k].Start == s[k-1].Start && s[k].Job < s[k-1].Job); k-- {
			s[k], s[k-1] = s[k-1], s[k]
		}
	}
}

// gitTypes is a git proxy's registration: clones of one repository share it,
// a repack has it alone.
func gitTypes(t *testing.T, s *fairsched.Scheduler, cloneMode fairsched.ConflictMode) {
	t.Helper()
	for typ, cfg := range map[fairsched.JobType]fairsched.JobTypeConfig{
		"clone":  {DefaultCost: 10 * time.Second, Priority: 8, ConflictGroup: "repo", ConflictMode: cloneMode},
		"repack": {DefaultCost: 20 * time.Second, Priority: 8, ConflictGroup: "repo"},
	} {
		if err := s.RegisterType(typ, cfg); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSharedClonesRunTogether: four clones of one repository run together
// when clones are shared, one at a time when they are exclusive (the zero
// mode, spec 1's rule) — 10 s against 40 s.
func TestSharedClonesRunTogether(t *testing.T) {
	clones := []timedJob{
		{at: 0, typ: "clone", id: "linux", tag: "1", dur: 10},
		{at: 0, typ: "clone", id: "linux", tag: "2", dur: 10},
		{at: 0, typ: "clone", id: "linux", tag: "3", dur: 10},
		{at: 0, typ: "clone", id: "linux", tag: "4", dur: 10},
	}
	for _, tc := range []struct {
		mode fairsched.ConflictMode
		want []span
	}{
		{fairsched.ConflictShared, []span{
			{"clone/linux#1", 0, 10}, {"clone/linux#2", 0, 10}, {"clone/linux#3", 0, 10}, {"clone/linux#4", 0, 10},
		}},
		{fairsched.ConflictExclusive, []span{
			{"clone/linux#1", 0, 10}, {"clone/linux#2", 10, 20}, {"clone/linux#3", 20, 30}, {"clone/linux#4", 30, 40},
		}},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, err := fairsched.New(fairsched.WithMaxConcurrency(8))
				if err != nil {
					t.Fatal(err)
				}
				gitTypes(t, s, tc.mode)
				if diff := cmp.Diff(tc.want, runTimeline(t, s, clones)); diff != "" {
					t.Errorf("timeline (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// TestExclusiveJobIsNotStarvedByShared: a repack of linux arrives while
// clones of it run; clones of linux that arrive after it wait behind it
// (writer preference) even though clones could share the repository, while
// a clone of another repository starts at once. Without the preference the
// stream of clones, one every 5 s, would keep linux busy and the repack
// waiting until the stream ends.
func TestExclusiveJobIsNotStarvedByShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New(fairsched.WithMaxConcurrency(8))
		if err != nil {
			t.Fatal(err)
		}
		gitTypes(t, s, fairsched.ConflictShared)
		jobs := []timedJob{
			{at: 0, typ: "clone", id: "linux", tag: "a", dur: 10},
			{at: 2, typ: "repack", id: "linux", tag: "r", dur: 20},
			{at: 5, typ: "clone", id: "linux", tag: "b", dur: 10},
			{at: 6, typ: "clone", id: "git", tag: "c", dur: 10},
			{at: 10, typ: "clone", id: "linux", tag: "d", dur: 10},
			{at: 15, typ: "clone", id: "linux", tag: "e", dur: 10},
		}
		var reasons []fairsched.Reason
		jobs = append(jobs[:4:4], append([]timedJob{{at: 7, probe: func() {
			for _, p := range snapshot(t, s).Pending {
				reasons = append(reasons, p.Reason)
			}
		}}}, jobs[4:]...)...)
		got := runTimeline(t, s, jobs)
		want := []span{
			{"clone/linux#a", 0, 10},
			{"clone/git#c", 6, 16},
			{"repack/linux#r", 10, 30}, // linux idle at 10: the repack goes first
			{"clone/linux#b", 30, 40},  // arrived after the repack: behind it
			{"clone/linux#d", 30, 40},
			{"clone/linux#e", 30, 40},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("timeline (-want +got):\n%s", diff)
		}
		// At 7 s the repack and clone b wait, both on the conflict.
		if diff := cmp.Diff([]fairsched.Reason{fairsched.ReasonConflict, fairsched.ReasonConflict}, reasons); diff != "" {
			t.Errorf("reasons at 7 s (-want +got):\n%s", diff)
		}
	})
}

// TestConflictModeValidation: a shared type needs a conflict group, and an
// unknown mode is refused, both with ErrInvalidConfig.
func TestConflictModeValidation(t *testing.T) {
	s, err := fairsched.New()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	for name, cfg := range map[string]fairsched.JobTypeConfig{
		"shared-without-group": {DefaultCost: time.Second, Priority: 1, ConflictMode: fairsched.ConflictShared},
		"unknown-mode":         {DefaultCost: time.Second, Priority: 1, ConflictGroup: "g", ConflictMode: 7},
	} {
		if err := s.RegisterType(fairsched.JobType(name), cfg); !errors.Is(err, fairsched.ErrInvalidConfig) {
			t.Errorf("%s: RegisterType = %v; want ErrInvalidConfig", name, err)
		}
	}
}

// Issue 14 §2: durations and rates so large that their instants pass the
// year 2262 (where Unix nanoseconds end) used to wrap to the past — a job
// expired, retried or was re-asked at once, or the owner spun for ever.
// Each case runs on a mock clock in 2026, where the wrap bites, and checks
// that the scheduler still answers: these are liveness bounds (a broken
// owner fails the case after 10 s instead of hanging the suite), not timed
// assertions.

const year = 365 * 24 * time.Hour

// overflowScheduler starts a scheduler on a mock clock in 2026 with type t.
func overflowScheduler(t *testing.T, opts ...fairsched.Option) (*fairsched.Scheduler, *clock.Mock) {
	t.Helper()
	mock := clock.NewMock()
	mock.Set(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
	s, err := fairsched.New(append([]fairsched.Option{fairsched.WithClock(mock), fairsched.WithMaxConcurrency(4)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		// Bounded too: a stuck owner never stops, and the case has failed.
		_ = within(t, "Close", func() error { return s.Close(ctx) })
	})
	for _, typ := range []fairsched.JobType{"t", "other"} {
		if err := s.RegisterType(typ, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4}); err != nil {
			t.Fatal(err)
		}
	}
	return s, mock
}

// within fails t unless call returns within 10 s (a hang bound).
func within(t *testing.T, what string, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no answer after 10 s: the scheduler's owner is stuck", what)
		return nil
	}
}

func nopJob(context.Context) error { return nil }

func TestHugeDurationsNeverWrap(t *testing.T) {
	ctx := context.Background()
	t.Run("aging-interval-250y", func(t *testing.T) {
		s, _ := overflowScheduler(t, fairsched.WithAging(fairsched.AgingConfig{GracePeriod: time.Second, Interval: 250 * year, Step: 1, MaxEffectivePriority: 9}))
		if err := within(t, "RunSync", func() error { return s.RunSync(ctx, "t", "x", "", nopJob) }); err != nil {
			t.Errorf("RunSync = %v", err)
		}
	})
	t.Run("ttl-280y", func(t *testing.T) {
		s, _ := overflowScheduler(t)
		if err := within(t, "RunSync", func() error { return s.RunSync(ctx, "t", "x", "", nopJob, fairsched.WithQueueTimeout(280*year)) }); err != nil {
			t.Errorf("RunSync with a 280-year TTL = %v; want it run (it expired at once)", err)
		}
	})
	t.Run("defer-maxint64", func(t *testing.T) {
		asked := atomic.Int64{}
		s, _ := overflowScheduler(t, fairsched.WithAdmissionPolicy(func(info fairsched.JobInfo) fairsched.Decision {
			if info.ID == "later" {
				asked.Add(1)
				return fairsched.Defer(math.MaxInt64)
			}
			return fairsched.Admit()
		}))
		if err := s.Submit("t", "later", nopJob); err != nil {
			t.Fatal(err)
		}
		if err := within(t, "RunSync", func() error { return s.RunSync(ctx, "other", "y", "", nopJob) }); err != nil {
			t.Errorf("RunSync = %v", err)
		}
		if n := asked.Load(); n != 1 {
			t.Errorf("the deferred job was asked %d times; want once (it never comes back)", n)
		}
	})
	t.Run("retry-backoff-250y", func(t *testing.T) {
		s, _ := overflowScheduler(t)
		var runs atomic.Int64
		failing := func(context.Context) error { runs.Add(1); return errors.New("fails") }
		retry := fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: 250 * year, MaxBackoff: 250 * year})
		if err := s.Submit("t", "x", failing, retry); err != nil {
			t.Fatal(err)
		}
		snap, err := func() (fairsched.Snapshot, error) {
			var snap fairsched.Snapshot
			err := within(t, "Snapshot", func() error {
				// The first attempt runs at once and fails: the job waits
				// for its retry (woken by the scheduler's events, no polling).
				var err error
				snap, err = fairschedtest.Until(ctx, s, func(sn fairsched.Snapshot) bool { return runs.Load() > 0 && sn.PendingTotal == 1 })
				return err
			})
			return snap, err
		}()
		if err != nil {
			t.Fatal(err)
		}
		if runs.Load() != 1 || len(snap.Pending) != 1 || snap.Pending[0].Reason != fairsched.ReasonBackoff {
			t.Errorf("after the first failure: %d runs, pending %+v; want 1 run and the job in backoff", runs.Load(), snap.Pending)
		}
	})
	t.Run("rate-1e-11", func(t *testing.T) {
		s, _ := overflowScheduler(t, fairsched.WithRateLimit(fairsched.RateForType("t"), 1e-11, 1))
		for _, id := range []string{"a", "b"} {
			if err := s.Submit("t", id, nopJob); err != nil {
				t.Fatal(err)
			}
		}
		if err := within(t, "RunSync", func() error { return s.RunSync(ctx, "other", "y", "", nopJob) }); err != nil {
			t.Errorf("RunSync = %v", err)
		}
	})
	t.Run("periodic-1ns-with-jitter", func(t *testing.T) {
		s, mock := overflowScheduler(t)
		stop, err := s.SubmitPeriodic("t", "tick", time.Nanosecond, nopJob, fairsched.WithJitter(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		// Up to 6e10 slots pass between occurrences: skipped in one step.
		_ = within(t, "the clock's advance", func() error { mock.Add(10 * time.Minute); return nil })
		if err := within(t, "RunSync", func() error { return s.RunSync(ctx, "other", "y", "", nopJob) }); err != nil {
			t.Errorf("RunSync = %v", err)
		}
		_ = within(t, "stop", func() error { stop(); return nil })
	})
}

// TestAbsurdCostsAndWeightsAreRefused: a stated cost past MaxTokens and a
// key weight outside [MinKeyWeight, MaxKeyWeight] are refused before they
// reach the cost arithmetic (two WithTokens(MaxInt64) wrapped a key's
// accumulated cost negative and inverted the fair order).
func TestAbsurdCostsAndWeightsAreRefused(t *testing.T) {
	s, _ := overflowScheduler(t)
	if err := s.Submit("t", "x", nopJob, fairsched.WithTokens(math.MaxInt64)); !errors.Is(err, fairsched.ErrInvalidJob) {
		t.Errorf("WithTokens(MaxInt64) = %v; want ErrInvalidJob", err)
	}
	if err := s.Submit("t", "x", nopJob, fairsched.WithTokens(fairsched.MaxTokens)); err != nil {
		t.Errorf("WithTokens(MaxTokens) = %v; want nil", err)
	}
	for _, w := range []float64{1e-9, 1e9} {
		if err := s.SetKeyWeight("k", w); !errors.Is(err, fairsched.ErrInvalidConfig) {
			t.Errorf("SetKeyWeight(%g) = %v; want ErrInvalidConfig", w, err)
		}
	}
	if _, err := fairsched.New(fairsched.WithKeyWeight("k", 1e-9)); !errors.Is(err, fairsched.ErrInvalidConfig) {
		t.Errorf("WithKeyWeight(1e-9) = %v; want ErrInvalidConfig", err)
	}
}

// TestMemoryReturnsAfterEviction: 100 000 background jobs over distinct
// fairness keys and ids run, their keys and estimates are evicted after
// the key TTL, and the heap in use returns to within 2× of the fresh
// scheduler's: the maps keyed by those strings gave their buckets back.
// (Before, the ledger's, the estimates', the queue's and the Supersede
// index's maps kept their peak size with nothing in them.)
func TestMemoryReturnsAfterEviction(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 100 000 jobs through the scheduler take a while; make check runs it")
	}
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New(fairsched.WithMaxConcurrency(64), fairsched.WithIdleExpiry(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(context.Background())
		if err := s.RegisterType("bg", fairsched.JobTypeConfig{DefaultCost: time.Millisecond, Priority: 8}); err != nil {
			t.Fatal(err)
		}
		fresh := heapInUse()
		nop := func(context.Context) error { return nil }
		for i := range 100_000 {
			if err := s.Submit("bg", fmt.Sprint("job-", i), nop, fairsched.WithFairnessKey(fmt.Sprint("client-", i))); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		peak := heapInUse()
		time.Sleep(3 * time.Minute) // past the TTL and its eviction ticks
		synctest.Wait()
		snap := snapshot(t, s)
		if len(snap.AccumulatedCost) > 1 || len(snap.CostEstimates) > 0 || len(snap.Pending)+len(snap.Running) > 0 {
			t.Fatalf("after eviction: %d keys, %d estimates, %d pending, %d running",
				len(snap.AccumulatedCost), len(snap.CostEstimates), len(snap.Pending), len(snap.Running))
		}
		after := heapInUse()
		t.Logf("heap in use: fresh %d KiB, peak %d KiB, after eviction %d KiB", fresh>>10, peak>>10, after>>10)
		if after > 2*fresh {
			t.Errorf("heap in use after eviction %d KiB, more than twice the fresh scheduler's %d KiB", after>>10, fresh>>10)
		}
	})
}

// TestCostEstimatesBounded: ids made fresh per job keep at most
// WithMaxCostEstimates estimates — the most recent ones — long before the
// idle expiry would drop them (what a dropped id is charged then:
// costmodel's TestEstimatesBounded).
func TestCostEstimatesBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := boundedScheduler(t, fairsched.WithMaxCostEstimates(3), "bg")
		for i := range 10 {
			if err := s.Submit("bg", fmt.Sprint("job-", i), func(context.Context) error {
				time.Sleep(time.Duration(i+1) * time.Millisecond)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			time.Sleep(time.Second) // one at a time: each is the most recent in turn
			synctest.Wait()
		}
		snap := snapshot(t, s)
		type est struct {
			ID   string
			Cost time.Duration
		}
		var got []est
		for _, e := range snap.CostEstimates {
			got = append(got, est{e.ID, e.Cost})
		}
		slices.SortFunc(got, func(a, b est) int { return strings.Compare(a.ID, b.ID) })
		// The first observation of an id smooths from the type's default:
		// 0.3·observed + 0.7·1s.
		smooth := func(ms int) time.Duration { return 700*time.Millisecond + time.Duration(ms)*300*time.Microsecond }
		want := []est{{"job-7", smooth(8)}, {"job-8", smooth(9)}, {"job-9", smooth(10)}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("estimates kept (-want +got):\n%s", diff)
		}
		if snap.EstimatesTotal != 3 {
			t.Errorf("EstimatesTotal %d, want 3", snap.EstimatesTotal)
		}
	})
}

// TestIdleKeysBounded: fairness keys made fresh per request keep at most
// WithMaxIdleKeys idle keys — the most recently used — long before the
// idle expiry would drop them; a pushed-out key returns at the floor
// (costmodel's TestLedgerBoundsIdleKeys).
func TestIdleKeysBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := boundedScheduler(t, fairsched.WithMaxIdleKeys(3), "fg")
		for i := range 10 {
			key := fmt.Sprint("request-", i)
			if err := s.RunSync(context.Background(), "fg", "same", key, func(context.Context) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
		snap := snapshot(t, s)
		var keys []string
		for k := range snap.AccumulatedCost {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if diff := cmp.Diff([]string{"request-7", "request-8", "request-9"}, keys); diff != "" {
			t.Errorf("keys kept (-want +got):\n%s", diff)
		}
	})
}

// boundedScheduler is a scheduler with opt and one type typ (a second's
// default cost), closed when the test ends.
func boundedScheduler(t *testing.T, opt fairsched.Option, typ fairsched.JobType) *fairsched.Scheduler {
	t.Helper()
	s := newScheduler(t, opt)
	if err := s.RegisterType(typ, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8}); err != nil {
		t.Fatal(err)
	}
	return s
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// rateTimeline submits jobs of type "export" (each returns at once) with
// the tokens given, in order, at T=0, under a rate limit of 1 token a
// second with the burst given, then lets virtual time run in steps of a
// second and returns when each job started.
func rateTimeline(t *testing.T, burst int, jobs []struct {
	ID     string
	Tokens time.Duration // 0: none stated
}, opts ...fairsched.Option) []start {
	t.Helper()
	var got []start
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		t0 := mock.Now()
		opts = append([]fairsched.Option{fairsched.WithClock(mock), fairsched.WithRateLimit(fairsched.RateForType("export"), 1, burst)}, opts...)
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			"export": {DefaultCost: time.Second, Priority: 4},
		}, opts...)
		events, cancel := s.Subscribe(64)
		noop := func(context.Context) error { return nil }
		for _, j := range jobs {
			var jo []fairsched.JobOption
			if j.Tokens > 0 {
				jo = append(jo, fairsched.WithTokens(j.Tokens))
			}
			if err := s.Submit("export", j.ID, noop, jo...); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		for range 30 {
			mock.Add(time.Second)
			synctest.Wait()
		}
		cancel()
		got = starts(collect(events), t0)
	})
	return got
}

type tokenJob = struct {
	ID     string
	Tokens time.Duration
}

// TestRateLimitCountsTokens: spec 4 — a job takes its tokens from each
// bucket that applies: WithTokens(4s) takes 4, so from a bucket of burst 4
// refilling 1 a second four such jobs start 4s apart, not all at once. A
// job that states none takes 1; a fraction of a second counts as a whole
// token (2.5s takes 3).
func TestRateLimitCountsTokens(t *testing.T) {
	got := rateTimeline(t, 4, []tokenJob{{"a", 4 * time.Second}, {"b", 4 * time.Second}, {"c", 4 * time.Second}, {"d", 4 * time.Second}})
	want := []start{{0, "a"}, {4 * time.Second, "b"}, {8 * time.Second, "c"}, {12 * time.Second, "d"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("four 4-token jobs, burst 4 (-want +got):\n%s", diff)
	}

	got = rateTimeline(t, 4, []tokenJob{{"one", 0}, {"two", 0}, {"frac", 2500 * time.Millisecond}, {"tiny", time.Nanosecond}, {"next", 0}})
	// one and two take 1 each (2 left), frac needs 3: it waits a second;
	// tiny rounds up to 1 token (at 2s), next at 3s.
	want = []start{{0, "one"}, {0, "two"}, {time.Second, "frac"}, {2 * time.Second, "tiny"}, {3 * time.Second, "next"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("1, 1, 2.5s, 1ns, 1 tokens, burst 4 (-want +got):\n%s", diff)
	}
}

// TestRateLimitJobLargerThanBurst: a job that needs more tokens than the
// bucket holds is neither refused nor starved: it waits for a full bucket
// and takes all of it; the tokens past the burst are not owed, so the next
// job waits only for its own from an empty bucket. Smaller jobs behind it
// in the queue do not pass it while it waits.
func TestRateLimitJobLargerThanBurst(t *testing.T) {
	got := rateTimeline(t, 4, []tokenJob{{"small", 0}, {"big", 10 * time.Second}, {"after", 0}, {"big2", time.Hour}, {"last", 2 * time.Second}})
	// small takes 1 (3 left); big waits for 4 (T=1s) and empties the
	// bucket; after waits for 1 (T=2s); big2 for a full bucket again
	// (T=6s); last for 2 (T=8s).
	want := []start{{0, "small"}, {time.Second, "big"}, {2 * time.Second, "after"}, {6 * time.Second, "big2"}, {8 * time.Second, "last"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("jobs past the burst (-want +got):\n%s", diff)
	}
}

// TestRateLimitTinyRate: a bucket that refills once in ages still waits on
// one timer, with no overflow: the job behind an empty bucket is pending,
// rate limited, and nothing panics. (Close with an ended context then
// drops it: a graceful Close would wait for it.)
func TestRateLimitTinyRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		s, err := fairsched.New(fairsched.WithClock(mock), fairsched.WithRateLimit(fairsched.RateForType("export"), 1e-300, 2))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType("export", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4}); err != nil {
			t.Fatal(err)
		}
		noop := func(context.Context) error { return nil }
		for _, id := range []string{"a", "b"} {
			if err := s.Submit("export", id, noop, fairsched.WithTokens(2*time.Second)); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		mock.Add(24 * time.Hour)
		synctest.Wait()
		snap := snapshot(t, s)
		if len(snap.Pending) != 1 || snap.Pending[0].ID != "b" || snap.Pending[0].Reason != fairsched.ReasonRateLimited {
			t.Errorf("pending %+v; want b, rate_limited", snap.Pending)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := s.Close(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Close = %v; want context.Canceled", err)
		}
	})
}

// FuzzExtremeValues feeds every duration, rate, weight and token the API
// takes from the fuzzer — aging interval and grace, TTL, retry backoff,
// deferral, stated cost, key weight, rate — on a clock in 2026, where
// instants past 2262 used to wrap. Each call either fails with a typed
// error or is taken, and the scheduler keeps answering: a plain RunSync
// completes (a liveness bound, not a timed assertion).
func FuzzExtremeValues(f *testing.F) {
	f.Add(int64(time.Second), int64(250*year), int64(280*year), int64(250*year), int64(math.MaxInt64), int64(math.MaxInt64), 1e-9, 1e-11)
	f.Add(int64(0), int64(1), int64(1), int64(1), int64(1), int64(1), 1.0, 1.0)
	f.Add(int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64), int64(0), int64(math.MaxInt64/2), 1e6, 1e300)
	f.Add(int64(-1), int64(-5), int64(-1), int64(-1), int64(-1), int64(-1), -1.0, math.Inf(1))
	f.Fuzz(func(t *testing.T, grace, interval, ttl, backoff, deferral, tokens int64, weight, rate float64) {
		opts := []fairsched.Option{fairsched.WithAdmissionPolicy(func(info fairsched.JobInfo) fairsched.Decision {
			if info.ID == "deferred" && info.Attempt == 0 {
				return fairsched.Defer(time.Duration(deferral))
			}
			return fairsched.Admit()
		})}
		if interval > 0 {
			opts = append(opts, fairsched.WithAging(fairsched.AgingConfig{GracePeriod: time.Duration(grace), Interval: time.Duration(interval), Step: 1, MaxEffectivePriority: 9}))
		}
		opts = append(opts, fairsched.WithRateLimit(fairsched.RateForType("limited"), rate, 1))
		s, _ := overflowSchedulerOr(t, opts...)
		if s == nil {
			return // refused as invalid configuration
		}
		if err := s.RegisterType("limited", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4}); err != nil {
			t.Fatal(err)
		}
		nop := func(context.Context) error { return nil }
		fail := func(context.Context) error { return errors.New("fails") }
		typed := func(err error) bool {
			return err == nil || errors.Is(err, fairsched.ErrInvalidJob) || errors.Is(err, fairsched.ErrInvalidConfig)
		}
		for _, submit := range []func() error{
			func() error { return s.Submit("t", "ttl", nop, fairsched.WithQueueTimeout(time.Duration(ttl))) },
			func() error {
				return s.Submit("t", "retry", fail, fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Duration(backoff), MaxBackoff: time.Duration(backoff)}))
			},
			func() error { return s.Submit("t", "deferred", nop) },
			func() error {
				return s.Submit("t", "tokens", nop, fairsched.WithTokens(time.Duration(tokens)), fairsched.WithFairnessKey("w"))
			},
			func() error { return s.SetKeyWeight("w", weight) },
			func() error { return s.Submit("limited", "a", nop) },
			func() error { return s.Submit("limited", "b", nop) },
		} {
			if err := submit(); !typed(err) {
				t.Fatalf("a call failed with an untyped error: %v", err)
			}
		}
		if err := within(t, "RunSync", func() error { return s.RunSync(context.Background(), "other", "probe", "", nop) }); err != nil {
			t.Fatalf("RunSync = %v", err)
		}
	})
}

// overflowSchedulerOr is overflowScheduler that reports an invalid
// configuration as a nil scheduler instead of failing.
func overflowSchedulerOr(t *testing.T, opts ...fairsched.Option) (*fairsched.Scheduler, any) {
	t.Helper()
	probe, err := fairsched.New(opts...)
	if err != nil {
		if !errors.Is(err, fairsched.ErrInvalidConfig) {
			t.Fatalf("New = %v; want nil or ErrInvalidConfig", err)
		}
		return nil, nil
	}
	_ = probe.Close(context.Background())
	s, mock := overflowScheduler(t, opts...)
	return s, mock
}

// TestHugeScoreWeightsStayFinite: a weight past MaxScoreWeight is refused
// with ErrInvalidConfig (1e300 gave +Inf scores and a snapshot that was no
// longer JSON); at the bound, with the largest priority and a long wait, the
// snapshot's scores are finite and it encodes.
func TestHugeScoreWeightsStayFinite(t *testing.T) {
	if _, err := fairsched.New(fairsched.WithScoring(fairsched.ScoreConfig{PriorityWeight: 1e300})); !errors.Is(err, fairsched.ErrInvalidConfig) {
		t.Errorf("New with PriorityWeight 1e300 = %v; want ErrInvalidConfig", err)
	}
	synctest.Test(t, func(t *testing.T) {
		max := fairsched.MaxScoreWeight
		s, err := fairsched.New(fairsched.WithMaxConcurrency(1), fairsched.WithIdleExpiry(200*365*24*time.Hour), fairsched.WithScoring(fairsched.ScoreConfig{
			PriorityWeight: max, AgeWeight: max, RarityBonus: max, OnDemandBonus: max, OnDemandAgeWeight: max}))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(context.Background())
		if err := s.RegisterType("t", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: math.MaxInt32}); err != nil {
			t.Fatal(err)
		}
		hold := testkit.NewGate()
		if err := s.Submit("t", "hold", hold.Run); err != nil {
			t.Fatal(err)
		}
		if err := s.Submit("t", "waits", func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * 365 * 24 * time.Hour) // a century
		snap := snapshot(t, s)
		if len(snap.Pending) != 1 || math.IsInf(snap.Pending[0].Score, 0) || math.IsNaN(snap.Pending[0].Score) {
			t.Fatalf("pending %+v; want one job with a finite score", snap.Pending)
		}
		if _, err := json.Marshal(snap); err != nil {
			t.Errorf("snapshot does not encode: %v", err)
		}
		hold.Release(nil)
	})
}
