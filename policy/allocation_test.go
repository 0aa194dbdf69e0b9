package policy

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAllocateSlots(t *testing.T) {
	tests := []struct {
		name     string
		capacity int
		groups   []GroupShare
		want     []int
	}{
		{
			// Spec, "Slot allocation algorithm": B's minimum 2, then 14 by
			// weight: A 10.5, B 3.5; the remainders tie and B, holding 5
			// slots to A's 10, takes the last one.
			name:     "spec example",
			capacity: 16,
			groups: []GroupShare{
				{Name: "A", Weight: 3, Limit: 12, Demand: 50000},
				{Name: "B", Weight: 1, Limit: 6, MinSlots: 2, Demand: 200},
			},
			want: []int{10, 6},
		},
		{
			name:     "spec example, the spec's group names",
			capacity: 16,
			groups: []GroupShare{
				{Name: "s3://prod", Weight: 3, Limit: 12, Demand: 50000},
				{Name: "s3://b2-backup", Weight: 1, Limit: 6, MinSlots: 2, Demand: 200},
			},
			want: []int{10, 6},
		},
		{
			name:     "spec example, names reversed",
			capacity: 16,
			groups: []GroupShare{
				{Name: "B", Weight: 3, Limit: 12, Demand: 50000},
				{Name: "A", Weight: 1, Limit: 6, MinSlots: 2, Demand: 200},
			},
			want: []int{10, 6},
		},
		{
			// Spec: B uses 3 slots, A is capped at 12, 1 slot idle.
			name:     "spec example, B has 3 jobs",
			capacity: 16,
			groups: []GroupShare{
				{Name: "A", Weight: 3, Limit: 12, Demand: 50000},
				{Name: "B", Weight: 1, Limit: 6, MinSlots: 2, Demand: 3},
			},
			want: []int{12, 3},
		},
		{
			// Spec, motivation: weights 3:1 on 16 slots give 12:4.
			name:     "weights only",
			capacity: 16,
			groups: []GroupShare{
				{Name: "s3://prod", Weight: 3, Demand: 50000},
				{Name: "s3://b2-backup", Weight: 1, Demand: 200},
			},
			want: []int{12, 4},
		},
		{
			name:     "B drained: A takes everything its cap allows",
			capacity: 16,
			groups: []GroupShare{
				{Name: "A", Weight: 3, Limit: 12, Demand: 50000},
				{Name: "B", Weight: 1, Limit: 6, MinSlots: 2},
			},
			want: []int{12, 0},
		},
		{name: "no groups", capacity: 16, want: []int{}},
		{name: "empty groups", capacity: 16, groups: []GroupShare{}, want: []int{}},
		{name: "one group, more demand than capacity", capacity: 5, groups: []GroupShare{{Name: "a", Weight: 1, Demand: 9}}, want: []int{5}},
		{name: "one group, less demand than capacity", capacity: 5, groups: []GroupShare{{Name: "a", Weight: 7, Demand: 3}}, want: []int{3}},
		{name: "one group, capped", capacity: 5, groups: []GroupShare{{Name: "a", Weight: 1, Limit: 2, Demand: 9}}, want: []int{2}},
		{name: "one group, minimum over capacity", capacity: 5, groups: []GroupShare{{Name: "a", Weight: 1, MinSlots: 8, Demand: 9}}, want: []int{5}},
		{
			name:     "all drained",
			capacity: 8,
			groups: []GroupShare{
				{Name: "a", Weight: 1, MinSlots: 2},
				{Name: "b", Weight: 5, Limit: 3},
				{Name: "", Weight: 1},
			},
			want: []int{0, 0, 0},
		},
		{
			// a's minimum is clipped to its limit; the rest goes to b.
			name:     "limit below minimum",
			capacity: 10,
			groups: []GroupShare{
				{Name: "a", Weight: 1, MinSlots: 5, Limit: 2, Demand: 100},
				{Name: "b", Weight: 1, Demand: 100},
			},
			want: []int{2, 8},
		},
		{
			name:     "demand below minimum",
			capacity: 10,
			groups: []GroupShare{
				{Name: "a", Weight: 1, MinSlots: 5, Demand: 1},
				{Name: "b", Weight: 1, MinSlots: 3, Demand: 100},
			},
			want: []int{1, 9},
		},
		{
			// 10/4 = 2.5 each; the two slots left go by name.
			name:     "equal weights, name ties",
			capacity: 10,
			groups: []GroupShare{
				{Name: "d", Weight: 2, Demand: 100},
				{Name: "b", Weight: 2, Demand: 100},
				{Name: "c", Weight: 2, Demand: 100},
				{Name: "a", Weight: 2, Demand: 100},
			},
			want: []int{2, 3, 2, 3},
		},
		{
			name:     "capacity below the number of groups",
			capacity: 2,
			groups: []GroupShare{
				{Name: "c", Weight: 1, Demand: 5},
				{Name: "a", Weight: 1, Demand: 5},
				{Name: "e", Weight: 1, Demand: 5},
				{Name: "b", Weight: 1, Demand: 5},
				{Name: "d", Weight: 1, Demand: 5},
			},
			want: []int{0, 1, 0, 1, 0},
		},
		{
			name:     "the ungrouped jobs sort first",
			capacity: 1,
			groups: []GroupShare{
				{Name: "b", Weight: 1, Demand: 5},
				{Name: "", Weight: 1, Demand: 5},
				{Name: "a", Weight: 1, Demand: 5},
			},
			want: []int{0, 1, 0},
		},
		{
			// 3 by weight: 1.5 each, tie; b holds 1 slot to a's 3 and wins
			// it although "a" < "b".
			name:     "remainder tie goes to the group holding fewer slots",
			capacity: 5,
			groups: []GroupShare{
				{Name: "a", Weight: 1, MinSlots: 2, Demand: 10},
				{Name: "b", Weight: 1, Demand: 10},
			},
			want: []int{3, 2},
		},
		{
			// 2·7/3 = 4.67 and 7/3 = 2.33: the larger remainder wins.
			name:     "largest remainder",
			capacity: 7,
			groups: []GroupShare{
				{Name: "a", Weight: 1, Demand: 10},
				{Name: "b", Weight: 2, Demand: 10},
			},
			want: []int{2, 5},
		},
		{
			// c is capped at 1; its 2 unused slots go to a and b by weight.
			name:     "work-conserving redistribution",
			capacity: 9,
			groups: []GroupShare{
				{Name: "a", Weight: 2, Demand: 100},
				{Name: "b", Weight: 1, Demand: 100},
				{Name: "c", Weight: 1, Limit: 1, Demand: 100},
			},
			want: []int{5, 3, 1},
		},
		{
			// Cascade: c saturates at λ = 10/3, then b at λ = 8/2; a takes
			// the rest.
			name:     "cascading saturation",
			capacity: 10,
			groups: []GroupShare{
				{Name: "a", Weight: 1, Demand: 100},
				{Name: "b", Weight: 1, Demand: 3},
				{Name: "c", Weight: 1, Demand: 2},
			},
			want: []int{5, 3, 2},
		},
		{
			// a, c, d saturate; 7 slots are left for b, e, f at λ = 7/4:
			// exact shares 3.5, 1.75, 1.75, rounded once to 3, 2, 2.
			// Rounding in each redistribution round instead (round one
			// 8, 3, 8, 4, 1, 1; clip a and d; round two gives b and c
			// the 3 freed; clip c; round three gives b the last) ends at
			// b 5, e 1, f 1: b 1.5 slots over its exact share.
			name:     "one rounding keeps each group within a slot of its share",
			capacity: 25,
			groups: []GroupShare{
				{Name: "a", Weight: 7, Limit: 8, Demand: 7},
				{Name: "b", Weight: 2, Demand: 14},
				{Name: "c", Weight: 7, Demand: 9},
				{Name: "d", Weight: 3, Limit: 2, Demand: 12},
				{Name: "e", Weight: 1, Limit: 3, Demand: 20},
				{Name: "f", Weight: 1, Limit: 6, Demand: 7},
			},
			want: []int{7, 3, 9, 2, 2, 2},
		},
		{
			name:     "every group full: slots idle",
			capacity: 20,
			groups: []GroupShare{
				{Name: "a", Weight: 1, Limit: 3, Demand: 100},
				{Name: "b", Weight: 9, Demand: 4},
				{Name: "c", Weight: 1, MinSlots: 5, Demand: 2},
			},
			want: []int{3, 4, 2},
		},
		{
			// Minimums (clipped) sum to 10 > 5: 5 apportioned 4:4:2.
			name:     "minimums over capacity",
			capacity: 5,
			groups: []GroupShare{
				{Name: "a", Weight: 9, MinSlots: 4, Demand: 100},
				{Name: "b", Weight: 1, MinSlots: 4, Demand: 100},
				{Name: "c", Weight: 1, MinSlots: 2, Demand: 100},
			},
			want: []int{2, 2, 1},
		},
		{
			name:     "minimums over capacity, name tie",
			capacity: 3,
			groups: []GroupShare{
				{Name: "b", Weight: 1, MinSlots: 2, Demand: 100},
				{Name: "a", Weight: 1, MinSlots: 2, Demand: 100},
			},
			want: []int{1, 2},
		},
		{
			name:     "zero capacity",
			capacity: 0,
			groups:   []GroupShare{{Name: "a", Weight: 1, MinSlots: 1, Demand: 5}},
			want:     []int{0},
		},
		{
			name:     "negative capacity",
			capacity: -3,
			groups:   []GroupShare{{Name: "a", Weight: 1, Demand: 5}},
			want:     []int{0},
		},
		{
			// Weight < 1 counts as 1, negative minimum and demand as 0,
			// negative limit as no cap.
			name:     "out-of-range fields",
			capacity: 6,
			groups: []GroupShare{
				{Name: "a", Weight: 0, MinSlots: -4, Limit: -1, Demand: 100},
				{Name: "b", Weight: -7, Demand: 100},
				{Name: "c", Weight: 1, MinSlots: 3, Demand: -2},
			},
			want: []int{3, 3, 0},
		},
		{
			name:     "huge weights",
			capacity: 10,
			groups: []GroupShare{
				{Name: "a", Weight: math.MaxInt, Demand: 100},
				{Name: "b", Weight: math.MaxInt, Demand: 100},
				{Name: "c", Weight: math.MaxInt / 2, Demand: 100},
				{Name: "d", Weight: 1, Demand: 100},
			},
			want: []int{4, 4, 2, 0},
		},
		{
			name:     "huge capacity and demand",
			capacity: math.MaxInt,
			groups: []GroupShare{
				{Name: "a", Weight: 3, Demand: math.MaxInt / 2},
				{Name: "b", Weight: 1, MinSlots: 5, Demand: math.MaxInt / 4},
			},
			want: []int{math.MaxInt / 2, math.MaxInt / 4},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.groups)
			got := AllocateSlots(tt.capacity, tt.groups)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("AllocateSlots(%d, %+v) (-want +got):\n%s", tt.capacity, tt.groups, diff)
			}
			if diff := cmp.Diff(in, tt.groups); diff != "" {
				t.Errorf("AllocateSlots modified its input (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, referenceAllocation(tt.capacity, tt.groups)); diff != "" {
				t.Errorf("reference allocation disagrees with the table (-want +reference):\n%s", diff)
			}
		})
	}
}

// allocationCase is a random input. Small ranges make ties, caps,
// drained groups and minimums over capacity common.
type allocationCase struct {
	capacity int
	groups   []GroupShare
}

func randomAllocationCase(r *rand.Rand) allocationCase {
	var n, maxW, maxD, capacity int
	switch r.IntN(20) {
	case 0: // many groups, wide weights
		n, maxW, maxD, capacity = 1+r.IntN(200), 1000, 400, 1+r.IntN(2000)
	case 1, 2: // capacity below the number of groups
		n, maxW, maxD, capacity = 5+r.IntN(20), 3, 6, 1+r.IntN(5)
	default:
		n, maxW, maxD, capacity = r.IntN(9), 1+r.IntN(6), 1+r.IntN(20), 1+r.IntN(40)
	}
	huge := r.IntN(50) == 0 // weights whose sum overflows: scaled down
	names := r.Perm(n)
	c := allocationCase{capacity: capacity, groups: make([]GroupShare, n)}
	for i := range c.groups {
		g := GroupShare{Name: fmt.Sprintf("g%03d", names[i]), Weight: 1 + r.IntN(maxW), Demand: r.IntN(maxD + 1)}
		if huge {
			g.Weight = math.MaxInt / (1 + r.IntN(maxW))
		}
		if names[i] == 0 && r.IntN(2) == 0 {
			g.Name = "" // the ungrouped jobs
		}
		if r.IntN(3) == 0 {
			g.MinSlots = r.IntN(1 + capacity/max(n, 1)*2)
		}
		if r.IntN(3) == 0 {
			g.Limit = 1 + r.IntN(maxD)
		}
		if r.IntN(8) == 0 {
			g.Demand = 0 // drained or paused
		}
		c.groups[i] = g
	}
	return c
}

func usableSlots(capacity int, g GroupShare) int {
	u := min(max(g.Demand, 0), capacity)
	if g.Limit > 0 {
		u = min(u, g.Limit)
	}
	return u
}

func byName(groups []GroupShare, slots []int) map[string]int {
	m := make(map[string]int, len(groups))
	for i, g := range groups {
		m[g.Name] = slots[i]
	}
	return m
}

const allocationCases = 5000

// TestAllocateSlotsProperties checks, over seeded random inputs:
//   - the result equals an independent exact-rational reference that runs
//     the spec's loop literally (share by weight, clip, redistribute) and
//     rounds once by largest remainder;
//   - quota: each group gets its minimum plus the floor or the ceiling of
//     its exact share;
//   - each group gets at most min(Demand, Limit);
//   - minimum: when the minimums clipped to min(Demand, Limit) sum to at
//     most capacity, each group gets at least its clipped minimum;
//     otherwise the whole capacity goes to minimums, each at most its own;
//   - work conservation: the sum is min(capacity, Σ usable), so a sum
//     below capacity means every group is at its demand or limit;
//   - determinism: the same groups in another order get the same slots by
//     name, and the input is not modified.
func TestAllocateSlotsProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range allocationCases {
		c := randomAllocationCase(r)
		in := slices.Clone(c.groups)
		got := AllocateSlots(c.capacity, c.groups)
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("case %d: AllocateSlots(%d, %+v) = %v: %s", n, c.capacity, c.groups, got, fmt.Sprintf(format, args...))
		}
		if diff := cmp.Diff(in, c.groups); diff != "" {
			fail("input modified (-before +after):\n%s", diff)
		}
		if len(got) != len(c.groups) {
			fail("%d results for %d groups", len(got), len(c.groups))
		}
		ref, shares := referenceShares(c.capacity, c.groups)
		if diff := cmp.Diff(ref, got); diff != "" {
			fail("differs from the exact reference (-reference +got):\n%s", diff)
		}

		sum, usableSum, minSum := 0, 0, 0
		for i, g := range c.groups {
			u := usableSlots(c.capacity, g)
			usableSum += u
			minSum += min(max(g.MinSlots, 0), u)
			sum += got[i]
		}
		for i, g := range c.groups {
			u := usableSlots(c.capacity, g)
			m := min(max(g.MinSlots, 0), u)
			if got[i] < 0 || got[i] > u {
				fail("group %q got %d, usable %d", g.Name, got[i], u)
			}
			if minSum <= c.capacity && got[i] < m {
				fail("group %q got %d below its minimum %d", g.Name, got[i], m)
			}
			if minSum > c.capacity && got[i] > m {
				fail("minimums over capacity, yet group %q got %d over its minimum %d", g.Name, got[i], m)
			}
			base := 0
			if minSum <= c.capacity {
				base = m
			}
			lo, hi := floorCeil(shares[i])
			if got[i] < base+lo || got[i] > base+hi {
				fail("group %q got %d, outside %d + [%d, %d] (exact share %s)", g.Name, got[i], base, lo, hi, shares[i].RatString())
			}
		}
		if want := min(c.capacity, usableSum); sum != want {
			fail("sum %d, want min(capacity %d, usable %d) = %d", sum, c.capacity, usableSum, want)
		}

		shuffled := slices.Clone(c.groups)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if diff := cmp.Diff(byName(c.groups, got), byName(shuffled, AllocateSlots(c.capacity, shuffled))); diff != "" {
			fail("shuffled input gives other slots (-original +shuffled):\n%s", diff)
		}
	}
}

// TestAllocateSlotsMonotone checks what holds when one input grows:
//   - raising a group's weight never lowers its slots (its exact share only
//     grows, the others' only shrink, so its remainder cannot fall out of
//     the top k);
//   - one more slot of capacity never lowers the total and lowers no group
//     by more than one slot: Hamilton's Alabama paradox can cost a group a
//     slot, the quota property bounds it to one.
func TestAllocateSlotsMonotone(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alabama := 0
	for n := range allocationCases {
		c := randomAllocationCase(r)
		if len(c.groups) == 0 {
			continue
		}
		before := AllocateSlots(c.capacity, c.groups)

		if slices.ContainsFunc(c.groups, func(g GroupShare) bool { return g.Weight >= 1<<55 }) {
			continue // weights that get scaled down keep their ratios only to 55 bits
		}
		i := r.IntN(len(c.groups))
		heavier := slices.Clone(c.groups)
		heavier[i].Weight += 1 + r.IntN(5)
		if after := AllocateSlots(c.capacity, heavier); after[i] < before[i] {
			t.Fatalf("case %d: weight of %q %d → %d lowers its slots %d → %d (capacity %d, groups %+v)",
				n, c.groups[i].Name, c.groups[i].Weight, heavier[i].Weight, before[i], after[i], c.capacity, c.groups)
		}

		grown := AllocateSlots(c.capacity+1, c.groups)
		sumBefore, sumAfter := 0, 0
		for j := range before {
			sumBefore += before[j]
			sumAfter += grown[j]
			if grown[j] < before[j]-1 {
				t.Fatalf("case %d: capacity %d → %d lowers %q by %d slots (groups %+v)",
					n, c.capacity, c.capacity+1, c.groups[j].Name, before[j]-grown[j], c.groups)
			}
			if grown[j] < before[j] {
				alabama++
			}
		}
		if sumAfter < sumBefore {
			t.Fatalf("case %d: capacity %d → %d lowers the total %d → %d", n, c.capacity, c.capacity+1, sumBefore, sumAfter)
		}
	}
	t.Logf("one more slot of capacity cost a group a slot (Alabama paradox) %d times in %d cases", alabama, allocationCases)
}

// TestAllocateSlotsEqualWeightsByName: with equal weights and ample demand,
// the slots that do not divide evenly go to the first names, "" first.
func TestAllocateSlotsEqualWeightsByName(t *testing.T) {
	const n = 50
	groups := make([]GroupShare, n)
	for i, p := range rand.New(rand.NewPCG(5, 6)).Perm(n) {
		groups[i] = GroupShare{Name: fmt.Sprintf("g%02d", p), Weight: 4, Demand: 1000}
	}
	groups[7].Name = ""
	for capacity := 1; capacity <= 3*n; capacity++ {
		got := AllocateSlots(capacity, groups)
		names := make([]string, n)
		for i, g := range groups {
			names[i] = g.Name
		}
		slices.Sort(names)
		want := map[string]int{}
		for rank, name := range names {
			want[name] = capacity / n
			if rank < capacity%n {
				want[name]++
			}
		}
		if diff := cmp.Diff(want, byName(groups, got)); diff != "" {
			t.Fatalf("capacity %d (-want +got):\n%s", capacity, diff)
		}
	}
}

// referenceAllocation is referenceShares without the shares.
func referenceAllocation(capacity int, groups []GroupShare) []int {
	slots, _ := referenceShares(capacity, groups)
	return slots
}

// referenceShares allocates with exact rationals and the spec's steps taken
// literally: minimums (apportioned by size when over capacity), then rounds
// of "share what is left by weight among the groups below their usable
// slots, clip each to its usable slots" until nothing is left or every group
// is full, then one largest-remainder rounding (ties: fewer slots held,
// then name, then position). It returns the slots and each group's exact
// share beyond its minimum (of the whole capacity when the minimums exceed
// it).
func referenceShares(capacity int, groups []GroupShare) ([]int, []*big.Rat) {
	n := len(groups)
	slots := make([]int, n)
	shares := make([]*big.Rat, n)
	for i := range shares {
		shares[i] = new(big.Rat)
	}
	if capacity < 1 || n == 0 {
		return slots, shares
	}
	usable := make([]int, n)
	mins := make([]int, n)
	minSum := 0
	for i, g := range groups {
		usable[i] = usableSlots(capacity, g)
		mins[i] = min(max(g.MinSlots, 0), usable[i])
		minSum += mins[i]
	}
	// The weights as AllocateSlots sees them: scaled down only when the
	// weights of the groups that can take more than their minimum could
	// overflow their sum.
	var top uint64 = 1
	active := 0
	for i, g := range groups {
		if usable[i] > mins[i] {
			top = max(top, uint64(max(g.Weight, 1)))
			active++
		}
	}
	weights := make([]*big.Rat, n)
	for i, g := range groups {
		weights[i] = new(big.Rat).SetUint64(max(uint64(max(g.Weight, 1))>>weightShift(top, active), 1))
	}

	var total int
	if minSum > capacity {
		total = capacity
		for i := range groups {
			shares[i].SetFrac64(int64(mins[i])*int64(capacity), int64(minSum))
		}
	} else {
		copy(slots, mins)
		total = capacity - minSum
		left := new(big.Rat).SetInt64(int64(total))
		full := make([]bool, n)
		for left.Sign() > 0 {
			weight := new(big.Rat)
			for i := range groups {
				if !full[i] && usable[i] > mins[i] {
					weight.Add(weight, weights[i])
				}
			}
			if weight.Sign() == 0 {
				break
			}
			perWeight := new(big.Rat).Quo(left, weight)
			left.SetInt64(0)
			for i := range groups {
				if full[i] || usable[i] <= mins[i] {
					continue
				}
				shares[i].Add(shares[i], new(big.Rat).Mul(perWeight, weights[i]))
				if headroom := big.NewRat(int64(usable[i]-mins[i]), 1); shares[i].Cmp(headroom) >= 0 {
					left.Add(left, new(big.Rat).Sub(shares[i], headroom))
					shares[i].Set(headroom)
					full[i] = true
				}
			}
		}
		total -= int(left.Num().Int64()) // left is an integer: idle slots
	}

	rems := make([]*big.Rat, n)
	for i := range groups {
		f, _ := floorCeil(shares[i])
		slots[i] += f
		total -= f
		rems[i] = new(big.Rat).Sub(shares[i], big.NewRat(int64(f), 1))
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := rems[b].Cmp(rems[a]); c != 0 {
			return c
		}
		if slots[a] != slots[b] {
			return slots[a] - slots[b]
		}
		if groups[a].Name < groups[b].Name {
			return -1
		}
		if groups[a].Name > groups[b].Name {
			return 1
		}
		return a - b
	})
	for _, i := range order[:total] {
		slots[i]++
	}
	return slots, shares
}

func floorCeil(x *big.Rat) (int, int) {
	q, m := new(big.Int).DivMod(x.Num(), x.Denom(), new(big.Int))
	f := int(q.Int64())
	if m.Sign() == 0 {
		return f, f
	}
	return f, f + 1
}

// BenchmarkAllocateSlots: 200 groups on 1,000 slots. "mixed" has weights
// 1–10, a third with minimums, a third capped, a tenth drained (3 water
// filling passes, 126 remainders to rank). "equal-weights" has every
// remainder and every holding equal, so the names rank all 197 groups that
// share the rest (the no-weights default, and the costliest ranking).
func BenchmarkAllocateSlots(b *testing.B) {
	const n, capacity = 200, 1000
	r := rand.New(rand.NewPCG(7, 8))
	mixed := make([]GroupShare, n)
	for i := range mixed {
		g := GroupShare{Name: fmt.Sprintf("endpoint-%03d", i), Weight: 1 + r.IntN(10), Demand: r.IntN(50)}
		if i%3 == 0 {
			g.MinSlots = 1 + r.IntN(2)
		}
		if i%3 == 1 {
			g.Limit = 1 + r.IntN(8)
		}
		if i%10 == 0 {
			g.Demand = 0
		}
		mixed[i] = g
	}
	// Demands 1, 2, 4 saturate; the other 197 share 993 slots: 5 each and
	// 8 by name.
	equal := make([]GroupShare, n)
	for i, p := range r.Perm(n) {
		equal[i] = GroupShare{Name: fmt.Sprintf("endpoint-%03d", p), Weight: 1, Demand: 1 << min(p, 40)}
	}
	for _, bc := range []struct {
		name   string
		groups []GroupShare
	}{{"mixed", mixed}, {"equal-weights", equal}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				AllocateSlots(capacity, bc.groups)
			}
		})
	}
}
