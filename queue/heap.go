package queue

// indexed is an element of an ixheap: it orders itself against its peers and
// remembers its position so it can be fixed or removed in O(log n).
type indexed[T any] interface {
	before(T) bool
	setIndex(int)
}

// ixheap is a 4-ary min-heap of elements that track their own index. Four
// children per node halve the depth of a binary heap; with large heaps of
// cold lanes, the cache misses saved on the way down outweigh the extra
// comparisons per level.
type ixheap[T indexed[T]] []T

const arity = 4

func (h *ixheap[T]) push(x T) {
	*h = append(*h, x)
	x.setIndex(len(*h) - 1)
	h.up(len(*h) - 1)
}

func (h *ixheap[T]) remove(i int) T {
	s := *h
	n := len(s) - 1
	x := s[i]
	if i != n {
		h.swap(i, n)
	}
	var zero T
	s[n] = zero
	*h = s[:n]
	if i != n {
		h.fix(i)
	}
	x.setIndex(-1)
	return x
}

// init restores the heap order of all elements at once: O(n).
func (h ixheap[T]) init() {
	for i := range h {
		h[i].setIndex(i)
	}
	for i := (len(h) - 2) / arity; i >= 0; i-- {
		h.down(i)
	}
}

func (h ixheap[T]) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h ixheap[T]) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].setIndex(i)
	h[j].setIndex(j)
}

func (h ixheap[T]) up(i int) {
	for i > 0 {
		p := (i - 1) / arity
		if !h[i].before(h[p]) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h ixheap[T]) down(i0 int) bool {
	i, n := i0, len(h)
	for {
		first := arity*i + 1
		if first >= n {
			break
		}
		m := first
		for c := first + 1; c < first+arity && c < n; c++ {
			if h[c].before(h[m]) {
				m = c
			}
		}
		if !h[m].before(h[i]) {
			break
		}
		h.swap(i, m)
		i = m
	}
	return i > i0
}
