package costmodel

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func TestSmooth(t *testing.T) {
	for _, tt := range []struct {
		prior, observed time.Duration
		alpha           float64
		want            time.Duration
	}{
		{10 * time.Second, 20 * time.Second, 0.3, 13 * time.Second},
		{10 * time.Second, 0, 0.3, 7 * time.Second},
		{20 * time.Second, 10 * time.Second, 0.3, 17 * time.Second},
		{13 * time.Second, 20 * time.Second, 0.3, 15100 * time.Millisecond},
		{15100 * time.Millisecond, 20 * time.Second, 0.3, 16570 * time.Millisecond},
		{time.Minute, time.Minute, 0.3, time.Minute},
		{10 * time.Second, 20 * time.Second, 1, 20 * time.Second},
		{10 * time.Second, 20 * time.Second, 0.5, 15 * time.Second},
		// Rounded to the nanosecond: 0.3·2 + 0.7·1 = 1.3 → 1, 0.3·4 + 0.7·1 = 1.9 → 2.
		{1, 2, 0.3, 1},
		{1, 4, 0.3, 2},
		// 0.3·3 + 0.7·0 = 0.9 → 1 (rounded, not truncated).
		{0, 3, 0.3, 1},
	} {
		if got := Smooth(tt.prior, tt.observed, tt.alpha); got != tt.want {
			t.Errorf("Smooth(%v, %v, %v) = %v, want %v", tt.prior, tt.observed, tt.alpha, got, tt.want)
		}
	}
}

func TestEstimatesDefaultOnFirstSight(t *testing.T) {
	e := NewEstimates(0.3, 1000)
	k := EstimateKey{"clone", "linux"}
	if got := e.Cost(k, 10*time.Second, t0); got != 10*time.Second {
		t.Errorf("Cost of unseen key = %v, want the default 10s", got)
	}
	if got := e.Cost(k, 3*time.Second, t0); got != 3*time.Second {
		t.Errorf("Cost of unseen key = %v, want the default 3s", got)
	}
	if e.Len() != 0 {
		t.Errorf("Cost created an entry: Len = %d", e.Len())
	}
}

func TestEstimatesObserve(t *testing.T) {
	e := NewEstimates(0.3, 1000)
	k := EstimateKey{"clone", "linux"}
	other := EstimateKey{"repack", "linux"}

	// First observation starts from the prior.
	if got := e.Observe(k, 20*time.Second, 10*time.Second, t0); got != 13*time.Second {
		t.Fatalf("first Observe = %v, want 13s", got)
	}
	if got := e.Cost(k, time.Hour, at(time.Second)); got != 13*time.Second {
		t.Errorf("Cost after Observe = %v, want 13s", got)
	}
	// Later observations fold into the stored estimate; the prior is ignored.
	if got := e.Observe(k, 20*time.Second, time.Hour, at(2*time.Second)); got != 15100*time.Millisecond {
		t.Errorf("second Observe = %v, want 15.1s", got)
	}
	if got := e.Observe(k, 20*time.Second, time.Hour, at(3*time.Second)); got != 16570*time.Millisecond {
		t.Errorf("third Observe = %v, want 16.57s", got)
	}
	// Keys are (type, id): another type on the same id is independent.
	if got := e.Cost(other, 7*time.Second, at(4*time.Second)); got != 7*time.Second {
		t.Errorf("Cost of other type = %v, want default 7s", got)
	}
	if got := e.Observe(other, 0, 10*time.Second, at(5*time.Second)); got != 7*time.Second {
		t.Errorf("Observe of 0 from 10s = %v, want 7s", got)
	}
	var got []string
	e.Each(func(k EstimateKey, c time.Duration) { got = append(got, fmt.Sprintf("%s/%s=%v", k.Type, k.ID, c)) })
	want := []string{"clone/linux=16.57s", "repack/linux=7s"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Each (-want +got):\n%s", diff)
	}
}

func TestEstimatesEvictLRU(t *testing.T) {
	const ttl = 10 * time.Minute
	e := NewEstimates(0.3, 1000)
	a, b, c := EstimateKey{"t", "a"}, EstimateKey{"t", "b"}, EstimateKey{"t", "c"}
	e.Observe(a, time.Second, time.Second, at(0))
	e.Observe(b, time.Second, time.Second, at(time.Minute))
	e.Observe(c, time.Second, time.Second, at(2*time.Minute))
	// a is used (looked up) at 5m: it moves to the back of the LRU.
	e.Cost(a, time.Hour, at(5*time.Minute))

	if n := e.Evict(at(9*time.Minute), ttl); n != 0 {
		t.Errorf("Evict before any TTL elapsed dropped %d", n)
	}
	// At 11m b is exactly ttl old (dropped), c is 9m old, a 6m old.
	if n := e.Evict(at(11*time.Minute), ttl); n != 1 {
		t.Errorf("Evict at 11m dropped %d, want 1", n)
	}
	var keys []EstimateKey
	e.Each(func(k EstimateKey, _ time.Duration) { keys = append(keys, k) })
	if diff := cmp.Diff([]EstimateKey{c, a}, keys); diff != "" {
		t.Errorf("survivors in LRU order (-want +got):\n%s", diff)
	}
	if got := e.Cost(b, 42*time.Second, at(11*time.Minute)); got != 42*time.Second {
		t.Errorf("Cost of evicted key = %v, want the default", got)
	}
	// Observe refreshes c too.
	e.Observe(c, time.Second, time.Second, at(12*time.Minute))
	if n := e.Evict(at(15*time.Minute), ttl); n != 1 || e.Len() != 1 {
		t.Errorf("Evict at 15m dropped %d (Len %d), want a only", n, e.Len())
	}
	if got := e.Cost(c, time.Hour, at(15*time.Minute)); got != time.Second {
		t.Errorf("c survived with %v, want 1s", got)
	}
	if n := e.Evict(at(time.Hour), ttl); n != 1 || e.Len() != 0 {
		t.Errorf("final Evict dropped %d, Len %d", n, e.Len())
	}
	// After eviction the estimate restarts from the prior.
	if got := e.Observe(a, 20*time.Second, 10*time.Second, at(time.Hour)); got != 13*time.Second {
		t.Errorf("Observe after eviction = %v, want 13s", got)
	}
}

func TestLedgerJoinAdvancesToMinimumOfActive(t *testing.T) {
	l := NewLedger()
	if got := l.Join("a", t0); got != 0 {
		t.Fatalf("first key joins at %v, want 0", got)
	}
	l.Charge("a", 10*time.Second)
	if got := l.Join("b", t0); got != 10*time.Second {
		t.Errorf("b joins at %v, want 10s (a's cost)", got)
	}
	if got := l.Charge("b", 5*time.Second); got != 15*time.Second {
		t.Errorf("Charge b = %v, want 15s", got)
	}
	// c joins at the minimum over active keys (a=10), not b's.
	if got := l.Join("c", t0); got != 10*time.Second {
		t.Errorf("c joins at %v, want 10s", got)
	}
	// A second job of an active key does not move it.
	l.Charge("a", 30*time.Second) // a = 40
	if got := l.Join("c", t0); got != 10*time.Second {
		t.Errorf("second Join of c = %v, want unchanged 10s", got)
	}
	want := map[string]time.Duration{"a": 40 * time.Second, "b": 15 * time.Second, "c": 10 * time.Second}
	if diff := cmp.Diff(want, l.Costs()); diff != "" {
		t.Errorf("Costs (-want +got):\n%s", diff)
	}
	if got := l.Floor(); got != 10*time.Second {
		t.Errorf("Floor = %v, want 10s", got)
	}
}

func TestLedgerRejoinKeepsHistoryAboveFloor(t *testing.T) {
	l := NewLedger()
	l.Join("a", t0)
	l.Join("b", t0)
	l.Charge("a", 50*time.Second)
	l.Charge("b", 10*time.Second)
	l.Leave("a", at(time.Second)) // a idle at 50
	if got := l.Cost("a"); got != 50*time.Second {
		t.Errorf("idle a holds %v, want 50s", got)
	}
	// A returning key above the floor (b=10) keeps its own cost: it is
	// never moved down (costmodel/doc.go, start-time FQ).
	if got := l.Join("a", at(2*time.Second)); got != 50*time.Second {
		t.Errorf("a rejoins at %v, want its own 50s", got)
	}
	// b leaves idle at 10, a is charged further; b returns below the floor:
	// advanced to a's 100.
	l.Charge("a", 50*time.Second)
	l.Leave("b", at(3*time.Second))
	if got := l.Join("b", at(4*time.Second)); got != 100*time.Second {
		t.Errorf("b rejoins at %v, want 100s (the floor)", got)
	}
	// A key with a job still counted (running or pending) is not reset.
	l.Charge("b", 100*time.Second) // b = 200
	if got := l.Join("b", at(5*time.Second)); got != 200*time.Second {
		t.Errorf("active b joins again at %v, want its own 200s", got)
	}
	// Once evicted, a key's history is gone: it returns at the floor.
	l.Leave("b", at(6*time.Second))
	l.Leave("b", at(6*time.Second))
	l.Leave("a", at(6*time.Second))
	if n := l.Evict(at(time.Hour), time.Minute, nil); n != 2 {
		t.Fatalf("Evict = %d, want 2", n)
	}
	if got := l.Join("b", at(time.Hour)); got != 100*time.Second {
		t.Errorf("evicted b returns at %v, want the remembered floor 100s", got)
	}
}

func TestLedgerFloorRememberedAndMonotonic(t *testing.T) {
	l := NewLedger()
	if got := l.Floor(); got != 0 {
		t.Fatalf("empty Floor = %v", got)
	}
	l.Join("a", t0)
	l.Join("b", t0)
	l.Charge("a", 10*time.Second)
	l.Charge("b", 20*time.Second)
	l.Leave("a", t0) // the minimum key leaves: floor rises to b's 20
	if got := l.Floor(); got != 20*time.Second {
		t.Errorf("Floor after a left = %v, want 20s", got)
	}
	l.Charge("b", 5*time.Second)
	l.Leave("b", t0) // nobody active: the last minimum (25s) is remembered
	for i, want := range []time.Duration{25 * time.Second, 25 * time.Second} {
		if got := l.Floor(); got != want {
			t.Errorf("Floor #%d with no active key = %v, want %v", i, got, want)
		}
	}
	// A new key starts at the remembered floor, an idle one below it too.
	l.Leave("a", t0) // no-op: a is already idle
	if got := l.Join("c", t0); got != 25*time.Second {
		t.Errorf("new key c joins at %v, want 25s", got)
	}
	if got := l.Join("a", t0); got != 25*time.Second {
		t.Errorf("idle a (10s) rejoins at %v, want 25s", got)
	}
	if got := l.Floor(); got != 25*time.Second {
		t.Errorf("Floor = %v, want 25s", got)
	}
}

func TestLedgerChargeReorders(t *testing.T) {
	l := NewLedger()
	for _, k := range []string{"a", "b", "c"} {
		l.Join(k, t0)
	}
	l.Charge("a", 30*time.Second)
	l.Charge("b", 10*time.Second)
	// c is still 0: the minimum.
	if got := l.Join("d", t0); got != 0 {
		t.Errorf("d joins at %v, want 0 (c)", got)
	}
	l.Charge("c", 40*time.Second)
	l.Charge("d", 35*time.Second)
	// Now b (10) is the minimum.
	if got := l.Join("e", t0); got != 10*time.Second {
		t.Errorf("e joins at %v, want 10s (b)", got)
	}
	l.Charge("b", 50*time.Second)
	l.Charge("e", 50*time.Second)
	// a (30) is the minimum.
	if got := l.Floor(); got != 30*time.Second {
		t.Errorf("Floor = %v, want 30s (a)", got)
	}
}

func TestLedgerLeave(t *testing.T) {
	l := NewLedger()
	l.Leave("ghost", t0) // unknown: no-op
	if l.Len() != 0 {
		t.Fatalf("Leave of an unknown key created it")
	}
	l.Join("a", t0)
	l.Join("a", t0)
	l.Join("b", t0)
	l.Charge("a", 5*time.Second)
	l.Leave("a", t0) // a still has one job: active
	l.Charge("b", 20*time.Second)
	if got := l.Join("c", t0); got != 5*time.Second {
		t.Errorf("c joins at %v, want 5s: a is still active", got)
	}
	l.Leave("a", t0) // a idle now
	l.Leave("a", t0) // extra Leave: no-op
	l.Charge("c", 100*time.Second)
	if got := l.Join("d", t0); got != 20*time.Second {
		t.Errorf("d joins at %v, want 20s (b): idle a no longer counts", got)
	}
	if got := l.Cost("a"); got != 5*time.Second {
		t.Errorf("idle a keeps %v, want 5s", got)
	}
	if got := l.Cost("nobody"); got != 0 {
		t.Errorf("Cost of unknown key = %v", got)
	}
}

func TestLedgerEvict(t *testing.T) {
	const ttl = 10 * time.Minute
	l := NewLedger()
	l.Join("active", t0) // never leaves
	l.Join("a", t0)
	l.Join("b", t0)
	l.Join("c", t0)
	l.Charge("a", 40*time.Second)
	l.Leave("a", at(time.Minute))
	l.Leave("b", at(2*time.Minute))
	l.Leave("c", at(3*time.Minute))
	// b comes back and goes again: its TTL restarts.
	l.Join("b", at(5*time.Minute))
	l.Leave("b", at(6*time.Minute))

	if n := l.Evict(at(10*time.Minute), ttl, nil); n != 0 {
		t.Errorf("Evict at 10m dropped %d", n)
	}
	// a is exactly ttl idle at 11m; c is 8m idle, b 5m.
	if n := l.Evict(at(11*time.Minute), ttl, nil); n != 1 {
		t.Errorf("Evict at 11m dropped %d, want 1 (a)", n)
	}
	want := map[string]time.Duration{"active": 0, "b": 0, "c": 0}
	if diff := cmp.Diff(want, l.Costs()); diff != "" {
		t.Errorf("Costs after evict (-want +got):\n%s", diff)
	}
	if n := l.Evict(at(13*time.Minute), ttl, nil); n != 1 || l.Cost("c") != 0 || l.Len() != 2 {
		t.Errorf("Evict at 13m dropped %d, Len %d, want c only", n, l.Len())
	}
	if n := l.Evict(at(24*time.Hour), ttl, nil); n != 1 || l.Len() != 1 {
		t.Errorf("Evict at 24h dropped %d, Len %d: want b only, the active key stays", n, l.Len())
	}
	// An evicted key that returns is new: it starts at the floor, not at its
	// old (higher) cost.
	if got := l.Join("a", at(24*time.Hour)); got != 0 {
		t.Errorf("evicted a rejoins at %v, want 0", got)
	}
}

func TestLedgerCostsIsACopy(t *testing.T) {
	l := NewLedger()
	l.Join("a", t0)
	l.Charge("a", time.Second)
	l.Costs()["a"] = time.Hour
	if got := l.Cost("a"); got != time.Second {
		t.Errorf("mutating Costs changed the ledger: %v", got)
	}
}

// naiveLedger is the specification of Ledger written out with maps and
// linear scans.
type naiveLedger struct {
	cost     map[string]time.Duration
	jobs     map[string]int
	lastUsed map[string]time.Time
	last     time.Duration // the minimum over active keys when last computed
}

func (n *naiveLedger) minActive() (time.Duration, bool) {
	var m time.Duration
	found := false
	for k, j := range n.jobs {
		if j > 0 && (!found || n.cost[k] < m) {
			m, found = n.cost[k], true
		}
	}
	return m, found
}

func (n *naiveLedger) join(k string, now time.Time) time.Duration {
	if n.jobs[k] == 0 {
		if m, ok := n.minActive(); ok {
			n.last = m
		}
		n.cost[k] = max(n.cost[k], n.last) // an evicted key is back to 0
	}
	n.jobs[k]++
	n.lastUsed[k] = now
	return n.cost[k]
}

func (n *naiveLedger) leave(k string, now time.Time) {
	if n.jobs[k] == 0 {
		return
	}
	if m, ok := n.minActive(); ok {
		n.last = m
	}
	n.jobs[k]--
	n.lastUsed[k] = now
}

func (n *naiveLedger) evict(now time.Time, ttl time.Duration) int {
	c := 0
	for k := range n.cost {
		if n.jobs[k] == 0 && now.Sub(n.lastUsed[k]) >= ttl {
			delete(n.cost, k)
			delete(n.jobs, k)
			delete(n.lastUsed, k)
			c++
		}
	}
	return c
}

func TestLedgerMatchesNaive(t *testing.T) {
	const ttl = time.Minute
	keys := []string{"", "a", "b", "c", "d", "e"}
	for seed := range uint64(100) {
		r := rand.New(rand.NewPCG(seed, 7))
		l := NewLedger()
		n := &naiveLedger{cost: map[string]time.Duration{}, jobs: map[string]int{}, lastUsed: map[string]time.Time{}}
		refs := map[string]AccountRef{} // odd seeds: Charge and Leave by reference
		now := t0
		for op := range 300 {
			now = now.Add(time.Duration(r.IntN(20)) * time.Second)
			k := keys[r.IntN(len(keys))]
			switch r.IntN(4) {
			case 0:
				got, want := l.Join(k, now), n.join(k, now)
				if got != want {
					t.Fatalf("seed %d op %d: Join(%q) = %v, want %v", seed, op, k, got, want)
				}
			case 1:
				if seed%2 == 1 { // by the account charged last, stale or not
					l.LeaveRef(refs[k], k, now)
				} else {
					l.Leave(k, now)
				}
				n.leave(k, now)
			case 2:
				if n.jobs[k] > 0 {
					c := time.Duration(r.IntN(10)) * time.Second
					n.cost[k] += c
					var got time.Duration
					if seed%2 == 1 {
						got, refs[k] = l.ChargeRef(k, c)
					} else {
						got = l.Charge(k, c)
					}
					if got != n.cost[k] {
						t.Fatalf("seed %d op %d: Charge(%q) = %v, want %v", seed, op, k, got, n.cost[k])
					}
				}
			case 3:
				if got, want := l.Evict(now, ttl, nil), n.evict(now, ttl); got != want {
					t.Fatalf("seed %d op %d: Evict = %d, want %d", seed, op, got, want)
				}
			}
			if got := l.Costs(); !maps.Equal(n.cost, got) {
				t.Fatalf("seed %d op %d: costs (-naive +ledger):\n%s", seed, op, cmp.Diff(n.cost, got))
			}
		}
	}
}

// TestLedgerChargeSaturates: charges that would pass the largest Duration
// leave the key there, never wrapped negative — which put it first in the
// fair order and pulled the floor down for every key.
func TestLedgerChargeSaturates(t *testing.T) {
	l := NewLedger()
	l.Join("a", t0)
	l.Join("b", t0)
	l.Charge("a", math.MaxInt64)
	if got := l.Charge("a", math.MaxInt64); got != math.MaxInt64 {
		t.Errorf("a after two huge charges = %v; want the largest Duration", got)
	}
	l.Charge("b", time.Second)
	if l.Cost("a") < l.Cost("b") {
		t.Errorf("a (%v) ranks before b (%v)", l.Cost("a"), l.Cost("b"))
	}
}

// TestEstimatesBounded: a full table drops its least recently used
// estimate for a new one — a Cost or an Observe counts as a use — so ids
// made fresh per job cannot grow it past its bound, and the survivors are
// the recently used ones, oldest first.
func TestEstimatesBounded(t *testing.T) {
	e := NewEstimates(1, 3)
	key := func(id string) EstimateKey { return EstimateKey{"t", id} }
	for i, id := range []string{"a", "b", "c"} {
		e.Observe(key(id), time.Duration(i+1)*time.Second, 0, at(time.Duration(i)*time.Second))
	}
	e.Cost(key("a"), 0, at(4*time.Second)) // a is now the most recent: b goes first
	for i := range 2 {
		e.Observe(key(fmt.Sprint("fresh", i)), time.Minute, 0, at(time.Duration(5+i)*time.Second))
		if e.Len() > 3 {
			t.Fatalf("after %d fresh ids: %d estimates, bound 3", i+1, e.Len())
		}
	}
	type kept struct {
		ID   string
		Cost time.Duration
	}
	var got []kept
	e.Each(func(k EstimateKey, c time.Duration) { got = append(got, kept{k.ID, c}) })
	want := []kept{{"a", time.Second}, {"fresh0", time.Minute}, {"fresh1", time.Minute}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("estimates kept, least recently used first (-want +got):\n%s", diff)
	}
	// A dropped id starts again from the default it is given.
	if c := e.Cost(key("b"), 7*time.Second, at(time.Minute)); c != 7*time.Second {
		t.Errorf("a dropped estimate's cost: %v, want the default 7s", c)
	}
}

// TestLedgerBoundsIdleKeys: past the bound, a key that becomes idle pushes
// out the least recently used idle key — forgotten (forget is told) and
// back at the floor if it returns — while active keys are never counted
// nor dropped.
func TestLedgerBoundsIdleKeys(t *testing.T) {
	l := NewLedger()
	var forgotten []string
	l.BoundIdle(2, func(k string) { forgotten = append(forgotten, k) })
	// "busy" stays active throughout: it holds the floor at 0.
	l.Join("busy", t0)
	for i, k := range []string{"a", "b", "c", "d"} {
		now := at(time.Duration(i) * time.Second)
		l.Join(k, now)
		l.Charge(k, time.Duration(i+1)*time.Second)
		l.Leave(k, now)
	}
	if diff := cmp.Diff([]string{"a", "b"}, forgotten); diff != "" {
		t.Errorf("keys forgotten, oldest first (-want +got):\n%s", diff)
	}
	want := map[string]time.Duration{"busy": 0, "c": 3 * time.Second, "d": 4 * time.Second}
	if diff := cmp.Diff(want, l.Costs()); diff != "" {
		t.Errorf("costs kept (-want +got):\n%s", diff)
	}
	// "a" comes back with no history: at the floor, 0.
	if c := l.Join("a", at(10*time.Second)); c != 0 {
		t.Errorf("a forgotten key rejoins at %v, want the floor 0", c)
	}
	// Using "c" again makes "d" the oldest idle key: "a" leaving pushes it out.
	l.Join("c", at(11*time.Second))
	l.Leave("c", at(11*time.Second))
	l.Leave("a", at(12*time.Second))
	if diff := cmp.Diff([]string{"a", "b", "d"}, forgotten); diff != "" {
		t.Errorf("keys forgotten after reuse (-want +got):\n%s", diff)
	}
}

// TestEstimatesOfCollidingKeys: two keys of one hash never read each
// other's estimate: the later takes the slot as if the earlier were
// evicted, and the earlier starts again from the default it is given.
func TestEstimatesOfCollidingKeys(t *testing.T) {
	real := hashOf
	hashOf = func(EstimateKey) uint64 { return 7 }
	t.Cleanup(func() { hashOf = real })
	e := NewEstimates(1, 10)
	a, b := EstimateKey{"t", "a"}, EstimateKey{"t", "b"}
	e.Observe(a, time.Second, 0, at(0))
	if c := e.Cost(b, 5*time.Second, at(time.Second)); c != 5*time.Second {
		t.Errorf("b's cost beside a of its hash: %v, want its default 5s", c)
	}
	e.Observe(b, 2*time.Second, 0, at(2*time.Second))
	if c := e.Cost(a, 5*time.Second, at(3*time.Second)); c != 5*time.Second {
		t.Errorf("a's cost after b took its slot: %v, want its default 5s", c)
	}
	if c := e.Cost(b, 5*time.Second, at(4*time.Second)); c != 2*time.Second {
		t.Errorf("b's cost: %v, want the 2s observed", c)
	}
	var held []string
	e.Each(func(k EstimateKey, _ time.Duration) { held = append(held, k.ID) })
	if diff := cmp.Diff([]string{"b"}, held); diff != "" {
		t.Errorf("estimates held (-want +got):\n%s", diff)
	}
	// Evicted by age, the slot is free for the other again.
	if n := e.Evict(at(time.Hour), time.Minute); n != 1 || e.Len() != 0 {
		t.Errorf("evicted %d, %d left; want 1 and 0", n, e.Len())
	}
	e.Put(a, 3*time.Second, at(time.Hour))
	if c := e.Cost(a, 0, at(time.Hour)); c != 3*time.Second {
		t.Errorf("a put back: %v, want 3s", c)
	}
}

// TestEstimatesRefsMatchLookups: CostRef and ObserveRef, with the
// references kept across other keys' lookups, evictions by age and by the
// bound, and keys of one hash taking turns in a slot, hold exactly the
// estimates that Cost and Observe hold.
func TestEstimatesRefsMatchLookups(t *testing.T) {
	for _, collide := range []bool{false, true} {
		if collide {
			real := hashOf
			hashOf = func(k EstimateKey) uint64 { return uint64(len(k.ID) % 2) }
			t.Cleanup(func() { hashOf = real })
		}
		for seed := range uint64(100) {
			r := rand.New(rand.NewPCG(seed, 11))
			byRef, byKey := NewEstimates(0.5, 3), NewEstimates(0.5, 3)
			ids := []string{"a", "b", "cc", "dd", "e"}
			refs := map[string]EstimateRef{}
			now := t0
			for op := range 200 {
				now = now.Add(time.Duration(r.IntN(30)) * time.Second)
				k := EstimateKey{"t", ids[r.IntN(len(ids))]}
				switch r.IntN(3) {
				case 0:
					got, ref := byRef.CostRef(k, time.Second, now)
					refs[k.ID] = ref
					if want := byKey.Cost(k, time.Second, now); got != want {
						t.Fatalf("collide %v seed %d op %d: CostRef(%v) = %v, Cost %v", collide, seed, op, k, got, want)
					}
				case 1:
					d := time.Duration(r.IntN(10)) * time.Second
					got := byRef.ObserveRef(refs[k.ID], k, d, time.Second, now)
					if want := byKey.Observe(k, d, time.Second, now); got != want {
						t.Fatalf("collide %v seed %d op %d: ObserveRef(%v) = %v, Observe %v", collide, seed, op, k, got, want)
					}
				case 2:
					if got, want := byRef.Evict(now, time.Minute), byKey.Evict(now, time.Minute); got != want {
						t.Fatalf("collide %v seed %d op %d: Evict %d and %d", collide, seed, op, got, want)
					}
				}
				held := func(e *Estimates) map[EstimateKey]time.Duration {
					m := map[EstimateKey]time.Duration{}
					e.Each(func(k EstimateKey, c time.Duration) { m[k] = c })
					return m
				}
				if diff := cmp.Diff(held(byKey), held(byRef)); diff != "" {
					t.Fatalf("collide %v seed %d op %d: estimates (-lookups +refs):\n%s", collide, seed, op, diff)
				}
			}
		}
	}
}
