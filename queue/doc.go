// Package queue is the index of pending jobs. It answers one question fast:
// which job should be admitted next, among the jobs whose limits are not
// full?
//
// It is a part of the scheduler's inside: programs use the root package,
// github.com/fairsched/fairsched, and never this one directly.
//
// The order is (higher effective priority, lower accumulated cost of the
// job's fairness key, earlier arrival). Sorting all pending jobs on every
// admission costs O(n log n); this index costs O(levels + log n) per
// admission and never visits a job that cannot run.
//
// # Structure
//
//	Queue
//	 └─ level, one per base priority, highest first     (skipped while its tier is full)
//	     └─ heap of type queues, by their best lane        (a type leaves while at its cap)
//	         └─ aging bands, one heap of lanes each        (one band without aging)
//	             └─ lane, one per (type, key, group),     ordered by (key cost, head arrival)
//	                 └─ the lane's jobs in arrival order   (a FIFO plus a small heap of returned jobs)
//
// Every job of one lane shares its key's accumulated cost and its type's
// base priority, so within a lane arrival order is the whole order and the
// head represents the lane. A key's cost only grows while the key has
// pending jobs, so a charge does not touch the key's lanes: a lane's stored
// cost is a lower bound of its real one, and the lane is brought up to date
// when it reaches the top of its heap. A key's record and its lanes outlive
// its jobs, so a client that comes and goes costs no allocation; the caller
// drops them with ForgetKey when the key expires.
//
// # Aging and inherited priority
//
// The head of a lane is its most aged job, so the lane sits in the band of
// its head's effective priority. One heap of lanes ordered by the time
// their head next rises a band (At) moves them up: no timer per job, one
// lane move per band climbed. A type queue orders its lanes by band, then
// as above; the level orders its type queues by the effective priority of
// their best band. Best compares the best candidate of every level, since
// an aged lower level may outrank a higher one: O(levels).
//
// Jobs with a priority floor (inherited from the job that submitted them)
// wait in a variant of their type queue per floor, in the same level; a
// variant gathers every band at or below the floor into one, since those
// jobs all compete at the floor.
//
// With scoring (SetScoring) the queue has no aging bands, and RunSync work
// waits in an on-demand variant of its type queue: each variant is one
// class of the score (type, floor, mode), its lanes ordered by the second
// their head arrived in, then key cost, then arrival — an order the
// passing of time never changes, since every job of a class gains the same
// points per second. Best scores the top lane of every class in dispatch
// (O(classes)).
//
// # Blocked jobs wait where their blocker wakes them
//
//   - A full tier switches its level off; the release that frees the tier
//     switches it on. O(1).
//   - A type at its cap, or whose worker slots are all busy (or none is
//     registered), leaves its level's heap (with its variants); the release
//     that frees the type or one of its slots, or the registration of a
//     slot, puts it back. O(log types).
//   - A job whose conflict key (group, id) holds it back is parked on that
//     key, shared jobs apart from exclusive ones (the caller decides which
//     is which, and when the rule may have let them go): Release returns
//     the exclusive ones, ReleaseShared the shared ones that arrived before
//     a given job. O(log n) per job, and a job is touched again only when it
//     reaches the head of its lane.
//   - A group that runs its allocation has the lane that reached the top
//     (or that its last admission came from) held: out of dispatch, in a
//     heap per (group, type) in dispatch order. While the group may run
//     more, Best weighs the best held lane of its types and tiers that are
//     not full against dispatch: O(open groups · types), and the lanes stay
//     held. A paused group's lanes all leave dispatch, and their aging and
//     their deadlines stand still, watched ones (Watch: what
//     waits on a pending job with a time to live of its own) included:
//     O(lanes of the group), and O(log groups) for the deadlines.
//
// The global cap is the caller's check: Best is simply not asked while it is
// full.
package queue
