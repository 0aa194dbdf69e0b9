package costmodel

import (
	"container/heap"
	"container/list"
	"time"
)

type account struct {
	key      string
	cost     time.Duration
	jobs     int // pending + running
	heapIdx  int // position in the active heap, -1 when idle
	idle     *list.Element
	lastUsed time.Time
}

// Ledger holds the accumulated cost (virtual time) of every fairness key. Not
// safe for concurrent use.
type Ledger struct {
	accounts map[string]*account
	active   activeHeap // keys with jobs, by accumulated cost
	idle     list.List  // idle keys, least recently used first
	floor    time.Duration
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger { return &Ledger{accounts: map[string]*account{}} }

// Join records one more pending job of key at now. A key that was idle (or
// never seen) first starts over at the minimum accumulated cost of the
// active keys. It returns the key's accumulated cost.
func (l *Ledger) Join(key string, now time.Time) time.Duration {
	a := l.accounts[key]
	if a == nil {
		a = &account{key: key, heapIdx: -1}
		l.accounts[key] = a
	}
	if a.jobs == 0 {
		if a.idle != nil {
			l.idle.Remove(a.idle)
			a.idle = nil
		}
		a.cost = l.Floor()
		heap.Push(&l.active, a)
	}
	a.jobs++
	a.lastUsed = now
	return a.cost
}

// Leave records that one job of key ended (ran, or left the queue unrun).
// A key left without jobs becomes idle and starts its TTL.
func (l *Ledger) Leave(key string, now time.Time) {
	a := l.accounts[key]
	if a == nil || a.jobs == 0 {
		return
	}
	a.jobs--
	a.lastUsed = now
	if a.jobs > 0 {
		return
	}
	l.Floor() // remember the minimum for keys that arrive when none is active
	heap.Remove(&l.active, a.heapIdx)
	a.idle = l.idle.PushBack(a)
}

// Charge adds cost to key's accumulated cost and returns the new value. The
// key must have joined.
func (l *Ledger) Charge(key string, cost time.Duration) time.Duration {
	a := l.accounts[key]
	a.cost += cost
	if a.heapIdx >= 0 {
		heap.Fix(&l.active, a.heapIdx)
	}
	return a.cost
}

// Cost returns key's accumulated cost (0 for an unknown key).
func (l *Ledger) Cost(key string) time.Duration {
	if a := l.accounts[key]; a != nil {
		return a.cost
	}
	return 0
}

// Floor returns the minimum accumulated cost over active keys, or the last
// such minimum when none is active. It never decreases.
func (l *Ledger) Floor() time.Duration {
	if len(l.active) > 0 {
		l.floor = max(l.floor, l.active[0].cost)
	}
	return l.floor
}

// Evict forgets idle keys last used before now − ttl and returns how many.
func (l *Ledger) Evict(now time.Time, ttl time.Duration) int {
	n := 0
	for el := l.idle.Front(); el != nil; el = l.idle.Front() {
		a := el.Value.(*account)
		if now.Sub(a.lastUsed) < ttl {
			break
		}
		l.idle.Remove(el)
		delete(l.accounts, a.key)
		n++
	}
	return n
}

// Len returns the number of keys held, active or idle.
func (l *Ledger) Len() int { return len(l.accounts) }

// Costs returns a copy of every key's accumulated cost.
func (l *Ledger) Costs() map[string]time.Duration {
	out := make(map[string]time.Duration, len(l.accounts))
	for k, a := range l.accounts {
		out[k] = a.cost
	}
	return out
}

type activeHeap []*account

func (h activeHeap) Len() int { return len(h) }
func (h activeHeap) Less(i, j int) bool {
	if h[i].cost != h[j].cost {
		return h[i].cost < h[j].cost
	}
	return h[i].key < h[j].key
}
func (h activeHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx, h[j].heapIdx = i, j
}
func (h *activeHeap) Push(x any) {
	a := x.(*account)
	a.heapIdx = len(*h)
	*h = append(*h, a)
}
func (h *activeHeap) Pop() any {
	old := *h
	a := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	a.heapIdx = -1
	return a
}
