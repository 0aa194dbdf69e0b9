package queue

import "time"

// Groups. A job may belong to a group. A group's jobs are held out of
// dispatch together, lane by lane, for two reasons: the group runs as many
// jobs as it is allocated (the caller holds the lane of the job it could not
// admit, and releases the group when it may run more), or the group is
// paused (every lane, and the aging clocks of its jobs stand still). Lanes
// are per (type, key, group), so holding a group touches no other group's
// jobs.

// Group is the queue's record of one group.
type Group struct {
	Name        string
	lanes       []*lane // the group's lanes that hold jobs
	heldLanes   int     // of them, held for the allocation
	paused      bool
	pausedAt    time.Time
	pausedTotal time.Duration // over the pauses that ended
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
// dispatch until ReleaseGroup. The lane keeps aging, and returns by itself
// once its head is urgent (AgingConfig.UrgentThreshold).
func (q *Queue) Hold(j *Job) {
	l := j.lane
	if l == nil || l.held != holdNone {
		return
	}
	l.tq.take(l)
	l.tq.settle()
	l.held = holdLimit
	l.group.heldLanes++
	q.schedule(l)
}

// unhold returns a lane held for its group's allocation to dispatch.
func (q *Queue) unhold(l *lane) {
	l.held = holdNone
	l.group.heldLanes--
	q.place(l)
}

// ReleaseGroup returns the lanes held for g's allocation to dispatch: g may
// run more jobs.
func (q *Queue) ReleaseGroup(g *Group) {
	if g.heldLanes == 0 || g.paused {
		return
	}
	for _, l := range g.lanes {
		if l.held == holdLimit {
			q.unhold(l)
		}
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
			g.heldLanes--
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
