package costmodel

import (
	"time"

	"github.com/fairsched/fairsched/internal/shrink"
	"github.com/fairsched/fairsched/policy"
)

type account struct {
	key  string
	cost time.Duration
	// ordered is the cost the active heap orders the account by: a lower
	// bound of cost, brought up to date only when the account reaches the
	// top (see Floor), so a charge costs O(1).
	ordered  time.Duration
	jobs     int // pending + running
	heapIdx  int // position in the active heap, -1 when idle
	lastUsed time.Time
	// Links of the idle list, least recently used first.
	prev, next *account
	idle       bool
}

// Ledger holds the accumulated cost (virtual time) of every fairness key. Not
// safe for concurrent use.
type Ledger struct {
	accounts map[string]*account
	peak     shrink.Peak // accounts' largest length since it was rebuilt
	active   activeHeap  // keys with jobs, by accumulated cost
	idle     account     // sentinel of the idle list: idle.next is the oldest
	nidle    int         // keys in the idle list
	floor    time.Duration
	// maxIdle bounds the idle keys (0: no bound); forget is told of each
	// key the bound drops (BoundIdle).
	maxIdle int
	forget  func(key string)
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger {
	l := &Ledger{accounts: map[string]*account{}}
	l.idle.prev, l.idle.next = &l.idle, &l.idle
	return l
}

// pushIdle makes a the most recently used idle key; past the bound, the
// least recently used goes (never a itself: it is the newest).
func (l *Ledger) pushIdle(a *account) {
	a.prev, a.next = l.idle.prev, &l.idle
	a.prev.next, l.idle.prev = a, a
	a.idle = true
	l.nidle++
	for l.maxIdle > 0 && l.nidle > l.maxIdle {
		l.drop(l.idle.next, l.forget)
	}
}

// drop forgets idle key a, telling forget (if not nil).
func (l *Ledger) drop(a *account, forget func(key string)) {
	l.unlinkIdle(a)
	delete(l.accounts, a.key)
	if forget != nil {
		forget(a.key)
	}
}

func (l *Ledger) unlinkIdle(a *account) {
	a.prev.next, a.next.prev = a.next, a.prev
	a.prev, a.next, a.idle = nil, nil, false
	l.nidle--
}

// BoundIdle keeps at most max idle keys (0: no bound): past it, a key that
// becomes idle pushes out the least recently used one, which is forgotten
// as Evict forgets an expired key (forget, if not nil, is told) — it
// starts again at the floor if it comes back. Keys made fresh per request
// would otherwise be kept for a whole TTL.
func (l *Ledger) BoundIdle(max int, forget func(key string)) {
	l.maxIdle, l.forget = max, forget
}

// Join records one more pending job of key at now. A key that was idle (or
// never seen) is first advanced to the floor, the minimum accumulated cost
// of the active keys, if it is below it; a key above the floor keeps its
// own cost (start-time fair queuing: an idle key is never moved down, so a
// client that waits for each answer before sending the next is not forgiven
// its history between two requests). It returns the key's accumulated cost.
func (l *Ledger) Join(key string, now time.Time) time.Duration {
	a := l.accounts[key]
	if a == nil {
		a = &account{key: key, heapIdx: -1}
		l.accounts[key] = a
		shrink.Note(l.accounts, &l.peak)
	}
	if a.jobs == 0 {
		if a.idle {
			l.unlinkIdle(a)
		}
		a.cost = max(a.cost, l.Floor())
		a.ordered = a.cost
		l.active.push(a)
	}
	a.jobs++
	a.lastUsed = now
	return a.cost
}

// Raise raises the accumulated cost of active key key to v if it is
// lower, and returns its cost: a key that joins may be placed later than
// the floor (hierarchical shares stagger a tenant's keys), never earlier.
func (l *Ledger) Raise(key string, v time.Duration) time.Duration {
	a := l.accounts[key]
	if a == nil || a.jobs == 0 {
		return 0
	}
	a.cost = max(a.cost, v) // the active heap catches up lazily, in Floor
	return a.cost
}

// Leave records that one job of key ended (ran, or left the queue unrun).
// A key left without jobs becomes idle and starts its TTL.
func (l *Ledger) Leave(key string, now time.Time) {
	l.leave(l.accounts[key], now)
}

// AccountRef is the account ChargeRef charged, so that LeaveRef, when the
// charged job ends, takes it back without a lookup: an account with jobs
// is never dropped. The zero value is none.
type AccountRef struct{ a *account }

// LeaveRef is Leave of key, whose account ref is (if not zero).
func (l *Ledger) LeaveRef(ref AccountRef, key string, now time.Time) {
	a := ref.a
	if a == nil || a.jobs == 0 || a.key != key {
		a = l.accounts[key]
	}
	l.leave(a, now)
}

func (l *Ledger) leave(a *account, now time.Time) {
	if a == nil || a.jobs == 0 {
		return
	}
	a.jobs--
	a.lastUsed = now
	if a.jobs > 0 {
		return
	}
	l.Floor() // remember the minimum for keys that arrive when none is active
	l.active.remove(a.heapIdx)
	l.pushIdle(a)
}

// ChargeRef is Charge, and the account charged.
func (l *Ledger) ChargeRef(key string, cost time.Duration) (time.Duration, AccountRef) {
	a := l.accounts[key]
	a.cost = policy.AddSat(a.cost, cost) // the active heap catches up lazily, in Floor
	return a.cost, AccountRef{a}
}

// RebaseAt is the floor past which the ledger lowers every accumulated
// cost by the floor (Rebase): 2^62 ns, about 146 years of cost. A charge is
// at most policy.MaxCharge (2^56 ns), so the active keys' costs stay far
// from overflow while only their differences, which rebasing keeps, order
// them.
const RebaseAt = time.Duration(1) << 62

// Rebase lowers every accumulated cost by the floor once the floor has
// passed RebaseAt, and returns by how much (0 when it has not), so that the
// caller lowers its copies of the costs alike. Costs below the floor
// become 0: a key that joins is raised to the floor anyway. O(keys), once
// per RebaseAt of floor: the floor rises at most MaxCharge per charge of
// its key, so at least 64 charges of every active key lie between two.
func (l *Ledger) Rebase(charged time.Duration) time.Duration {
	if charged < RebaseAt || l.Floor() < RebaseAt {
		return 0 // the floor is at most any active key's cost: the charged one's
	}
	shift := l.floor
	for _, a := range l.accounts {
		a.cost = Lower(a.cost, shift)
		a.ordered = Lower(a.ordered, shift) // monotone: the heap's order holds
	}
	l.floor = 0
	return shift
}

// Lower returns cost − shift, or 0 below it.
func Lower(cost, shift time.Duration) time.Duration {
	if cost <= shift {
		return 0
	}
	return cost - shift
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
//
// Active costs only grow, so the heap may order accounts by stale, lower
// costs: once the top's ordering cost is its real cost, every other account's
// real cost is at least its ordering cost, which is at least the top's.
func (l *Ledger) Floor() time.Duration {
	for len(l.active) > 0 && l.active[0].ordered != l.active[0].cost {
		l.active[0].ordered = l.active[0].cost
		l.active.fix(0)
	}
	if len(l.active) > 0 {
		l.floor = max(l.floor, l.active[0].cost)
	}
	return l.floor
}

// Evict forgets idle keys last used before now − ttl, calling forget (if
// not nil) with each, and returns how many.
func (l *Ledger) Evict(now time.Time, ttl time.Duration, forget func(key string)) int {
	n := 0
	for a := l.idle.next; a != &l.idle; a = l.idle.next {
		if now.Sub(a.lastUsed) < ttl {
			break
		}
		l.drop(a, forget)
		n++
	}
	l.accounts = shrink.Map(l.accounts, &l.peak)
	l.active = shrink.Slice(l.active)
	return n
}

// Len returns the number of keys held, active or idle.
func (l *Ledger) Len() int { return len(l.accounts) }

// Restore sets the accumulated cost of key, idle, as saved by an earlier
// run (its TTL starts at now): a restart does not hand every key a clean
// slate. An active key, or a cost that is not positive, is left alone.
func (l *Ledger) Restore(key string, cost time.Duration, now time.Time) {
	if cost <= 0 {
		return
	}
	a := l.accounts[key]
	if a == nil {
		a = &account{key: key, heapIdx: -1}
		l.accounts[key] = a
		shrink.Note(l.accounts, &l.peak)
	} else if a.jobs > 0 {
		return
	} else if a.idle {
		l.unlinkIdle(a)
	}
	a.cost, a.lastUsed = cost, now
	l.pushIdle(a)
}

// RaiseFloor raises the floor to v if it is lower: after a restore, to the
// least restored cost, so that a new key joins level with the least served
// key of the last run rather than far below all of them.
func (l *Ledger) RaiseFloor(v time.Duration) { l.floor = max(l.floor, v) }

// Costs returns a copy of every key's accumulated cost.
func (l *Ledger) Costs() map[string]time.Duration {
	out := make(map[string]time.Duration, len(l.accounts))
	for k, a := range l.accounts {
		out[k] = a.cost
	}
	return out
}

// activeHeap holds the active accounts, least ordering cost on top. Its
// order only has to find the least cost (Floor), so accounts of equal
// ordering cost stay in any order: no tie-break. Typed rather than
// container/heap: its comparisons and moves inline (a fifth of a RunSync
// decision went to container/heap's interface calls here).
type activeHeap []*account

func (h *activeHeap) push(a *account) {
	a.heapIdx = len(*h)
	*h = append(*h, a)
	h.up(a.heapIdx)
}

// remove takes the account at i out of the heap.
func (h *activeHeap) remove(i int) {
	old := *h
	n := len(old) - 1
	a := old[i]
	if i != n {
		old[i] = old[n]
		old[i].heapIdx = i
	}
	old[n] = nil
	*h = old[:n]
	a.heapIdx = -1
	if i != n {
		h.fix(i)
	}
}

// fix restores the order after the ordering cost at i changed.
func (h activeHeap) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h activeHeap) up(i int) {
	a := h[i]
	for i > 0 {
		p := (i - 1) / 2
		if h[p].ordered <= a.ordered {
			break
		}
		h[i] = h[p]
		h[i].heapIdx = i
		i = p
	}
	h[i] = a
	a.heapIdx = i
}

// down sinks the account at i and reports whether it moved.
func (h activeHeap) down(i0 int) bool {
	a, i, n := h[i0], i0, len(h)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h[r].ordered < h[c].ordered {
			c = r
		}
		if a.ordered <= h[c].ordered {
			break
		}
		h[i] = h[c]
		h[i].heapIdx = i
		i = c
	}
	h[i] = a
	a.heapIdx = i
	return i > i0
}
