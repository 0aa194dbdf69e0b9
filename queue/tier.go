package queue

import "github.com/fairsched/fairsched/policy"

// BestOf returns the next job of tier p — the head of the tier's best open
// lane — whether or not the tier is blocked, or nil when none of its types
// is eligible. Held lanes (group, tenant) and blocked types are not seen.
// The core asks it for a tier the rules favour (preemption, a starvation
// window): O(1) besides fixing a lane whose key cost moved.
func (q *Queue) BestOf(p policy.Priority) *Job {
	lv := q.byPrio[p]
	if lv == nil {
		return nil
	}
	var l *lane
	if len(lv.types) > 0 {
		tq := lv.types[0]
		l = tq.topLane()
		for !l.fresh() { // stale cost: move it down, look again
			tq.bands[l.band].fix(l.idx)
			tq.settle()
			tq = lv.types[0]
			l = tq.topLane()
		}
	}
	// A lane its group held may run again once the group is open (has
	// room), as in Best.
	for _, g := range q.open {
		if g.paused || g.nheld == 0 || !q.hasRoom(g) {
			continue
		}
		if c := q.bestHeld(g, l, lv); c != nil {
			l = c
		}
	}
	if l == nil {
		return nil
	}
	return l.front()
}

// TierBlocked reports whether tier p is out of dispatch (BlockTier).
func (q *Queue) TierBlocked(p policy.Priority) bool {
	lv := q.byPrio[p]
	return lv != nil && lv.blocked
}
