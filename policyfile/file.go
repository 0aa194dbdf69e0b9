package policyfile

import "time"

// The file's structure. Every field is optional; an empty policy file is
// a policy that sets nothing.

type file struct {
	Version        string                `yaml:"version"`
	MaxConcurrency int                   `yaml:"max_concurrency"`
	Tiers          map[int]fileTier      `yaml:"tiers"`
	Tenants        *fileLimits           `yaml:"tenants"`
	KeyLimits      map[string]fileLimits `yaml:"key_limits"`
	KeyWeights     map[string]float64    `yaml:"key_weights"`
	Types          map[string]fileType   `yaml:"types"`
	Groups         *fileGroups           `yaml:"groups"`
	RateLimits     []fileRate            `yaml:"rate_limits"`
	Workloads      []fileWorkload        `yaml:"workloads"`
}

type fileTier struct {
	MinShare   float64 `yaml:"min_share"`
	BurstShare float64 `yaml:"burst_share"`
	MaxRunning int     `yaml:"max_running"`
	LendIdle   bool    `yaml:"lend_idle"`
}

type fileLimits struct {
	MaxRunning int `yaml:"max_running"`
	MaxPending int `yaml:"max_pending"`
}

type fileType struct {
	Priority       int           `yaml:"priority"`
	DefaultCost    time.Duration `yaml:"default_cost"`
	MaxConcurrency int           `yaml:"max_concurrency"`
	ConflictGroup  string        `yaml:"conflict_group"`
	ConflictMode   string        `yaml:"conflict_mode"`
	QueueTimeout   time.Duration `yaml:"queue_timeout"`
	Retry          *fileRetry    `yaml:"retry"`
	Coalesce       bool          `yaml:"coalesce"`
	RequiresWorker bool          `yaml:"requires_worker"`
}

type fileRetry struct {
	MaxAttempts      int           `yaml:"max_attempts"`
	MinBackoff       time.Duration `yaml:"min_backoff"`
	MaxBackoff       time.Duration `yaml:"max_backoff"`
	Jitter           float64       `yaml:"jitter"`
	MaxInterruptions int           `yaml:"max_interruptions"`
}

type fileGroups struct {
	DefaultWeight int            `yaml:"default_weight"`
	Weights       map[string]int `yaml:"weights"`
	MinSlots      map[string]int `yaml:"min_slots"`
	Limits        map[string]int `yaml:"limits"`
}

type fileRate struct {
	Scope     string  `yaml:"scope"`
	Name      string  `yaml:"name"`
	PerSecond float64 `yaml:"per_second"`
	Burst     int     `yaml:"burst"`
}

type fileWorkload struct {
	Name             string            `yaml:"name"`
	MatchLabels      map[string]string `yaml:"match_labels"`
	MatchExpressions []fileRequirement `yaml:"match_expressions"`
	Priority         *int              `yaml:"priority"`
	Tokens           time.Duration     `yaml:"tokens"`
	QueueTimeout     time.Duration     `yaml:"queue_timeout"`
	FairnessLabelKey string            `yaml:"fairness_label_key"`
}

type fileRequirement struct {
	Key      string   `yaml:"key"`
	Operator string   `yaml:"operator"`
	Values   []string `yaml:"values"`
}
