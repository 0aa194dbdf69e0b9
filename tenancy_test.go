package fairsched_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/fairsched/fairsched"
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
		var blockers []*blocker
		try := func(id, key string) error {
			b := newBlocker()
			blockers = append(blockers, b)
			return s.Submit(work, id, b.fn, fairsched.WithFairnessKey(key))
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
		for done := map[*blocker]bool{}; len(done) < 4; {
			progressed := false
			for _, b := range blockers {
				if !done[b] && b.running() {
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
		jobs := map[string]*blocker{}
		for _, id := range []string{"n1", "n2", "n3", "n4"} {
			jobs[id] = newBlocker()
			if err := s.Submit(work, id, jobs[id].fn, fairsched.WithFairnessKey("noisy")); err != nil {
				t.Fatal(err)
			}
		}
		for _, id := range []string{"v1", "v2", "v3"} {
			jobs[id] = newBlocker()
			if err := s.Submit(work, id, jobs[id].fn, fairsched.WithFairnessKey("vip")); err != nil {
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
		if running, _ := state(); !jobs["v3"].running() || len(running) != 4 {
			t.Errorf("after v1: running %v; want v3 in v1's slot", running)
		}
		// A noisy job ends: the next noisy job may run.
		finish(t, jobs["n1"])
		if !jobs["n3"].running() || jobs["n4"].running() {
			t.Errorf("after n1: n3 running %v, n4 running %v; want n3 only", jobs["n3"].running(), jobs["n4"].running())
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
