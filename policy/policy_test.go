package policy

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func validConfig() JobTypeConfig {
	return JobTypeConfig{DefaultCost: time.Second, MaxConcurrency: 3, ConflictGroup: "git", Priority: 10}
}

func TestJobTypeConfigValidateAccepts(t *testing.T) {
	for name, c := range map[string]JobTypeConfig{
		"full":               validConfig(),
		"no type cap":        {DefaultCost: 1, MaxConcurrency: 0, Priority: 1},
		"no conflict group":  {DefaultCost: time.Minute, MaxConcurrency: 1, Priority: 40},
		"one nanosecond":     {DefaultCost: time.Nanosecond, Priority: 1},
		"huge priority":      {DefaultCost: time.Second, Priority: math.MaxInt32},
		"type cap over tier": {DefaultCost: time.Second, MaxConcurrency: 100, Priority: 2},
		"MaxInterruptions":   {DefaultCost: time.Second, Priority: 1, Retry: RetryPolicy{MaxAttempts: 1, MaxInterruptions: 10}},
	} {
		if err := c.Validate("t"); err != nil {
			t.Errorf("%s: Validate(%+v) = %v, want nil", name, c, err)
		}
	}
}

func TestJobTypeConfigValidateRejects(t *testing.T) {
	tests := []struct {
		name   string
		typ    JobType
		mutate func(*JobTypeConfig)
		want   []string // substrings of the message
	}{
		{"empty type", "", func(*JobTypeConfig) {}, []string{"JobType", `""`}},
		{"zero cost", "t", func(c *JobTypeConfig) { c.DefaultCost = 0 }, []string{"JobTypeConfig.DefaultCost", "= 0s", "positive"}},
		{"negative cost", "t", func(c *JobTypeConfig) { c.DefaultCost = -time.Second }, []string{"JobTypeConfig.DefaultCost", "-1s"}},
		{"negative type cap", "t", func(c *JobTypeConfig) { c.MaxConcurrency = -1 }, []string{"JobTypeConfig.MaxConcurrency", "= -1"}},
		{"zero priority", "t", func(c *JobTypeConfig) { c.Priority = 0 }, []string{"JobTypeConfig.Priority", "= 0", "at least 1"}},
		{"negative priority", "t", func(c *JobTypeConfig) { c.Priority = -5 }, []string{"JobTypeConfig.Priority", "= -5"}},
		{"negative MaxInterruptions", "t", func(c *JobTypeConfig) { c.Retry = RetryPolicy{MaxAttempts: 1, MaxInterruptions: -1} },
			[]string{"JobTypeConfig.Retry.MaxInterruptions", "= -1", "not be negative"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			tt.mutate(&c)
			err := c.Validate(tt.typ)
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Validate = %v, want an error wrapping ErrInvalidConfig", err)
			}
			for _, s := range tt.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("Validate error %q does not contain %q", err, s)
				}
			}
		})
	}
}

func TestLimitsValidate(t *testing.T) {
	if err := DefaultLimits().Validate(); err != nil {
		t.Fatalf("DefaultLimits().Validate() = %v", err)
	}
	want := Limits{CostSmoothing: 0.3, KeyTTL: 10 * time.Minute}
	if diff := cmp.Diff(want, DefaultLimits()); diff != "" {
		t.Errorf("DefaultLimits() mismatch (-want +got):\n%s", diff)
	}
	for _, ok := range []Limits{
		{MaxConcurrency: 0, CostSmoothing: 1, KeyTTL: time.Nanosecond},
		{MaxConcurrency: 8, CostSmoothing: 0.0001, KeyTTL: time.Hour},
	} {
		if err := ok.Validate(); err != nil {
			t.Errorf("%+v.Validate() = %v, want nil", ok, err)
		}
	}

	tests := []struct {
		name string
		l    Limits
		want []string
	}{
		{"negative global cap", Limits{MaxConcurrency: -2, CostSmoothing: 0.3, KeyTTL: time.Minute}, []string{"MaxConcurrency", "-2"}},
		{"zero smoothing", Limits{CostSmoothing: 0, KeyTTL: time.Minute}, []string{"CostSmoothing", "= 0", "(0, 1]"}},
		{"negative smoothing", Limits{CostSmoothing: -0.5, KeyTTL: time.Minute}, []string{"CostSmoothing", "-0.5"}},
		{"smoothing above one", Limits{CostSmoothing: 1.5, KeyTTL: time.Minute}, []string{"CostSmoothing", "1.5"}},
		{"NaN smoothing", Limits{CostSmoothing: math.NaN(), KeyTTL: time.Minute}, []string{"CostSmoothing", "NaN"}},
		{"zero TTL", Limits{CostSmoothing: 0.3, KeyTTL: 0}, []string{"KeyTTL", "= 0s"}},
		{"negative TTL", Limits{CostSmoothing: 0.3, KeyTTL: -time.Second}, []string{"KeyTTL", "-1s"}},
		{"negative estimates bound", Limits{CostSmoothing: 0.3, KeyTTL: time.Second, MaxCostEstimates: -1}, []string{"MaxCostEstimates", "-1"}},
		{"negative idle keys bound", Limits{CostSmoothing: 0.3, KeyTTL: time.Second, MaxIdleKeys: -1}, []string{"MaxIdleKeys", "-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.l.Validate()
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Validate = %v, want an error wrapping ErrInvalidConfig", err)
			}
			for _, s := range tt.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("Validate error %q does not contain %q", err, s)
				}
			}
		})
	}
}

func TestValidateJob(t *testing.T) {
	if err := ValidateJob("t", "id", true); err != nil {
		t.Fatalf("ValidateJob(valid) = %v", err)
	}
	for _, tt := range []struct {
		name  string
		id    string
		hasFn bool
		want  []string
	}{
		{"empty id", "", true, []string{"empty job id", `"clone"`}},
		{"empty id and nil fn", "", false, []string{"empty job id"}},
		{"nil fn", "repo", false, []string{"nil function", `"clone"`, `"repo"`}},
	} {
		err := ValidateJob("clone", tt.id, tt.hasFn)
		if !errors.Is(err, ErrInvalidJob) {
			t.Errorf("%s: ValidateJob = %v, want ErrInvalidJob", tt.name, err)
			continue
		}
		if errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: ValidateJob = %v also matches ErrInvalidConfig", tt.name, err)
		}
		for _, s := range tt.want {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q does not contain %q", tt.name, err, s)
			}
		}
	}
}

func TestSentinelsDistinct(t *testing.T) {
	errs := []error{ErrInvalidConfig, ErrUnknownJobType, ErrDuplicateType, ErrInvalidJob}
	for i, a := range errs {
		for j, b := range errs {
			if (i == j) != errors.Is(a, b) {
				t.Errorf("errors.Is(%v, %v) = %v", a, b, errors.Is(a, b))
			}
		}
	}
}

func TestConflicts(t *testing.T) {
	k, ok := JobTypeConfig{ConflictGroup: "git"}.Conflicts("repo")
	if diff := cmp.Diff(ConflictKey{Group: "git", ID: "repo"}, k); !ok || diff != "" {
		t.Errorf("Conflicts = %v, %v (-want +got):\n%s", k, ok, diff)
	}
	if k, ok := (JobTypeConfig{}).Conflicts("repo"); ok || k != (ConflictKey{}) {
		t.Errorf("Conflicts without group = %v, %v; want zero, false", k, ok)
	}
}

var (
	fg    = JobTypeConfig{DefaultCost: time.Second, MaxConcurrency: 0, ConflictGroup: "git", Priority: 3}
	bg    = JobTypeConfig{DefaultCost: time.Second, MaxConcurrency: 1, ConflictGroup: "git", Priority: 2}
	bg2   = JobTypeConfig{DefaultCost: time.Second, MaxConcurrency: 5, ConflictGroup: "git", Priority: 2}
	snap  = JobTypeConfig{DefaultCost: time.Second, MaxConcurrency: 2, Priority: 2}
	other = JobTypeConfig{DefaultCost: time.Second, MaxConcurrency: 0, ConflictGroup: "db", Priority: 3}
)

func TestBlockerOrder(t *testing.T) {
	// Build a state in which all four rules refuse the same job, then lift
	// them one by one.
	u := NewUsage(3)
	u.Start(u.Slot("bg", bg), "a")     // type bg full (cap 1), conflict git/a held
	u.Start(u.Slot("snap", snap), "x") // tier 2 full (2 running)
	u.Start(u.Slot("fg", fg), "y")     // global full (3 running)

	if got := u.Blocker(u.Slot("bg", bg), "a"); got != ReasonGlobalLimit {
		t.Errorf("all rules refuse: Blocker = %q, want %q", got, ReasonGlobalLimit)
	}
	u.Finish(u.Slot("fg", fg), "y")
	if got := u.Blocker(u.Slot("bg", bg), "a"); got != ReasonTierLimit {
		t.Errorf("tier, type, conflict refuse: Blocker = %q, want %q", got, ReasonTierLimit)
	}
	u.Finish(u.Slot("snap", snap), "x")
	if got := u.Blocker(u.Slot("bg", bg), "a"); got != ReasonTypeLimit {
		t.Errorf("type, conflict refuse: Blocker = %q, want %q", got, ReasonTypeLimit)
	}
	// The same group, another type with room: only the conflict refuses.
	if got := u.Blocker(u.Slot("bg2", bg2), "a"); got != ReasonConflict {
		t.Errorf("conflict refuses: Blocker = %q, want %q", got, ReasonConflict)
	}
	if got := u.Blocker(u.Slot("bg2", bg2), "b"); got != "" {
		t.Errorf("another id: Blocker = %q, want none", got)
	}
	if got := u.Blocker(u.Slot("other", other), "a"); got != "" {
		t.Errorf("another group: Blocker = %q, want none", got)
	}
	if got := u.Blocker(u.Slot("snap", snap), "a"); got != "" {
		t.Errorf("no group: Blocker = %q, want none", got)
	}
	u.Finish(u.Slot("bg", bg), "a")
	if got := u.Blocker(u.Slot("bg", bg), "a"); got != "" {
		t.Errorf("all free: Blocker = %q, want none", got)
	}
	if u.Running() != 0 || len(u.ByTier()) != 0 || len(u.ByType()) != 0 {
		t.Errorf("after all finished: running %d, by tier %v, by type %v", u.Running(), u.ByTier(), u.ByType())
	}
}

func TestGlobalUnlimited(t *testing.T) {
	u := NewUsage(0)
	big := JobTypeConfig{DefaultCost: 1, Priority: 1000}
	for i := range 500 {
		if u.GlobalFull() {
			t.Fatalf("GlobalFull with cap 0 after %d starts", i)
		}
		u.Start(u.Slot("big", big), "id")
	}
	if u.Running() != 500 {
		t.Errorf("Running = %d, want 500", u.Running())
	}
}

func TestStartFinishTransitions(t *testing.T) {
	type step struct {
		finish bool
		t      JobType
		c      JobTypeConfig
		id     string
		want   Transition
	}
	steps := []step{
		// Tier 2 holds two jobs; bg has cap 1; snap cap 2.
		{false, "bg", bg, "a", Transition{TypeFull: true}},
		{false, "snap", snap, "a", Transition{TierFull: true}},
		// Finishing snap frees the tier only; no conflict group, no release.
		{true, "snap", snap, "a", Transition{TierFreed: true}},
		{false, "bg2", bg2, "b", Transition{TierFull: true}},
		// bg on "a" frees the tier, its type and releases git/a.
		{true, "bg", bg, "a", Transition{TierFreed: true, TypeFreed: true, Released: ConflictKey{"git", "a"}, HasReleased: true}},
		// bg2 on "b": tier not full before (1 of 2), type not full: only the release.
		{true, "bg2", bg2, "b", Transition{Released: ConflictKey{"git", "b"}, HasReleased: true}},
	}
	u := NewUsage(0)
	for i, s := range steps {
		var got Transition
		if s.finish {
			got = u.Finish(u.Slot(s.t, s.c), s.id)
		} else {
			got = u.Start(u.Slot(s.t, s.c), s.id)
		}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("step %d (finish=%v %s/%s) transition (-want +got):\n%s", i, s.finish, s.t, s.id, diff)
		}
	}
}

func TestReleasedOnlyByLastHolder(t *testing.T) {
	u := NewUsage(0)
	// fg has no type cap, so two fg jobs can hold git/r together (the core
	// never admits them together, but Usage counts holders).
	u.Start(u.Slot("fg", fg), "r")
	u.Start(u.Slot("fg", fg), "r")
	u.Start(u.Slot("bg2", bg2), "r")
	if !u.Conflicting(bg, "r") {
		t.Fatal("git/r not held after three starts")
	}
	if tr := u.Finish(u.Slot("fg", fg), "r"); tr.HasReleased {
		t.Errorf("first finish released %v", tr.Released)
	}
	if tr := u.Finish(u.Slot("bg2", bg2), "r"); tr.HasReleased {
		t.Errorf("second finish released %v", tr.Released)
	}
	if !u.Conflicting(bg, "r") {
		t.Error("git/r free while one holder runs")
	}
	tr := u.Finish(u.Slot("fg", fg), "r")
	want := Transition{Released: ConflictKey{"git", "r"}, HasReleased: true}
	if diff := cmp.Diff(want, tr); diff != "" {
		t.Errorf("last finish (-want +got):\n%s", diff)
	}
	if u.Conflicting(bg, "r") {
		t.Error("git/r held after its last holder finished")
	}
}

func TestConflictingScope(t *testing.T) {
	u := NewUsage(0)
	u.Start(u.Slot("bg", bg), "r")
	for _, tt := range []struct {
		c    JobTypeConfig
		id   string
		want bool
	}{
		{fg, "r", true},     // same group, same id
		{bg2, "r", true},    // same group, same id, other type
		{fg, "s", false},    // same group, other id
		{other, "r", false}, // other group
		{snap, "r", false},  // no group
	} {
		if got := u.Conflicting(tt.c, tt.id); got != tt.want {
			t.Errorf("Conflicting(group %q, %q) = %v, want %v", tt.c.ConflictGroup, tt.id, got, tt.want)
		}
	}
	// A job without a group holds nothing.
	u2 := NewUsage(0)
	u2.Start(u2.Slot("snap", snap), "r")
	if u2.Conflicting(fg, "r") {
		t.Error("a job without a conflict group blocks a git job")
	}
	if tr := u2.Finish(u2.Slot("snap", snap), "r"); tr.HasReleased {
		t.Errorf("finish of a job without a group released %v", tr.Released)
	}
}

func TestTypeCapZeroMeansNone(t *testing.T) {
	u := NewUsage(0)
	c := JobTypeConfig{DefaultCost: 1, MaxConcurrency: 0, Priority: 100}
	for i := range 99 {
		if tr := u.Start(u.Slot("free", c), "x"); tr.TypeFull || tr.TierFull {
			t.Fatalf("start %d: %+v", i, tr)
		}
		if u.Slot("free", c).TypeFull() {
			t.Fatalf("TypeFull after %d starts with MaxConcurrency 0", i+1)
		}
	}
	if tr := u.Start(u.Slot("free", c), "x"); !tr.TierFull || tr.TypeFull {
		t.Errorf("100th start = %+v, want tier full only", tr)
	}
	if got := u.Blocker(u.Slot("free", c), "x"); got != ReasonTierLimit {
		t.Errorf("Blocker = %q, want tier_limit", got)
	}
	if tr := u.Finish(u.Slot("free", c), "x"); !tr.TierFreed || tr.TypeFreed {
		t.Errorf("Finish = %+v, want tier freed only", tr)
	}
}

func TestCounts(t *testing.T) {
	u := NewUsage(0)
	u.Start(u.Slot("bg", bg), "a")
	u.Start(u.Slot("snap", snap), "b")
	u.Start(u.Slot("fg", fg), "c")
	u.Start(u.Slot("fg", fg), "d")
	if diff := cmp.Diff(map[Priority]int{2: 2, 3: 2}, u.ByTier()); diff != "" {
		t.Errorf("ByTier (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[JobType]int{"bg": 1, "snap": 1, "fg": 2}, u.ByType()); diff != "" {
		t.Errorf("ByType (-want +got):\n%s", diff)
	}
	if u.Running() != 4 || u.TierRunning(3) != 2 || u.TypeRunning("fg") != 2 || u.TypeRunning("none") != 0 {
		t.Errorf("Running %d, TierRunning(3) %d, TypeRunning(fg) %d", u.Running(), u.TierRunning(3), u.TypeRunning("fg"))
	}
	// The copies do not alias the tracker.
	u.ByTier()[3] = 99
	u.ByType()["fg"] = 99
	if u.TierRunning(3) != 2 || u.TypeRunning("fg") != 2 {
		t.Error("mutating ByTier/ByType changed the tracker")
	}
	u.Finish(u.Slot("fg", fg), "c")
	if diff := cmp.Diff(map[JobType]int{"bg": 1, "snap": 1, "fg": 1}, u.ByType()); diff != "" {
		t.Errorf("ByType after finish (-want +got):\n%s", diff)
	}
}
