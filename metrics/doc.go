// Package metrics exports what a *fairsched.Scheduler does as Prometheus
// metrics: a Collector to register with a prometheus.Registerer.
//
//	reg := prometheus.NewRegistry()
//	c, err := metrics.New(s) // s is the *fairsched.Scheduler
//	if err != nil { ... }
//	defer c.Close()
//	reg.MustRegister(c)
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// # Two sources
//
// Event metrics (counters, histograms, the last admitted priority) come
// from the scheduler's event stream. New subscribes with a buffer of
// WithEventBuffer events (default 4096) and drains it in the collector's
// own goroutine into Prometheus vectors; Close ends the subscription and
// waits for that goroutine. The scheduler's owner goroutine never waits
// for the collector: an event that finds the buffer full is dropped and
// the scheduler counts it, which events_lost_total shows. So the event
// metrics are exact as long as events_lost_total stays flat. They count
// from New on: a collector created late does not see earlier events.
//
// Snapshot metrics (running and pending jobs, group slots, the limits,
// events_lost_total, aging_promotions_total) are read at scrape time: each Collect asks the
// scheduler for one Snapshot. That is a message to the owner goroutine,
// which copies its state — O(r + n log n) for r running and n pending jobs,
// plus the learned cost estimates — between two of its other messages, so
// each scrape holds up scheduling for that long; once per scrape interval
// it is negligible unless the queue holds a very large number of jobs.
// Collect waits at most WithSnapshotTimeout (default 1s) for it: a scrape
// never hangs, and one without a snapshot leaves the snapshot metrics out
// and counts itself in snapshot_errors_total (a closed scheduler, too).
// Note that a snapshot is a call to the scheduler, so with aging configured
// it is also a moment the scheduler notices jobs that aged (JobAged).
//
// No lock is taken anywhere: Prometheus vectors are safe for concurrent
// use, so Collect may run alongside the collector's goroutine and other
// scrapes.
//
// # Metrics
//
// Every name takes the namespace prefix, "fairsched_" by default
// (WithNamespace). Labels: type is the job type; tier is the job's base
// priority (its type's Priority, in decimal), the tier whose cap it counts
// against; group is the job's group ("" for jobs without one); reason is a
// fairsched reason (pending: paused, backoff, deferred, tenant_limit,
// global_limit, tier_limit, type_limit, no_workers, worker_busy,
// group_limit, conflict, rate_limited; refused: tenant_limit,
// pool_overloaded) or, for allocation changes, an AllocationReason
// (weight_change, rebalance, group_drained). Histograms are in seconds,
// with the buckets of WithBuckets (default DefaultBuckets: 1ms to 262s by
// factors of 4).
//
// From events:
//
//	name                               type       labels                     meaning
//	queue_wait_seconds                 histogram  type, tier, group          JobAdmitted.Waited: submission to admission, per admission
//	job_duration_seconds               histogram  type                       Elapsed of JobCompleted and JobFailed: wall time of each run
//	admitted_effective_priority        gauge      type                       effective priority of the type's last admitted job (above its tier if it aged or inherited)
//	queued_total                       counter    type                       JobQueued: jobs that entered the queue (again for each retry's backoff)
//	cancelled_total                    counter    type                       JobCancelled: pending jobs cancelled (Cancel, a RunSync caller that left)
//	admitted_total                     counter    type                       JobAdmitted: admissions (each attempt of a retried job)
//	completed_total                    counter    type                       JobCompleted: runs that returned nil
//	failed_total                       counter    type                       JobFailed: runs that returned an error or panicked, retried or not
//	refused_total                      counter    type, reason               JobRefused: submissions refused, never queued (a pending bound, the load signal, reason start_after_deadline); pending jobs shed (reason shed)
//	shed_total                         counter    type                       JobRefused, reason shed: pending jobs shed for a key under its fair share (WithShedding)
//	expired_total                      counter    type                       JobExpired: jobs whose time to live ran out while pending
//	denied_total                       counter    type                       JobDenied: jobs the admission policy denied
//	dropped_total                      counter    type                       JobDropped: jobs dropped unrun because the scheduler closed
//	superseded_total                   counter    type                       JobSuperseded: pending background jobs a newer Supersede replaced
//	preempted_total                    counter    type, tier, by             JobPreempted: running jobs a higher tier (by) preempted
//	policies_applied_total             counter    version                    PolicyApplied: policies applied (ApplyPolicy), by the policy's Version
//	group_allocation_changes_total     counter    group, reason              GroupAllocationChanged: changes of a group's slot allocation
//	excess_slots_redistributed_total   counter    -                          slots handed back by groups that ran out of work (see below)
//
// From a snapshot at each scrape:
//
//	name                               type       labels                     meaning
//	running_jobs                       gauge      type, tier, group          jobs running
//	pending_jobs                       gauge      type, tier, group, reason  jobs pending, by headline reason (PendingJob.Reason: the narrowest rule that holds each); beyond the bounded snapshot's first rows (fairsched.DefaultSnapshotRows, in rank order) they count under reason "unlisted" with empty type, tier and group
//	group_slots                        gauge      group                      slots allocated to the group by weight (Snapshot.Groups[].Allocation)
//	group_running                      gauge      group                      jobs of the group running (Snapshot.Groups[].Running)
//	max_concurrency                    gauge      -                          the global limit, 0 for unlimited (the adaptive limit's value with WithAdaptiveLimit)
//	adaptive_limit                     gauge      -                          Snapshot.MaxConcurrency, present only with WithAdaptiveLimit
//	load_signal                        gauge      -                          Snapshot.Load.Value: the load signal's last good reading in [0, 1], only with WithLoadSignal
//	overloaded                         gauge      -                          1 while Snapshot.Load.Overloaded (the reading is at or above its threshold), else 0; only with WithLoadSignal
//	load_readings_skipped_total        counter    -                          Snapshot.Load.Skipped: readings skipped (an error, a NaN, a panic of the signal); only with WithLoadSignal
//	events_lost_total                  counter    -                          Snapshot.EventsLost: events dropped for full subscriber channels, all subscribers
//	aging_promotions_total             counter    type                       Snapshot.AgingRises: every rise of every waiting job's effective priority (see below)
//
// And the collector's own:
//
//	name                               type       labels                     meaning
//	snapshot_errors_total              counter    -                          scrapes that got no snapshot (timeout, closed scheduler)
//
// The snapshot gauges report the label combinations that have a job at
// scrape time, and groups only while the snapshot lists them (while they
// have jobs, are paused or hold slots): a combination that empties
// disappears rather than reporting 0, so aggregate with sum() and treat
// absence as 0. group_slots is meaningful with group weights
// (fairsched.WithGroupWeight and friends); without them it is 0.
//
// aging_promotions_total counts each aging step of each waiting job: five
// jobs that each rise two steps count 10, whether they wait in one lane or
// five (the JobAged events report only the head of each lane, the most aged
// job of its type and key, so they undercount). No timer or event runs per
// job: the scheduler adds a job's steps when it leaves the queue (admitted,
// withdrawn, expired, denied) — its waited time then less its waited time
// when it entered, in whole steps up to the ceiling, not counting steps
// that leave it at or below an inherited floor — and brings the jobs still
// waiting up to date at each scrape, from the scrape's time, at most 65 536
// of them per scrape, round robin: beyond that many waiting jobs the count
// lags by the steps of those not reached yet and catches up within
// ⌈waiting / 65 536⌉ scrapes, so one scrape costs the owner about 20 ms at a
// million waiting jobs. A paused group's jobs do not age, so do not count. The count is since the scheduler started (not
// since New) and never decreases.
//
// excess_slots_redistributed_total: a group's allocation is work-conserving
// — what a group cannot use goes to the groups with work — but the exact
// excess (a group's weighted share beyond what it can use) is internal to
// the allocation and not in the events. What the events give exactly is
// the slots a group hands back when it runs out of work: the counter adds
// PreviousSlots − NewSlots of every GroupAllocationChanged with reason
// group_drained (NewSlots is then 0). The allocation offers those slots to
// the groups still with work, which take them as far as their demand and
// limits allow; if no group can use them they stay idle. Slots that move
// while a group still has work (reason rebalance: a group's demand fell
// below its allocation, or another group arrived) and weight changes are
// not counted; group_allocation_changes_total counts those events.
//
// # Cardinality
//
// Labels come from the application's job types, tiers and groups and from
// the fixed sets of reasons; fairness keys and job ids are never labels. If
// groups are made per request or per tenant, queue_wait_seconds,
// running_jobs, pending_jobs and the group metrics grow with them, and the
// event series, once created, stay until the process ends.
package metrics
