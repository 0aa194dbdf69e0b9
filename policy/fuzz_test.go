package policy_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fairsched/fairsched/policy"
)

// Fuzz targets for the validation of configurations: Validate never panics,
// every error it returns is an ErrInvalidConfig that says so first, and a
// configuration it accepts keeps the values, and what the package derives
// from them, in their documented ranges.

const fuzzInvalidPrefix = "fairsched: invalid config: "

// fuzzCheckErr checks the form of an error Validate returned.
func fuzzCheckErr(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, policy.ErrInvalidConfig) {
		t.Fatalf("error %q does not match ErrInvalidConfig", err)
	}
	if !strings.HasPrefix(err.Error(), fuzzInvalidPrefix) {
		t.Fatalf("error %q does not start with %q", err, fuzzInvalidPrefix)
	}
}

// fuzzDraws are the random draws every accepted retry policy is tried with.
var fuzzDraws = []float64{0, 0.25, 0.5, 0.999999}

// fuzzUnit maps any float to [0, 1).
func fuzzUnit(u float64) float64 {
	if math.IsNaN(u) || math.IsInf(u, 0) {
		return 0
	}
	u = math.Abs(math.Mod(u, 1))
	if u >= 1 {
		return 0
	}
	return u
}

// fuzzIdealBackoff is retry n's backoff before jitter, in exact integer
// arithmetic: min(MaxBackoff, MinBackoff·2ⁿ⁻¹).
func fuzzIdealBackoff(r policy.RetryPolicy, n int) time.Duration {
	d := r.MinBackoff
	for range n - 1 {
		if d > r.MaxBackoff/2 {
			return r.MaxBackoff
		}
		d *= 2
	}
	return min(d, r.MaxBackoff)
}

// fuzzCheckRetry checks an accepted retry policy and its backoffs.
func fuzzCheckRetry(t *testing.T, r policy.RetryPolicy, u float64) {
	t.Helper()
	if r.MaxAttempts < 1 || !(r.Jitter >= 0 && r.Jitter <= 1) || r.MaxBackoff < r.MinBackoff {
		t.Fatalf("accepted %+v: attempts, jitter or backoff bounds out of range", r)
	}
	if !r.Retries() {
		return // Backoff is never asked for
	}
	if r.MinBackoff <= 0 {
		t.Fatalf("accepted %+v: retries with MinBackoff %v", r, r.MinBackoff)
	}
	draws := append(slices.Clone(fuzzDraws), fuzzUnit(u))
	for _, u := range draws {
		prev := time.Duration(0)
		for n := 1; n <= 10; n++ {
			b := r.Backoff(n, u)
			ideal := fuzzIdealBackoff(r, n)
			if b < 0 || b > r.MaxBackoff {
				t.Fatalf("%+v: Backoff(%d, %v) = %v (%d ns), outside [0, MaxBackoff %d ns]", r, n, u, b, int64(b), int64(r.MaxBackoff))
			}
			// The jitter takes at most Jitter·u of the ideal backoff.
			low := float64(ideal)*(1-r.Jitter*u)*(1-1e-9) - 2
			if float64(b) < low {
				t.Fatalf("%+v: Backoff(%d, %v) = %v (%d ns), below (1−Jitter·u)·min(MaxBackoff, MinBackoff·2ⁿ⁻¹) = %v", r, n, u, b, int64(b), time.Duration(low))
			}
			if b < prev {
				t.Fatalf("%+v: Backoff(%d, %v) = %v, less than Backoff(%d) = %v", r, n, u, b, n-1, prev)
			}
			prev = b
		}
	}
}

func FuzzRetryPolicy(f *testing.F) {
	f.Add(3, int64(time.Second), int64(time.Minute), 0.5, 0.3)
	f.Add(1, int64(0), int64(0), 0.0, 0.0)
	f.Add(5, int64(time.Millisecond), int64(time.Millisecond), 1.0, 0.999)
	f.Add(2, int64(0), int64(time.Second), 0.0, 0.0)    // spins: rejected
	f.Add(2, int64(time.Second), int64(1), 0.0, 0.0)    // max < min: rejected
	f.Add(2, int64(1), int64(2), math.NaN(), 0.0)       // jitter NaN: rejected
	f.Add(0, int64(1), int64(2), 0.0, 0.0)              // no attempt: rejected
	f.Add(10, int64(1), int64(math.MaxInt64), 0.1, 0.7) // huge cap
	f.Fuzz(func(t *testing.T, attempts int, minB, maxB int64, jitter, u float64) {
		r := policy.RetryPolicy{MaxAttempts: attempts, MinBackoff: time.Duration(minB), MaxBackoff: time.Duration(maxB), Jitter: jitter}
		err := r.Validate("Retry")
		if err != nil {
			fuzzCheckErr(t, err)
			if !strings.HasPrefix(err.Error(), fuzzInvalidPrefix+"Retry.") {
				t.Fatalf("error %q does not name the field", err)
			}
			return
		}
		fuzzCheckRetry(t, r, u)
	})
}

func FuzzJobTypeConfig(f *testing.F) {
	f.Add("clone", int64(10*time.Second), 8, "git", 8, int64(0), 0, int64(0), int64(0), 0.0, false, false)
	f.Add("pdf", int64(time.Second), 0, "", 1, int64(30*time.Second), 3, int64(time.Second), int64(time.Minute), 0.2, true, true)
	f.Add("", int64(time.Second), 0, "", 1, int64(0), 0, int64(0), int64(0), 0.0, false, false)  // no name
	f.Add("x", int64(0), 0, "", 1, int64(0), 0, int64(0), int64(0), 0.0, false, false)           // no cost
	f.Add("x", int64(1), -1, "", 1, int64(0), 0, int64(0), int64(0), 0.0, false, false)          // negative cap
	f.Add("x", int64(1), 0, "", 0, int64(0), 0, int64(0), int64(0), 0.0, false, false)           // priority 0
	f.Add("x", int64(1), 0, "", 1, int64(-1), 0, int64(0), int64(0), 0.0, false, false)          // negative timeout
	f.Add("x", int64(1), 0, "", 1, int64(0), 2, int64(0), int64(time.Second), 0.0, false, false) // retry without backoff
	f.Add("x", int64(1), 0, "", 1, int64(0), 0, int64(0), int64(0), 0.5, false, false)           // retry of 0 attempts
	f.Fuzz(func(t *testing.T, name string, cost int64, maxConc int, group string, prio int, timeout int64,
		attempts int, minB, maxB int64, jitter float64, coalesce, worker bool) {
		cfg := policy.JobTypeConfig{
			DefaultCost: time.Duration(cost), MaxConcurrency: maxConc, ConflictGroup: policy.ConflictGroup(group),
			Priority: policy.Priority(prio), QueueTimeout: time.Duration(timeout),
			Retry:    policy.RetryPolicy{MaxAttempts: attempts, MinBackoff: time.Duration(minB), MaxBackoff: time.Duration(maxB), Jitter: jitter},
			Coalesce: coalesce, RequiresWorker: worker,
		}
		err := cfg.Validate(policy.JobType(name))
		fuzzCheckPriorityModes(t, cfg, policy.JobType(name), err)
		if err != nil {
			fuzzCheckErr(t, err)
			return
		}
		switch {
		case name == "":
			t.Fatal("accepted an empty type name")
		case cfg.DefaultCost <= 0:
			t.Fatalf("accepted DefaultCost %v", cfg.DefaultCost)
		case cfg.MaxConcurrency < 0:
			t.Fatalf("accepted MaxConcurrency %d", cfg.MaxConcurrency)
		case cfg.Priority < 1:
			t.Fatalf("accepted Priority %d", cfg.Priority)
		case cfg.QueueTimeout < 0:
			t.Fatalf("accepted QueueTimeout %v", cfg.QueueTimeout)
		}
		if cfg.Retry != (policy.RetryPolicy{}) {
			if err := cfg.Retry.Validate("Retry"); err != nil {
				t.Fatalf("config accepted with a retry policy its own Validate rejects: %v", err)
			}
			fuzzCheckRetry(t, cfg.Retry, jitter)
		}
		if k, ok := cfg.Conflicts("id"); ok != (group != "") || ok && k != (policy.ConflictKey{Group: cfg.ConflictGroup, ID: "id"}) {
			t.Fatalf("Conflicts(id) = %v, %v for group %q", k, ok, group)
		}
	})
}

// fuzzCheckPriorityModes checks a registration under every priority mode,
// with and without scoring, against def, its error under the default limits:
// the priority's range is the only difference — never negative, and 0 only
// where it means no cap (PriorityOrderOnly, or scoring), the default's
// refusal of 0 naming the option to use.
func fuzzCheckPriorityModes(t *testing.T, cfg policy.JobTypeConfig, name policy.JobType, def error) {
	t.Helper()
	sc := policy.ScoreConfig{}.WithDefaults()
	orderOnly, scoring := policy.DefaultLimits(), policy.DefaultLimits()
	orderOnly.PriorityMode, scoring.Scoring = policy.PriorityOrderOnly, &sc
	// The verdict for the same config at priority 1, valid in every mode.
	one := cfg
	one.Priority = 1
	base := one.Validate(name)
	errString := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	for _, l := range []policy.Limits{orderOnly, scoring} {
		err := cfg.ValidateFor(name, l)
		if err != nil {
			fuzzCheckErr(t, err)
		}
		switch {
		case cfg.Priority >= 1 && errString(err) != errString(def):
			t.Fatalf("priority %d: ValidateFor(%+v) = %v; the default limits give %v", cfg.Priority, l, err, def)
		case cfg.Priority == 0 && errString(err) != errString(base):
			t.Fatalf("priority 0 with %v (scoring %v): %v; at priority 1: %v", l.PriorityMode, l.Scoring != nil, err, base)
		case cfg.Priority < 0 && err == nil:
			t.Fatalf("accepted priority %d with %v", cfg.Priority, l.PriorityMode)
		}
	}
	if cfg.Priority == 0 && base == nil && (def == nil || !strings.Contains(def.Error(), "WithPriorityMode(PriorityOrderOnly)")) {
		t.Fatalf("priority 0 under the default limits: %v; want a refusal that names WithPriorityMode(PriorityOrderOnly)", def)
	}
}

// Bits of FuzzLimits' flags: which optional sections the limits have.
const (
	fuzzAging = 1 << iota
	fuzzScoring
	fuzzTenants
	fuzzTier
	fuzzAdaptive
	fuzzAdaptiveDefaults
	fuzzGroups
	fuzzKeyWeight
)

func FuzzLimits(f *testing.F) {
	// flags, maxConc, smoothing, ttl,
	// grace, interval, step, maxEff, urgent,
	// priorityW, ageW, rarity, onDemand, onDemandAge,
	// maxPending, tenantRunning, tenantPending,
	// tier, minShare, burstShare,
	// adMin, adMax, tolerance, backoff,
	// groupWeight, groupMin, groupLimit, keyWeight
	f.Add(uint8(0), 0, 0.3, int64(10*time.Minute),
		int64(0), int64(0), 0, 0, 0,
		0.0, 0.0, 0.0, 0.0, 0.0,
		0, 0, 0,
		0, 0.0, 0.0,
		0, 0, 0.0, 0.0,
		0, 0, 0, 0.0)
	f.Add(uint8(fuzzAging|fuzzTenants|fuzzTier|fuzzGroups|fuzzKeyWeight), 8, 1.0, int64(time.Minute),
		int64(3*time.Second), int64(time.Second), 2, 8, 7,
		0.0, 0.0, 0.0, 0.0, 0.0,
		100, 2, 10,
		8, 0.5, 1.0,
		0, 0, 0.0, 0.0,
		3, 1, 6, 2.0)
	f.Add(uint8(fuzzScoring|fuzzAdaptive|fuzzAdaptiveDefaults), 4, 0.5, int64(time.Second),
		int64(0), int64(0), 0, 0, 0,
		1024.0, 16.0, 500.0, 4096.0, 32.0,
		0, 0, 0,
		0, 0.0, 0.0,
		2, 10, 0.0, 0.0,
		0, 0, 0, 0.0)
	f.Add(uint8(fuzzAging|fuzzScoring), 0, 0.3, int64(time.Second), // aging with scoring: rejected
		int64(0), int64(time.Second), 0, 4, 0,
		0.0, 0.0, 0.0, 0.0, 0.0,
		0, 0, 0,
		0, 0.0, 0.0,
		0, 0, 0.0, 0.0,
		0, 0, 0, 0.0)
	f.Add(uint8(fuzzTier), 0, 0.3, int64(time.Second), // tier without a global cap: rejected
		int64(0), int64(0), 0, 0, 0,
		0.0, 0.0, 0.0, 0.0, 0.0,
		0, 0, 0,
		3, 0.2, 0.4,
		0, 0, 0.0, 0.0,
		0, 0, 0, 0.0)
	f.Add(uint8(fuzzTier), 0, 0.3, int64(time.Second), // order only, a tier with MaxRunning alone: no global cap needed
		int64(0), int64(0), 0, 0, 0,
		0.0, 0.0, 0.0, 0.0, 0.0,
		1, 3, 0,
		0, 0.0, 0.0,
		0, 0, 0.0, 0.0,
		0, 0, 0, 0.0)
	f.Add(uint8(0), 0, math.NaN(), int64(time.Second), // smoothing NaN: rejected
		int64(0), int64(0), 0, 0, 0,
		0.0, 0.0, 0.0, 0.0, 0.0,
		0, 0, 0,
		0, 0.0, 0.0,
		0, 0, 0.0, 0.0,
		0, 0, 0, 0.0)
	f.Add(uint8(fuzzAdaptive), 12, 0.3, int64(time.Second), // start above Max: rejected
		int64(0), int64(0), 0, 0, 0,
		0.0, 0.0, 0.0, 0.0, 0.0,
		0, 0, 0,
		0, 0.0, 0.0,
		2, 10, 2.0, 0.5,
		0, 0, 0, 0.0)
	f.Fuzz(func(t *testing.T, flags uint8, maxConc int, smoothing float64, ttl int64,
		grace, interval int64, step, maxEff, urgent int,
		priorityW, ageW, rarity, onDemand, onDemandAge float64,
		maxPending, tenantRunning, tenantPending int,
		tier int, minShare, burstShare float64,
		adMin, adMax int, tolerance, backoff float64,
		groupWeight, groupMin, groupLimit int, keyWeight float64) {
		l := policy.Limits{MaxConcurrency: maxConc, CostSmoothing: smoothing, KeyTTL: time.Duration(ttl), MaxPending: maxPending}
		if flags&fuzzAging != 0 {
			l.Aging = &policy.AgingConfig{GracePeriod: time.Duration(grace), Interval: time.Duration(interval),
				Step: policy.Priority(step), MaxEffectivePriority: policy.Priority(maxEff), UrgentThreshold: policy.Priority(urgent)}
		}
		if flags&fuzzScoring != 0 {
			l.Scoring = &policy.ScoreConfig{PriorityWeight: priorityW, AgeWeight: ageW, RarityBonus: rarity,
				OnDemandBonus: onDemand, OnDemandAgeWeight: onDemandAge}
		}
		if flags&fuzzTenants != 0 {
			l.Tenants = &policy.TenantsConfig{
				Default: policy.TenantLimits{MaxRunning: tenantRunning, MaxPending: tenantPending},
				Keys:    map[string]policy.TenantLimits{"gold": {MaxRunning: tenantPending, MaxPending: tenantRunning}},
			}
		}
		if flags&fuzzTier != 0 {
			// The absolute cap from tenantRunning, to keep the corpus's
			// arguments: negative, 0 (none) or a cap.
			l.Tiers = map[policy.Priority]policy.TierConfig{policy.Priority(tier): {MinShare: minShare, BurstShare: burstShare, MaxRunning: tenantRunning, LendIdle: tier%2 == 0}}
		}
		// The priority mode from maxPending, 2 being no mode at all.
		l.PriorityMode = policy.PriorityMode(uint(maxPending) % 3)
		if flags&fuzzAdaptive != 0 {
			a := policy.AdaptiveLimitConfig{Min: adMin, Max: adMax, Tolerance: tolerance, Backoff: backoff}
			if flags&fuzzAdaptiveDefaults != 0 {
				a = a.WithDefaults()
			}
			l.Adaptive = &a
		}
		if flags&fuzzGroups != 0 {
			l.Groups = &policy.GroupsConfig{DefaultWeight: 1, Groups: map[string]policy.GroupConfig{
				"A": {Weight: groupWeight, MinSlots: groupMin, Limit: groupLimit},
			}}
		}
		if flags&fuzzKeyWeight != 0 {
			l.KeyWeights = map[string]float64{"gold": keyWeight}
		}

		err := l.Validate()
		if err != nil {
			fuzzCheckErr(t, err)
			return
		}
		fuzzCheckLimits(t, l)
	})
}

// fuzzCheckLimits checks limits that Validate accepted.
func fuzzCheckLimits(t *testing.T, l policy.Limits) {
	t.Helper()
	switch {
	case l.MaxConcurrency < 0:
		t.Fatalf("accepted MaxConcurrency %d", l.MaxConcurrency)
	case !(l.CostSmoothing > 0 && l.CostSmoothing <= 1):
		t.Fatalf("accepted CostSmoothing %v, not in (0, 1]", l.CostSmoothing)
	case l.KeyTTL <= 0: // any positive one is valid: the eviction tick is max(KeyTTL/4, 1ms)
		t.Fatalf("accepted KeyTTL %v", l.KeyTTL)
	case l.MaxPending < 0:
		t.Fatalf("accepted MaxPending %d", l.MaxPending)
	case l.Aging != nil && l.Scoring != nil:
		t.Fatal("accepted aging with scoring")
	}
	if a := l.Aging; a != nil {
		fuzzCheckAging(t, *a)
	}
	if s := l.Scoring; s != nil {
		fuzzCheckScoring(t, *s)
	}
	if tc := l.Tenants; tc != nil {
		for _, key := range []string{"", "gold", "other"} {
			if tl := tc.For(key); tl.MaxRunning < 0 || tl.MaxPending < 0 {
				t.Fatalf("accepted tenant limits %+v for key %q", tl, key)
			}
		}
	}
	if l.PriorityMode != policy.PriorityValueIsCap && l.PriorityMode != policy.PriorityOrderOnly {
		t.Fatalf("accepted priority mode %v", l.PriorityMode)
	}
	for p, tier := range l.Tiers {
		shares := tier.MinShare != 0 || tier.BurstShare != 0
		switch {
		case tier.MaxRunning < 0:
			t.Fatalf("accepted tier %d MaxRunning %d", p, tier.MaxRunning)
		case !shares && tier.MaxRunning == 0:
			t.Fatalf("accepted tier %d without a cap: %+v", p, tier)
		case shares && l.MaxConcurrency < 1:
			t.Fatalf("accepted tier %d shares without a global cap", p)
		case shares && !(0 <= tier.MinShare && tier.MinShare <= tier.BurstShare && tier.BurstShare <= 1 && tier.BurstShare > 0):
			t.Fatalf("accepted tier %d shares %+v", p, tier)
		}
		reserved, burst := tier.Slots(l.MaxConcurrency)
		if reserved < 0 || reserved > burst || burst < 1 || shares && burst > l.MaxConcurrency ||
			tier.MaxRunning > 0 && burst > tier.MaxRunning || !shares && (reserved != 0 || burst != tier.MaxRunning) {
			t.Fatalf("tier %d %+v of %d: Slots = %d reserved, %d burst", p, tier, l.MaxConcurrency, reserved, burst)
		}
	}
	if a := l.Adaptive; a != nil {
		if a.Min < 1 || a.Max < a.Min || l.MaxConcurrency < a.Min || l.MaxConcurrency > a.Max ||
			!(a.Tolerance > 1) || math.IsInf(a.Tolerance, 0) || !(a.Backoff > 0 && a.Backoff < 1) {
			t.Fatalf("accepted adaptive limit %+v with MaxConcurrency %d", *a, l.MaxConcurrency)
		}
		limit := l.MaxConcurrency
		for i, slow := range []bool{true, false, true, true, false, false} {
			elapsed := time.Second
			if slow {
				elapsed = time.Hour
			}
			limit = a.Next(limit, elapsed, time.Second, i%2 == 0)
			if limit < a.Min || limit > a.Max {
				t.Fatalf("adaptive limit %+v left [Min, Max]: %d after step %d", *a, limit, i)
			}
		}
	}
	for key, w := range l.KeyWeights {
		if !(w > 0) || math.IsInf(w, 0) {
			t.Fatalf("accepted key weight %v for %q", w, key)
		}
		if c := policy.Weighted(time.Second, w); c < 0 {
			t.Fatalf("Weighted(1s, %v) = %v", w, c)
		}
	}
	if g := l.Groups; g != nil {
		if l.MaxConcurrency < 1 {
			t.Fatal("accepted groups without a global cap")
		}
		mins := 0
		for name, gc := range g.Groups {
			if gc.Weight < 1 || gc.MinSlots < 0 || gc.Limit < 0 || gc.Limit > 0 && gc.MinSlots > gc.Limit {
				t.Fatalf("accepted group %q %+v", name, gc)
			}
			mins += gc.MinSlots
		}
		if mins > l.MaxConcurrency {
			t.Fatalf("accepted minimums %d above MaxConcurrency %d", mins, l.MaxConcurrency)
		}
	}
}

// fuzzCheckAging checks an accepted aging config and its arithmetic.
func fuzzCheckAging(t *testing.T, a policy.AgingConfig) {
	t.Helper()
	if a.GracePeriod < 0 || a.Interval <= 0 || a.Step < 0 || a.MaxEffectivePriority < 1 ||
		a.UrgentThreshold < 0 || a.UrgentThreshold > a.MaxEffectivePriority {
		t.Fatalf("accepted aging %+v", a)
	}
	for _, base := range []policy.Priority{1, 2, 5, a.MaxEffectivePriority - 1, a.MaxEffectivePriority} {
		if base < 1 {
			continue
		}
		if w := a.MaxWait(base); w < 0 {
			t.Fatalf("aging %+v: MaxWait(%d) = %v (%d ns), negative", a, base, w, int64(w))
		}
		if e := a.Effective(base, 0); e != base {
			t.Fatalf("aging %+v: Effective(%d, 0) = %d: a fresh job aged", a, base, e)
		}
		waits := []time.Duration{0, a.GracePeriod, a.GracePeriod + a.Interval/2, time.Hour, math.MaxInt64}
		if waits[2] < waits[1] { // overflow
			waits[2] = waits[1]
		}
		slices.Sort(waits)
		prev := base
		for _, waited := range waits {
			e := a.Effective(base, waited)
			if e < prev || e > max(base, a.MaxEffectivePriority) {
				t.Fatalf("aging %+v: Effective(%d, %v) = %d, after %d; ceiling %d", a, base, waited, e, prev, a.MaxEffectivePriority)
			}
			prev = e
		}
	}
}

// fuzzCheckScoring checks an accepted score config and its arithmetic.
func fuzzCheckScoring(t *testing.T, s policy.ScoreConfig) {
	t.Helper()
	d := s.WithDefaults()
	for _, v := range []float64{d.PriorityWeight, d.AgeWeight, d.RarityBonus, d.OnDemandBonus, d.OnDemandAgeWeight} {
		if !(v > 0) || math.IsInf(v, 0) {
			t.Fatalf("accepted scoring %+v: with defaults %+v", s, d)
		}
	}
	classes := []policy.JobClass{{Priority: 0}, {Priority: 5}, {Priority: 1, OnDemand: true}, {Priority: 3, CompatibleSlots: 2}}
	for _, a := range classes {
		for _, b := range classes {
			w, ok := s.Crossover(a, b)
			if ok && w < 0 {
				t.Fatalf("scoring %+v: Crossover(%+v, %+v) = %v (%d ns), negative", s, a, b, w, int64(w))
			}
			if ok && w == 0 && d.Base(a) < d.Base(b) {
				t.Fatalf("scoring %+v: Crossover(%+v, %+v) = 0, but a starts below b (%v < %v)", s, a, b, d.Base(a), d.Base(b))
			}
		}
	}
}
