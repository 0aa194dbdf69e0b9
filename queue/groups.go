package queue

import (
	"time"

	"github.com/fairsched/fairsched/policy"
)

// Groups. A job may belong to a group. A group's jobs are held out of
// dispatch together, lane by lane, for two reasons: the group runs as many
// jobs as it is allocated (the caller holds the lane of the job it could not
// admit, and releases the group's held lanes when it may run more), or the
// group is paused (every lane, and the aging clocks of its jobs stand
// still). Lanes are per (type, key, group), so holding a group touches no
// other group's jobs. A held lane still ages; once its head is urgent it is
// offered back through ReleaseUrgent.

// Group is the queue's record of one group.
type Group struct {
	Name        string
	lanes       []*lane // the group's lanes that hold jobs
	held        []*lane // of them, those held for the allocation
	paused      bool
	pausedAt    time.Time
	pausedTotal time.Duration // over the pauses that ended
}

// addHeld lists lane l among g's held lanes.
func (g *Group) addHeld(l *lane) {
	l.heldIdx = len(g.held)
	g.held = append(g.held, l)
}

// removeHeld takes lane l off g's held lanes.
func (g *Group) removeHeld(l *lane) {
	last := len(g.held) - 1
	g.held[l.heldIdx] = g.held[last]
	g.held[l.heldIdx].heldIdx = l.heldIdx
	g.held[last] = nil
	g.held = g.held[:last]
	l.heldIdx = -1
}

// Group returns the record of group name, creating it.
func (q *Queue) Group(name string) *Group {
	g := q.groups[name]
	if g == nil {
		g = &Group{Name: name}
		q.groups[name] = g
	}
	return g
}

// Paused reports whether the group is paused.
func (g *Group) Paused() bool { return g.paused }

// Hold takes the lane of j, whose group has reached its allocation, out of
// dispatch until ReleaseGroup returns it. The lane keeps aging, and returns
// by itself once its head is urgent (AgingConfig.UrgentThreshold).
func (q *Queue) Hold(j *Job) {
	l := j.lane
	if l == nil || l.held != holdNone {
		return
	}
	l.tq.take(l)
	l.tq.settle()
	l.held = holdLimit
	l.group.addHeld(l)
	q.rehold(l)
}

// rehold brings a held lane up to date after its head or its age changed:
// its band, its next promotion, whether it is urgent.
func (q *Queue) rehold(l *lane) {
	l.band = q.bandOfLane(l)
	prio := q.effectiveOf(l)
	q.schedule(l)
	if q.aging != nil && q.aging.Urgent(policy.Priority(prio)) && !l.urgentListed {
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
func (q *Queue) effectiveOf(l *lane) int {
	if q.aging == nil {
		return int(l.tq.level.p)
	}
	return int(q.effective(l.tq.level.p, l.band))
}

// unhold returns a lane held for its group's allocation to dispatch.
func (q *Queue) unhold(l *lane) {
	l.group.removeHeld(l)
	l.held = holdNone
	q.place(l)
}

// ReleaseGroup returns g's held lanes to dispatch: g may run more. All of
// them return, not only the one with the group's best job: that job may
// still be kept back by a conflict or a type or tier cap, and the slot must
// then go to the group's next job.
func (q *Queue) ReleaseGroup(g *Group) {
	for len(g.held) > 0 && !g.paused {
		q.unhold(g.held[len(g.held)-1])
	}
}

// Pause takes every lane of g out of dispatch and stops its jobs' aging
// clocks, at the time set by At.
func (q *Queue) Pause(g *Group) {
	if g.paused {
		return
	}
	g.paused, g.pausedAt = true, q.now
	for _, l := range g.lanes {
		if l.idx >= 0 {
			l.tq.take(l)
			l.tq.settle()
		}
		if l.held == holdLimit {
			g.removeHeld(l)
		}
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
	for _, l := range g.lanes {
		l.held = holdNone
		q.place(l)
	}
}
