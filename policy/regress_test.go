package policy_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/fairsched/fairsched/policy"
)

// Regression tests for the bugs the fuzz targets found (their inputs are in
// testdata/fuzz/Fuzz*/regress-*), and for the map-order dependence of the
// validators' errors.

// maxDuration is the largest time.Duration.
const maxDuration = time.Duration(math.MaxInt64)

// largestDraw is the largest float64 below 1.
var largestDraw = math.Nextafter(1, 0)

// TestRegressBackoffExact: Backoff is computed exactly and saturates at
// MaxBackoff — no float64 rounding above it (2^53 ns and more), no overflow
// to 1ns at 2^63 ns — and the jitter only takes from it.
func TestRegressBackoffExact(t *testing.T) {
	const p53 = time.Duration(1) << 53
	for _, tc := range []struct {
		name string
		r    policy.RetryPolicy
		n    int
		u    float64
		want time.Duration
	}{
		{"max int64, first retry (was 1ns)", policy.RetryPolicy{MaxAttempts: 2, MinBackoff: maxDuration, MaxBackoff: maxDuration}, 1, 0, maxDuration},
		{"max int64, tenth retry", policy.RetryPolicy{MaxAttempts: 2, MinBackoff: maxDuration, MaxBackoff: maxDuration}, 10, 0, maxDuration},
		{"2^62 doubled past the cap (was 1ns)", policy.RetryPolicy{MaxAttempts: 5, MinBackoff: 1 << 62, MaxBackoff: maxDuration}, 2, 0, maxDuration},
		{"2^62 first retry", policy.RetryPolicy{MaxAttempts: 5, MinBackoff: 1 << 62, MaxBackoff: maxDuration}, 1, 0, 1 << 62},
		{"2^53+3 not rounded up", policy.RetryPolicy{MaxAttempts: 2, MinBackoff: p53 + 3, MaxBackoff: p53 + 3}, 1, 0, p53 + 3},
		{"2^53+1 doubled to the cap 2^54+1", policy.RetryPolicy{MaxAttempts: 3, MinBackoff: p53 + 1, MaxBackoff: 2*p53 + 1}, 2, 0, 2*p53 + 1},
		{"1ns doubled 62 times", policy.RetryPolicy{MaxAttempts: 2, MinBackoff: 1, MaxBackoff: maxDuration}, 63, 0, 1 << 62},
		{"1ns doubled 63 times: the cap", policy.RetryPolicy{MaxAttempts: 2, MinBackoff: 1, MaxBackoff: maxDuration}, 64, 0, maxDuration},
		{"huge n", policy.RetryPolicy{MaxAttempts: 2, MinBackoff: time.Second, MaxBackoff: time.Minute}, math.MaxInt, 0, time.Minute},
		{"n 0 counts as 1", policy.RetryPolicy{MaxAttempts: 2, MinBackoff: time.Second, MaxBackoff: time.Minute}, 0, 0, time.Second},
		{"exact doubling", policy.RetryPolicy{MaxAttempts: 2, MinBackoff: time.Second, MaxBackoff: time.Minute}, 4, 0, 8 * time.Second},
		{"jitter takes Jitter·u", policy.RetryPolicy{MaxAttempts: 2, MinBackoff: time.Second, MaxBackoff: time.Minute, Jitter: 0.5}, 3, 0.5, 3 * time.Second},
		{"whole jitter, largest draw, huge cap", policy.RetryPolicy{MaxAttempts: 2, MinBackoff: maxDuration, MaxBackoff: maxDuration, Jitter: 1}, 1, largestDraw, 1024},
		{"whole jitter, largest draw, 1ns", policy.RetryPolicy{MaxAttempts: 2, MinBackoff: 1, MaxBackoff: 1, Jitter: 1}, 1, largestDraw, 1},
		{"draw of 1 counts as the largest below", policy.RetryPolicy{MaxAttempts: 2, MinBackoff: maxDuration, MaxBackoff: maxDuration, Jitter: 1}, 1, 1, 1024},
		{"NaN draw: no jitter", policy.RetryPolicy{MaxAttempts: 2, MinBackoff: time.Second, MaxBackoff: time.Minute, Jitter: 1}, 1, math.NaN(), time.Second},
		{"no backoff", policy.RetryPolicy{MaxAttempts: 1}, 1, 0.5, 0},
	} {
		if got := tc.r.Backoff(tc.n, tc.u); got != tc.want {
			t.Errorf("%s: %+v.Backoff(%d, %v) = %d ns; want %d ns", tc.name, tc.r, tc.n, tc.u, int64(got), int64(tc.want))
		}
	}
}

// TestRegressBackoffBounds: for caps around the float64 precision limits,
// every backoff is in [0, MaxBackoff] and never decreases with n.
func TestRegressBackoffBounds(t *testing.T) {
	caps := []time.Duration{1<<53 - 1, 1 << 53, 1<<53 + 1, 1<<53 + 3, 1<<62 + 1, maxDuration - 1, maxDuration}
	mins := []time.Duration{1, 3, 1<<52 + 1, 1 << 62}
	for _, maxB := range caps {
		for _, minB := range mins {
			if minB > maxB {
				continue
			}
			for _, jitter := range []float64{0, 0.1, 0.5, 1} {
				r := policy.RetryPolicy{MaxAttempts: 2, MinBackoff: minB, MaxBackoff: maxB, Jitter: jitter}
				for _, u := range []float64{0, 0.25, 0.5, 0.999999, largestDraw} {
					prev := time.Duration(0)
					for n := 1; n <= 70; n++ {
						b := r.Backoff(n, u)
						if b < 1 || b > maxB || b < prev {
							t.Fatalf("%+v: Backoff(%d, %v) = %d ns after %d ns; want in [max(1, previous), %d]", r, n, u, int64(b), int64(prev), int64(maxB))
						}
						prev = b
					}
				}
			}
		}
	}
}

// TestRegressAgingOverflow: MaxWait saturates at the largest Duration,
// Effective never rises because of a wrap, and NextRise reports no rise
// that no wait reaches.
func TestRegressAgingOverflow(t *testing.T) {
	// testdata/fuzz/FuzzLimits/regress-aging-maxwait-overflow: 7 steps of
	// 2^62ns to the ceiling.
	long := policy.AgingConfig{Interval: 1 << 62, MaxEffectivePriority: 8}
	// testdata/fuzz/FuzzLimits/regress-aging-step-overflow: one huge step.
	huge := policy.AgingConfig{Interval: time.Second, Step: math.MaxInt, MaxEffectivePriority: math.MaxInt}
	// The whole priority range, one step of 1ns each.
	fine := policy.AgingConfig{GracePeriod: time.Hour, Interval: 1, MaxEffectivePriority: math.MaxInt}

	for _, tc := range []struct {
		name string
		got  time.Duration
		want time.Duration
	}{
		{"long MaxWait(1): saturated (was negative)", long.MaxWait(1), maxDuration},
		{"long MaxWait(6): 2^63ns, saturated", long.MaxWait(6), maxDuration},
		{"long MaxWait(7)", long.MaxWait(7), 1 << 62},
		{"huge MaxWait(1)", huge.MaxWait(1), time.Second},
		{"fine MaxWait(1): saturated", fine.MaxWait(1), maxDuration},
		{"fine MaxWait(MaxInt-1)", fine.MaxWait(math.MaxInt - 1), time.Hour + 1},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %d ns; want %d ns", tc.name, int64(tc.got), int64(tc.want))
		}
	}

	for _, tc := range []struct {
		name string
		c    policy.AgingConfig
		base policy.Priority
		wait time.Duration
		want policy.Priority
	}{
		{"huge, fresh (was the ceiling)", huge, 1, 0, 1},
		{"huge, just before the first step", huge, 1, time.Second - 1, 1},
		{"huge, first step: the ceiling", huge, 1, time.Second, math.MaxInt},
		{"huge, forever", huge, 1, maxDuration, math.MaxInt},
		{"long, fresh", long, 1, 0, 1},
		{"long, forever: one step", long, 1, maxDuration, 2},
		{"fine, forever", fine, 1, maxDuration, policy.Priority(1 + int64(maxDuration-time.Hour))},
	} {
		if got := tc.c.Effective(tc.base, tc.wait); got != tc.want {
			t.Errorf("%s: Effective(%d, %d ns) = %d; want %d", tc.name, tc.base, int64(tc.wait), got, tc.want)
		}
	}

	for _, tc := range []struct {
		name   string
		c      policy.AgingConfig
		base   policy.Priority
		waited time.Duration
		want   time.Duration
		ok     bool
	}{
		{"long, fresh", long, 1, 0, 1 << 62, true},
		{"long, past the first step: the second is beyond any wait", long, 1, 1 << 62, 0, false},
		{"huge, fresh", huge, 1, 0, time.Second, true},
		{"huge, at the ceiling", huge, 1, time.Second, 0, false},
		{"fine, the last representable rise", fine, 1, maxDuration - 1, maxDuration, true},
		{"fine, beyond it", fine, 1, maxDuration, 0, false},
	} {
		got, ok := tc.c.NextRise(tc.base, tc.waited)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: NextRise(%d, %d ns) = %d ns, %v; want %d ns, %v", tc.name, tc.base, int64(tc.waited), int64(got), ok, int64(tc.want), tc.ok)
		}
	}
}

// TestRegressCrossoverSaturates: a crossover beyond the largest Duration
// (or an infinite gap) is the largest Duration, and a job that starts below
// another needs at least one second, however steep its slope.
func TestRegressCrossoverSaturates(t *testing.T) {
	p0, p1, p5 := policy.JobClass{Priority: 0}, policy.JobClass{Priority: 1}, policy.JobClass{Priority: 5}
	onDemand0 := policy.JobClass{Priority: 0, OnDemand: true}
	maxSecs := int64(math.MaxInt64 / int64(time.Second)) // 9223372036
	for _, tc := range []struct {
		name string
		c    policy.ScoreConfig
		a, b policy.JobClass
		want time.Duration
		ok   bool
	}{
		// testdata/fuzz/FuzzLimits/regress-crossover-overflow: 5e12/16 s.
		{"~10^4 years (was negative)", policy.ScoreConfig{PriorityWeight: 1e12}, p0, p5, maxDuration, true},
		{"infinite gap", policy.ScoreConfig{PriorityWeight: math.MaxFloat64}, p0, p5, maxDuration, true},
		{"the most whole seconds", policy.ScoreConfig{PriorityWeight: float64(maxSecs), AgeWeight: 1}, p0, p1, time.Duration(maxSecs) * time.Second, true},
		{"one second more", policy.ScoreConfig{PriorityWeight: float64(maxSecs + 1), AgeWeight: 1}, p0, p1, maxDuration, true},
		{"infinite slope: one second (was 0)", policy.ScoreConfig{AgeWeight: math.MaxFloat64, OnDemandAgeWeight: math.MaxFloat64}, onDemand0, p5, time.Second, true},
		{"already ahead", policy.ScoreConfig{PriorityWeight: 1e12}, p5, p0, 0, true},
		{"defaults unchanged", policy.ScoreConfig{}, p0, p5, 320 * time.Second, true},
	} {
		got, ok := tc.c.Crossover(tc.a, tc.b)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: Crossover = %d ns, %v; want %d ns, %v", tc.name, int64(got), ok, int64(tc.want), tc.ok)
		}
	}
}

// TestRegressValidateOrder: validators that walk a map do so in sorted key
// order, so the error names the same entry, and the MinShares sum rounds
// the same way, on every run.
func TestRegressValidateOrder(t *testing.T) {
	const prefix = "fairsched: invalid config: "
	minShares := []float64{0.1, 0.2, 0.3, 0.4, 0.7} // 1.7 in this order, 1.7000000000000002 in reverse
	tiers := map[policy.Priority]policy.TierConfig{}
	for i, s := range minShares {
		tiers[policy.Priority(i+1)] = policy.TierConfig{MinShare: s, BurstShare: 1}
	}
	for _, tc := range []struct {
		name   string
		limits policy.Limits
		want   string
	}{
		{"groups", policy.Limits{MaxConcurrency: 8, Groups: &policy.GroupsConfig{DefaultWeight: 1, Groups: map[string]policy.GroupConfig{
			"d": {Weight: 0}, "b": {Weight: 0}, "c": {Weight: -1}, "a": {Weight: 1, MinSlots: -1},
		}}}, `GroupMinSlots["a"] = -1: must not be negative`},
		{"tiers", policy.Limits{MaxConcurrency: 8, Tiers: map[policy.Priority]policy.TierConfig{
			9: {MinShare: 2, BurstShare: 1}, 3: {MinShare: 0.1}, 5: {MinShare: -1, BurstShare: 1}, 7: {BurstShare: 2},
		}}, `Tier[3].BurstShare = 0: must be in (0, 1]`},
		{"tier without a cap", policy.Limits{MaxConcurrency: 8, Tiers: map[policy.Priority]policy.TierConfig{
			9: {MaxRunning: -1}, 4: {}, 6: {LendIdle: true},
		}}, `Tier[4] = no cap: set BurstShare (with MinShare) or MaxRunning`},
		{"tier MinShares sum", policy.Limits{MaxConcurrency: 8, Tiers: tiers}, `Tier MinShares = 1.7: must add up to at most 1`},
		{"tenant keys", policy.Limits{Tenants: &policy.TenantsConfig{Keys: map[string]policy.TenantLimits{
			"z": {MaxRunning: -1}, "m": {MaxPending: -1}, "k": {MaxRunning: -2},
		}}}, `KeyLimits["k"].MaxRunning = -2: must not be negative (0 for no bound)`},
		{"key weights", policy.Limits{KeyWeights: map[string]float64{"y": 0, "x": -1, "w": math.Inf(1)}},
			`KeyWeight["w"] = +Inf: must be a positive finite number`},
	} {
		tc.limits.CostSmoothing, tc.limits.KeyTTL = policy.DefaultCostSmoothing, policy.DefaultKeyTTL
		for i := range 100 {
			err := tc.limits.Validate()
			if err == nil || err.Error() != prefix+tc.want {
				t.Fatalf("%s, run %d: Validate = %v; want %s%s", tc.name, i, err, prefix, tc.want)
			}
		}
	}
}

// TestRegressIntExtremes: sums and products of ints at the largest int do
// not wrap: group minimums that add up past it are refused, a tier's slots
// of the largest capacity stay within it, and the adaptive limit does not
// step past its Max.
func TestRegressIntExtremes(t *testing.T) {
	groups := policy.Limits{MaxConcurrency: math.MaxInt, CostSmoothing: policy.DefaultCostSmoothing, KeyTTL: policy.DefaultKeyTTL,
		Groups: &policy.GroupsConfig{DefaultWeight: 1, Groups: map[string]policy.GroupConfig{
			"a": {Weight: 1, MinSlots: math.MaxInt}, "b": {Weight: 1, MinSlots: 2},
		}}}
	want := fmt.Sprintf("fairsched: invalid config: GroupMinSlots = more than %d: the minimums add up to more than MaxConcurrency (%d)", math.MaxInt, math.MaxInt)
	if err := groups.Validate(); err == nil || err.Error() != want {
		t.Errorf("minimums past the largest int: Validate = %v; want %s", err, want)
	}
	delete(groups.Groups.Groups, "b")
	if err := groups.Validate(); err != nil {
		t.Errorf("one minimum of the largest int: %v", err)
	}

	for _, tc := range []struct {
		tier            policy.TierConfig
		c               int
		reserved, burst int
	}{
		{policy.TierConfig{MinShare: 1, BurstShare: 1}, math.MaxInt, math.MaxInt, math.MaxInt},
		{policy.TierConfig{MinShare: 0.5, BurstShare: 1}, math.MaxInt, 1 << 62, math.MaxInt},
		{policy.TierConfig{MinShare: 0.5, BurstShare: 1}, 7, 3, 7},
		{policy.TierConfig{BurstShare: 0.1}, 7, 0, 1},
		{policy.TierConfig{MaxRunning: 3}, 0, 0, 3},                                // no shares: no global cap needed
		{policy.TierConfig{MinShare: 0.5, BurstShare: 1, MaxRunning: 2}, 10, 2, 2}, // the reservation at most the cap
		{policy.TierConfig{BurstShare: 0.5, MaxRunning: 9}, 10, 0, 5},
	} {
		if r, b := tc.tier.Slots(tc.c); r != tc.reserved || b != tc.burst {
			t.Errorf("%+v.Slots(%d) = %d, %d; want %d, %d", tc.tier, tc.c, r, b, tc.reserved, tc.burst)
		}
	}

	a := policy.AdaptiveLimitConfig{Min: 1, Max: math.MaxInt}.WithDefaults()
	for _, tc := range []struct {
		limit, want int
	}{{math.MaxInt, math.MaxInt}, {math.MaxInt - 1, math.MaxInt}, {5, 6}} {
		if got := a.Next(tc.limit, time.Second, time.Second, true); got != tc.want {
			t.Errorf("Next(%d, in use) = %d; want %d", tc.limit, got, tc.want)
		}
	}
}
