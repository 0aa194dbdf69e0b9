package timeheap_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fairsched/fairsched/internal/timeheap"
)

type item struct {
	at  time.Time
	idx int
}

func (i *item) When() time.Time { return i.at }
func (i *item) SetIndex(n int)  { i.idx = n }

// TestOrder: after pushes, moves (Fix) and removals in random order, the
// items come out earliest first, all of them, and each knows its position
// (-1 once out).
func TestOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Unix(0, 0)
	var h timeheap.Heap[*item]
	var in []*item
	for range 200 {
		x := &item{at: t0.Add(time.Duration(rng.IntN(1000)))}
		h.Push(x)
		in = append(in, x)
	}
	for range 50 {
		x := in[rng.IntN(len(in))]
		x.at = t0.Add(time.Duration(rng.IntN(1000)))
		h.Fix(x.idx)
	}
	for range 30 {
		i := rng.IntN(len(in))
		x := in[i]
		if got := h.Remove(x.idx); got != x || x.idx != -1 {
			t.Fatalf("Remove returned %p (index %d), want %p, out", got, x.idx, x)
		}
		in = slices.Delete(in, i, i+1)
	}
	var out []time.Time
	for h.Len() > 0 {
		top := h.Top()
		if x := h.Pop(); x != top || x.idx != -1 {
			t.Fatal("Pop did not return Top, out of the heap")
		}
		out = append(out, top.at)
	}
	if len(out) != len(in) || !slices.IsSortedFunc(out, func(a, b time.Time) int { return a.Compare(b) }) {
		t.Errorf("popped %d items (want %d), sorted: %v", len(out), len(in), slices.IsSortedFunc(out, func(a, b time.Time) int { return a.Compare(b) }))
	}
	h.Push(&item{at: t0})
	h.Clear()
	if h.Len() != 0 {
		t.Error("Clear left items")
	}
}
