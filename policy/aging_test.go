package policy

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var aging = AgingConfig{GracePeriod: 5 * time.Minute, Interval: time.Minute, Step: 2, MaxEffectivePriority: 40, UrgentThreshold: 30}

func TestAgingEffective(t *testing.T) {
	type row struct {
		base   Priority
		waited time.Duration
	}
	got := map[row]Priority{}
	rows := []row{
		{10, 0},
		{10, 5 * time.Minute},             // at the grace period: not yet
		{10, 5*time.Minute + time.Second}, // past it, but less than one interval
		{10, 6 * time.Minute},             // one interval: +2
		{10, 6*time.Minute + 59*time.Second},
		{10, 7 * time.Minute},  // +4
		{10, 19 * time.Minute}, // 14 intervals: 10+28 = 38
		{10, 20 * time.Minute}, // 15 intervals: 40, the ceiling
		{10, 100 * time.Hour},  // never past the ceiling
		{39, 6 * time.Minute},  // 39+2 > 40: the ceiling
		{40, time.Hour},        // at the ceiling: no aging
		{50, time.Hour},        // above it: unchanged, never lowered
	}
	for _, r := range rows {
		got[r] = aging.Effective(r.base, r.waited)
	}
	want := map[row]Priority{
		rows[0]: 10, rows[1]: 10, rows[2]: 10, rows[3]: 12, rows[4]: 12, rows[5]: 14,
		rows[6]: 38, rows[7]: 40, rows[8]: 40, rows[9]: 40, rows[10]: 40, rows[11]: 50,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Effective (-want +got):\n%s", diff)
	}
	if got := (AgingConfig{Interval: time.Second, MaxEffectivePriority: 5}).Effective(1, 3*time.Second); got != 4 {
		t.Errorf("Step 0 must mean 1: Effective = %d, want 4", got)
	}
}

func TestAgingMaxWait(t *testing.T) {
	got := map[Priority]time.Duration{}
	for _, base := range []Priority{1, 10, 29, 30, 40} {
		got[base] = aging.MaxWait(base)
	}
	want := map[Priority]time.Duration{
		1:  5*time.Minute + 15*time.Minute, // ⌈29/2⌉ = 15 intervals to the urgent threshold 30
		10: 5*time.Minute + 10*time.Minute, // ⌈20/2⌉
		29: 5*time.Minute + time.Minute,
		30: 0,
		40: 0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MaxWait (-want +got):\n%s", diff)
	}
	noUrgent := aging
	noUrgent.UrgentThreshold = 0
	if got, want := noUrgent.MaxWait(10), 5*time.Minute+15*time.Minute; got != want {
		t.Errorf("MaxWait without urgent threshold = %v, want %v (to the ceiling)", got, want)
	}
}

// TestAgingProperties: over random configs, effective priority never falls
// below base nor rises above max(base, ceiling), never decreases with time,
// reaches the target exactly at MaxWait, and NextRise names the first wait
// at which it rises.
func TestAgingProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		c := AgingConfig{
			GracePeriod:          time.Duration(r.IntN(100)) * time.Second,
			Interval:             time.Duration(1+r.IntN(60)) * time.Second,
			Step:                 Priority(r.IntN(4)),
			MaxEffectivePriority: Priority(1 + r.IntN(60)),
		}
		if r.IntN(2) == 0 {
			c.UrgentThreshold = Priority(1 + r.IntN(int(c.MaxEffectivePriority)))
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("case %d: generated config invalid: %v", i, err)
		}
		base := Priority(1 + r.IntN(70))
		prev := base
		for w := time.Duration(0); w < c.GracePeriod+80*c.Interval; w += c.Interval / 3 {
			e := c.Effective(base, w)
			if e < base || e < prev || e > max(base, c.MaxEffectivePriority) {
				t.Fatalf("case %d %+v base %d waited %v: effective %d (previous %d)", i, c, base, w, e, prev)
			}
			if next, ok := c.NextRise(base, w); ok {
				if c.Effective(base, next) <= e || (next > w && c.Effective(base, next-1) != e) {
					t.Fatalf("case %d %+v base %d waited %v: NextRise %v wrong", i, c, base, w, next)
				}
			} else if e < c.MaxEffectivePriority {
				t.Fatalf("case %d: NextRise says no rise below the ceiling", i)
			}
			prev = e
		}
		target := c.MaxEffectivePriority
		if c.UrgentThreshold > 0 {
			target = c.UrgentThreshold
		}
		if mw := c.MaxWait(base); base < target {
			if c.Effective(base, mw) < target || c.Effective(base, mw-1) >= target {
				t.Fatalf("case %d %+v base %d: MaxWait %v is not the first wait reaching %d", i, c, base, mw, target)
			}
		} else if mw != 0 {
			t.Fatalf("case %d: MaxWait %v for a base at the target", i, mw)
		}
	}
}

func TestAgingValidate(t *testing.T) {
	ok := AgingConfig{Interval: time.Second, MaxEffectivePriority: 10}
	for name, tc := range map[string]struct {
		mut   func(*AgingConfig)
		field string
	}{
		"negative grace":   {func(c *AgingConfig) { c.GracePeriod = -1 }, "GracePeriod"},
		"zero interval":    {func(c *AgingConfig) { c.Interval = 0 }, "Interval"},
		"negative step":    {func(c *AgingConfig) { c.Step = -1 }, "Step"},
		"zero ceiling":     {func(c *AgingConfig) { c.MaxEffectivePriority = 0 }, "MaxEffectivePriority"},
		"negative urgent":  {func(c *AgingConfig) { c.UrgentThreshold = -1 }, "UrgentThreshold"},
		"urgent > ceiling": {func(c *AgingConfig) { c.UrgentThreshold = 11 }, "UrgentThreshold"},
	} {
		c := ok
		tc.mut(&c)
		err := c.Validate()
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: Validate = %v; want ErrInvalidConfig naming %s", name, err, tc.field)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid config rejected: %v", err)
	}
	if !aging.Urgent(30) || aging.Urgent(29) || (AgingConfig{}).Urgent(100) {
		t.Error("Urgent: threshold 30 must hold at 30, not at 29, and never without a threshold")
	}
}

// TestAgingRises: the steps climbed between two waits, capped at the
// ceiling, not counting steps that leave a job at or below its floor.
func TestAgingRises(t *testing.T) {
	a := AgingConfig{GracePeriod: 10 * time.Second, Interval: 5 * time.Second, Step: 2, MaxEffectivePriority: 9}
	s := func(n int) time.Duration { return time.Duration(n) * time.Second }
	for _, c := range []struct {
		name        string
		base, floor Priority
		floored     bool
		from, to    time.Duration
		want        uint64
	}{
		{"in the grace period", 1, 0, false, 0, s(10), 0},
		{"one step", 1, 0, false, 0, s(15), 1},
		{"three steps", 1, 0, false, 0, s(25), 3},
		{"capped at the ceiling: 1→3→5→7→9", 1, 0, false, 0, s(1000), 4},
		{"from a later entry", 1, 0, false, s(15), s(25), 2},
		{"no time", 1, 0, false, s(20), s(20), 0},
		{"at the ceiling already", 9, 0, false, 0, s(100), 0},
		{"a floor below the base changes nothing", 3, 2, true, 0, s(25), 3},
		{"floor 5: 1→3→5 do not change it, 7 does", 1, 5, true, 0, s(25), 1},
		{"floor 4: 1→3 does not, 5 and 7 do", 1, 4, true, 0, s(25), 2},
		{"floor at the ceiling: never", 1, 9, true, 0, s(1000), 0},
		{"unfloored floor value is ignored", 1, 5, false, 0, s(25), 3},
	} {
		if got := a.Rises(c.base, c.floor, c.floored, c.from, c.to); got != c.want {
			t.Errorf("%s: Rises(%d, %d, %v, %v, %v) = %d; want %d", c.name, c.base, c.floor, c.floored, c.from, c.to, got, c.want)
		}
	}
}
