package policy

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestTierRulesValidate: a tier config with only preemption rules is
// valid and keeps the tier's default cap; a budget without a positive Max
// or Window, or a negative window, names the field.
func TestTierRulesValidate(t *testing.T) {
	budget := &PreemptBudget{Max: 2, Window: time.Minute}
	for _, tc := range []struct {
		name string
		cfg  TierConfig
		want string // the error's text, "" for none
	}{
		{"preempt only", TierConfig{Preempt: budget}, ""},
		{"window only", TierConfig{StarvationWindow: time.Second}, ""},
		{"with shares", TierConfig{MinShare: 0.2, BurstShare: 0.5, Preempt: budget}, ""},
		{"no max", TierConfig{Preempt: &PreemptBudget{Window: time.Second}},
			"fairsched: invalid config: Tier[3].Preempt.Max = 0: must be positive (preemptions per window)"},
		{"no window", TierConfig{Preempt: &PreemptBudget{Max: 1}},
			"fairsched: invalid config: Tier[3].Preempt.Window = 0s: must be positive"},
		{"negative window", TierConfig{StarvationWindow: -time.Second},
			"fairsched: invalid config: Tier[3].StarvationWindow = -1s: must not be negative (0 for none)"},
		{"nothing", TierConfig{}, "fairsched: invalid config: Tier[3] = no cap: set BurstShare (with MinShare) or MaxRunning"},
	} {
		err := ValidateTiers(map[Priority]TierConfig{3: tc.cfg}, 10)
		got := ""
		if err != nil {
			got = err.Error()
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("%s: %v is no ErrInvalidConfig", tc.name, err)
			}
		}
		if got != tc.want {
			t.Errorf("%s: %q; want %q", tc.name, got, tc.want)
		}
	}
	u := NewUsage(10)
	u.SetTiers(map[Priority]TierConfig{3: {Preempt: budget}})
	if u.Shares() {
		t.Error("a tier with only rules takes shares")
	}
	if got := u.Slot("t", JobTypeConfig{Priority: 3}).tierCap; got != 3 {
		t.Errorf("its cap = %d; want its value, 3", got)
	}
}

// TestFreedFor: whether one job fewer of tier q lets tier p start one —
// not when p runs its cap, nor when the slot freed is owed to q's own
// reservation or another tier's, unless q lends its idle reservation and
// the job would not count as waiting.
func TestFreedFor(t *testing.T) {
	u := NewUsage(4)
	u.SetTiers(map[Priority]TierConfig{
		3: {BurstShare: 0.5},                                  // at most 2
		1: {MinShare: 0.25, BurstShare: 1},                    // 1 reserved
		2: {MinShare: 0.25, BurstShare: 0.75, LendIdle: true}, // 1 reserved, lent while idle
	})
	s3, s2, s1 := u.Slot("p3", JobTypeConfig{Priority: 3}), u.Slot("p2", JobTypeConfig{Priority: 2}), u.Slot("p1", JobTypeConfig{Priority: 1})
	u.Start(s1, "a")
	u.Start(s1, "b")
	u.Start(s2, "c")
	u.Start(s3, "d") // full: 1 + 1 + 2 of 4
	u.Waiting(3, 1)
	got := map[string]bool{
		"3 over 1 (above its reservation)":        u.FreedFor(3, 1, true),
		"3 over 2 (at its reservation)":           u.FreedFor(3, 2, true),
		"3 over 2 (lent: the job would not wait)": u.FreedFor(3, 2, false),
	}
	u.Waiting(2, 1)
	got["3 over 2 (lent, but tier 2 waits)"] = u.FreedFor(3, 2, false)
	u.Start(s3, "e") // tier 3 at its burst
	u.Finish(s1, "b")
	got["3 at its cap"] = u.FreedFor(3, 1, true)
	want := map[string]bool{"3 over 1 (above its reservation)": true, "3 over 2 (at its reservation)": false,
		"3 over 2 (lent: the job would not wait)": true, "3 over 2 (lent, but tier 2 waits)": false, "3 at its cap": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FreedFor (-want +got):\n%s", diff)
	}
}
