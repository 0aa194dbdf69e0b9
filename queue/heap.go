package queue

// indexed is an element of an ixheap: it orders itself against its peers and
// remembers its position so it can be fixed or removed in O(log n).
type indexed[T any] interface {
	before(T) bool
	setIndex(int)
}

// ixheap is a binary min-heap of elements that track their own index.
type ixheap[T indexed[T]] []T

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
		p := (i - 1) / 2
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
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h[r].before(h[l]) {
			m = r
		}
		if !h[m].before(h[i]) {
			break
		}
		h.swap(i, m)
		i = m
	}
	return i > i0
}
