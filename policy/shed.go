package policy

import "strings"

// ReasonShed: the job was pending and was dropped to make room for a
// newcomer of a key under its fair share while the queue held
// Limits.MaxPending jobs (ShedConfig). Its error is a *RefusalError
// matching ErrOverloaded.
const ReasonShed Reason = "shed"

// ShedConfig turns on fair shedding (Limits.Shed): a submission that finds
// the queue at Limits.MaxPending is not refused when its key claims less
// than the key furthest over its fair share; that key's newest pending job
// is shed instead.
//
// A key's claim is its accumulated cost (the fairness ledger's weighted
// service, the measure dispatch orders keys by) plus the weighted cost
// estimates of its pending jobs that may be shed: the virtual time by
// which the key's queued work would be served. Keys are served in the
// order of that measure, so the key with the largest claim is the one
// furthest over its share of service under its weight.
type ShedConfig struct {
	// Durable lets durable jobs be shed: the job's record ends with the
	// shed error and leaves the store. Off by default: a durable job was
	// accepted into the store, and its submitter may be gone; only
	// in-memory jobs are shed.
	Durable bool
}

// shedWords are the words of a shed job's error after its key; ShedText
// finds them in an error that crossed a database as text.
const shedWords = " shed: the queue held its bound ("

// ShedText reports whether text, an error's text as a store keeps it, is
// a shed job's *RefusalError's: the cluster's instances match it back to
// ErrOverloaded with reason shed.
func ShedText(text string) bool {
	return strings.HasPrefix(text, "fairsched: job ") && strings.Contains(text, shedWords)
}
