package debugpage

import "github.com/fairsched/fairsched"

// explanations says in one sentence what each reason in a Snapshot means
// for the job that waits with it.
var explanations = map[fairsched.Reason]string{
	fairsched.ReasonPaused:         "its group is paused (PauseGroup): it waits for ResumeGroup",
	fairsched.ReasonBackoff:        "an attempt failed: it waits out its retry backoff, holding no slot",
	fairsched.ReasonDeferred:       "the admission policy deferred it: it is asked again when the delay ends",
	fairsched.ReasonScheduled:      "a durable job enqueued to run later (RunAt, Delay): it waits until it is due",
	fairsched.ReasonNoHandler:      "a durable job whose type has no handler yet: it waits for RegisterHandler",
	fairsched.ReasonTenantLimit:    "its fairness key already runs as many jobs as its tenant limit allows",
	fairsched.ReasonGlobalLimit:    "the global cap is reached: every slot of the scheduler is taken",
	fairsched.ReasonTierLimit:      "its tier already runs as many jobs as the tier may (or the rest is reserved for other tiers)",
	fairsched.ReasonTypeLimit:      "its type already runs MaxConcurrency jobs",
	fairsched.ReasonNoWorkers:      "no registered worker slot takes its type",
	fairsched.ReasonWorkerBusy:     "every worker slot that takes its type is busy",
	fairsched.ReasonNoFreeSlot:     "cluster mode: every slot of the instances (ClusterConfig.Slots) is taken",
	fairsched.ReasonGroupLimit:     "its group already holds its share of the slots (or its limit)",
	fairsched.ReasonConflict:       "a job of its conflict group runs on this id (or an exclusive one waits for it first)",
	fairsched.ReasonRateLimited:    "its rate limit (type, group or key) has no token left: it waits for the refill",
	fairsched.ReasonPoolOverloaded: "the queue is full (WithMaxPending)",
	fairsched.ReasonOverloaded:     "the load signal reads overloaded (WithLoadSignal): it waits for a reading below the threshold",
	"":                             "nothing holds it: it starts at the next dispatch",
}

// explain returns the sentence for r, or a generic one for a reason this
// package does not know yet.
func explain(r fairsched.Reason) string {
	if s, ok := explanations[r]; ok {
		return s
	}
	return "a rule of the scheduler holds it (see the fairsched docs for this reason)"
}

// reasonClass is the CSS class of r's badge: known reasons have their own
// colour, the others a neutral one.
func reasonClass(r fairsched.Reason) string {
	if _, ok := explanations[r]; !ok {
		return "r-other"
	}
	if r == "" {
		return "r-ready"
	}
	return "r-" + string(r)
}

// reasonLabel is the badge's text.
func reasonLabel(r fairsched.Reason) string {
	if r == "" {
		return "ready"
	}
	return string(r)
}
