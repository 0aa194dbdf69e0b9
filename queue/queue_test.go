package queue

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fairsched/fairsched/policy"
)

// fixture is a queue with a few types and a job factory that numbers jobs in
// arrival order.
type fixture struct {
	q    *Queue
	prio map[policy.JobType]policy.Priority
	cost map[string]time.Duration
	seq  uint64
}

func newFixture(types map[policy.JobType]policy.Priority) *fixture {
	f := &fixture{q: New(), prio: types, cost: map[string]time.Duration{}}
	// Deterministic registration order.
	names := make([]policy.JobType, 0, len(types))
	for t := range types {
		names = append(names, t)
	}
	slices.Sort(names)
	for _, t := range names {
		f.q.AddType(t, types[t])
	}
	return f
}

func stdFixture() *fixture {
	return newFixture(map[policy.JobType]policy.Priority{"fgA": 40, "fgB": 40, "bg": 10, "bg2": 10})
}

// push adds a job of type t on id for fairness key key, whose accumulated
// cost is the last one set for key (0 by default).
func (f *fixture) push(t policy.JobType, id, key string) *Job {
	f.seq++
	j := &Job{Type: t, ID: id, Key: key, Seq: f.seq}
	named(j, fmt.Sprintf("%s/%s/%s#%d", t, id, key, f.seq))
	f.q.Push(j, f.cost[key])
	return j
}

func (f *fixture) setCost(key string, c time.Duration) {
	f.cost[key] = c
	f.q.setKeyCost(key, c)
}

// drain takes every admissible job in Best order.
func (f *fixture) drain() []string {
	var out []string
	for j := f.q.Best(); j != nil; j = f.q.Best() {
		out = append(out, ref(j).(string))
		f.q.Remove(j)
	}
	return out
}

func names(js ...*Job) []string {
	out := make([]string, len(js))
	for i, j := range js {
		out[i] = ref(j).(string)
	}
	return out
}

// each returns the jobs Each visits, sorted by Seq.
func each(q *Queue) []string {
	var js []*Job
	q.Each(func(j *Job) { js = append(js, j) })
	slices.SortFunc(js, func(a, b *Job) int { return cmp.Compare(a.Seq, b.Seq) })
	return names(js...)
}

func TestEmpty(t *testing.T) {
	f := stdFixture()
	if j := f.q.Best(); j != nil {
		t.Errorf("Best of empty queue = %v", ref(j))
	}
	if f.q.Len() != 0 {
		t.Errorf("Len = %d", f.q.Len())
	}
	var j Job
	f.q.Remove(&j) // not queued: no-op
	if f.q.Len() != 0 || j.Queued() || j.Parked() {
		t.Errorf("Remove of an unqueued job changed state")
	}
	f.q.Release(policy.ConflictKey{Group: "git", ID: "x"}) // nothing parked: no-op
	f.q.BlockTier(99, true)                                // unknown tier: no-op
	f.q.BlockType("nope", true)                            // unknown type: no-op
	f.q.setKeyCost("nobody", time.Hour)                    // unknown key: no-op
	if j := f.q.Best(); j != nil {
		t.Errorf("Best = %v", ref(j))
	}
}

func TestBestOrder(t *testing.T) {
	f := stdFixture()
	f.setCost("a", 0)
	f.cost["b"] = 5 * time.Second
	f.cost["c"] = 5 * time.Second
	f.cost[""] = 1 * time.Second
	jobs := []*Job{
		f.push("bg", "r1", ""),   // 1
		f.push("fgA", "r1", "b"), // 2
		f.push("fgB", "r2", "c"), // 3
		f.push("fgA", "r3", "a"), // 4
		f.push("bg2", "r4", "a"), // 5
		f.push("fgB", "r5", "a"), // 6
		f.push("fgA", "r6", "b"), // 7
		f.push("bg", "r7", "b"),  // 8
	}
	if f.q.Len() != len(jobs) {
		t.Fatalf("Len = %d, want %d", f.q.Len(), len(jobs))
	}
	for _, j := range jobs {
		if !j.Queued() || j.Parked() {
			t.Errorf("%v: Queued %v Parked %v", ref(j), j.Queued(), j.Parked())
		}
	}
	// Priority 40 first: a (0) then b and c (5, by arrival), then priority
	// 10: a (0), "" (1s), b (5s).
	want := names(jobs[3], jobs[5], jobs[1], jobs[2], jobs[6], jobs[4], jobs[0], jobs[7])
	if diff := gocmp.Diff(want, f.drain()); diff != "" {
		t.Errorf("Best order (-want +got):\n%s", diff)
	}
	if f.q.Len() != 0 {
		t.Errorf("Len after drain = %d", f.q.Len())
	}
	for _, j := range jobs {
		if j.Queued() {
			t.Errorf("%v still queued after Remove", ref(j))
		}
	}
}

func TestPushUpdatesKeyCost(t *testing.T) {
	f := stdFixture()
	a1 := f.push("fgA", "1", "a")
	b1 := f.push("fgB", "2", "b")
	// a's next push carries a higher cost: every lane of a moves behind b.
	f.cost["a"] = 10 * time.Second
	a2 := f.push("fgB", "3", "a")
	want := names(b1, a1, a2)
	if diff := gocmp.Diff(want, f.drain()); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestSetKeyCostReordersAcrossTypes(t *testing.T) {
	f := stdFixture()
	a1 := f.push("fgA", "1", "a")
	a2 := f.push("fgB", "2", "a")
	b1 := f.push("fgA", "3", "b")
	b2 := f.push("fgB", "4", "b")
	a3 := f.push("bg", "5", "a")
	b3 := f.push("bg", "6", "b")
	if got := f.q.Best(); got != a1 {
		t.Fatalf("Best = %v, want a1", ref(got))
	}
	f.setCost("a", 3*time.Second)
	if diff := gocmp.Diff(names(b1, b2, a1, a2, b3, a3), f.drain()); diff != "" {
		t.Errorf("after raising a (-want +got):\n%s", diff)
	}

	// Interleaved: each admission charges the key, as the core does.
	f = stdFixture()
	var js []*Job
	for i := range 3 {
		js = append(js, f.push("fgA", fmt.Sprint(i), "a"), f.push("fgB", fmt.Sprint(i), "b"))
	}
	var got []string
	for j := f.q.Best(); j != nil; j = f.q.Best() {
		got = append(got, ref(j).(string))
		f.q.Remove(j)
		f.setCost(j.Key, f.cost[j.Key]+time.Second)
	}
	// a and b alternate; on a tie the earlier head goes first.
	want := names(js[0], js[1], js[2], js[3], js[4], js[5])
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("charged alternation (-want +got):\n%s", diff)
	}
}

func TestBlockTier(t *testing.T) {
	f := stdFixture()
	fg := f.push("fgA", "1", "a")
	bg := f.push("bg", "2", "")
	f.q.BlockTier(40, true)
	if got := f.q.Best(); got != bg {
		t.Fatalf("tier 40 blocked: Best = %v, want the bg job", got)
	}
	f.q.BlockTier(10, true)
	if got := f.q.Best(); got != nil {
		t.Fatalf("both tiers blocked: Best = %v, want nil", ref(got))
	}
	// Jobs still arrive in a blocked tier.
	fg2 := f.push("fgB", "3", "b")
	if got := f.q.Best(); got != nil {
		t.Fatalf("both tiers blocked after push: Best = %v", ref(got))
	}
	if f.q.Len() != 3 {
		t.Errorf("Len = %d, want 3", f.q.Len())
	}
	f.q.BlockTier(40, false)
	if diff := gocmp.Diff(names(fg, fg2), f.drain()); diff != "" {
		t.Errorf("tier 40 restored (-want +got):\n%s", diff)
	}
	f.q.BlockTier(10, false)
	if diff := gocmp.Diff(names(bg), f.drain()); diff != "" {
		t.Errorf("tier 10 restored (-want +got):\n%s", diff)
	}
}

func TestBlockType(t *testing.T) {
	f := stdFixture()
	a1 := f.push("fgA", "1", "a")
	b1 := f.push("fgB", "2", "b")
	a2 := f.push("fgA", "3", "c")
	g := f.push("bg", "4", "")
	f.q.BlockType("fgA", true)
	f.q.BlockType("fgA", true) // idempotent
	if got := f.q.Best(); got != b1 {
		t.Fatalf("fgA blocked: Best = %v, want b1", ref(got))
	}
	f.q.BlockType("fgB", true)
	// The whole tier 40 is out of dispatch: the lower tier runs.
	if got := f.q.Best(); got != g {
		t.Fatalf("fgA, fgB blocked: Best = %v, want the bg job", ref(got))
	}
	// A blocked type still takes pushes and cost changes.
	a3 := f.push("fgA", "5", "z")
	f.setCost("a", time.Hour)
	f.q.BlockType("fgA", false)
	f.q.BlockType("fgA", false)
	if diff := gocmp.Diff(names(a2, a3, a1, g), f.drain()); diff != "" {
		t.Errorf("fgA restored (-want +got):\n%s", diff)
	}
	f.q.BlockType("fgB", false)
	if diff := gocmp.Diff(names(b1), f.drain()); diff != "" {
		t.Errorf("fgB restored (-want +got):\n%s", diff)
	}
}

func TestParkRelease(t *testing.T) {
	f := stdFixture()
	key := policy.ConflictKey{Group: "git", ID: "r"}
	j1 := f.push("fgA", "r", "a")
	j2 := f.push("fgA", "s", "a")
	j3 := f.push("fgA", "r", "a")
	j4 := f.push("fgB", "r", "b")
	j5 := f.push("fgA", "t", "a")

	// Park in the order Dispatch would meet them: j1, j3, then j4.
	for _, want := range []*Job{j1, j2} {
		if got := f.q.Best(); got != want {
			t.Fatalf("Best = %v, want %v", ref(got), ref(want))
		}
		if want.ID == "r" {
			f.q.Park(want, key, false)
		}
	}
	if !j1.Parked() || !j1.Queued() {
		t.Errorf("j1 after Park: Parked %v Queued %v", j1.Parked(), j1.Queued())
	}
	// j2 is admitted: remove it.
	f.q.Remove(j2)
	f.q.Park(j4, key, false) // out of order on purpose
	f.q.Park(j3, key, false)
	if f.q.Len() != 4 {
		t.Errorf("Len with 3 parked = %d, want 4", f.q.Len())
	}
	if diff := gocmp.Diff(names(j1, j3, j4, j5), each(f.q)); diff != "" {
		t.Errorf("Each with parked jobs (-want +got):\n%s", diff)
	}
	if got := f.q.Best(); got != j5 {
		t.Fatalf("Best with r parked = %v, want j5", ref(got))
	}
	f.q.Release(policy.ConflictKey{Group: "git", ID: "other"}) // no-op
	f.q.Release(policy.ConflictKey{Group: "db", ID: "r"})      // no-op
	if got := f.q.Best(); got != j5 {
		t.Fatalf("Best after unrelated releases = %v, want j5", ref(got))
	}
	f.q.Release(key)
	for _, j := range []*Job{j1, j3, j4} {
		if j.Parked() || !j.Queued() {
			t.Errorf("%v after Release: Parked %v Queued %v", ref(j), j.Parked(), j.Queued())
		}
	}
	// Returned jobs rejoin their lanes in arrival order, ahead of j5.
	if diff := gocmp.Diff(names(j1, j3, j4, j5), f.drain()); diff != "" {
		t.Errorf("after Release (-want +got):\n%s", diff)
	}
	f.q.Release(key) // second release: nothing parked
	if f.q.Len() != 0 {
		t.Errorf("Len = %d", f.q.Len())
	}
}

// TestReleaseShared: shared and exclusive jobs park apart on one key;
// Release returns only the exclusive ones, ReleaseShared only the shared
// ones that arrived before the given Seq, earliest first.
func TestReleaseShared(t *testing.T) {
	f := stdFixture()
	key := policy.ConflictKey{Group: "git", ID: "r"}
	s1 := f.push("fgA", "r", "a")
	x := f.push("fgA", "r", "b")
	s2 := f.push("fgA", "r", "c")
	s3 := f.push("fgA", "r", "d")
	f.q.Park(s3, key, true)
	f.q.Park(s1, key, true)
	f.q.Park(x, key, false)
	f.q.Park(s2, key, true)
	f.q.Release(key)
	if x.Parked() || !s1.Parked() || !s2.Parked() {
		t.Fatalf("after Release: exclusive parked %v, shared parked %v %v", x.Parked(), s1.Parked(), s2.Parked())
	}
	f.q.ReleaseShared(key, s3.Seq) // s1 and s2 arrived before s3
	if s1.Parked() || s2.Parked() || !s3.Parked() {
		t.Fatalf("after ReleaseShared(s3): parked %v %v %v; want only s3", s1.Parked(), s2.Parked(), s3.Parked())
	}
	if diff := gocmp.Diff(names(s1, x, s2), f.drain()); diff != "" {
		t.Errorf("released jobs (-want +got):\n%s", diff)
	}
	f.q.ReleaseShared(key, math.MaxUint64)
	if diff := gocmp.Diff(names(s3), f.drain()); diff != "" {
		t.Errorf("last release (-want +got):\n%s", diff)
	}
	if len(f.q.parked) != 0 {
		t.Errorf("%d parking heaps left; want none", len(f.q.parked))
	}
}

func TestParkedJobKeepsKeyCost(t *testing.T) {
	f := stdFixture()
	key := policy.ConflictKey{Group: "git", ID: "r"}
	a := f.push("fgA", "r", "a")
	f.q.Park(a, key, false) // a's only job is parked: its lane is gone
	b := f.push("fgA", "x", "b")
	f.setCost("a", 10*time.Second)
	f.setCost("b", 5*time.Second)
	f.q.Release(key)
	// The key record survived the parking with its new cost: b goes first.
	if diff := gocmp.Diff(names(b, a), f.drain()); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestRemove(t *testing.T) {
	f := stdFixture()
	key := policy.ConflictKey{Group: "git", ID: "p"}
	var js []*Job
	for i := range 8 {
		id := "x"
		if i%3 == 0 {
			id = "p"
		}
		js = append(js, f.push("fgA", id, "a"))
	}
	// Park j0, j3 and j6 (id p) and release them, so they sit in the
	// returned heap; then park j0 again, from there.
	for _, i := range []int{0, 3, 6} {
		f.q.Park(js[i], key, false)
	}
	f.q.Release(key)
	f.q.Park(js[0], key, false) // j0 parked again, from the returned heap

	f.q.Remove(js[4]) // FIFO middle
	f.q.Remove(js[3]) // returned heap
	f.q.Remove(js[0]) // parked
	f.q.Remove(js[0]) // again: no-op
	if f.q.Len() != 5 {
		t.Errorf("Len = %d, want 5", f.q.Len())
	}
	want := names(js[1], js[2], js[5], js[6], js[7])
	if diff := gocmp.Diff(want, each(f.q)); diff != "" {
		t.Errorf("Each (-want +got):\n%s", diff)
	}
	f.q.Release(key) // j0 was removed: nothing returns
	if diff := gocmp.Diff(want, f.drain()); diff != "" {
		t.Errorf("drain (-want +got):\n%s", diff)
	}
	if len(f.q.parked) != 0 || lanesInUse(f.q) != 0 {
		t.Errorf("leftovers: parked %d lanes in use %d", len(f.q.parked), lanesInUse(f.q))
	}
}

// lanesInUse counts the lanes that hold jobs.
func lanesInUse(q *Queue) int {
	n := 0
	for _, k := range q.keys {
		n += len(k.lanes)
	}
	return n
}

// laneFor returns the lane of key for type t, or nil.
func laneFor(q *Queue, t policy.JobType, key string) *lane {
	if k := q.keys[key]; k != nil {
		for _, l := range k.all {
			if l.tq.t == t {
				return l
			}
		}
	}
	return nil
}

func TestRemoveLastJobOfLaneDropsIt(t *testing.T) {
	f := stdFixture()
	a := f.push("fgA", "1", "a")
	b := f.push("fgA", "2", "b")
	f.q.Remove(a)
	if got := f.q.Best(); got != b {
		t.Fatalf("Best = %v, want b", got)
	}
	l := laneFor(f.q, "fgA", "a")
	if l == nil || l.idx >= 0 || l.live != 0 || len(f.q.keys["a"].lanes) != 0 {
		t.Errorf("emptied lane of a must stay with its key, out of dispatch: %+v", l)
	}
	if f.q.ForgetKey("b") {
		t.Error("ForgetKey dropped a key with a pending job")
	}
	if !f.q.ForgetKey("a") || f.q.keys["a"] != nil {
		t.Error("ForgetKey kept the record of an idle key")
	}
	// a comes back with a new cost: the record restarts from it.
	f.cost["a"] = time.Hour
	a2 := f.push("fgA", "3", "a")
	if diff := gocmp.Diff(names(b, a2), f.drain()); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestFIFOCompaction(t *testing.T) {
	f := stdFixture()
	const n = 1000
	var js []*Job
	for i := range n {
		js = append(js, f.push("fgA", fmt.Sprint(i), "a"))
	}
	other := f.push("fgA", "o", "b")
	f.setCost("b", time.Hour)
	// Remove all but every tenth job, from the middle outwards, then the
	// first 30 kept ones from the head through Best.
	var kept []*Job
	for i, j := range js {
		if i%10 == 0 {
			kept = append(kept, j)
		} else {
			f.q.Remove(j)
		}
	}
	if f.q.Len() != len(kept)+1 {
		t.Fatalf("Len = %d, want %d", f.q.Len(), len(kept)+1)
	}
	l := laneFor(f.q, "fgA", "a")
	if len(l.fifo) >= n {
		t.Errorf("lane FIFO holds %d entries for %d live jobs: never compacted", len(l.fifo), l.live)
	}
	if diff := gocmp.Diff(names(append(slices.Clone(kept), other)...), each(f.q)); diff != "" {
		t.Errorf("Each after removals (-want +got):\n%s", diff)
	}
	for _, want := range kept[:30] {
		got := f.q.Best()
		if got != want {
			t.Fatalf("Best = %v, want %v", ref(got), ref(want))
		}
		f.q.Remove(got)
	}
	// Push more behind, remove some more in the middle.
	var more []*Job
	for i := range 200 {
		more = append(more, f.push("fgA", fmt.Sprint("m", i), "a"))
	}
	for i, j := range more {
		if i%2 == 1 {
			f.q.Remove(j)
		}
	}
	var want []*Job
	want = append(want, kept[30:]...)
	for i, j := range more {
		if i%2 == 0 {
			want = append(want, j)
		}
	}
	want = append(want, other)
	if f.q.Len() != len(want) {
		t.Errorf("Len = %d, want %d", f.q.Len(), len(want))
	}
	bySeq := slices.SortedFunc(slices.Values(want), func(a, b *Job) int { return cmp.Compare(a.Seq, b.Seq) })
	if diff := gocmp.Diff(names(bySeq...), each(f.q)); diff != "" {
		t.Errorf("Each (-want +got):\n%s", diff)
	}
	if l.head > 64 && 2*l.head > len(l.fifo) {
		t.Errorf("consumed prefix never dropped: head %d, len %d", l.head, len(l.fifo))
	}
	if len(l.fifo)-l.head > 2*l.live+64 {
		t.Errorf("lane FIFO holds %d entries past the head for %d live jobs", len(l.fifo)-l.head, l.live)
	}
	if diff := gocmp.Diff(names(want...), f.drain()); diff != "" {
		t.Errorf("drain (-want +got):\n%s", diff)
	}
}

func TestCompactionWithReturnedJobs(t *testing.T) {
	f := stdFixture()
	key := policy.ConflictKey{Group: "git", ID: "p"}
	var js []*Job
	for i := range 400 {
		id := fmt.Sprint(i)
		if i%7 == 0 {
			id = "p"
		}
		js = append(js, f.push("fgA", id, "a"))
	}
	// Park every "p" job, remove most other jobs (forcing compaction while
	// returned jobs exist), then release.
	for _, j := range js {
		if j.ID == "p" {
			f.q.Park(j, key, false)
		}
	}
	var want []*Job
	for i, j := range js {
		switch {
		case j.ID == "p":
			want = append(want, j)
		case i%5 != 0:
			f.q.Remove(j)
		default:
			want = append(want, j)
		}
	}
	f.q.Release(key)
	// Park half of the returned jobs again and remove a few FIFO ones.
	for i, j := range want {
		if j.ID == "p" && i%2 == 0 {
			f.q.Park(j, key, false)
		}
	}
	f.q.Release(key)
	if f.q.Len() != len(want) {
		t.Errorf("Len = %d, want %d", f.q.Len(), len(want))
	}
	if diff := gocmp.Diff(names(want...), each(f.q)); diff != "" {
		t.Errorf("Each (-want +got):\n%s", diff)
	}
	if diff := gocmp.Diff(names(want...), f.drain()); diff != "" {
		t.Errorf("drain (-want +got):\n%s", diff)
	}
}

func TestEachVisitsOnce(t *testing.T) {
	f := stdFixture()
	key := policy.ConflictKey{Group: "git", ID: "p"}
	var all []*Job
	r := rand.New(rand.NewPCG(1, 2))
	types := []policy.JobType{"fgA", "fgB", "bg", "bg2"}
	for i := range 300 {
		id := fmt.Sprint(i % 13)
		if i%4 == 0 {
			id = "p"
		}
		all = append(all, f.push(types[r.IntN(4)], id, fmt.Sprint(r.IntN(5))))
	}
	alive := map[*Job]bool{}
	for _, j := range all {
		alive[j] = true
	}
	for _, j := range all {
		switch {
		case r.IntN(3) == 0:
			f.q.Remove(j)
			delete(alive, j)
		case j.ID == "p" && r.IntN(2) == 0:
			f.q.Park(j, key, false)
		}
	}
	f.q.Release(key)
	for _, j := range all {
		if alive[j] && j.ID == "p" && r.IntN(2) == 0 {
			f.q.Park(j, key, false)
		}
	}
	counts := map[*Job]int{}
	f.q.Each(func(j *Job) { counts[j]++ })
	want := map[*Job]int{}
	for j := range alive {
		want[j] = 1
	}
	if diff := gocmp.Diff(want, counts); diff != "" {
		t.Errorf("Each visit counts (-want +got):\n%s", diff)
	}
	if f.q.Len() != len(alive) {
		t.Errorf("Len = %d, want %d", f.q.Len(), len(alive))
	}
}

// TestMatchesSort drives the index with random pushes, removals, parks,
// releases, cost changes and blocks, and checks after every step that Best
// is the first job of the plain sort the spec describes, among the jobs that
// are neither parked nor blocked.
func TestMatchesSort(t *testing.T) {
	t.Run("many lanes", func(t *testing.T) {
		matchesSort(t, sortModel{
			seeds: 150, ops: 400, pushes: 7,
			types: map[policy.JobType]policy.Priority{"a": 3, "b": 3, "c": 2, "d": 1, "e": 1},
			keys:  []string{"", "k1", "k2", "k3"},
		})
	})
	// Few long lanes: FIFO compaction happens under random removals, parks
	// and releases.
	t.Run("long lanes", func(t *testing.T) {
		matchesSort(t, sortModel{
			seeds: 15, ops: 3000, pushes: 5,
			types: map[policy.JobType]policy.Priority{"a": 2, "b": 1},
			keys:  []string{"k"},
		})
	})
}

type sortModel struct {
	seeds  uint64
	ops    int
	pushes int // weight of a push among the 13 other operations
	types  map[policy.JobType]policy.Priority
	keys   []string
}

func matchesSort(t *testing.T, m sortModel) {
	typeNames := slices.Sorted(maps.Keys(m.types))
	tiers := slices.Compact(slices.Sorted(maps.Values(m.types)))
	keys := m.keys
	ids := []string{"x", "y", "z"}
	for seed := range m.seeds {
		r := rand.New(rand.NewPCG(seed, 99))
		f := newFixture(m.types)
		var live []*Job // every queued job
		blockedTier := map[policy.Priority]bool{}
		blockedType := map[policy.JobType]bool{}
		parkedOn := map[*Job]policy.ConflictKey{}
		best := func() *Job {
			var b *Job
			for _, j := range live {
				if _, p := parkedOn[j]; p || blockedTier[f.prio[j.Type]] || blockedType[j.Type] {
					continue
				}
				if b == nil || cmp.Or(
					cmp.Compare(f.prio[b.Type], f.prio[j.Type]),
					cmp.Compare(f.cost[j.Key], f.cost[b.Key]),
					cmp.Compare(j.Seq, b.Seq),
				) < 0 {
					b = j
				}
			}
			return b
		}
		for op := range m.ops {
			switch x := r.IntN(m.pushes + 13); {
			case x < m.pushes:
				// The key's cost may have grown since its last push.
				k := keys[r.IntN(len(keys))]
				f.cost[k] += time.Duration(r.IntN(3)) * time.Second
				live = append(live, f.push(typeNames[r.IntN(len(typeNames))], ids[r.IntN(3)], k))
			case x < m.pushes+3:
				if len(live) > 0 {
					i := r.IntN(len(live))
					f.q.Remove(live[i])
					delete(parkedOn, live[i])
					live = slices.Delete(live, i, i+1)
				}
			case x < m.pushes+5:
				// Admit the best job, as Dispatch does.
				if j := f.q.Best(); j != nil {
					f.q.Remove(j)
					live = slices.DeleteFunc(live, func(o *Job) bool { return o == j })
				}
			case x < m.pushes+7:
				// Park the best job, as Dispatch does on a conflict.
				if j := f.q.Best(); j != nil {
					k := policy.ConflictKey{Group: "g", ID: j.ID}
					f.q.Park(j, k, false)
					parkedOn[j] = k
				}
			case x < m.pushes+8:
				k := policy.ConflictKey{Group: "g", ID: ids[r.IntN(3)]}
				f.q.Release(k)
				for j, on := range parkedOn {
					if on == k {
						delete(parkedOn, j)
					}
				}
			case x < m.pushes+10:
				k := keys[r.IntN(len(keys))]
				f.setCost(k, f.cost[k]+time.Duration(r.IntN(4))*time.Second)
			case x < m.pushes+11:
				p := tiers[r.IntN(len(tiers))]
				blockedTier[p] = !blockedTier[p]
				f.q.BlockTier(p, blockedTier[p])
			default:
				tt := typeNames[r.IntN(len(typeNames))]
				blockedType[tt] = !blockedType[tt]
				f.q.BlockType(tt, blockedType[tt])
			}
			want, got := best(), f.q.Best()
			if want != got {
				t.Fatalf("seed %d op %d: Best = %v, want %v", seed, op, ref(got), ref(want))
			}
			if f.q.Len() != len(live) {
				t.Fatalf("seed %d op %d: Len = %d, want %d", seed, op, f.q.Len(), len(live))
			}
			for j, on := range parkedOn {
				if !j.Parked() || j.parkedOn.key.key != on {
					t.Fatalf("seed %d op %d: %v not parked on %v", seed, op, ref(j), on)
				}
			}
		}
		wantEach := make([]string, 0, len(live))
		for _, j := range slices.SortedFunc(slices.Values(live), func(a, b *Job) int { return cmp.Compare(a.Seq, b.Seq) }) {
			wantEach = append(wantEach, ref(j).(string))
		}
		if diff := gocmp.Diff(wantEach, each(f.q), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("seed %d: Each (-want +got):\n%s", seed, diff)
		}
	}
}

// refs names the tests' jobs (the queue keeps no reference for its caller:
// the core finds its job from the queue's, which it embeds).
var refs = map[*Job]any{}

func ref(j *Job) any {
	if j == nil {
		return nil
	}
	return refs[j]
}

// named records v as j's name (ref) and returns j.
func named(j *Job, v any) *Job {
	refs[j] = v
	return j
}

// TestDeadlineStandsStillWhilePaused: a job's deadline moves back by its
// group's pauses after its arrival and never comes while the group is
// paused; NextWake and TakeExpired follow, and other groups' deadlines do
// not move.
func TestDeadlineStandsStillWhilePaused(t *testing.T) {
	f := stdFixture()
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	g, h := f.q.Group("g"), f.q.Group("h")
	push := func(name string, grp *Group, arrive, deadline int) *Job {
		f.q.At(at(arrive))
		f.seq++
		j := named(&Job{Type: "bg", ID: name, Seq: f.seq, Group: grp, Submitted: f.q.Nanos(at(arrive)), Deadline: f.q.DeadlineAt(at(deadline))}, name)
		f.q.Push(j, 0)
		return j
	}
	a := push("a", g, 0, 10)
	push("b", h, 0, 12)
	f.q.At(at(2))
	f.q.Pause(g)
	c := push("c", g, 5, 15) // arrives during the pause: only what follows counts
	f.q.At(at(20))
	if d, ok := f.q.Deadline(a); ok {
		t.Errorf("deadline of a while paused = %v; want none", d)
	}
	var expired []string
	take := func(s int) {
		f.q.At(at(s))
		f.q.TakeExpired(at(s), func(j *Job) { expired = append(expired, ref(j).(string)); f.q.Remove(j) })
	}
	take(20)
	if diff := gocmp.Diff([]string{"b"}, expired); diff != "" {
		t.Errorf("expired at 20 s, g paused (-want +got):\n%s", diff)
	}
	f.q.Resume(g) // paused 2 s..20 s: a's deadline is 10+18, c's 15+15
	for _, tc := range []struct {
		j    *Job
		want time.Time
	}{{a, at(28)}, {c, at(30)}} {
		if d, ok := f.q.Deadline(tc.j); !ok || !d.Equal(tc.want) {
			t.Errorf("deadline of %v = %v, %v; want %v", ref(tc.j), d, ok, tc.want)
		}
	}
	if w, ok := f.q.NextWake(); !ok || !w.Equal(at(28)) {
		t.Errorf("NextWake = %v, %v; want %v", w, ok, at(28))
	}
	take(27)
	take(28)
	take(30)
	if diff := gocmp.Diff([]string{"b", "a", "c"}, expired); diff != "" {
		t.Errorf("expired in order (-want +got):\n%s", diff)
	}
	if f.q.Len() != 0 || len(f.q.expiring) != 0 {
		t.Errorf("Len %d, %d groups in the expiry heap; want none", f.q.Len(), len(f.q.expiring))
	}
}

// TestWatchedDeadlines: a watched deadline (no pending job) follows its
// group's pauses like a job's: it arrives during a pause, stands still
// until the resume, comes out of TakeExpired off its heap and unqueued;
// Unwatch drops one, and leaves a zero job and a pending job alone.
func TestWatchedDeadlines(t *testing.T) {
	f := stdFixture()
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	g := f.q.Group("g")
	f.q.At(at(0))
	f.seq++
	pending := named(&Job{Type: "bg", ID: "p", Seq: f.seq, Group: g, Submitted: f.q.Nanos(at(0)), Deadline: f.q.DeadlineAt(at(20))}, "p")
	f.q.Push(pending, 0)
	w1 := named(&Job{Seq: pending.Seq, Group: g, Deadline: f.q.DeadlineAt(at(4))}, "w1")
	f.q.Watch(w1)
	f.q.At(at(2))
	f.q.Pause(g)
	f.q.At(at(3))
	w2 := named(&Job{Seq: pending.Seq, Group: g, Deadline: f.q.DeadlineAt(at(8))}, "w2") // joins paused
	f.q.Watch(w2)
	gone := named(&Job{Seq: pending.Seq, Group: g, Deadline: f.q.DeadlineAt(at(5))}, "gone")
	f.q.Watch(gone)
	f.q.Unwatch(gone)
	f.q.Unwatch(&Job{})  // never watched: nothing happens
	f.q.Unwatch(pending) // pending: not a watch
	if !f.q.Watched(w1) || !f.q.Watched(w2) || f.q.Watched(gone) || f.q.Watched(pending) {
		t.Fatalf("Watched: w1 %v, w2 %v, gone %v, pending %v; want true, true, false, false",
			f.q.Watched(w1), f.q.Watched(w2), f.q.Watched(gone), f.q.Watched(pending))
	}
	var got []string
	take := func(s int) {
		f.q.At(at(s))
		f.q.TakeExpired(at(s), func(j *Job) {
			got = append(got, fmt.Sprintf("%v@%d queued=%v watched=%v", ref(j), s, j.Queued(), f.q.Watched(j)))
			if j.Queued() {
				f.q.Remove(j)
			}
		})
	}
	take(30) // paused since 2 s: nothing comes
	f.q.Resume(g)
	// w1: 4 + 28 = 32; w2: 8 + 27 = 35 (only the pause after 3 s counts);
	// the pending job: 20 + 28 = 48.
	for _, s := range []int{31, 32, 34, 35, 47, 48} {
		take(s)
	}
	want := []string{"w1@32 queued=false watched=false", "w2@35 queued=false watched=false", "p@48 queued=true watched=false"}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("expired (-want +got):\n%s", diff)
	}
	if len(f.q.expiring) != 0 || len(g.expiring) != 0 || !f.q.ForgetGroup(g) {
		t.Errorf("expiry heaps hold %d groups, %d of g's; want none and g forgotten", len(f.q.expiring), len(g.expiring))
	}
}

// TestBusyKeyForgetsGroupLanes: a key that always has a job pending, while
// its other jobs pass through 10 000 groups one after another, keeps a lane
// per group with jobs, not one per group it ever used; the forgotten groups
// leave the queue too.
func TestBusyKeyForgetsGroupLanes(t *testing.T) {
	f := newFixture(map[policy.JobType]policy.Priority{"t": 1})
	f.push("t", "keep", "k") // the key never goes idle
	for i := range 10_000 {
		g := f.q.Group(fmt.Sprint("g", i))
		f.seq++
		j := named(&Job{Type: "t", ID: fmt.Sprint(i), Key: "k", Seq: f.seq, Group: g}, i)
		f.q.Push(j, 0)
		f.q.Remove(j)
		if !f.q.ForgetGroup(g) {
			t.Fatalf("group g%d not forgotten", i)
		}
	}
	if k := f.q.keys["k"]; len(k.all) != 1 || len(k.lanes) != 1 {
		t.Errorf("key k keeps %d lanes (%d with jobs); want 1 and 1", len(k.all), len(k.lanes))
	}
	if len(f.q.groups) != 0 {
		t.Errorf("the queue keeps %d groups; want 0", len(f.q.groups))
	}
}

// TestJobTimesSaturate: a Job's times are nanoseconds since the queue's
// epoch (its first time, rounded down to a second); what is computed from
// them saturates instead of wrapping, and a deadline never falls on 0,
// which means none.
func TestJobTimesSaturate(t *testing.T) {
	const max, min = math.MaxInt64, math.MinInt64
	for _, c := range []struct{ a, b, want int64 }{
		{5, 3, 2}, {-5, 3, -8}, {max, -1, max}, {min, 1, min}, {max, min, max}, {min, max, min}, {-1, min, max}, {0, min, max},
	} {
		if got := satSub(c.a, c.b); got != c.want {
			t.Errorf("satSub(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	q := New()
	q.At(time.Unix(1000, 5e8))
	if e := q.TimeOf(0); !e.Equal(time.Unix(1000, 0)) {
		t.Errorf("epoch %v, want the first time rounded down to its second", e)
	}
	// Whole seconds of the offsets are the wall clock's, less the epoch's.
	for _, tm := range []time.Time{time.Unix(997, 0), time.Unix(999, 999999999), time.Unix(1000, 0), time.Unix(1002, 5e8)} {
		if got := secOf(q.Nanos(tm)); got != tm.Unix()-1000 {
			t.Errorf("secOf(Nanos(%v)) = %d, want %d", tm, got, tm.Unix()-1000)
		}
		if back := q.TimeOf(q.Nanos(tm)); !back.Equal(tm) {
			t.Errorf("TimeOf(Nanos(%v)) = %v", tm, back)
		}
	}
	if d := q.DeadlineAt(time.Time{}); d != 0 {
		t.Errorf("DeadlineAt(zero) = %d, want 0 (none)", d)
	}
	if d := q.DeadlineAt(time.Unix(1000, 0)); d != 1 {
		t.Errorf("DeadlineAt(epoch) = %d, want 1", d)
	}
	if d := q.DeadlineAt(time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)); d != max {
		t.Errorf("DeadlineAt(year 3000) = %d, want saturated", d)
	}
	if w := q.WaitedAt(&Job{Submitted: min}, time.Unix(1000, 1)); w != max {
		t.Errorf("WaitedAt far past: %v, want saturated", w)
	}
	if w := q.WaitedAt(&Job{Submitted: max}, time.Unix(999, 0)); w != min {
		t.Errorf("WaitedAt far future: %v, want saturated", w)
	}
}

// TestTimesPastUnixNanos: instants are offsets from the queue's epoch, not
// Unix nanoseconds, which end in 2262: a clock in 2300 still ages, defers
// and expires jobs on time, to the nanosecond.
func TestTimesPastUnixNanos(t *testing.T) {
	t0 := time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	f := stdFixture()
	f.q.At(at(0))
	f.seq++
	j := named(&Job{Type: "bg", ID: "j", Seq: f.seq, Submitted: f.q.Nanos(at(0)), Deadline: f.q.DeadlineAt(at(10_000))}, "j")
	f.q.Push(j, 0)
	f.seq++
	d := named(&Job{Type: "bg", ID: "d", Seq: f.seq, Submitted: f.q.Nanos(at(0))}, "d")
	f.q.Push(d, 0)
	f.q.Defer(d, at(3_000))
	type moment struct {
		Waited  time.Duration
		Wake    time.Time
		Expired []string
	}
	var got []moment
	for _, ms := range []int{2_999, 3_000, 9_999, 10_000} {
		f.q.At(at(ms))
		m := moment{Waited: f.q.Waited(j)}
		m.Wake, _ = f.q.NextWake()
		f.q.TakeExpired(at(ms), func(x *Job) { m.Expired = append(m.Expired, x.ID); f.q.Remove(x) })
		got = append(got, m)
	}
	want := []moment{
		{Waited: 2999 * time.Millisecond, Wake: at(3_000)},
		{Waited: 3 * time.Second, Wake: at(10_000)},
		{Waited: 9999 * time.Millisecond, Wake: at(10_000)},
		{Waited: 10 * time.Second, Wake: at(10_000), Expired: []string{"j"}},
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("timeline in 2300 (-want +got):\n%s", diff)
	}
}

// setKeyCost sets the accumulated cost of a key by name, as an admission's
// charge does (SetKeyCostOf), for tests that move costs directly.
func (q *Queue) setKeyCost(key string, cost time.Duration) {
	if k := q.keys[key]; k != nil {
		q.setCost(k, cost)
	}
}
