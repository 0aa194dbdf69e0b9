package costmodel

import (
	"hash/maphash"
	"math"
	"time"

	"github.com/fairsched/fairsched/internal/shrink"
)

// EstimateKey identifies the work whose cost is learned: one id of one type.
type EstimateKey struct {
	Type string
	ID   string
}

// estimate is one learned cost. It does not keep its hash (computed again
// to delete it): 8 bytes more moved it from the 80-byte size class to the
// 96-byte one, where the evicted estimates kept for reuse shared spans
// with other objects and held 4 MB in use after every key was evicted
// (TestMemoryReturnsAfterEviction).
type estimate struct {
	key        EstimateKey
	cost       time.Duration
	lastUsed   time.Time
	prev, next *estimate // in Estimates.lru; next also links Estimates.free
}

// Estimates is the table of learned job costs. Not safe for concurrent use.
//
// The estimates are in a map for lookup and in an intrusive list, least
// recently used first, for eviction: one allocation per new key (none
// when an evicted estimate is there to reuse), where a container/list
// element and its value took two — a job with an id never seen pays it.
// The map is keyed by a 64-bit hash of the key, the key kept in its
// estimate: among a hundred thousand ids a lookup compares words, not
// strings stored elsewhere in memory. Two keys of one hash take turns in
// the slot: the later replaces the earlier's estimate, as if evicted.
type Estimates struct {
	alpha float64
	byKey map[uint64]*estimate
	peak  shrink.Peak // byKey's largest length since it was rebuilt
	lru   estimate    // the list's sentinel: lru.next is the least recently used
	free  *estimate   // evicted estimates, linked by next, for reuse
	nfree int         // at most maxFree
	max   int         // the most estimates held; the oldest goes first
}

// maxFree bounds the evicted estimates kept for reuse: enough for a steady
// stream of new ids between two evictions, not a copy of a past peak.
const maxFree = 4096

// NewEstimates returns an empty table with smoothing factor alpha in (0, 1]
// that holds at most limit estimates (at least 1).
func NewEstimates(alpha float64, limit int) *Estimates {
	e := &Estimates{alpha: alpha, byKey: map[uint64]*estimate{}, max: max(limit, 1)}
	e.lru.prev, e.lru.next = &e.lru, &e.lru
	return e
}

// unlink takes est out of the list.
func (e *Estimates) unlink(est *estimate) {
	est.prev.next, est.next.prev = est.next, est.prev
	est.prev, est.next = nil, nil
}

// pushBack makes est the most recently used.
func (e *Estimates) pushBack(est *estimate) {
	last := e.lru.prev
	est.prev, est.next = last, &e.lru
	last.next, e.lru.prev = est, est
}

// used marks est as the most recently used.
func (e *Estimates) used(est *estimate) {
	e.unlink(est)
	e.pushBack(est)
}

// seed seeds the hashes of keys: one per process.
var seed = maphash.MakeSeed()

// hashOf is the hash of k that keys Estimates.byKey (a variable: a test
// makes keys collide).
var hashOf = func(k EstimateKey) uint64 { return maphash.Comparable(seed, k) }

// find returns k's estimate, if held.
func (e *Estimates) find(h uint64, k EstimateKey) (*estimate, bool) {
	est, ok := e.byKey[h]
	if !ok || est.key != k {
		return nil, false
	}
	return est, true
}

// add makes a new estimate of k (hash h), the most recently used; a full
// table gives up its least recently used one for it (no allocation), and
// so does another key of k's hash.
func (e *Estimates) add(h uint64, k EstimateKey) *estimate {
	est := e.free
	if other := e.byKey[h]; other != nil {
		est = other
		e.unlink(est)
		*est = estimate{key: k}
	} else if len(e.byKey) >= e.max {
		est = e.lru.next
		e.unlink(est)
		delete(e.byKey, hashOf(est.key))
		*est = estimate{key: k}
	} else if est != nil {
		e.free, e.nfree = est.next, e.nfree-1
		*est = estimate{key: k}
	} else {
		est = &estimate{key: k}
	}
	e.pushBack(est)
	e.byKey[h] = est
	shrink.Note(e.byKey, &e.peak)
	return est
}

// Cost returns the current estimate for k, or def for a key never seen (or
// expired). It marks k as used at now.
func (e *Estimates) Cost(k EstimateKey, def time.Duration, now time.Time) time.Duration {
	c, _ := e.CostRef(k, def, now)
	return c
}

// Peek returns the current estimate for k, or def, without marking k as
// used: a look that must not keep the estimate alive.
func (e *Estimates) Peek(k EstimateKey, def time.Duration) time.Duration {
	if est, ok := e.find(hashOf(k), k); ok {
		return est.cost
	}
	return def
}

// EstimateRef is where CostRef found a key's estimate, so that ObserveRef,
// at the end of the job it was looked up for, finds it again without
// hashing the key and probing the table (two of a job's map lookups were
// this one). The zero value is none.
type EstimateRef struct{ est *estimate }

// CostRef is Cost, and where the estimate was found.
func (e *Estimates) CostRef(k EstimateKey, def time.Duration, now time.Time) (time.Duration, EstimateRef) {
	est, ok := e.find(hashOf(k), k)
	if !ok {
		return def, EstimateRef{}
	}
	est.lastUsed = now
	e.used(est)
	return est.cost, EstimateRef{est}
}

// ObserveRef is Observe, starting at ref: while its estimate is still k's,
// no lookup; else Observe. An estimate out of the table has no key (free,
// or dropped by Evict), and one in it is the only estimate of its key.
func (e *Estimates) ObserveRef(ref EstimateRef, k EstimateKey, observed, prior time.Duration, now time.Time) time.Duration {
	est := ref.est
	if est == nil || est.key != k { // none, evicted, or another key's now
		return e.Observe(k, observed, prior, now)
	}
	e.used(est)
	est.cost = Smooth(est.cost, observed, e.alpha)
	est.lastUsed = now
	return est.cost
}

// Observe folds one observed wall time into the estimate of k, starting from
// prior when k has no estimate, and returns the new estimate.
func (e *Estimates) Observe(k EstimateKey, observed, prior time.Duration, now time.Time) time.Duration {
	h := hashOf(k)
	est, ok := e.find(h, k)
	if !ok {
		est = e.add(h, k)
		est.cost = prior
	} else {
		e.used(est)
	}
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
	for est := e.lru.next; est != &e.lru; est = e.lru.next {
		if now.Sub(est.lastUsed) < ttl {
			break
		}
		e.unlink(est)
		delete(e.byKey, hashOf(est.key))
		if e.nfree < maxFree {
			*est = estimate{next: e.free}
			e.free, e.nfree = est, e.nfree+1
		} else {
			*est = estimate{} // no key: a reference to it is stale (ObserveRef)
		}
		n++
	}
	e.byKey = shrink.Map(e.byKey, &e.peak)
	return n
}

// Len returns the number of estimates held.
func (e *Estimates) Len() int { return len(e.byKey) }

// Each calls fn for every estimate, least recently used first.
func (e *Estimates) Each(fn func(k EstimateKey, cost time.Duration)) {
	for est := e.lru.next; est != &e.lru; est = est.next {
		fn(est.key, est.cost)
	}
}

// EachRecent calls fn for the n most recently used estimates, most recent
// first: O(n).
func (e *Estimates) EachRecent(n int, fn func(k EstimateKey, cost time.Duration)) {
	for est := e.lru.prev; est != &e.lru && n > 0; est, n = est.prev, n-1 {
		fn(est.key, est.cost)
	}
}

// Put sets the estimate of k to cost, used at now: estimates restored from
// a store.
func (e *Estimates) Put(k EstimateKey, cost time.Duration, now time.Time) {
	h := hashOf(k)
	est, ok := e.find(h, k)
	if !ok {
		est = e.add(h, k)
	} else {
		e.used(est)
	}
	est.cost, est.lastUsed = cost, now
}
