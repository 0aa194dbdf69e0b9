package policy

import (
	"math/bits"
	"strings"
)

// GroupShare is one group's claim on the global capacity, the input of
// AllocateSlots.
type GroupShare struct {
	// Name identifies the group. It breaks the last ties, ascending, so the
	// jobs without a group (passed under the name "") come first. Names
	// should be unique.
	Name string
	// Weight is the group's relative share of the capacity left after the
	// minimums. Callers validate it is at least 1; a smaller value counts
	// as 1.
	Weight int
	// MinSlots are guaranteed before any weighted share, up to what the
	// group can use. A negative value counts as 0.
	MinSlots int
	// Limit caps the group's slots; 0 (or less) means no cap.
	Limit int
	// Demand is the group's pending plus running jobs: it never gets more
	// slots than that. A negative value counts as 0.
	Demand int
}

// AllocateSlots splits capacity slots among groups: the minimums first,
// then the rest by weight, work-conserving (what a drained or capped group
// cannot use goes to the others by weight), with largest-remainder rounding.
// The package documentation, section "Slot allocation", gives the math.
//
// The result has one entry per group, in the order of groups. It never
// exceeds a group's demand or limit and sums to min(capacity, Σ usable),
// where a group's usable slots are min(Demand, Limit); it is a pure function
// of the set of groups, whatever their order. capacity < 1 allocates
// nothing. Total demand is assumed to fit in an int, as counts of jobs held
// in memory do.
func AllocateSlots(capacity int, groups []GroupShare) []int {
	slots := make([]int, len(groups))
	if capacity < 1 || len(groups) == 0 {
		return slots
	}
	open := make([]groupState, 0, len(groups)) // the groups that can take more
	minSum := 0
	var weight uint64  // Σ weight over open
	var top uint64 = 1 // the largest weight
	for i, g := range groups {
		usable := min(max(g.Demand, 0), capacity)
		if g.Limit > 0 {
			usable = min(usable, g.Limit)
		}
		m := min(max(g.MinSlots, 0), usable)
		slots[i] = m
		minSum += m
		if usable > m {
			w := uint64(max(g.Weight, 1))
			top = max(top, w)
			weight += w
			open = append(open, groupState{i: i, weight: w, headroom: usable - m})
		}
	}

	if minSum > capacity {
		// Only unvalidated minimums get here: apportion the capacity by
		// minimum, each group getting at most its own.
		open = open[:0]
		for i, m := range slots {
			if m > 0 {
				open = append(open, groupState{i: i, weight: uint64(m)})
			}
		}
		clear(slots)
		apportion(groups, slots, open, uint64(minSum), uint64(capacity))
		return slots
	}

	if sh := weightShift(top, len(open)); sh > 0 {
		weight = 0
		for j := range open {
			open[j].weight = max(open[j].weight>>sh, 1)
			weight += open[j].weight
		}
	}

	// Water filling: at level λ = left/weight a group whose headroom is at
	// most its share weight·λ is saturated (it takes its whole headroom).
	// λ never falls as groups saturate, so each pass saturates every group
	// it can at the current level, and the passes stop when none saturates.
	left := uint64(capacity - minSum)
	for left > 0 && len(open) > 0 {
		n := 0
		for _, s := range open {
			h := uint64(s.headroom)
			if lessEq128(h, weight, s.weight, left) { // h ≤ weight·left/Σweight
				slots[s.i] += s.headroom
				left -= h
				weight -= s.weight
				continue
			}
			open[n] = s
			n++
		}
		if n == len(open) {
			// No group saturates: the open groups share what is left
			// exactly by weight, each strictly below its headroom.
			apportion(groups, slots, open, weight, left)
			return slots
		}
		open = open[:n]
	}
	return slots // every group with demand is full; left slots stay idle
}

// groupState is one group's working state in AllocateSlots.
type groupState struct {
	i        int    // index in groups and slots
	weight   uint64 // Weight (at least 1, scaled by weightShift), or the minimum when apportioning minimums
	headroom int    // usable slots above the minimum
	rem      uint64 // remainder of weight·amount / total in apportion
}

// apportion adds amount slots to the groups in gs by Hamilton's
// largest-remainder method: group s's exact share is s.weight·amount/total
// (total = Σ weight over gs > 0). Each group gets its share's floor; the
// k = amount − Σ floor slots left go one each to the k largest remainders,
// ties to the group holding fewer slots, then by name, then by position.
// gs is reordered.
func apportion(groups []GroupShare, slots []int, gs []groupState, total, amount uint64) {
	left := amount
	n := 0
	for _, s := range gs {
		hi, lo := bits.Mul64(s.weight, amount)
		q, r := bits.Div64(hi, lo, total) // weight ≤ total, so q ≤ amount fits
		slots[s.i] += int(q)
		left -= q
		if r > 0 {
			s.rem = r
			gs[n] = s
			n++
		}
	}
	if left == 0 {
		return
	}
	// Σ rem = left·total and every rem < total, so n > left: select the
	// left best remainders (their order among themselves does not matter).
	rk := ranking{groups: groups, slots: slots}
	rk.selectFirst(gs[:n], int(left))
	for _, s := range gs[:left] {
		slots[s.i]++
	}
}

// ranking orders the candidates for the slots left after the floors.
type ranking struct {
	groups []GroupShare
	slots  []int
}

// first reports whether a comes before b: the larger remainder, then fewer
// slots held, then the smaller name, then the smaller position. The order
// is strict and total.
func (rk ranking) first(a, b *groupState) bool {
	if a.rem != b.rem {
		return a.rem > b.rem
	}
	return rk.tie(a.i, b.i)
}

func (rk ranking) tie(a, b int) bool {
	if sa, sb := rk.slots[a], rk.slots[b]; sa != sb {
		return sa < sb
	}
	if c := strings.Compare(rk.groups[a].Name, rk.groups[b].Name); c != 0 {
		return c < 0
	}
	return a < b
}

// selectFirst reorders gs so that gs[:k] holds its k first elements
// (quickselect, median-of-three pivot; expected linear time).
// 0 < k < len(gs).
func (rk ranking) selectFirst(gs []groupState, k int) {
	lo, hi := 0, len(gs)-1
	for lo < hi {
		// Median of three to gs[hi] as the pivot.
		mid := lo + (hi-lo)/2
		if rk.first(&gs[mid], &gs[lo]) {
			gs[mid], gs[lo] = gs[lo], gs[mid]
		}
		if rk.first(&gs[hi], &gs[lo]) {
			gs[hi], gs[lo] = gs[lo], gs[hi]
		}
		if rk.first(&gs[mid], &gs[hi]) {
			gs[mid], gs[hi] = gs[hi], gs[mid]
		}
		p := lo
		for j := lo; j < hi; j++ {
			if rk.first(&gs[j], &gs[hi]) {
				gs[p], gs[j] = gs[j], gs[p]
				p++
			}
		}
		gs[p], gs[hi] = gs[hi], gs[p] // the pivot, at its rank
		switch {
		case p+1 == k || p == k:
			return
		case p > k:
			hi = p - 1
		default:
			lo = p + 1
		}
	}
}

// lessEq128 reports whether a·b ≤ c·d, exactly.
func lessEq128(a, b, c, d uint64) bool {
	h1, l1 := bits.Mul64(a, b)
	h2, l2 := bits.Mul64(c, d)
	return h1 < h2 || h1 == h2 && l1 <= l2
}

// weightShift returns the right shift that keeps the sum of n weights of
// at most top below 2⁶³. It is 0 unless weights come within a factor n of
// math.MaxInt, where shifting keeps their ratios to 63−⌈log₂ n⌉ bits.
func weightShift(top uint64, n int) uint {
	return uint(max(bits.Len64(top)+bits.Len(uint(n))-63, 0))
}
