// Package costmodel keeps the two numbers cost-based fair queuing runs on:
// how expensive a job is expected to be, and how much each fairness key has
// consumed so far.
//
// It is a part of the scheduler's inside: programs use the root package,
// github.com/fairsched/fairsched, which sets the model through its options
// (key weights, idle expiry) and never needs this one directly.
//
// # Cost estimates (EMA)
//
// The cost of a job is the wall time it holds a slot. For every (type, id)
// the scheduler keeps an exponential moving average of the observed wall
// time:
//
//	estimate₀ = DefaultCost of the type                (first sight)
//	estimateₙ = α · observedₙ + (1 − α) · estimateₙ₋₁    (after each run)
//
// α (WithCostSmoothing, default 0.3) trades reaction speed for stability: a
// single outlier moves the estimate by α of its deviation, and after k runs
// of a steady cost c the remaining error is (1 − α)ᵏ · |estimate₀ − c|, about
// 17% after five runs at α = 0.3. Every run updates the estimate, whether the
// job succeeded, failed or panicked: a failing job still held its slot.
//
// # Accumulated cost (virtual time)
//
// Each fairness key has an accumulated cost V(k). Admitting a job adds its
// current estimate, divided by the key's weight (1 unless WithKeyWeight sets
// one), to V(k) at once (not at completion), so a key that has just been
// given an expensive job yields to the others immediately. The dispatcher
// prefers the key with the smallest V: V plays the role of the virtual
// finish time of weighted fair queuing.
//
// A key is active while it has pending or running jobs. When a key becomes
// active, new or back from being idle, it starts at
//
//	V(k) = max( V(k), min{ V(j) : j active } )
//
// (the minimum is the floor; the last such minimum when no key is active; a
// key never seen has V(k) = 0). This is the start-tag rule of start-time fair
// queuing: an idle key is advanced to the system's virtual time, never moved
// down. A newcomer therefore starts level with the least-served active key:
// it cannot jump ahead of every waiting client with a fresh zero counter, and
// an idle key gathers no credit it could later spend in a burst. A returning
// key keeps its history: a client that sends one request at a time, and so is
// idle between its requests, is not forgiven what it consumed, which would
// let it take far more than its share from a backlogged client. Its history
// lasts until the key has been idle for the TTL and is forgotten (see
// Expiry); after that it is a newcomer again.
//
// The bound. Let cA be the largest charge of key A (a job's cost divided by
// A's weight) and cB that of key B. While A is active, V(A) ≥ floor, and a
// job of A is admitted before a pending job of B only when V(A) ≤ V(B) (same
// priority; ties by arrival). So, whether A is backlogged or closed-loop,
// over any interval in which B is backlogged
//
//	charged(A) − charged(B) ≤ cA + cB
//
// — a closed-loop key gets at most one of its own jobs plus one of B's ahead
// of a backlogged key, however long they run; without the max above, A would
// restart at the floor after every job and be ahead by one job per request.
//
// The floor never decreases (a key joins at or above it, charges only add,
// and a leaving key can only raise the minimum), so these values only grow —
// until they near overflow. They are int64 nanoseconds, and a key weighted
// 1e-6 running a job that states a year of tokens would pass 2^63 at once.
// Two bounds keep them finite and ordered: one admission charges at most
// policy.MaxCharge (2^56 ns, about 2.3 years), and once the floor passes
// RebaseAt (2^62 ns) Rebase lowers every key's cost by the floor, which keeps
// every difference between active keys — all that orders them — and sends
// idle keys below the floor to 0, where a join would raise them to the floor
// anyway. Saturating instead would tie every key at the ceiling for good.
// Rebasing is O(keys) and, as the floor rises at most MaxCharge per charge
// of the least served key, happens at most once per 64 charges of every
// active key; with realistic costs, never (146 years of charged cost).
//
// # Expiry
//
// Keys idle and estimates unused for the TTL (WithIdleExpiry, default 10m) are
// dropped by Evict, which the scheduler calls on a periodic tick of TTL/4: an
// entry lives between TTL and 1.25·TTL after its last use. Both tables keep
// their entries in least-recently-used order, so a tick costs O(1) plus the
// number of entries it drops. Active keys never expire.
package costmodel
