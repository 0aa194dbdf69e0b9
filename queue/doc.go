// Package queue is the index of pending jobs. It answers one question fast:
// which job should be admitted next, among the jobs whose limits are not
// full?
//
// The order is (higher priority, lower accumulated cost of the job's fairness
// key, earlier arrival). Sorting all pending jobs on every admission costs
// O(n log n); this index costs O(levels + log n) per admission and never
// visits a job that cannot run.
//
// # Structure
//
//	Queue
//	 └─ level, one per priority, highest first          (skipped while its tier is full)
//	     └─ heap of type queues, by their best lane        (a type leaves while at its cap)
//	         └─ heap of lanes, one per (type, key),        ordered by (key cost, head arrival)
//	             └─ the lane's jobs in arrival order       (a FIFO plus a small heap of returned jobs)
//
// Every job of one lane shares its key's accumulated cost, so within a lane
// arrival order is the whole order and the lane's head represents it. A
// change of a key's cost fixes the key's lanes: O(lanes of the key · log n).
// A key's record and its lanes outlive its jobs, so a client that comes and
// goes costs no allocation; the caller drops them with ForgetKey when the
// key expires.
//
// # Blocked jobs wait where their blocker wakes them
//
//   - A full tier switches its level off; the release that frees the tier
//     switches it on. O(1).
//   - A type at its cap leaves its level's heap; the release that frees the
//     type puts it back. O(log types).
//   - A job whose conflict key (group, id) is held by a running job is parked
//     on that key; the release of the key returns every job parked there to
//     its lane. O(log n) per job, and a job is touched again only when it
//     reaches the head of its lane.
//
// The global cap is the caller's check: Best is simply not asked while it is
// full.
package queue
