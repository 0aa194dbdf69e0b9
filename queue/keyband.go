package queue

import "time"

// A band of a type queue is a heap of keyBands, not of lanes: one entry per
// fairness key with lanes in the band, holding those lanes by head arrival.
// With groups a key has a lane per (type, group), hundreds with hundreds of
// groups; a charge to the key leaves one stale entry per band instead of
// one per lane, so refreshing it at the top costs one heap fix, not one per
// lane. Without groups a key has one lane per type and an entry holds it
// alone.

// keyBand holds the lanes of one key in one band of one type queue.
type keyBand struct {
	key   *keyRec
	tq    *typeQueue
	band  int
	cost  time.Duration        // the key's cost when last refreshed: a lower bound
	lanes ixheap[*arrivalLane] // by head arrival
	idx   int                  // in tq.bands[band]
	kpos  int                  // in key.bands
}

// before orders the entries of a band: lower key cost, then earlier head.
func (k *keyBand) before(o *keyBand) bool {
	if k.cost != o.cost {
		return k.cost < o.cost
	}
	return k.lanes[0].headSeq < o.lanes[0].headSeq
}
func (k *keyBand) setIndex(i int) { k.idx = i }

// head returns the entry's best lane.
func (k *keyBand) head() *lane { return (*lane)(k.lanes[0]) }

// fresh brings the stored cost of entry k, at the top of its band, up to its
// key's and reports whether it was so already. Once the top entry is fresh
// it is the true minimum: every other stored cost is at most its entry's
// real cost, and at least the top's.
func (k *keyBand) fresh() bool {
	if k.cost == k.key.cost {
		return true
	}
	k.cost = k.key.cost
	return false
}

// arrivalLane is a lane as an element of a keyBand.
type arrivalLane lane

func (l *arrivalLane) before(o *arrivalLane) bool { return l.headSeq < o.headSeq }
func (l *arrivalLane) setIndex(i int)             { l.idx = i }

// entry returns key k's entry in band b of tq, making it (from the queue's
// free list) if the key has no lane there. A key has few entries at a time
// (its types times the bands its lanes' heads are in), so a scan finds it.
func (q *Queue) entry(k *keyRec, tq *typeQueue, b int) *keyBand {
	for _, e := range k.bands {
		if e.tq == tq && e.band == b {
			return e
		}
	}
	var e *keyBand
	if n := len(q.freeBands); n > 0 {
		e = q.freeBands[n-1]
		q.freeBands[n-1] = nil
		q.freeBands = q.freeBands[:n-1]
	} else {
		e = &keyBand{}
	}
	*e = keyBand{key: k, tq: tq, band: b, cost: k.cost, lanes: e.lanes[:0], idx: -1, kpos: len(k.bands)}
	k.bands = append(k.bands, e)
	return e
}

// release returns an emptied entry to the free list.
func (q *Queue) release(e *keyBand) {
	k := e.key
	last := len(k.bands) - 1
	k.bands[e.kpos] = k.bands[last]
	k.bands[e.kpos].kpos = e.kpos
	k.bands[last] = nil
	k.bands = k.bands[:last]
	e.key, e.tq = nil, nil
	q.freeBands = append(q.freeBands, e)
}
