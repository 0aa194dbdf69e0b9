// Package policy holds the scheduler's configuration types, their
// validation, and the admission rules: whether one more job may start now.
//
// # Admission rules
//
// A pending job of type t, tier p = t.Priority, on job id i may start when
// all of these hold, checked in this order (the first that fails is the
// Reason the job waits):
//
//	running            < MaxConcurrency (global)     else global_limit  (no cap when unset)
//	running(tier p)    < int(p)                      else tier_limit
//	running(type t)    < t.MaxConcurrency            else type_limit    (no cap when 0)
//	running(group g, i) = 0 for g = t.ConflictGroup  else conflict      (never when g = "")
//
// The tier rule makes a Priority do double duty: it orders tiers and caps
// them. With foreground at Priority(40) and background at Priority(10), no
// more than 10 slots ever hold background work, so foreground work arriving
// on a saturated scheduler finds a free slot as soon as the global cap leaves
// one, however much background work waits.
//
// Conflict groups are symmetric by construction: two types conflict on an id
// exactly when they name the same non-empty group, so no type can forget to
// list another.
//
// Usage keeps the running counts and reports, for each start and finish,
// which limits it filled or freed (a Transition). The core uses those to
// switch tiers and types off and on in the pending index and to wake the
// jobs parked on a conflict key, instead of re-examining every pending job.
package policy
