package core

import (
	"time"

	"github.com/fairsched/fairsched/policy"
)

// JobRecord is a durable job as a store keeps it: everything a restarted
// scheduler needs to queue it again as it was. Seq orders the records (and
// is their key in a store): restore and dispatch never scan for one.
type JobRecord struct {
	Seq     uint64         `json:"seq"`
	Type    policy.JobType `json:"type"`
	ID      string         `json:"id"`
	Payload []byte         `json:"payload,omitempty"`
	Key     string         `json:"key,omitempty"`
	Group   string         `json:"group,omitempty"`
	// Tokens, TTL (the job's own queue timeout), Retry (when RetrySet) and
	// Floor (when Floored, an inherited priority) are the job's options.
	Tokens   time.Duration      `json:"tokens,omitempty"`
	TTL      time.Duration      `json:"ttl,omitempty"`
	Retry    policy.RetryPolicy `json:"retry,omitzero"`
	RetrySet bool               `json:"retry_set,omitempty"`
	Floor    policy.Priority    `json:"floor,omitempty"`
	Floored  bool               `json:"floored,omitempty"`
	// Labels are the job's labels (WithLabels), matched by the workload
	// rules each time the job is queued.
	Labels policy.Labels `json:"labels,omitempty"`
	// EnqueuedAt is when Enqueue accepted it: its aging clock and queue
	// timeout run from there across restarts. RunAt, when set, is when it
	// becomes due.
	EnqueuedAt time.Time `json:"enqueued_at"`
	RunAt      time.Time `json:"run_at,omitzero"`
	// Attempt counts the attempts started: one that a crash or Close
	// interrupted counts. Each start is written before its handler runs,
	// so a re-run always has a larger Attempt than the run it replaces.
	Attempt int `json:"attempt,omitempty"`
	// Interruptions counts the attempts that were interrupted rather than
	// failed (Interrupted): they do not count against the retry policy's
	// MaxAttempts, only against its MaxInterruptions.
	Interruptions int         `json:"interruptions,omitempty"`
	State         RecordState `json:"state"`
	// LastError is the last failed attempt's error; FinishedAt when the
	// job became dead or succeeded.
	LastError  string    `json:"last_error,omitempty"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	// Owner, in cluster mode, is the incarnation of the instance whose
	// RunSync or Submit made the job: only that process holds the
	// function, so only it is granted the job, and the job ends with it.
	// "" for a durable job any instance runs.
	Owner string `json:"owner,omitempty"`
	// EndedAttempt is the last attempt whose end the scheduler applied (a
	// retry decided): in cluster mode, a new leader applies an end reported
	// for a later attempt instead of running the job again.
	EndedAttempt int `json:"ended_attempt,omitempty"`
	// OnDemand: a caller waits for the job (a RunSync in cluster mode); with
	// scoring it has the on-demand bonus, as in one process.
	OnDemand bool `json:"on_demand,omitempty"`
	// Granted, in cluster mode, is the instance a previous leader granted
	// the job to and that still runs it, as the store read it: the new
	// leader counts it as running until it ends. Never
	// written: the store keeps grants in columns of their own.
	Granted string `json:"-"`
}

// RecordState is where a durable job is in its life.
type RecordState uint8

const (
	// RecordPending: to run (again): waiting, or running when the record
	// was last written.
	RecordPending RecordState = iota
	// RecordDead: failed for good (attempts used up, Permanent, a panic);
	// kept until requeued or deleted.
	RecordDead
	// RecordSucceeded: ran to success, kept for WithRetention.
	RecordSucceeded
)

// Valid reports whether r could have been written by a scheduler: a
// decoded record that is not is refused, never misread.
func (r *JobRecord) Valid() bool {
	return r.Seq > 0 && r.Type != "" && policy.ValidateJob(r.Type, r.ID, true) == nil &&
		policy.ValidateJobNames(r.Key, r.Group) == nil && policy.CheckName(r.Owner) == nil && r.State <= RecordSucceeded &&
		r.Attempt >= 0 && r.Interruptions >= 0 && r.Interruptions <= r.Attempt && r.Tokens >= 0 && r.Tokens <= policy.MaxTokens && r.TTL >= 0 &&
		(!r.RetrySet || r.Retry.Validate("retry") == nil) && policy.ValidateLabels(r.Labels) == nil
}
