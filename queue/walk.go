package queue

import "container/heap"

// Walk visits pending jobs in rank order, like Top, but asks rank for a
// lane's next job only after visit has seen the one before it: a caller
// that charges a visited job's key (an estimate playing dispatch forward)
// ranks that key's next job with the charge. It stops when visit returns
// false or after limit jobs. O(lanes + parked + deferred + limit log
// lanes).
func (q *Queue) Walk(limit int, rank func(*Job) Rank, visit func(*Job) bool) {
	var h topHeap
	for _, k := range q.keys {
		for _, l := range k.lanes {
			c := topCand{cur: newLaneCursor(l)}
			if c.job = c.cur.next(); c.job != nil {
				c.rank = rank(c.job)
				h = append(h, c)
			}
		}
	}
	for _, ph := range q.parked {
		for _, j := range ph.ixheap {
			h = append(h, topCand{job: j, rank: rank(j)})
		}
	}
	for _, d := range q.deferred {
		h = append(h, topCand{job: d.j, rank: rank(d.j)})
	}
	heap.Init(&h)
	for n := 0; n < limit && len(h) > 0; n++ {
		c := &h[0]
		if !visit(c.job) {
			return
		}
		if c.cur != nil {
			if c.job = c.cur.next(); c.job != nil {
				c.rank = rank(c.job)
				heap.Fix(&h, 0)
				continue
			}
		}
		heap.Pop(&h)
	}
}

// Before reports whether a ranks before b: higher Prio, then lower Cost,
// then lower Seq.
func (a Rank) Before(b Rank) bool { return a.before(b) }
