package policy

import (
	"fmt"
	"math"
	"time"
)

// ScoreConfig is linear scoring, an opt-in dispatch order
// (see the package doc, "Linear scoring"). A waiting job's score is
//
//	PriorityWeight·priority + AgeWeight·age + rarity + on-demand
//	rarity    = RarityBonus / free compatible slots (worker types only)
//	on-demand = OnDemandBonus + OnDemandAgeWeight·age (RunSync work only)
//
// with age in whole seconds since the job arrived. The zero value of a
// field takes the default below; a negative value is invalid.
type ScoreConfig struct {
	PriorityWeight    float64 `json:"priority_weight"`      // per priority unit; default 1024
	AgeWeight         float64 `json:"age_weight"`           // per second waited; default 16
	RarityBonus       float64 `json:"rarity_bonus"`         // divided by the compatible free slots; default 500
	OnDemandBonus     float64 `json:"on_demand_bonus"`      // for RunSync work; default 4096
	OnDemandAgeWeight float64 `json:"on_demand_age_weight"` // per second, on top of AgeWeight, for RunSync work; default 32
}

// The default coefficients: powers of two, so a priority unit is worth
// 1024/16 = 64 seconds of waiting.
const (
	DefaultPriorityWeight    = 1024
	DefaultAgeWeight         = 16
	DefaultRarityBonus       = 500
	DefaultOnDemandBonus     = 4096
	DefaultOnDemandAgeWeight = 32
)

// WithDefaults returns c with every zero field set to its default.
func (c ScoreConfig) WithDefaults() ScoreConfig {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.PriorityWeight, DefaultPriorityWeight)
	def(&c.AgeWeight, DefaultAgeWeight)
	def(&c.RarityBonus, DefaultRarityBonus)
	def(&c.OnDemandBonus, DefaultOnDemandBonus)
	def(&c.OnDemandAgeWeight, DefaultOnDemandAgeWeight)
	return c
}

// Validate checks that no weight is negative or not a number.
func (c ScoreConfig) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"PriorityWeight", c.PriorityWeight}, {"AgeWeight", c.AgeWeight}, {"RarityBonus", c.RarityBonus},
		{"OnDemandBonus", c.OnDemandBonus}, {"OnDemandAgeWeight", c.OnDemandAgeWeight}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return InvalidConfig("ScoreConfig."+f.name, f.v, "must be a finite number, not negative (0 takes the default)")
		}
		if f.v > MaxScoreWeight {
			return InvalidConfig("ScoreConfig."+f.name, f.v, fmt.Sprintf("must be at most %g, so that scores stay finite", float64(MaxScoreWeight)))
		}
	}
	return nil
}

// MaxScoreWeight bounds every ScoreConfig weight and bonus. With it a score
// — weights times a priority below 2³¹ and an age below 2⁶³ ns — stays far
// below the largest float64, so it is never +Inf and a snapshot stays JSON.
const MaxScoreWeight = 1e12

// JobClass is what the score knows of a job besides its age: its priority,
// whether a caller waits for it (RunSync), and for a type that runs on
// worker slots the number of free slots that support it (0 otherwise).
type JobClass struct {
	Priority        Priority
	OnDemand        bool
	CompatibleSlots int
}

// Slope returns the points a job of class k gains per second waited.
func (c ScoreConfig) Slope(k JobClass) float64 {
	if k.OnDemand {
		return c.AgeWeight + c.OnDemandAgeWeight
	}
	return c.AgeWeight
}

// Base returns the score of a job of class k that has just arrived.
func (c ScoreConfig) Base(k JobClass) float64 {
	s := c.PriorityWeight * float64(k.Priority)
	if k.CompatibleSlots > 0 {
		s += c.RarityBonus / float64(k.CompatibleSlots)
	}
	if k.OnDemand {
		s += c.OnDemandBonus
	}
	return s
}

// Score returns the score of a job of class k that has waited age seconds.
func (c ScoreConfig) Score(k JobClass, age int64) float64 {
	return c.Base(k) + c.Slope(k)*float64(age)
}

// Crossover returns how long a job of class a must wait before its score
// reaches that of a job of class b arriving fresh — from then on a wins
// (ties go to the earlier arrival when the keys' costs are equal). It is 0
// when a starts at or above b, and false when a never gets there (no
// aging). With the defaults, priority 0 reaches a fresh priority 5 after
// 5·1024/16 = 320s, and a fresh on-demand job of its priority after
// 4096/16 = 256s. Ages count whole seconds, so the result is rounded up to
// one, and is at least 1s when a starts below b. A crossover beyond the
// largest time.Duration (about 292 years, or an infinite gap) saturates at
// it: math.MaxInt64, still with true.
func (c ScoreConfig) Crossover(a, b JobClass) (time.Duration, bool) {
	c = c.WithDefaults()
	gap := c.Base(b) - c.Base(a)
	if !(gap > 0) { // at or above b (or scores that do not compare: NaN)
		return 0, true
	}
	slope := c.Slope(a)
	if !(slope > 0) {
		return 0, false
	}
	// At least one whole second, even when gap/slope rounds to 0 (an
	// infinite or huge slope).
	secs := max(math.Ceil(gap/slope), 1)
	if !(secs <= float64(maxCrossoverSeconds)) { // +Inf, or NaN from an infinite gap and slope
		return math.MaxInt64, true
	}
	return time.Duration(secs) * time.Second, true
}

// maxCrossoverSeconds is the most whole seconds a time.Duration holds.
const maxCrossoverSeconds = math.MaxInt64 / int64(time.Second)
