// Package fairsched schedules the work of a service fairly. Every job,
// foreground (a caller waits for it, RunSync) or background (Submit), goes
// through one scheduler that decides what runs next:
//
//   - Priority tiers: a job type's Priority orders it (higher first) and its
//     value caps the tier (Priority(8) runs at most 8 jobs at once), so
//     background work can never take the slots foreground work needs.
//   - Fair queuing by cost: within a tier, the fairness key (a client's
//     identity) that has consumed the least accumulated cost goes next, so
//     one client's burst cannot starve the others. A job's cost is learned:
//     an exponential moving average of its wall time per (type, id),
//     starting from the type's DefaultCost.
//   - Conflict exclusion: job types sharing a ConflictGroup never run at the
//     same time on the same job id (a clone and a repack of one repository);
//     the later one waits in the queue without holding a slot. Jobs of
//     ConflictShared types run together on an id (clones of one
//     repository), never beside an exclusive one; an exclusive job that
//     waits goes before shared ones that arrive after it.
//   - No head-of-line blocking: a job held back by a cap or a conflict never
//     holds back the jobs behind it.
//   - Aging (WithAging): a waiting job's effective priority rises over time,
//     so lower tiers are never starved; its base priority still decides
//     which tier's cap it counts against. AgingConfig.MaxWait bounds the
//     wait. A job submitted with InheritPriority from inside a running job
//     competes at no less than that job's effective priority.
//   - Groups (InGroup, WithGroupWeight, WithGroupMinSlots, WithGroupLimit):
//     the global cap is split among groups by weight, work-conserving;
//     groups can be reweighted, paused and resumed at run time, and an
//     urgent aged job may borrow past its group's share.
//   - Tenancy: fairness key weights (WithKeyWeight) and stated tokens
//     (WithTokens); rate limits per type, group or key (WithRateLimit);
//     reserved and burst tier shares (WithTier); tenant limits on running
//     and pending jobs (WithTenantLimits) and a bounded queue
//     (WithMaxPending), whose refusals are RefusalErrors; an adaptive global
//     limit (WithAdaptiveLimit); an admission policy (WithAdmissionPolicy);
//     a load signal — CPU, queue length, worker utilisation or your own —
//     that defers or refuses new work while overloaded (WithLoadSignal).
//   - Lifecycle: a queue timeout (WithQueueTimeout, QueueTimeout), retries with
//     backoff (WithRetry, Permanent), coalescing of requests for one pending
//     (type, id) (JobTypeConfig.Coalesce), Supersede, periodic jobs
//     (SubmitPeriodic), and a Store for what must survive a restart
//     (WithStore; package boltstore). Timed work of every kind waits in
//     heaps served by one timer.
//   - Worker slots (RegisterWorker, JobTypeConfig.RequiresWorker): jobs of
//     a worker type run one per slot, on the free slot that supports the
//     fewest types, so versatile slots stay free for rare work; free slots
//     are indexed by type. UnregisterWorker (a stop or a crash) cancels the
//     jobs on its slots with ErrWorkerLost as the cause; a durable one runs
//     again (an interruption, not a failure), the others follow their
//     retry policy. SlotFromContext tells a job where it runs.
//   - Linear scoring (WithScoring): instead of by effective priority,
//     dispatch can order by a linear score — priority, age, rarity of free
//     slots, and an on-demand bonus for RunSync work — whose crossovers
//     ScoreConfig.Crossover computes (a priority-0 job passes a fresh
//     priority-5 one after 320s with the defaults; priority 0 registers
//     with scoring).
//   - Priority modes (WithPriorityMode): by default a priority's value is
//     also its tier's cap; with PriorityOrderOnly priorities from
//     0 only order, and tiers are capped only by WithTier — shares of the
//     global cap and an absolute MaxRunning (a max_inflight).
//   - Explanations: Snapshot lists every pending job with every rule that
//     holds it (Reasons: paused, backoff, scheduled, deferred, no_handler,
//     conflict, type_limit, tenant_limit, group_limit, rate_limited,
//     tier_limit, no_workers, worker_busy, overloaded, global_limit), the
//     narrowest as its headline Reason, and, with scoring, its score;
//     Explain tells what holds one job and when it should start; decisions
//     are logged as structured records, and Subscribe streams them as
//     events.
//
// # Dispatch
//
// Whenever a job arrives or finishes, the scheduler admits pending jobs in
// the order (higher effective priority, lower accumulated cost of the fairness key,
// earlier arrival), skipping any job that the global cap (WithMaxConcurrency),
// its tier's cap, its type's MaxConcurrency or a running conflicting job
// forbids, until nothing more may start. Admitting a job adds its estimated
// cost to its key's accumulated cost at once. The order is kept in an index
// (package queue), so choosing a job costs O(log n), not a sort of all
// pending jobs; the packages costmodel and queue explain the arithmetic.
//
// # Design
//
// All state is owned by one goroutine (package actor) that drives the
// scheduler's machine (package core/machine) over a synchronous state
// machine (package core) taking the time as data; in cluster mode the
// leader's loop owns the same machine. The
// methods of Scheduler send a message carrying a reply channel and wait, so
// they are safe for concurrent use and no lock is held anywhere. Call Close
// to stop the owner goroutine.
package fairsched

//go:generate go run ./internal/aliasdoc/cmd
