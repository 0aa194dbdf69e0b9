package policy

import (
	"math"
	"testing"
)

// TestSaturatingTime: conversions and sums at and past the int64 range
// saturate instead of wrapping.
func TestSaturatingTime(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  int64
		want int64
	}{
		{"MaxInt64 + 1", int64(AddSat(math.MaxInt64, 1)), math.MaxInt64},
		{"MinInt64 - 1", int64(AddSat(math.MinInt64, -1)), math.MinInt64},
		{"1 + 2", int64(AddSat(1, 2)), 3},
		{"1e30 ns", int64(DurationSat(1e30)), math.MaxInt64},
		{"-1e30 ns", int64(DurationSat(-1e30)), math.MinInt64},
		{"NaN", int64(DurationSat(math.NaN())), 0},
		{"cost / 1e-9", int64(Weighted(math.MaxInt64/2, 1e-9)), int64(MaxCharge)},
		{"MaxInt64 at weight 1", int64(Weighted(math.MaxInt64, 1)), int64(MaxCharge)},
		{"a year at weight 1", int64(Weighted(MaxTokens, 1)), int64(MaxTokens)},
		{"a year / 1e-6", int64(Weighted(MaxTokens, MinKeyWeight)), int64(MaxCharge)},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %d; want %d", tc.name, tc.got, tc.want)
		}
	}
}
