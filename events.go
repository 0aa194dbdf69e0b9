package fairsched

import "github.com/fairsched/fairsched/messages"

// Event is something the scheduler did, delivered to subscribers (see
// Subscribe). It is a closed sum: its variants are JobQueued, JobJoined,
// JobCancelled, JobAdmitted, JobCompleted, JobFailed, JobAged,
// GroupAllocationChanged, JobDenied, JobExpired, JobDropped, JobSuperseded,
// JobRefused, JobPreempted and PolicyApplied, and no other type can
// implement it, so a type switch over them is exhaustive.
// Every variant has a Time, read from the scheduler's clock when the event
// happened, and serialises to JSON with snake_case field names; durations
// are nanoseconds, as in a Snapshot.
type Event = messages.Event

// JobQueued: a job entered the queue — a RunSync or Submit accepted, a
// periodic occurrence, a coalesced run's first request — or entered it
// again to wait out a retry's backoff (Attempt > 1). Fields: Type, ID,
// FairnessKey, Group, Foreground (a caller waits), Attempt. A RunSync that
// joins a pending coalesced run adds no job, so no event.
//
// Fields, from messages.JobQueued:
//
//	Time time.Time
//
//	Type policy.JobType
//
//	ID string
//
//	FairnessKey string
//
//	Group string
//
//	// Foreground: a caller waits for it (RunSync).
//	Foreground bool
//
//	// Attempt is the attempt it waits to make: 1, or more after a failure
//	// (or, for a durable job, an interruption).
//	Attempt int
type JobQueued = messages.JobQueued

// JobCancelled: a pending job left the queue unrun and uncharged because
// it was cancelled: Cancel removed it (Err is ErrCancelled), its RunSync
// caller's context ended (Err is the context's error), or every waiter of
// a coalesced run left. Fields: Type, ID, FairnessKey, Group, Err. A
// running job that Cancel interrupts is reported when it ends, as
// JobFailed or JobCompleted.
//
// Fields, from messages.JobCancelled:
//
//	Time time.Time
//
//	Type policy.JobType
//
//	ID string
//
//	FairnessKey string
//
//	Group string
//
//	Err error
type JobCancelled = messages.JobCancelled

// JobJoined: a request of a coalescing type (JobTypeConfig.Coalesce)
// joined the pending run of its (type, id) instead of queueing a job: a
// RunSync waits for the run's result (Foreground), a Submit marks the run
// as wanted. The run itself was reported as JobQueued.
//
// Fields, from messages.JobJoined:
//
//	Time time.Time
//
//	Type policy.JobType
//
//	ID string
//
//	FairnessKey string
//
//	Foreground bool
type JobJoined = messages.JobJoined

// JobAdmitted: a job was admitted and starts running. Fields: Type, ID,
// FairnessKey; BasePriority (its type's priority, the tier whose cap it
// counts against) and EffectivePriority (the priority it was dispatched at,
// equal to BasePriority unless the job aged); Group ("" when none); Waited,
// the time from submission to admission; Cost, the estimate charged to the
// key at admission; KeyCost, the key's accumulated cost right after that
// charge.
//
// Fields, from messages.JobAdmitted:
//
//	Time time.Time
//
//	Type policy.JobType
//
//	ID string
//
//	FairnessKey string
//
//	// BasePriority is the job's tier, whose cap the job counts against:
//	// its type's priority, or the one a workload rule gave it.
//	// EffectivePriority is the priority it was dispatched at; the two are
//	// equal unless the job aged or inherited a priority.
//	BasePriority policy.Priority
//
//	EffectivePriority policy.Priority
//
//	// Group is the job's group; "" when it has none.
//	Group string
//
//	// Waited is the time from submission to admission.
//	Waited time.Duration
//
//	// Cost is the estimate charged to the key; KeyCost is the key's
//	// accumulated cost right after that charge.
//	Cost time.Duration
//
//	KeyCost time.Duration
type JobAdmitted = messages.JobAdmitted

// JobCompleted: a job's function returned nil. Elapsed is its wall time from
// admission; Estimate is the learned cost of its (type, id) once Elapsed is
// folded in.
//
// Fields, from messages.JobCompleted:
//
//	Time time.Time
//
//	Type policy.JobType
//
//	ID string
//
//	FairnessKey string
//
//	// Elapsed is the wall time from admission to completion; Estimate is
//	// the learned cost of the job's (type, id) once Elapsed is folded in.
//	Elapsed time.Duration
//
//	Estimate time.Duration
type JobCompleted = messages.JobCompleted

// JobFailed: a job's function returned an error (Err) or panicked
// (Panicked; Err is then the *PanicError with the value and the stack).
// Foreground and background jobs alike. The other fields are those of
// JobCompleted: a failed run counts towards the cost model too. In JSON, Err
// is the "error" message.
//
// Fields, from messages.JobFailed:
//
//	Time time.Time
//
//	Type policy.JobType
//
//	ID string
//
//	FairnessKey string
//
//	Elapsed time.Duration
//
//	Estimate time.Duration
//
//	// Err is what the function returned or, when Panicked, the
//	// *PanicError made of its panic (value and stack). In JSON it is the
//	// "error" string: its message.
//	Err error
//
//	Panicked bool
//
//	// Retrying: the job waits out a backoff and runs again (its retry
//	// policy allows another attempt).
//	Retrying bool
type JobFailed = messages.JobFailed

// JobAged: a pending job's effective priority rose while it waited; Waited
// is the time since its submission. Emitted only when priority aging is
// configured.
//
// Fields, from messages.JobAged:
//
//	Time time.Time
//
//	Type policy.JobType
//
//	ID string
//
//	FairnessKey string
//
//	BasePriority policy.Priority
//
//	EffectivePriority policy.Priority
//
//	// Waited is the time since submission.
//	Waited time.Duration
type JobAged = messages.JobAged

// GroupAllocationChanged: a group's share of the global capacity changed
// from PreviousSlots to NewSlots, for Reason. Emitted only when group
// weights are configured.
//
// Fields, from messages.GroupAllocationChanged:
//
//	Time time.Time
//
//	Group string
//
//	PreviousSlots int
//
//	NewSlots int
//
//	Reason AllocationReason
type GroupAllocationChanged = messages.GroupAllocationChanged

// JobDenied: the admission policy denied a job (WithAdmissionPolicy); it
// never runs.
//
// Fields, from messages.JobDenied:
//
//	Time time.Time
//
//	Type policy.JobType
//
//	ID string
//
//	FairnessKey string
//
//	Err error
//
//	Panicked bool
type JobDenied = messages.JobDenied

// JobExpired: a job was still pending when its time to live ran out; it
// never runs.
//
// Fields, from messages.JobExpired:
//
//	Time time.Time
//
//	Type policy.JobType
//
//	ID string
//
//	FairnessKey string
//
//	Waited time.Duration
type JobExpired = messages.JobExpired

// JobDropped: a job was dropped unrun because the scheduler closed; Close
// counts them in its error.
//
// Fields, from messages.JobDropped:
//
//	Time time.Time
//
//	Type policy.JobType
//
//	ID string
//
//	FairnessKey string
type JobDropped = messages.JobDropped

// JobSuperseded: a pending background job was replaced by a newer
// submission of its (type, id) with Supersede; it never runs.
//
// Fields, from messages.JobSuperseded:
//
//	Time time.Time
//
//	Type policy.JobType
//
//	ID string
//
//	FairnessKey string
type JobSuperseded = messages.JobSuperseded

// JobRefused: a submission was refused before it was queued — a pending
// bound (reason tenant_limit or pool_overloaded), the load signal
// (overloaded), deadline-aware admission (ReasonStartAfterDeadline) — or a
// pending job was shed (ReasonShed).
//
// Fields, from messages.JobRefused:
//
//	Time time.Time
//
//	Type policy.JobType
//
//	ID string
//
//	FairnessKey string
//
//	Reason policy.Reason
type JobRefused = messages.JobRefused

// AllocationReason says why a group's allocation changed; it serialises as
// its string value.
//
// Declared, in messages.AllocationReason, as:
//
//	type AllocationReason string
type AllocationReason = messages.AllocationReason

// Reasons of a GroupAllocationChanged.
const (
	// AllocationWeightChange: a group's weight was set or reset.
	AllocationWeightChange = messages.AllocationWeightChange
	// AllocationRebalance: demand moved, so slots moved between groups.
	AllocationRebalance = messages.AllocationRebalance
	// AllocationGroupDrained: the group ran out of work and gave its slots
	// back.
	AllocationGroupDrained = messages.AllocationGroupDrained
)

// Subscribe returns a channel that receives the scheduler's events from now
// on, in the order they happen, and the function that ends the
// subscription. buffer is the channel's capacity; a negative buffer is
// treated as 0.
//
// Events are sent by the scheduler's owner goroutine, which never waits for
// a subscriber: when the channel is full the event is dropped for this
// subscriber, and Snapshot's EventsLost counts it. A subscriber that must
// not miss events reads promptly into a buffer large enough for its bursts.
// An unbuffered channel only gets the events that find its reader waiting.
//
// cancel stops delivery and closes the channel; events already buffered can
// still be read. It returns once the channel is closed, and calling it again
// or after Close is safe. Close closes every subscriber's channel when the
// scheduler has stopped, after the last job's events. Subscribe once Close
// has been called returns a closed channel and a cancel that does nothing.
//
// buffer is cut to [0, MaxSubscribeBuffer]. On a nil Scheduler Subscribe
// returns a closed channel.
//
// In cluster mode the events are the leader's, published through the
// database only while some instance has subscribers: an instance's first
// Subscribe returns once the leader has read the subscription — at once
// on the leader's own instance, about a Heartbeat on another — so the
// events of every job submitted after it are delivered. When no leader
// reads it within a LeaseTTL and a Heartbeat (none is elected), Subscribe
// returns all the same, and the events before a leader reads it are not
// published.
func (s *Scheduler) Subscribe(buffer int) (events <-chan Event, cancel func()) {
	if s.check() != nil {
		ch := make(chan Event)
		close(ch)
		return ch, func() {}
	}
	return s.eng.subscribe(min(max(buffer, 0), MaxSubscribeBuffer))
}
