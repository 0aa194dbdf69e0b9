package policy

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestCrossover checks spec 3's arithmetic to the second: a priority gap
// of 5 is 5·1024/16 = 320s of waiting, the on-demand bonus 4096/16 = 256s,
// and other weights move the crossovers as the formula says.
func TestCrossover(t *testing.T) {
	type row struct {
		Name string
		At   time.Duration
		OK   bool
	}
	def := ScoreConfig{}
	var got []row
	add := func(name string, c ScoreConfig, a, b JobClass) {
		at, ok := c.Crossover(a, b)
		got = append(got, row{name, at, ok})
	}
	add("p0 queued vs fresh p5 queued", def, JobClass{Priority: 0}, JobClass{Priority: 5})
	add("p0 queued vs fresh p0 on-demand", def, JobClass{Priority: 0}, JobClass{Priority: 0, OnDemand: true})
	add("p5 vs fresh p0: already ahead", def, JobClass{Priority: 5}, JobClass{Priority: 0})
	add("p1 queued vs fresh p1: equal", def, JobClass{Priority: 1}, JobClass{Priority: 1})
	add("p0 on-demand vs fresh p9 queued", def, JobClass{Priority: 0, OnDemand: true}, JobClass{Priority: 9})
	// Rarity: one free slot is 500 points; a p0 job with two slots
	// (250) catches a fresh p0 with one after ⌈250/16⌉ = 16s.
	add("p0 two slots vs fresh p0 one slot", def, JobClass{CompatibleSlots: 2}, JobClass{CompatibleSlots: 1})
	add("doubled aging: gap 5 in 160s", ScoreConfig{AgeWeight: 32}, JobClass{Priority: 0}, JobClass{Priority: 5})
	want := []row{
		{"p0 queued vs fresh p5 queued", 320 * time.Second, true},
		{"p0 queued vs fresh p0 on-demand", 256 * time.Second, true},
		{"p5 vs fresh p0: already ahead", 0, true},
		{"p1 queued vs fresh p1: equal", 0, true},
		// 4096 + 48·t ≥ 9·1024 → t ≥ 106.67s, rounded up.
		{"p0 on-demand vs fresh p9 queued", 107 * time.Second, true},
		{"p0 two slots vs fresh p0 one slot", 16 * time.Second, true},
		{"doubled aging: gap 5 in 160s", 160 * time.Second, true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("crossovers (-want +got):\n%s", diff)
	}
	// At the crossover the scores meet; a second earlier they did not.
	c := def.WithDefaults()
	low, high := JobClass{Priority: 0}, JobClass{Priority: 5}
	if c.Score(low, 320) != c.Score(high, 0) || c.Score(low, 319) >= c.Score(high, 0) {
		t.Errorf("scores at 319s/320s: %v, %v against %v", c.Score(low, 319), c.Score(low, 320), c.Score(high, 0))
	}
}

func TestScoreDefaultsAndValidation(t *testing.T) {
	got := ScoreConfig{AgeWeight: 8}.WithDefaults()
	want := ScoreConfig{PriorityWeight: 1024, AgeWeight: 8, RarityBonus: 500, OnDemandBonus: 4096, OnDemandAgeWeight: 32}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WithDefaults (-want +got):\n%s", diff)
	}
	err := ScoreConfig{RarityBonus: -1}.Validate()
	if !errors.Is(err, ErrInvalidConfig) || err.Error() != "fairsched: invalid config: ScoreConfig.RarityBonus = -1: must be a finite number, not negative (0 takes the default)" {
		t.Errorf("Validate = %v", err)
	}
	if _, ok := (ScoreConfig{PriorityWeight: 1, AgeWeight: 0}).Crossover(JobClass{}, JobClass{Priority: 1}); !ok {
		t.Error("AgeWeight 0 takes the default: the crossover exists")
	}
}
