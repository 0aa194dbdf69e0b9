package costmodel

import (
	"container/list"
	"math"
	"time"

	"github.com/fairsched/fairsched/internal/shrink"
)

// EstimateKey identifies the work whose cost is learned: one id of one type.
type EstimateKey struct {
	Type string
	ID   string
}

type estimate struct {
	key      EstimateKey
	cost     time.Duration
	lastUsed time.Time
}

// Estimates is the table of learned job costs. Not safe for concurrent use.
type Estimates struct {
	alpha float64
	byKey map[EstimateKey]*list.Element // of *estimate
	peak  shrink.Peak                   // byKey's largest length since it was rebuilt
	lru   list.List                     // front = least recently used
}

// NewEstimates returns an empty table with smoothing factor alpha in (0, 1].
func NewEstimates(alpha float64) *Estimates {
	return &Estimates{alpha: alpha, byKey: map[EstimateKey]*list.Element{}}
}

// Cost returns the current estimate for k, or def for a key never seen (or
// expired). It marks k as used at now.
func (e *Estimates) Cost(k EstimateKey, def time.Duration, now time.Time) time.Duration {
	el, ok := e.byKey[k]
	if !ok {
		return def
	}
	est := el.Value.(*estimate)
	est.lastUsed = now
	e.lru.MoveToBack(el)
	return est.cost
}

// Observe folds one observed wall time into the estimate of k, starting from
// prior when k has no estimate, and returns the new estimate.
func (e *Estimates) Observe(k EstimateKey, observed, prior time.Duration, now time.Time) time.Duration {
	el, ok := e.byKey[k]
	if !ok {
		el = e.lru.PushBack(&estimate{key: k, cost: prior})
		e.byKey[k] = el
		shrink.Note(e.byKey, &e.peak)
	} else {
		e.lru.MoveToBack(el)
	}
	est := el.Value.(*estimate)
	est.cost = Smooth(est.cost, observed, e.alpha)
	est.lastUsed = now
	return est.cost
}

// Smooth returns α·observed + (1−α)·prior, rounded to the nanosecond.
func Smooth(prior, observed time.Duration, alpha float64) time.Duration {
	return time.Duration(math.Round(alpha*float64(observed) + (1-alpha)*float64(prior)))
}

// Evict drops estimates unused since before now − ttl and returns how many.
func (e *Estimates) Evict(now time.Time, ttl time.Duration) int {
	n := 0
	for el := e.lru.Front(); el != nil; el = e.lru.Front() {
		est := el.Value.(*estimate)
		if now.Sub(est.lastUsed) < ttl {
			break
		}
		e.lru.Remove(el)
		delete(e.byKey, est.key)
		n++
	}
	e.byKey = shrink.Map(e.byKey, &e.peak)
	return n
}

// Len returns the number of estimates held.
func (e *Estimates) Len() int { return len(e.byKey) }

// Each calls fn for every estimate, least recently used first.
func (e *Estimates) Each(fn func(k EstimateKey, cost time.Duration)) {
	for el := e.lru.Front(); el != nil; el = el.Next() {
		est := el.Value.(*estimate)
		fn(est.key, est.cost)
	}
}

// EachRecent calls fn for the n most recently used estimates, most recent
// first: O(n).
func (e *Estimates) EachRecent(n int, fn func(k EstimateKey, cost time.Duration)) {
	for el := e.lru.Back(); el != nil && n > 0; el, n = el.Prev(), n-1 {
		est := el.Value.(*estimate)
		fn(est.key, est.cost)
	}
}

// Put sets the estimate of k to cost, used at now: estimates restored from
// a store.
func (e *Estimates) Put(k EstimateKey, cost time.Duration, now time.Time) {
	el, ok := e.byKey[k]
	if !ok {
		el = e.lru.PushBack(&estimate{key: k})
		e.byKey[k] = el
		shrink.Note(e.byKey, &e.peak)
	} else {
		e.lru.MoveToBack(el)
	}
	est := el.Value.(*estimate)
	est.cost, est.lastUsed = cost, now
}
