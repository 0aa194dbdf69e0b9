package bisect_test

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fairsched/fairsched/internal/bisect"
)

var errRefused = errors.New("refused")

// settle writes items as one, then settles them (bisect.Settle).
func settle(items []int, write func([]int) error, bad func(int, error) error) (int, error) {
	refused := func(err error) bool { return errors.Is(err, errRefused) }
	n, _, err := bisect.Settle(items, write(items), write, refused, bad)
	return n, err
}

func bitsLen(n int) int { return bits.Len(uint(n)) }

// TestBisectWritesEachRecordOnce: whatever records of a batch a store
// refuses, every other is written once, in order, each refused one handed
// over once, in few writes; a failure other than a refusal stops it, the
// records from the count on left to write again.
func TestBisectWritesEachRecordOnce(t *testing.T) {
	refusal := fmt.Errorf("%w: test", errRefused)
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		n := 1 + r.IntN(100)
		badSet := map[int]bool{}
		for range r.IntN(4) {
			badSet[r.IntN(n)] = true
		}
		items := make([]int, n)
		for i := range items {
			items[i] = i
		}
		var written, refused []int
		writes := 0
		dealt, err := settle(items, func(part []int) error {
			writes++
			for _, i := range part {
				if badSet[i] {
					return refusal
				}
			}
			written = append(written, part...)
			return nil
		}, func(i int, err error) error {
			if !errors.Is(err, errRefused) {
				t.Fatalf("bad %d with %v", i, err)
			}
			refused = append(refused, i)
			return nil
		})
		var wantWritten, wantRefused []int
		for _, i := range items {
			if badSet[i] {
				wantRefused = append(wantRefused, i)
			} else {
				wantWritten = append(wantWritten, i)
			}
		}
		if err != nil || dealt != n || !slices.Equal(written, wantWritten) || !slices.Equal(refused, wantRefused) {
			t.Fatalf("%d records, refused %v: dealt %d, %v; written %v, handed %v", n, badSet, dealt, err, written, refused)
		}
		if bound := 1 + len(badSet)*(2*bitsLen(n)+1); writes > bound {
			t.Errorf("%d records, refused %v: %d writes, over %d", n, badSet, writes, bound)
		}
	}
	// A failure that is not a refusal stops it where it is.
	lost := errors.New("test: connection lost")
	calls := 0
	dealt, err := settle([]int{0, 1, 2, 3}, func(part []int) error {
		calls++
		switch {
		case calls == 1:
			return refusal
		case calls == 2:
			return nil // 0 and 1
		}
		return lost
	}, func(int, error) error { t.Fatal("no record is refused alone"); return nil })
	if dealt != 2 || !errors.Is(err, lost) {
		t.Errorf("after a lost connection: dealt %d, %v; want 2, the loss", dealt, err)
	}
}
