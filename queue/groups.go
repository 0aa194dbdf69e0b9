package queue

import (
	"time"

	"github.com/fairsched/fairsched/internal/shrink"
	"github.com/fairsched/fairsched/policy"
)

// Groups. A job may belong to a group. A group's lanes are held out of
// dispatch for two reasons: the group runs as many jobs as it is allocated
// (the caller holds the lane of a job it could not admit), or the group is
// paused (every lane, and the aging clocks of its jobs stand still). Lanes
// are per (type, key, group), so holding a group touches no other group's
// jobs. A held lane still ages; once its head is urgent it is offered back
// through ReleaseUrgent.
//
// When a group may run more (ReleaseGroup), its held lanes do not go back
// to dispatch: Best weighs the best held lane of each group with room (an
// open group) against the best lane in dispatch. Putting them back would
// cost two heap moves per lane, and a group with hundreds of held lanes and
// one free slot would put them all back, then hold them all again one by one
// as they reach the top. Held lanes wait in one heap per (group, type),
// ordered as in dispatch, so lanes of a full type or tier are skipped as a
// whole; a job admitted or parked from a held lane leaves it held, with its
// next job at the head.

// Group is the queue's record of one group.
type Group struct {
	Name        string
	Ref         any        // belongs to the caller
	lanes       []*lane    // the group's lanes that hold jobs
	held        []*heldSet // held lanes by type; sets stay once made
	nheld       int        // lanes held for the allocation, over all sets
	open        bool       // in Queue.open: may run more, has held lanes
	paused      bool
	pausedAt    time.Time
	pausedTotal time.Duration        // over the pauses that ended
	expiring    ixheap[*expiringJob] // its pending jobs with a deadline (expiry.go)
	eidx        int                  // position in Queue.expiring; -1 when not there
}

// heldSet holds a group's held lanes of one type in dispatch order.
type heldSet struct {
	tq    *typeQueue
	lanes ixheap[*heldLane]
}

// heldLane is a lane as an element of a heldSet: ordered by aging band
// (highest first), then as in dispatch. Its type is fixed by the set, so the
// band orders effective priorities.
type heldLane lane

func (h *heldLane) before(o *heldLane) bool {
	if h.band != o.band {
		return h.band > o.band
	}
	return (*lane)(h).before((*lane)(o))
}
func (h *heldLane) setIndex(i int) { h.heldIdx = i }

// setOf returns g's held set of type queue tq, creating it.
func (g *Group) setOf(tq *typeQueue) *heldSet {
	for _, s := range g.held {
		if s.tq == tq {
			return s
		}
	}
	s := &heldSet{tq: tq}
	g.held = append(g.held, s)
	return s
}

// refresh brings the stale costs of the set's lanes up to their keys'. A
// set is visited when its group may run more, and by then most of its keys
// have been charged: a small set is refreshed whole and reordered in O(n),
// a large one top first, each stale top moved down until the top is fresh.
func (s *heldSet) refresh() {
	if len(s.lanes) <= 64 {
		for _, h := range s.lanes {
			(*lane)(h).fresh()
		}
		s.lanes.init()
		return
	}
	for !(*lane)(s.lanes[0]).fresh() {
		s.lanes.fix(0)
	}
}

// addHeld lists lane l among g's held lanes.
func (g *Group) addHeld(l *lane) {
	g.setOf(l.tq).lanes.push((*heldLane)(l))
	g.nheld++
}

// removeHeld takes lane l off g's held lanes.
func (g *Group) removeHeld(l *lane) {
	g.setOf(l.tq).lanes.remove(l.heldIdx)
	g.nheld--
}

// Group returns the record of group name, creating it.
func (q *Queue) Group(name string) *Group {
	g := q.groups[name]
	if g == nil {
		g = &Group{Name: name, eidx: -1}
		q.groups[name] = g
		shrink.Note(q.groups, &q.gpeak)
	}
	return g
}

// Paused reports whether the group is paused.
func (g *Group) Paused() bool { return g.paused }

// Hold takes the lane of j, whose group has reached its allocation, out of
// dispatch until its group may run more (ReleaseGroup, Settle). The lane
// keeps aging, and returns by itself once its head is urgent
// (AgingConfig.UrgentThreshold; see ReleaseUrgent).
func (q *Queue) Hold(j *Job) {
	l := j.lane
	if l == nil || l.held != holdNone {
		return
	}
	// The lane comes from dispatch, where its band and next promotion are
	// up to date (At ran before Best): it keeps both.
	l.tq.take(l)
	l.tq.settle()
	l.held = holdLimit
	l.group.addHeld(l)
	q.listUrgent(l)
}

// Admit removes j, which the caller admits. With fills, j's group has no
// room left after j: the rest of j's lane is held at once, unless its new
// head is urgent (it may borrow a slot, see ReleaseUrgent). It returns
// the record of j's key, for SetKeyCostOf.
func (q *Queue) Admit(j *Job, fills bool) KeyRef {
	l, k := j.lane, j.key
	q.Remove(j)
	if fills && l != nil && l.live > 0 && l.held == holdNone && l.group != nil &&
		!(q.aging != nil && q.aging.Urgent(policy.Priority(q.effectiveOf(l)))) {
		q.Hold(l.front())
	}
	return KeyRef{k}
}

// rehold brings a held lane up to date after its head or its age changed:
// its band and place among the held lanes, its next promotion, whether it
// is urgent.
func (q *Queue) rehold(l *lane) {
	l.band = q.bandOfLane(l)
	l.group.setOf(l.tq).lanes.fix(l.heldIdx)
	q.schedule(l)
	q.listUrgent(l)
}

// listUrgent lists held lane l for ReleaseUrgent if its head is urgent.
func (q *Queue) listUrgent(l *lane) {
	if q.aging != nil && !l.urgentListed && q.aging.Urgent(policy.Priority(q.effectiveOf(l))) {
		l.urgentListed = true
		q.urgent = append(q.urgent, l)
	}
}

// ReleaseUrgent returns to dispatch every held lane whose head is urgent and
// whose group may lend it a slot (mayBorrow), keeping the others listed. An
// urgent job may start past its group's allocation, so its lane must not
// wait for the allocation to free: the caller asks before each dispatch.
func (q *Queue) ReleaseUrgent(mayBorrow func(*Group) bool) {
	kept := q.urgent[:0]
	for _, l := range q.urgent {
		if l.held != holdLimit || !q.aging.Urgent(policy.Priority(q.effectiveOf(l))) {
			l.urgentListed = false
			continue
		}
		if mayBorrow(l.group) {
			l.urgentListed = false
			q.unhold(l)
			continue
		}
		kept = append(kept, l)
	}
	clear(q.urgent[len(kept):])
	q.urgent = kept
}

// effectiveOf returns the effective priority of lane l's head.
func (q *Queue) effectiveOf(l *lane) int { return int(l.tq.effective(l.band)) }

// unhold returns a lane held for its group's allocation to dispatch.
func (q *Queue) unhold(l *lane) {
	l.group.removeHeld(l)
	l.held = holdNone
	// Its band and next promotion were kept up to date while held (rehold).
	l.cost = l.key.cost
	l.tq.put(l, l.band)
	l.tq.settle()
}

// ReleaseGroup tells the queue that g may run more jobs: from now on, until
// g has no room (SetRoom's check) or no held lane, Best weighs g's best held
// lane against the lanes in dispatch. The held lanes stay where they are.
func (q *Queue) ReleaseGroup(g *Group) {
	if g.open || g.nheld == 0 || g.paused {
		return
	}
	g.open = true
	q.open = append(q.open, g)
}

// SetRoom gives the queue the caller's check of whether a group may start
// one more job (that is not urgent). Groups with held lanes are open only
// while it holds.
func (q *Queue) SetRoom(hasRoom func(*Group) bool) { q.hasRoom = hasRoom }

// bestOpen returns the best held lane of the open groups — those that may
// run more — among types and tiers that are not full, closing the groups
// that have no room or no held lane left. O(open groups · their types).
//
// bound, if not nil, is the best lane in dispatch (its cost fresh): only a
// held lane that beats it is of interest, and a held set whose top cannot
// beat it even at its stale cost (a lower bound) is not refreshed.
func (q *Queue) bestOpen(bound *lane) *lane {
	if len(q.open) == 0 {
		return nil
	}
	var best *lane
	kept := q.open[:0]
	for _, g := range q.open {
		if g.paused || g.nheld == 0 || !q.hasRoom(g) {
			g.open = false
			continue
		}
		kept = append(kept, g)
		if c := q.bestHeld(g, bound, nil); c != nil {
			best, bound = c, c
		}
	}
	clear(q.open[len(kept):])
	q.open = kept
	return best
}

// bestHeld returns g's best held lane among types and tiers that are not
// full if it beats bound (any, when bound is nil), or nil. With only, it
// looks at that tier's lanes alone, blocked or not (as BestOf does).
func (q *Queue) bestHeld(g *Group, bound *lane, only *level) *lane {
	var best *lane
	for _, s := range g.held {
		if len(s.lanes) == 0 || s.tq.blocked {
			continue
		}
		if only != nil && s.tq.level != only || only == nil && s.tq.level.blocked {
			continue
		}
		top := (*lane)(s.lanes[0])
		if bound != nil && !q.beats(top, top.cost, bound) {
			continue // not even at its stored cost, a lower bound
		}
		if !top.fresh() {
			s.refresh()
			top = (*lane)(s.lanes[0])
		}
		if bound == nil || q.better(top, bound) {
			best, bound = top, top
		}
	}
	return best
}

// better reports whether lane a's head goes before lane b's in dispatch
// order: effective priority, key cost, arrival. Both costs must be fresh.
func (q *Queue) better(a, b *lane) bool { return q.beats(a, a.key.cost, b) }

// beats reports whether lane a's head, at key cost costA, goes before lane
// b's (at b's key's cost).
func (q *Queue) beats(a *lane, costA time.Duration, b *lane) bool {
	if q.score != nil {
		if sa, sb := q.scoreOf(a), q.scoreOf(b); sa != sb {
			return sa > sb
		}
	} else if pa, pb := q.effectiveOf(a), q.effectiveOf(b); pa != pb {
		return pa > pb
	}
	if cb := b.key.cost; costA != cb {
		return costA < cb
	}
	return a.headSeq < b.headSeq
}

// Pause takes every lane of g out of dispatch and stops its jobs' aging
// clocks, at the time set by At.
func (q *Queue) Pause(g *Group) {
	if g.paused {
		return
	}
	g.paused, g.pausedAt = true, q.now
	q.regroup(g) // its deadlines stand still
	for _, l := range g.lanes {
		if l.idx >= 0 {
			l.tq.take(l)
			l.tq.settle()
		}
		q.unlist(l)
		l.held = holdPaused
		q.unschedule(l)
	}
}

// Resume restarts g's aging clocks where they stopped and returns its lanes
// to dispatch.
func (q *Queue) Resume(g *Group) {
	if !g.paused {
		return
	}
	g.pausedTotal += q.now.Sub(g.pausedAt)
	g.paused = false
	q.regroup(g) // its deadlines moved back by the pause
	for _, l := range g.lanes {
		l.held = holdNone
		q.place(l)
	}
}
