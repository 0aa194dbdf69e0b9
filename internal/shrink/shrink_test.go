package shrink

import (
	"runtime"
	"testing"
)

// TestMapShrinksAfterEviction: a map that grew to 100 000 entries and lost
// all but 10 is rebuilt (the copy holds the survivors), and the heap it held
// is given back.
func TestMapShrinksAfterEviction(t *testing.T) {
	var peak Peak
	m := map[int][64]byte{}
	for i := range 100_000 {
		m[i] = [64]byte{}
		Note(m, &peak)
	}
	for i := 10; i < 100_000; i++ {
		delete(m, i)
	}
	before := heapInUse()
	m = Map(m, &peak)
	after := heapInUse()
	if len(m) != 10 || peak != 10 {
		t.Fatalf("after Map: len %d, peak %d; want 10, 10", len(m), peak)
	}
	for i := range 10 {
		if _, ok := m[i]; !ok {
			t.Fatalf("entry %d lost", i)
		}
	}
	if after*2 > before {
		t.Errorf("heap in use %d B after the rebuild, %d B before; want less than half", after, before)
	}
	runtime.KeepAlive(m)
}

// TestMapKeepsSmallOrFullMaps: no copy below the minimum peak, or while the
// map holds more than a quarter of its peak.
func TestMapKeepsSmallOrFullMaps(t *testing.T) {
	for _, tc := range []struct{ peak, left int }{{minPeak - 1, 0}, {4000, 1001}} {
		m := map[int]int{}
		var peak Peak
		for i := range tc.peak {
			m[i] = i
		}
		Note(m, &peak)
		for i := tc.left; i < tc.peak; i++ {
			delete(m, i)
		}
		m[-1] = -1 // a marker the same map keeps
		got := Map(m, &peak)
		delete(got, -1)
		if _, ok := m[-1]; ok {
			t.Errorf("peak %d, %d left: Map copied the map", tc.peak, tc.left)
		}
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestSlice: a slice down to a quarter of a large capacity is copied with
// room for twice its length; others are returned as they are.
func TestSlice(t *testing.T) {
	s := make([]int, 10, 4096)
	for i := range s {
		s[i] = i
	}
	got := Slice(s)
	if len(got) != 10 || cap(got) != 20 || got[9] != 9 {
		t.Errorf("Slice: len %d cap %d; want 10, 20 with the elements", len(got), cap(got))
	}
	for _, keep := range [][]int{make([]int, 10, 100), make([]int, 1025, 4096)} {
		if got := Slice(keep); cap(got) != cap(keep) {
			t.Errorf("Slice of len %d cap %d copied it", len(keep), cap(keep))
		}
	}
}
