// Package timeheap is a heap of items ordered by a time, each knowing its
// position: the earliest is at the top, and an item can be moved or removed
// in O(log n). The scheduler's timed work — rate-limit refills, periodic
// occurrences — waits in such heaps, so that one timer, for the top, serves
// them all.
package timeheap

import (
	"container/heap"
	"time"
)

// Item is an element of a Heap.
type Item interface {
	// When is the item's time; it must not change while the item is in a
	// heap unless Fix is called.
	When() time.Time
	// SetIndex records the item's position (-1 once out of the heap).
	SetIndex(int)
}

// Heap holds items by When, earliest first. The zero value is empty.
type Heap[T Item] struct{ items items[T] }

// Len returns the number of items.
func (h *Heap[T]) Len() int { return len(h.items) }

// Top returns the earliest item; the heap must not be empty.
func (h *Heap[T]) Top() T { return h.items[0] }

// Push adds x.
func (h *Heap[T]) Push(x T) { heap.Push(&h.items, x) }

// Pop removes and returns the earliest item.
func (h *Heap[T]) Pop() T { return heap.Pop(&h.items).(T) }

// Fix restores the order after the item at i changed its time.
func (h *Heap[T]) Fix(i int) { heap.Fix(&h.items, i) }

// Remove takes out the item at i.
func (h *Heap[T]) Remove(i int) T { return heap.Remove(&h.items, i).(T) }

// Clear empties the heap.
func (h *Heap[T]) Clear() {
	for _, x := range h.items {
		x.SetIndex(-1)
	}
	clear(h.items)
	h.items = h.items[:0]
}

type items[T Item] []T

func (s items[T]) Len() int           { return len(s) }
func (s items[T]) Less(i, j int) bool { return s[i].When().Before(s[j].When()) }
func (s items[T]) Swap(i, j int) {
	s[i], s[j] = s[j], s[i]
	s[i].SetIndex(i)
	s[j].SetIndex(j)
}
func (s *items[T]) Push(x any) {
	x.(T).SetIndex(len(*s))
	*s = append(*s, x.(T))
}
func (s *items[T]) Pop() any {
	old := *s
	x := old[len(old)-1]
	var zero T
	old[len(old)-1] = zero
	*s = old[:len(old)-1]
	x.SetIndex(-1)
	return x
}
