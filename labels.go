package fairsched

import (
	"maps"

	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// Bounds of a job's labels (WithLabels).
const (
	MaxLabels   = policy.MaxLabels
	MaxLabelLen = policy.MaxLabelLen
)

// WithLabels gives the job labels, which the policy's workload rules
// (Policy.Workloads) match when the job is queued. At most MaxLabels
// pairs; each key non-empty, each key and value at most MaxLabelLen bytes
// of valid UTF-8 without NUL (else ErrInvalidJob, naming the label). The
// map is copied. Given twice, the last one holds.
//
// What a job ends up with is decided in this order, each overriding the
// one before: its type's settings (JobTypeConfig), the first workload rule
// its labels match, the options of the call (WithTokens,
// WithQueueTimeout, WithFairnessKey or RunSync's fairnessKey,
// InheritPriority). A rule's fairness label gives the key only to a job
// without one (Submit without WithFairnessKey, RunSync with ""). Durable
// jobs keep their labels in their record and are matched again, against
// the policy of the day, each time they are queued (a restart, a new
// leader).
func WithLabels(labels map[string]string) JobOption {
	l := policy.Labels(maps.Clone(labels))
	return jobOptionFunc(func(j *messages.Job) { j.SetLabels(l) })
}
