package queue

import "github.com/fairsched/fairsched/policy"

// Scoring. With a ScoreConfig the queue orders work by linear score instead
// of by effective priority. A job's score is a line in time:
// base(class) + slope(class)·age, where the class is (type, floor, mode):
// every job of a class has the same base and slope, so within a class the
// order never changes — the earliest arrival scores highest. Ages count
// whole seconds, so jobs of a class that arrive within one second tie and
// go by their key's accumulated cost: a lane orders by (arrival second of
// its head, key cost, arrival), and each type queue variant is one class.
// Best scores the top lane of every class that may run: O(classes), never a
// pass over the pending jobs.

// SetScoring turns scoring on before any type is added. slots returns the
// number of free worker slots that take a type (0 for a type without
// workers): the rarity bonus divides by it.
func (q *Queue) SetScoring(cfg *policy.ScoreConfig, slots func(policy.JobType) int) {
	if len(q.types) > 0 {
		panic("queue: SetScoring after AddType")
	}
	q.score, q.freeSlots = cfg, slots
}

// Score returns the score of pending job j at the time set by At, and
// whether scoring is on.
func (q *Queue) Score(j *Job, base policy.Priority) (float64, bool) {
	if q.score == nil {
		return 0, false
	}
	p := base
	if j.Floored && j.Floor > p {
		p = j.Floor
	}
	return q.score.Score(policy.JobClass{Priority: p, OnDemand: j.OnDemand, CompatibleSlots: q.freeSlots(j.Type)},
		secOf(q.nowNs)-secOf(j.Submitted)), true
}

// scoreOf returns the score of lane l's head.
func (q *Queue) scoreOf(l *lane) float64 {
	tq := l.tq
	p := tq.level.p
	if tq.floored {
		p = tq.floor
	}
	return q.score.Score(policy.JobClass{Priority: p, OnDemand: tq.onDemand, CompatibleSlots: q.freeSlots(tq.t)},
		secOf(q.nowNs)-l.headSec)
}

// bestScored is Best with scoring: the highest-scoring top lane over every
// class in dispatch, then ties by key cost and arrival; the held lanes of
// open groups compete as in Best.
func (q *Queue) bestScored() *Job {
	var best *lane
	var bestScore float64
	for _, lv := range q.levels {
		if lv.blocked {
			continue
		}
		// Every eligible type queue is a candidate: the level's heap order
		// (by effective priority) says nothing about scores.
		for _, tq := range lv.types {
			l := tq.topLane()
			for !l.fresh() { // stale cost: move it down, look again
				tq.bands[l.band].fix(l.idx)
				l = tq.topLane()
			}
			s := q.scoreOf(l)
			if best == nil || s > bestScore || s == bestScore && l.tieBefore(best) {
				best, bestScore = l, s
			}
		}
	}
	if h := q.bestOpen(best); h != nil {
		return h.front()
	}
	if best == nil {
		return nil
	}
	return best.front()
}

// tieBefore breaks a tie of scores: the lower key cost, then the earlier
// arrival. Both costs must be fresh.
func (l *lane) tieBefore(o *lane) bool {
	if l.key.cost != o.key.cost {
		return l.key.cost < o.key.cost
	}
	return l.headSeq < o.headSeq
}
