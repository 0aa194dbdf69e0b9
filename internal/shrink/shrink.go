// Package shrink gives back the memory of maps that emptied.
//
// A Go map never shrinks: after a burst of a million distinct keys and their
// eviction, the map keeps the buckets of its peak for ever. A Peak remembers
// how large a map has been since it was last rebuilt; once the map holds a
// quarter of that or less, Map copies it into a map sized for what is left.
// Each rebuild copies at most a quarter of the deletions since the last one,
// so the work is amortised O(1) per deletion.
package shrink

// minPeak is the smallest peak worth a rebuild: below it a map's buckets
// cost less than the copy.
const minPeak = 1024

// Peak is the largest length a map reached since it was last rebuilt.
type Peak int

// Map notes m's length and returns m, or a copy of it sized for its length
// once it has shrunk to a quarter of its peak. Call it after deleting (at
// the end of an eviction pass, not per deletion) and keep the result.
func Map[K comparable, V any](m map[K]V, peak *Peak) map[K]V {
	n := len(m)
	if Peak(n) > *peak {
		*peak = Peak(n)
	}
	if *peak < minPeak || Peak(n)*4 > *peak {
		return m
	}
	out := make(map[K]V, n)
	for k, v := range m {
		out[k] = v
	}
	*peak = Peak(n)
	return out
}

// Note records m's length in peak after an insertion, without rebuilding:
// cheap enough for every insertion.
func Note[K comparable, V any](m map[K]V, peak *Peak) {
	if n := Peak(len(m)); n > *peak {
		*peak = n
	}
}

// Slice returns s, or a copy of it with room for twice its length once it
// uses a quarter of its capacity or less (and the capacity is worth it):
// slices that back heaps and lists keep the array of their peak otherwise.
func Slice[T any](s []T) []T {
	if cap(s) < minPeak || len(s)*4 > cap(s) {
		return s
	}
	out := make([]T, len(s), 2*len(s))
	copy(out, s)
	return out
}
