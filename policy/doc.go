// Package policy holds the scheduler's configuration types, their
// validation, and the admission rules: whether one more job may start now.
//
// Programs use the root package, github.com/fairsched/fairsched: it names
// every configuration type of this package a program sets (Policy,
// TierConfig, JobTypeConfig, …), with their fields in its documentation.
//
// # Admission rules
//
// A pending job of type t, tier p = t.Priority, on job id i with key k may
// start when all of these hold. Every one that fails is among the job's
// Reasons in a snapshot, in this order — from the job outwards — and the
// first that fails is its Reason, the narrowest rule that holds it:
//
//	the job's group G is not paused                 else paused        (PauseGroup)
//	its retry backoff has run out                    else backoff       (RetryPolicy)
//	a durable job's due time has come                else scheduled     (RunAt, Delay)
//	the admission policy's deferral has run out      else deferred      (WithAdmissionPolicy)
//	(group g, i) free for t's ConflictMode (below)   else conflict      (never when g = "")
//	running(type t)    < t.MaxConcurrency            else type_limit    (no cap when 0)
//	t's rate limit holds the job's tokens            else rate_limited  (WithRateLimit)
//	running(key k)     < k.MaxRunning                else tenant_limit  (TenantLimits; no cap when 0)
//	k's rate limit holds the job's tokens            else rate_limited
//	running(G) < alloc(G) and < limit(G)             else group_limit   (with group weights; see below; not while paused)
//	G's rate limit holds the job's tokens            else rate_limited
//	running(tier p)    < cap(p)                      else tier_limit    (see Tier caps below)
//	running + 1 + Σ_{q≠p} owed(q) ≤ MaxConcurrency   else tier_limit    (reservations of tiers with WithTier)
//	a free worker slot takes t                       else no_workers or worker_busy (RequiresWorker)
//	the load signal's last reading is not overloaded else overloaded    (WithLoadSignal, OverloadDefer)
//	running            < MaxConcurrency (global)     else global_limit  (no cap when unset)
//
// (The reservations' row counts only while the global cap has room.) A
// durable job whose type has no handler yet is not in the queue at all: a
// snapshot lists it with the one reason no_handler until RegisterHandler.
// Among the jobs that may start, the next is the one with the highest
// effective priority, then the lowest accumulated cost of its fairness key,
// then the earliest arrival.
//
// Other rules refuse a submission instead, before it is queued (a
// RefusalError), in this order: its key already has k.MaxPending jobs
// pending (tenant_limit), the queue holds Limits.MaxPending
// (pool_overloaded), the load signal reads overloaded with OverloadRefuse
// (overloaded). The tenant's rules come first: a noisy tenant is told it is
// the noisy one, even when the whole scheduler is saturated. With shedding,
// a newcomer that the full queue would refuse, whose key claims less than
// the key furthest over its fair share, takes the place of that key's
// newest job, which is refused (shed); and
// deadline-aware admission refuses a RunSync that would start after its
// deadline (start_after_deadline).
//
// # Tier caps and priority modes
//
// A tier's cap is, with a TierConfig, burst(p) below; without one it is
// int(p) in the default mode (PriorityValueIsCap: the value orders
// and caps), and there is none with PriorityOrderOnly (
// priorities only order) or for priority 0. Priority 0 is valid only where
// it caps nothing: with PriorityOrderOnly or with scoring; the default mode
// without scoring refuses it, naming the option. Negative priorities are
// always refused: priorities order from 0 up, and aging, floors and scores
// build on that.
//
// # Tier shares
//
// With WithTier, a tier p gets reserved(p) = ⌊MinShare·C⌋ of the global cap C
// and runs at most burst(p) = max(⌊BurstShare·C⌋, reserved(p), 1); with
// MaxRunning m > 0 (a max_inflight) burst(p) = min(that, m) and
// reserved(p) = min(⌊MinShare·C⌋, m), and a tier with m alone (no shares)
// has reserved(p) = 0, burst(p) = m and needs no global cap. A tier q
// is owed owed(q) = max(0, reserved(q) − running(q)) slots — nothing while
// it lends (LendIdle) and has no job waiting — and no other tier may take a
// slot that would leave fewer free than the others are owed. With group
// weights, a job whose group is allocated no slot does not count as waiting:
// it could not take the slot kept for it, and keeping one would let the
// tier hold slots its groups cannot use while the groups that have them
// hold only other tiers' jobs, which the reservation keeps out — every
// slot idle, for good. So under any
// pressure each tier keeps its reservation (its floor), a busy
// tier grows into what idle lenders leave, up to its burst, and borrowed
// slots come back as their jobs finish: nothing is preempted. Whether a
// tier may start depends on every tier's running and waiting counts, so
// each change re-evaluates the few tiers: O(tiers²).
//
// # Admission policy
//
// A job that passes every rule above is offered to the admission policy, if
// any, before it starts: Admit starts it, Deny drops it (its submitter gets
// the error), Defer(d) takes it out of dispatch until d has passed — it
// then waits its turn again and the policy is asked anew. A deferred job
// waits in a heap by wake-up time, so the scheduler arms one timer, for the
// earliest; it keeps its place in its key's order and its aging clock.
//
// # Rate limits
//
// A rate limit is a token bucket (golang.org/x/time/rate, evaluated at the
// times the scheduler is given) on the admissions of a type, a group or a
// fairness key: rate r tokens a second, at most b saved. A job takes n
// tokens from each bucket of its scopes (one unit for the fair
// queue and the quota): its stated cost (WithTokens) in seconds rounded up
// to a whole token — a 4s job takes 4, a 2.5s job 3, a 1ns job 1 — or 1
// when it states none; whole tokens, since x/time/rate takes whole
// tokens, and every job takes at least one, so a limit still bounds
// admissions. A job passing every rule above still waits (rate_limited)
// while a bucket of its scopes holds fewer than n; the bucket holds them
// after (n − tokens)/r seconds (rounded down to the nanosecond, at least
// 1ns, at most the largest Duration for a tiny r). The whole scope leaves
// dispatch until then — the type is switched off, the key's or group's
// lanes are held — so smaller jobs of the scope do not pass the one that
// waits, and a heap of those refill times gives the one timer the owner
// needs; a job whose scope already waits starts no other wait. A refill
// found early blocks the scope again, never late, so no token is left
// unused while its jobs wait. A job that needs more than the burst b —
// which the bucket can never hold — takes n = b: it waits for a full
// bucket and empties it, never refused and never starved; the tokens past
// the burst are not owed, so the next job waits only for its own.
//
// # Adaptive limit
//
// With an AdaptiveLimitConfig the global cap C moves between Min and Max,
// additive increase and multiplicative decrease on latency: each finished
// job's wall time over the learned cost of its (type, id) at admission is
// its latency ratio; above Tolerance, C = max(Min, ⌊C·Backoff⌋); at or
// below it, C = min(Max, C + 1) when the job was one of C or more running
// (the limit, not the work, bounded concurrency). The ratio needs no
// latency target per job type: the cost model already knows what usual
// is. Group allocations and tier shares are recomputed from the new C.
//
// With a LoadTarget τ the limit follows the load signal's readings L
// (Limits.Load) instead, one step a reading: L > τ → C = max(Min,
// ⌊C·Backoff⌋); L ≤ τ and at least C jobs running → C = min(Max, C + 1).
// A service whose CPU (or queue, or slots) runs hot thus halves its
// concurrency in a few readings and wins it back one slot a reading, and
// the job latencies no longer move it.
//
// # Load signal and overload
//
// A LoadSignal is read every LoadConfig.Every on the owner goroutine; the
// value is clamped to [0, 1], and a reading that errs, is NaN or panics is
// skipped, the last good one staying in force. A reading L ≥ Threshold
// (default 0.9) is overloaded until a reading falls below it. While
// overloaded, OverloadDefer admits nothing (the pending jobs' reason is
// overloaded; running jobs go on), OverloadRefuse refuses submissions
// (RefusalError, reason overloaded, ErrOverloaded) and admits the queue as
// usual, OverloadObserve changes nothing. The overload acts on the next
// reading after the load rises, at most Every late: it holds new work
// before the queue and the service collapse, not after. Built-ins:
// QueueLength(n) = min(1, pending/n); WorkerUtilisation() = busy worker
// slots / registered slots, or running / C without workers; MaxOf(a, b…)
// = the highest good reading of several, overloaded when any of them is.
//
// # Weighted fair share
//
// Admitting a job of cost c (its stated tokens, or the learned estimate)
// charges its key c / w, w being the key's weight (KeyWeights, 1 by
// default). The key's accumulated cost is its virtual time: keys are served
// lowest first, so over any period in which keys a and b both have work
// waiting, each receives service (in cost) at the rate that keeps
// cost_a / w_a and cost_b / w_b level — in the ratio w_a : w_b, within one
// job's cost. This is weighted fair queuing with the key as the flow and
// the weight in place of a priority's inverse.
//
// In the default mode the tier rule makes a Priority do double duty: it
// orders tiers and caps them. With foreground at Priority(40) and background at Priority(10), no
// more than 10 slots ever hold background work, so foreground work arriving
// on a saturated scheduler finds a free slot as soon as the global cap leaves
// one, however much background work waits.
//
// Conflict groups are symmetric by construction: two types conflict on an id
// exactly when they name the same non-empty group, so no type can forget to
// list another. With g = t.ConflictGroup and i the job's id, the (g, i) is
// free for
//
//	an exclusive job (ConflictExclusive): running(g, i) = 0
//	a shared job (ConflictShared):        exclusive running(g, i) = 0, and no
//	                                      exclusive job of (g, i) that arrived
//	                                      earlier is pending, unless it waits
//	                                      on its own
//
// The second clause of the shared rule is writer preference, as in
// a readers–writer lock: an exclusive job waiting for (g, i) is passed only by shared
// jobs that arrived before it, so it starts at the latest when those end and
// a slot is free for it. A pending exclusive job that waits on its own — its
// group is paused, it waits out a deferral or a retry backoff, no registered
// worker slot takes its type — holds no shared job back: it could do so for
// as long as it waits.
//
// Usage keeps the running counts and reports, for each start and finish,
// which limits it filled or freed (a Transition). The core uses those to
// switch tiers and types off and on in the pending index and to wake the
// jobs parked on a conflict key, instead of re-examining every pending job.
//
// # Aging: base and effective priority
//
// Without aging a job's priority is its type's. With WithAging, a job that
// has waited w (its aging clock; it stands still while its group is paused)
// competes at the effective priority
//
//	e(w) = base                                                   w ≤ grace
//	e(w) = min(base + ⌊(w − grace) / interval⌋ · step, ceiling)    w > grace
//
// and never below base. The effective priority orders dispatch; the base
// priority keeps deciding which tier's cap the job counts against. So an
// aged background job is dispatched ahead of fresh foreground work when a
// slot frees, but never pushes the background tier past its cap: aging moves
// a job up the queue, not into another tier's slots.
//
// The effective priority is computed from the submission time when needed,
// never stored. Jobs of one type wait in arrival order, so the oldest is the
// most aged: the pending index keeps each (type, key, group) lane in the
// aging band of its head and moves a lane up when its head crosses a band
// boundary, found with one heap of boundary times — no timer per job and no
// scan of the jobs (package queue).
//
// Inherited priority. A job submitted with InheritPriority from inside a
// running job gets a floor f, the effective priority its parent was
// admitted at, and competes at max(f, e(w)): work a job spawns is as urgent
// as the job itself, and it still ages from its own submission. Its base
// priority — its type's — keeps deciding the tier it counts against, so an
// inherited priority, like an aged one, moves a job up the queue but never
// into another tier's slots. The index keeps such jobs in a variant of
// their type's queue per floor, in their base priority's level: the same
// tier switch and type switch cover them, and the variant orders them at
// max(f, band priority).
//
// Bound. A job of base priority b reaches the target T — the urgent
// threshold if set, else the ceiling — after
//
//	MaxWait(b) = grace + ⌈(T − b) / step⌉ · interval
//
// after which it is dispatched ahead of every younger job of priority ≤ T
// as soon as a slot of its tier (and group) frees: its worst-case wait is
// MaxWait(b) plus the time until such a slot frees.
//
// # Groups: weights, minimums, limits, urgency
//
// A job belongs to at most one group (InGroup); jobs without one form the
// group "". With any group option, the global cap C is split among the
// groups with work by AllocateSlots (below) into allocations alloc(G); a
// group that runs its allocation waits (group_limit) while others use
// theirs. Allocations are recomputed when a group's demand (pending +
// running) crosses what it holds — while a group has more work than slots,
// its exact backlog does not change any share — and when weights change or
// a group is paused or resumed; not on every dispatch. A paused group's
// demand counts as 0, so its share goes to the others.
//
// Urgency is where aging and groups meet: a job whose effective priority has
// reached the urgent threshold may start past its group's allocation —
// borrowing a slot that frees elsewhere — but never past its group's limit,
// its type's or tier's cap, the global cap or a conflict. Starved work thus
// gets through however the weights are set, and the weights still hold for
// everything else.
//
// # Slot allocation
//
// With group weights configured, AllocateSlots splits the global cap C among
// the job groups, each allocation computed from scratch. For a group i
// with weight wᵢ ≥ 1, minimum mᵢ, limit lᵢ (0 = none) and demand dᵢ (its
// pending plus running jobs; 0 for a paused group):
//
//	uᵢ = min(dᵢ, lᵢ, C)          usable slots (lᵢ dropped when 0)
//	μᵢ = min(mᵢ, uᵢ)             the minimum, never more than i can use
//	hᵢ = uᵢ − μᵢ                 headroom above the minimum
//	R  = C − Σ μᵢ                what the weights share
//
// Minimums come first: each group gets μᵢ. The weights then share R, added
// on top of the minimums, work-conserving: a group drained or at its limit
// keeps only its headroom, and what it cannot use goes to the others, again
// by weight. In exact arithmetic that is water filling: the level λ solves
//
//	Σ min(hᵢ, wᵢ·λ) = R          (no solution when Σ hᵢ ≤ R: every group
//	qᵢ = min(hᵢ, wᵢ·λ)            gets uᵢ and C − Σ uᵢ slots stay idle)
//
// and qᵢ is group i's exact share beyond its minimum. It is the fixed point
// of the obvious steps, share by weight, clip to demand and limit,
// redistribute the excess, repeated until no slot is left or every group is
// full. A group is saturated (qᵢ = hᵢ) when hᵢ ≤ wᵢ·λ. λ is found in
// passes: at the current level λ = R′/W′, R′ being what the saturated
// groups left and W′ the weight of the others, every group with hᵢ ≤ wᵢ·λ
// saturates. Saturating raises λ, so a saturated group stays saturated; the
// passes end when one saturates none (at most one pass per group, a few in
// practice), and the time is O(n · passes).
//
// Rounding happens once, at the end, by the largest remainder (Hamilton's
// method). Saturated shares are integers; the others are qᵢ = wᵢ·R′/W′, all
// over the common denominator W′. Each group gets ⌊qᵢ⌋, and the
// k = R′ − Σ ⌊qᵢ⌋ slots left go one each to the k largest remainders
// wᵢ·R′ mod W′ (selected in linear expected time, not sorted). Equal
// remainders go to the group holding fewer slots (μᵢ + ⌊qᵢ⌋), for which the
// slot is the larger relative gain: both have the same claim to it, so it
// goes where it narrows the gap between groups. Then names break ties,
// ascending, so the jobs without a group, named "", come first; then input
// positions (names should be unique). The arithmetic is integer
// (128-bit products), so equal fractions tie exactly and no float rounding
// decides a slot. Since an unsaturated qᵢ is strictly below the integer hᵢ,
// ⌈qᵢ⌉ ≤ hᵢ: rounding never breaks a limit and nothing is clipped after it.
// The result:
//
//	slotsᵢ ∈ μᵢ + {⌊qᵢ⌋, ⌈qᵢ⌉}    within one slot of the exact fair share
//	slotsᵢ ≤ uᵢ                   never past demand or limit
//	Σ slotsᵢ = min(C, Σ uᵢ)       idle slots only when every group is full
//
// It depends on the set of groups only, not their order. Rounding in every
// redistribution round instead compounds the rounds' errors: a group
// rounded up in one round can be rounded up again in the next and end more
// than a slot above its share (a test shows one at 5 for an exact 3.5).
//
// An example: C = 16, A with w 3, l 12, d 50,000; B with w 1, l 6,
// m 2, d 200. μ_B = 2, R = 14, h_A = 12, h_B = 4; at λ = 14/4 neither
// saturates (12 > 10.5, 4 > 3.5), so q_A = 10.5, q_B = 3.5. The floors give
// 10 and 3 and leave one slot; the remainders tie at ½, and B, holding 5
// slots to A's 10, takes it: A 10, B 6. Names alone would
// decide by spelling ("A" < "B" gives A 11, B 5; "s3://b2-backup" <
// "s3://prod" gives A 10, B 6 by luck); counting the minimum inside the
// weighted share (C by weight, then raise B to 2) would give A 12, B 4,
// while the minimum is added on top. With B at 3 jobs: u_B = 3,
// h_B = 1 ≤ 3.5 saturates B at 3; then λ = 13/3 and h_A = 12 ≤ 13
// saturates A at its limit 12; 1 slot stays idle.
//
// Demand counts every pending job of a group, including jobs that cannot
// start now: held by its rate limit, a conflict, a type's cap. Such a group
// holds slots it cannot use, so the scheduler lends them (work
// conservation): when a dispatch finds free slots and no pending job that
// may start within the allocations, the groups may run up to their limits
// for the rest of that dispatch. Allocations do not move — a group that can
// run again takes the next free slot, as its share says — and no running job
// is preempted: a lent slot returns when its job ends.
//
// Minimums are guaranteed whenever Σ μᵢ ≤ C, which validation ensures by
// rejecting configured minimums that sum over capacity. Should they not
// fit, C is apportioned in proportion to the μᵢ by the same rounding, each
// group getting at most its μᵢ, and nothing goes by weight.
//
// Raising a group's weight never lowers its slots: its exact share can only
// grow and the others' only shrink, so its remainder cannot fall out of the
// k largest. Raising C can cost a group one slot, never more (Hamilton's
// Alabama paradox, bounded by the quota property above). Weights are used
// exactly while the bit lengths of the largest and of the number of groups
// add up to at most 63 (any weight below 2⁵⁵ with fewer than 256 groups);
// beyond that they are shifted right together until their sum fits, their
// ratios kept approximately.
//
// # Linear scoring
//
// With ScoreConfig (fairsched.WithScoring) dispatch orders waiting jobs by
// a score that is a line in the time a job has waited, a, in whole seconds:
//
//	score(a) = base + slope·a
//	base     = W_p·p + B_r/n + [on-demand] B_o
//	slope    = W_a + [on-demand] W_o
//
// p is the job's effective priority (its type's, or the floor it
// inherited), n the number of free worker slots that take its type (the
// term is absent for a type without workers), and on-demand work is work a
// caller waits for (RunSync). The defaults: W_p = 1024,
// W_a = 16/s, B_r = 500, B_o = 4096, W_o = 32/s. The highest score goes
// first; equal scores go to the key with the lower accumulated cost, then
// to the earlier arrival. Every cap, conflict, group allocation, tier share
// and limit applies to the job chosen exactly as without scoring.
//
// Crossover. A job of class a that has waited a seconds outscores a fresh
// job of class b once base_a + slope_a·a ≥ base_b, that is after
//
//	a* = ⌈(base_b − base_a) / slope_a⌉ seconds
//
// (ScoreConfig.Crossover). A priority gap g costs g·W_p/W_a = 64·g seconds
// with the defaults: a priority-0 job passes a fresh priority-5 job after
// 320s (priority 0, the lowest business priority, registers with
// scoring; its tier has no cap of its own). A fresh on-demand job of the same priority leads by B_o, which
// takes B_o/W_a = 256s to close. Two queued jobs of one priority never
// cross — their lines are parallel, and the older is always ahead — so
// starvation is bounded by the crossover against the highest class that
// keeps arriving fresh: the ratio W_p/W_a is the knob. On-demand jobs
// gain W_a + W_o = 48/s, so a waiting on-demand job pulls away from queued
// ones of its priority; a queued job still overtakes a *fresh* on-demand
// one after 256s, however many keep coming. The rarity term is at most B_r
// (one free slot): worth B_r/W_a = 31.25s of waiting, it lets work that few
// slots can run take a slot that frees without starving the rest.
//
// Cost. Every job of a class — same type, same priority floor, same mode —
// has the same base and slope, so the order within a class never changes
// as time passes: it is arrival order (by the second), then key cost. The
// queue keeps one heap per class ordered that way, and a dispatch scores
// the head of each class: O(classes + log n) per admission, never a pass
// over the pending jobs. The rarity term changes only with the free slots
// of a type, which the worker pool counts per type in O(1).
//
// # Policy and workloads
//
// Policy is the scheduling settings as one value (tiers, tenant and key
// limits, key weights, types, groups, rate limits, workloads), which a
// running core replaces whole or not at all. Workloads match a job's
// Labels as Kubernetes set-based selectors do: every requirement of a
// rule must hold; In needs the label with one of the values, NotIn holds
// without the label or with none of them, Exists and DoesNotExist test
// the key alone. The first rule that holds applies; it fills what the job
// did not set itself (tokens, queue timeout, fairness key from a label,
// its tier: Usage.AtTier gives the job a slot of its type in that tier). CompileWorkloads sorts each value set once, so matching
// is one pass over the rules at most — per requirement a map lookup and,
// for a set, a binary search — with no allocation.
package policy
