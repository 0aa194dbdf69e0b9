package queue

// Tenants. A fairness key may be limited in how many of its jobs run at
// once (the caller's rule). A job whose key runs its limit has its lane
// held for the key: out of dispatch, listed with the key, until the key may
// run more (ReleaseKey) and every such lane of it returns. A key has few
// lanes — one per (type, group) it uses — so returning them all is cheap,
// and the held lanes keep aging meanwhile.

// HoldForKey takes the lane of j, whose fairness key runs its limit, out of
// dispatch (or off its group's held lanes) until ReleaseKey.
func (q *Queue) HoldForKey(j *Job) {
	l := j.lane
	if l == nil || l.held == holdTenant || l.held == holdPaused {
		return
	}
	if l.held == holdNone {
		l.tq.take(l)
		l.tq.settle()
	} else {
		q.unlist(l)
	}
	l.held = holdTenant
	k := l.key
	l.tidx = len(k.held)
	k.held = append(k.held, l)
}

// ReleaseKey returns the lanes held for fairness key key to dispatch: the
// key may run more.
func (q *Queue) ReleaseKey(key string) {
	k := q.keys[key]
	if k == nil {
		return
	}
	for len(k.held) > 0 {
		l := k.held[len(k.held)-1]
		q.unlist(l)
		l.held = holdNone
		q.place(l)
	}
}

// unlist takes held lane l off the list that holds it: its group's held
// lanes or its key's.
func (q *Queue) unlist(l *lane) {
	switch l.held {
	case holdLimit:
		l.group.removeHeld(l)
	case holdTenant:
		k := l.key
		last := len(k.held) - 1
		k.held[l.tidx] = k.held[last]
		k.held[l.tidx].tidx = l.tidx
		k.held[last] = nil
		k.held = k.held[:last]
		l.tidx = -1
	}
}

// update brings lane l up to date after its head changed or its head aged,
// wherever it waits.
func (q *Queue) update(l *lane) {
	switch l.held {
	case holdNone:
		q.place(l)
	case holdLimit:
		q.rehold(l)
	case holdTenant:
		l.band = q.bandOfLane(l) // it ages all the same
		q.schedule(l)
	}
}
