package policy

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuiltinSignals(t *testing.T) {
	type row struct {
		Name  string
		State LoadState
		Want  float64
	}
	q, w := QueueLength(10), WorkerUtilisation()
	var got, want []row
	for _, r := range []struct {
		name string
		sig  LoadSignal
		s    LoadState
		want float64
	}{
		{"queue empty", q, LoadState{}, 0},
		{"queue half", q, LoadState{Pending: 5}, 0.5},
		{"queue past its bound", q, LoadState{Pending: 25}, 1},
		{"workers: busy over slots", w, LoadState{WorkerSlots: 10, WorkersBusy: 9, Running: 1, Limit: 100}, 0.9},
		{"no workers: running over the cap", w, LoadState{Running: 3, Limit: 4}, 0.75},
		{"running past a shrunk cap", w, LoadState{Running: 8, Limit: 4}, 1},
		{"unlimited", w, LoadState{Running: 3}, 0},
	} {
		v, err := r.sig.Load(r.s)
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		got = append(got, row{r.name, r.s, v})
		want = append(want, row{r.name, r.s, r.want})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readings (-want +got):\n%s", diff)
	}
	if _, err := QueueLength(0).Load(LoadState{Pending: 1}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("QueueLength(0): %v, want ErrInvalidConfig", err)
	}
}

func TestReading(t *testing.T) {
	type r struct {
		V  float64
		OK bool
	}
	var got []r
	for _, in := range []struct {
		v   float64
		err error
	}{{0.5, nil}, {-1, nil}, {2, nil}, {math.Inf(1), nil}, {math.NaN(), nil}, {0.5, errors.New("x")}} {
		v, ok := Reading(in.v, in.err)
		got = append(got, r{v, ok})
	}
	want := []r{{0.5, true}, {0, true}, {1, true}, {1, true}, {0, false}, {0, false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readings (-want +got):\n%s", diff)
	}
}

// TestNextLoad: above the target the limit is multiplied by Backoff (at
// least Min); at or below it grows by one while in use (at most Max).
func TestNextLoad(t *testing.T) {
	a := AdaptiveLimitConfig{Min: 2, Max: 10, Backoff: 0.5, LoadTarget: 0.7}.WithDefaults()
	limit := 8
	var got []int
	for _, step := range []struct {
		load  float64
		inUse bool
	}{{0.9, true}, {0.71, true}, {0.7, true}, {0.1, false}, {0.2, true}, {1, true}, {0, true}} {
		limit = a.NextLoad(limit, step.load, step.inUse)
		got = append(got, limit)
	}
	if diff := cmp.Diff([]int{4, 2, 3, 3, 4, 2, 3}, got); diff != "" {
		t.Errorf("limits (-want +got):\n%s", diff)
	}
	if got := (AdaptiveLimitConfig{Min: 1, Max: math.MaxInt, Backoff: 0.5, LoadTarget: 0.5}).NextLoad(math.MaxInt, 0, true); got != math.MaxInt {
		t.Errorf("NextLoad at the largest int = %d", got)
	}
}

func TestLoadConfigValidate(t *testing.T) {
	sig := QueueLength(1)
	valid := []LoadConfig{
		LoadConfig{Signal: sig}.WithDefaults(),
		LoadConfig{Signal: sig, Threshold: 1, Action: OverloadObserve}.WithDefaults(),
	}
	for _, l := range valid {
		if err := l.Validate(); err != nil {
			t.Errorf("%+v: %v", l, err)
		}
	}
	invalid := []LoadConfig{
		{Signal: nil, Every: 1e9, Threshold: 0.9},
		{Signal: sig, Every: -1, Threshold: 0.9},
		{Signal: sig, Every: 1e9, Threshold: 0},
		{Signal: sig, Every: 1e9, Threshold: math.NaN()},
		{Signal: sig, Every: 1e9, Threshold: 0.9, Action: OverloadObserve + 1},
	}
	for _, l := range invalid {
		if err := l.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%+v: %v, want ErrInvalidConfig", l, err)
		}
	}
	for _, a := range []OverloadAction{OverloadDefer, OverloadRefuse, OverloadObserve, 7} {
		b, err := a.MarshalText()
		if (err != nil) != (a == 7) {
			t.Errorf("%v.MarshalText() = %q, %v", a, b, err)
		}
		var back OverloadAction
		if err == nil && (back.UnmarshalText(b) != nil || back != a) {
			t.Errorf("%v does not round-trip through %q: %v", a, b, back)
		}
	}
	var a OverloadAction
	if err := a.UnmarshalText([]byte("panic")); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf(`UnmarshalText("panic") = %v, want ErrInvalidConfig`, err)
	}
}

// TestMaxOf: the highest good reading; a failed signal is left out; all
// failing (or none) is an error.
func TestMaxOf(t *testing.T) {
	fixed := func(v float64, err error) LoadSignal {
		return LoadFunc(func(LoadState) (float64, error) { return v, err })
	}
	bad := errors.New("unreadable")
	type r struct {
		V   float64
		Err bool
	}
	var got []r
	for _, sig := range []LoadSignal{
		MaxOf(fixed(0.2, nil), fixed(0.95, nil), fixed(0.5, nil)),
		MaxOf(fixed(0.3, nil), fixed(0.99, bad), fixed(math.NaN(), nil)),
		MaxOf(fixed(7, nil), fixed(0.1, nil)), // clamped
		MaxOf(fixed(0.3, bad), fixed(math.NaN(), nil)),
		MaxOf(),
	} {
		v, err := sig.Load(LoadState{})
		got = append(got, r{v, err != nil})
	}
	want := []r{{0.95, false}, {0.3, false}, {1, false}, {0, true}, {0, true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readings (-want +got):\n%s", diff)
	}
	if _, err := MaxOf(fixed(0.3, bad)).Load(LoadState{}); !errors.Is(err, bad) {
		t.Errorf("MaxOf's error %v does not wrap its signal's", err)
	}
}
