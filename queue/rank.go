package queue

import (
	"cmp"
	"slices"
	"time"
)

// Rank is where a pending job stands in the caller's rank order: higher
// Prio first, then lower Cost, then lower Seq.
type Rank struct {
	Prio float64
	Cost time.Duration
	Seq  uint64
}

func (a Rank) before(b Rank) bool {
	if a.Prio != b.Prio {
		return a.Prio > b.Prio
	}
	if a.Cost != b.Cost {
		return a.Cost < b.Cost
	}
	return a.Seq < b.Seq
}

// Top returns the first n pending jobs in rank order, given each job's rank
// by rank, which must rank every lane's jobs in arrival order — true of
// effective priority and score, since a lane's jobs share a type, a key, a
// group and a floor, and an earlier one has waited longer. It merges the
// lanes instead of looking at every job: one candidate per lane, plus the
// parked and deferred jobs, which wait outside the lanes; O((lanes + parked
// + deferred) + n log lanes). A million jobs in ten thousand lanes cost ten
// thousand looks.
func (q *Queue) Top(n int, rank func(*Job) Rank) []*Job {
	out := make([]*Job, 0, min(n, q.n))
	q.Walk(n, rank, func(j *Job) bool {
		out = append(out, j)
		return true
	})
	return out
}

// laneCursor walks a lane's jobs in arrival order: its FIFO merged with its
// returned jobs (sorted on first use; there are few).
type laneCursor struct {
	l        *lane
	i        int
	returned []*Job
}

func newLaneCursor(l *lane) *laneCursor {
	c := &laneCursor{l: l, i: l.head}
	if len(l.returned) > 0 {
		c.returned = slices.SortedFunc(slices.Values(l.returned), func(a, b *Job) int { return cmp.Compare(a.Seq, b.Seq) })
	}
	return c
}

// next returns the lane's next job, nil after the last.
func (c *laneCursor) next() *Job {
	for c.i < len(c.l.fifo) && !c.l.holds(c.i) {
		c.i++
	}
	var f *Job
	if c.i < len(c.l.fifo) {
		f = c.l.fifo[c.i]
	}
	if len(c.returned) > 0 && (f == nil || c.returned[0].Seq < f.Seq) {
		f, c.returned = c.returned[0], c.returned[1:]
		return f
	}
	if f != nil {
		c.i++
	}
	return f
}

type topCand struct {
	rank Rank
	job  *Job
	cur  *laneCursor // nil for a job outside the lanes
}

type topHeap []topCand

func (h topHeap) Len() int           { return len(h) }
func (h topHeap) Less(i, j int) bool { return h[i].rank.before(h[j].rank) }
func (h topHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *topHeap) Push(x any)        { *h = append(*h, x.(topCand)) }
func (h *topHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
