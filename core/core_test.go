package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/fairsched/fairsched/queue"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/policy"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// at returns t0 + n milliseconds.
func at(n int) time.Time { return t0.Add(ms(n)) }

type typeDef struct {
	name policy.JobType
	cfg  policy.JobTypeConfig
}

func newCore(t *testing.T, maxConcurrency int, types ...typeDef) *Core {
	t.Helper()
	l := policy.DefaultLimits()
	l.MaxConcurrency = maxConcurrency
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	c := New(l)
	for _, td := range types {
		if err := c.RegisterType(td.name, td.cfg); err != nil {
			t.Fatalf("RegisterType(%s): %v", td.name, err)
		}
	}
	return c
}

func submit(t *testing.T, c *Core, now time.Time, typ policy.JobType, id, key string) *Job {
	t.Helper()
	j := &Job{Job: queue.Job{Type: typ, ID: id, Key: key}}
	if err := c.Submit(now, j); err != nil {
		t.Fatalf("Submit(%s/%s): %v", typ, id, err)
	}
	return j
}

// label names a job as type/id@key.
func label(j *Job) string { return fmt.Sprintf("%s/%s@%s", j.Type, j.ID, j.Key) }

func labels(js []*Job) []string {
	out := []string{}
	for _, j := range js {
		out = append(out, label(j))
	}
	return out
}

func wantDispatch(t *testing.T, c *Core, now time.Time, want ...string) []*Job {
	t.Helper()
	got := c.Dispatch(now, nil)
	if want == nil {
		want = []string{}
	}
	if diff := cmp.Diff(want, labels(got)); diff != "" {
		t.Fatalf("Dispatch at +%v admitted (-want +got):\n%s", now.Sub(t0), diff)
	}
	return got
}

// reasons returns the snapshot's pending jobs as "label reason", in dispatch
// order.
func reasons(c *Core, now time.Time) []string {
	out := []string{}
	for _, p := range c.Snapshot(now).Pending {
		out = append(out, fmt.Sprintf("%s/%s@%s %s", p.Type, p.ID, p.FairnessKey, p.Reason))
	}
	return out
}

// Job types of the examples. Every test registers only the ones it needs.
var (
	clone  = typeDef{"clone", policy.JobTypeConfig{DefaultCost: ms(10), MaxConcurrency: 2, ConflictGroup: "git", Priority: 3}}
	pull   = typeDef{"pull", policy.JobTypeConfig{DefaultCost: ms(3), ConflictGroup: "git", Priority: 3}}
	repack = typeDef{"repack", policy.JobTypeConfig{DefaultCost: ms(20), MaxConcurrency: 1, ConflictGroup: "git", Priority: 1}}
	snap   = typeDef{"snap", policy.JobTypeConfig{DefaultCost: ms(5), Priority: 1}}
	vacuum = typeDef{"vacuum", policy.JobTypeConfig{DefaultCost: ms(5), ConflictGroup: "db", Priority: 3}}
	wide   = typeDef{"wide", policy.JobTypeConfig{DefaultCost: ms(1), Priority: 100}}
)

func TestRegisterType(t *testing.T) {
	c := newCore(t, 0, clone)
	if err := c.RegisterType("clone", clone.cfg); !errors.Is(err, policy.ErrDuplicateType) {
		t.Errorf("second RegisterType = %v, want ErrDuplicateType", err)
	}
	bad := clone.cfg
	bad.Priority = 0
	if err := c.RegisterType("bad", bad); !errors.Is(err, policy.ErrInvalidConfig) {
		t.Errorf("RegisterType(priority 0) = %v, want ErrInvalidConfig", err)
	}
	if err := c.RegisterType("", clone.cfg); !errors.Is(err, policy.ErrInvalidConfig) {
		t.Errorf(`RegisterType("") = %v, want ErrInvalidConfig`, err)
	}
	types := c.Types()
	if diff := cmp.Diff(map[policy.JobType]policy.JobTypeConfig{"clone": clone.cfg}, types); diff != "" {
		t.Errorf("Types (-want +got):\n%s", diff)
	}
	types["pull"] = pull.cfg
	if len(c.Types()) != 1 {
		t.Error("mutating Types() registered a type")
	}
	err := c.Submit(t0, &Job{Job: queue.Job{Type: "bad", ID: "x"}})
	if !errors.Is(err, policy.ErrUnknownJobType) {
		t.Errorf("Submit of unregistered type = %v, want ErrUnknownJobType", err)
	}
	if c.Pending() != 0 || !c.Idle() {
		t.Errorf("rejected Submit left Pending %d", c.Pending())
	}
	j := submit(t, c, t0, "clone", "r", "k")
	if j.Seq != 1 || j.Priority() != 3 || !submittedAt(c, j).Equal(t0) {
		t.Errorf("submitted job: Seq %d Priority %d Submitted %v", j.Seq, j.Priority(), submittedAt(c, j))
	}
}

func TestTierCapIsPriority(t *testing.T) {
	tier3 := typeDef{"t3", policy.JobTypeConfig{DefaultCost: ms(1), Priority: 3}}
	c := newCore(t, 0, tier3, snap)
	for i := range 5 {
		submit(t, c, t0, "t3", fmt.Sprint("r", i), "")
	}
	submit(t, c, t0, "snap", "s0", "")
	submit(t, c, t0, "snap", "s1", "")
	got := wantDispatch(t, c, t0, "t3/r0@", "t3/r1@", "t3/r2@", "snap/s0@")
	if c.TierRunning(3) != 3 || c.TierRunning(1) != 1 || c.RunningCount() != 4 || c.Pending() != 3 {
		t.Errorf("tier 3 runs %d, tier 1 runs %d, running %d, pending %d", c.TierRunning(3), c.TierRunning(1), c.RunningCount(), c.Pending())
	}
	want := []string{"t3/r3@ tier_limit", "t3/r4@ tier_limit", "snap/s1@ tier_limit"}
	if diff := cmp.Diff(want, reasons(c, t0)); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	// Nothing changed: nothing more is admitted.
	wantDispatch(t, c, t0)
	c.Finish(at(1), got[1])
	wantDispatch(t, c, at(1), "t3/r3@")
	c.Finish(at(2), got[3])
	wantDispatch(t, c, at(2), "snap/s1@")
}

func TestTypeCap(t *testing.T) {
	clone10 := typeDef{"clone", policy.JobTypeConfig{DefaultCost: ms(10), MaxConcurrency: 2, ConflictGroup: "git", Priority: 10}}
	other := typeDef{"other", policy.JobTypeConfig{DefaultCost: ms(100), Priority: 10}}
	c := newCore(t, 0, clone10, other)
	// clone: cap 2 in tier 10. Its four clones come first in order (same
	// key, earlier arrival), but only two may run; other's job behind them
	// runs.
	var cl []*Job
	for i := range 4 {
		cl = append(cl, submit(t, c, t0, "clone", fmt.Sprint("r", i), "a"))
	}
	submit(t, c, t0, "other", "o", "a")
	wantDispatch(t, c, t0, "clone/r0@a", "clone/r1@a", "other/o@a")
	want := []string{"clone/r2@a type_limit", "clone/r3@a type_limit"}
	if diff := cmp.Diff(want, reasons(c, t0)); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	c.Finish(at(5), cl[0])
	wantDispatch(t, c, at(5), "clone/r2@a")
	wantDispatch(t, c, at(5))
	c.Finish(at(6), cl[1])
	c.Finish(at(6), cl[2])
	wantDispatch(t, c, at(6), "clone/r3@a")
}

func TestTypeCapZeroIsUnlimited(t *testing.T) {
	c := newCore(t, 0, wide)
	for i := range 60 {
		submit(t, c, t0, "wide", fmt.Sprint(i), "")
	}
	if got := c.Dispatch(t0, nil); len(got) != 60 {
		t.Errorf("admitted %d of 60 jobs with no type cap and tier 100", len(got))
	}
}

func TestGlobalCap(t *testing.T) {
	c := newCore(t, 2, wide, snap)
	js := []*Job{
		submit(t, c, t0, "wide", "w1", ""),
		submit(t, c, t0, "snap", "s1", ""),
		submit(t, c, t0, "wide", "w2", ""),
	}
	wantDispatch(t, c, t0, "wide/w1@", "wide/w2@")
	want := []string{"snap/s1@ global_limit"}
	if diff := cmp.Diff(want, reasons(c, t0)); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	submit(t, c, at(1), "wide", "w3", "")
	wantDispatch(t, c, at(1))
	c.Finish(at(2), js[0])
	// The higher tier goes first into the freed slot.
	wantDispatch(t, c, at(2), "wide/w3@")
	c.Finish(at(3), js[2])
	wantDispatch(t, c, at(3), "snap/s1@")
}

func TestConflictExclusion(t *testing.T) {
	// Tiers large enough that only conflicts hold jobs back.
	big := func(td typeDef, p policy.Priority) typeDef {
		td.cfg.Priority = p
		return td
	}
	c := newCore(t, 0, big(clone, 10), big(pull, 10), big(repack, 5), big(snap, 5), big(vacuum, 10))
	first := submit(t, c, t0, "clone", "r1", "a")
	wantDispatch(t, c, t0, "clone/r1@a")
	// Same group, same id: wait. Other id, no group, other group: run.
	submit(t, c, at(1), "pull", "r1", "b")
	submit(t, c, at(1), "repack", "r1", "")
	submit(t, c, at(1), "pull", "r2", "b")
	submit(t, c, at(1), "snap", "r1", "")
	submit(t, c, at(1), "vacuum", "r1", "c")
	wantDispatch(t, c, at(1), "pull/r2@b", "vacuum/r1@c", "snap/r1@")
	want := []string{"pull/r1@b conflict", "repack/r1@ conflict"}
	if diff := cmp.Diff(want, reasons(c, at(1))); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	// The same type conflicts with itself on the same id.
	submit(t, c, at(2), "clone", "r1", "d")
	wantDispatch(t, c, at(2))
	// When the holder finishes, exactly one of the waiting jobs runs: the
	// first in order. d joined at the minimum over active keys (a: 10ms),
	// below b (13ms after its pull on r2), so d's clone goes first.
	c.Finish(at(3), first)
	got := wantDispatch(t, c, at(3), "clone/r1@d")
	wantDispatch(t, c, at(3))
	c.Finish(at(4), got[0])
	got = wantDispatch(t, c, at(4), "pull/r1@b")
	wantDispatch(t, c, at(4))
	c.Finish(at(5), got[0])
	wantDispatch(t, c, at(5), "repack/r1@")
}

func TestConflictAcrossTiersAndHeadOfLine(t *testing.T) {
	c := newCore(t, 0, clone, repack, snap)
	rp := submit(t, c, t0, "repack", "r1", "")
	wantDispatch(t, c, t0, "repack/r1@")
	// The first job in order conflicts with the running repack; the
	// jobs behind it, in its own lane and in others, are not held up.
	submit(t, c, at(1), "clone", "r1", "a")
	submit(t, c, at(1), "clone", "r2", "a")
	submit(t, c, at(1), "clone", "r3", "b")
	wantDispatch(t, c, at(1), "clone/r2@a", "clone/r3@b")
	c.Finish(at(2), rp)
	// The clone on r1 waits for the type cap now.
	wantDispatch(t, c, at(2))
	want := []string{"clone/r1@a type_limit"}
	if diff := cmp.Diff(want, reasons(c, at(2))); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
}

func TestPriorityBeforeCost(t *testing.T) {
	hi := typeDef{"hi", policy.JobTypeConfig{DefaultCost: ms(1), Priority: 5}}
	lo := typeDef{"lo", policy.JobTypeConfig{DefaultCost: ms(1), Priority: 4}}
	c := newCore(t, 1, hi, lo)
	j := submit(t, c, t0, "hi", "x", "rich")
	submit(t, c, t0, "lo", "y", "poor")
	wantDispatch(t, c, t0, "hi/x@rich")
	submit(t, c, at(1), "hi", "z", "rich")
	c.Finish(at(2), j)
	// rich (1ms) has consumed more than poor (0), but its tier is higher.
	if c.KeyCost("rich") <= c.KeyCost("poor") {
		t.Fatalf("rich %v, poor %v", c.KeyCost("rich"), c.KeyCost("poor"))
	}
	wantDispatch(t, c, at(2), "hi/z@rich")
}

func TestFairnessAlternates(t *testing.T) {
	c := newCore(t, 1, clone)
	for i := range 3 {
		submit(t, c, t0, "clone", fmt.Sprint("a", i), "a")
	}
	for i := range 3 {
		submit(t, c, t0, "clone", fmt.Sprint("b", i), "b")
	}
	var order []string
	now := 0
	for range 6 {
		got := c.Dispatch(at(now), nil)
		if len(got) != 1 {
			t.Fatalf("admitted %d jobs under global cap 1", len(got))
		}
		order = append(order, label(got[0]))
		now += 10
		c.Finish(at(now), got[0])
	}
	want := []string{"clone/a0@a", "clone/b0@b", "clone/a1@a", "clone/b1@b", "clone/a2@a", "clone/b2@b"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestExpensiveKeyYields(t *testing.T) {
	c := newCore(t, 1, clone)
	// Teach the scheduler that clone/linux costs 100ms.
	j := submit(t, c, t0, "clone", "linux", "x")
	wantDispatch(t, c, t0, "clone/linux@x")
	if got := c.Finish(at(340), j); got != (Completion{Elapsed: ms(340), Estimate: ms(109)}) {
		t.Fatalf("Completion = %+v, want 340ms, 0.3·340+0.7·10 = 109ms", got)
	}
	// Key a clones linux (109ms), key b clones small repos (10ms each): b
	// gets eleven admissions (to 120ms) before a's second (a at 119ms).
	submit(t, c, at(400), "clone", "linux", "a")
	submit(t, c, at(400), "clone", "linux", "a")
	for i := range 12 {
		submit(t, c, at(400), "clone", fmt.Sprint("small", i), "b")
	}
	var order []string
	now := 400
	for c.Pending() > 0 {
		got := c.Dispatch(at(now), nil)
		order = append(order, label(got[0]))
		c.Finish(at(now), got[0]) // zero elapsed
	}
	want := []string{"clone/linux@a"}
	for i := range 11 {
		want = append(want, fmt.Sprintf("clone/small%d@b", i))
	}
	want = append(want, "clone/linux@a", "clone/small11@b")
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestCostChargedAtAdmissionAndLearned(t *testing.T) {
	c := newCore(t, 0, clone, pull)
	j := submit(t, c, t0, "clone", "r", "a")
	if c.KeyCost("a") != 0 || j.Running != nil { // its Running record comes with its admission
		t.Fatalf("charged before admission: key %v, job %+v", c.KeyCost("a"), j.Running)
	}
	wantDispatch(t, c, at(100), "clone/r@a")
	if j.Cost != ms(10) || j.KeyCost != ms(10) || c.KeyCost("a") != ms(10) || !j.Started.Equal(at(100)) {
		t.Fatalf("after admission: Cost %v KeyCost %v key %v Started %v; want the default 10ms",
			j.Cost, j.KeyCost, c.KeyCost("a"), j.Started.Sub(t0))
	}
	// Elapsed runs from admission, not from submission.
	done := c.Finish(at(150), j)
	if diff := cmp.Diff(Completion{Elapsed: ms(50), Estimate: ms(22)}, done); diff != "" {
		t.Errorf("Completion (-want +got):\n%s", diff)
	}
	// Finishing does not charge again.
	if c.KeyCost("a") != ms(10) {
		t.Errorf("key cost after Finish = %v, want 10ms", c.KeyCost("a"))
	}
	// The learned estimate is charged for the same (type, id) only.
	j2 := submit(t, c, at(200), "clone", "r", "a")
	j3 := submit(t, c, at(200), "pull", "r", "a")
	wantDispatch(t, c, at(200), "clone/r@a")
	if j2.Cost != ms(22) || j2.KeyCost != ms(32) {
		t.Errorf("second clone/r: Cost %v KeyCost %v, want 22ms, 32ms", j2.Cost, j2.KeyCost)
	}
	if got := c.Finish(at(200), j2); got != (Completion{Elapsed: 0, Estimate: 15400 * time.Microsecond}) {
		t.Errorf("zero-elapsed Completion = %+v, want estimate 0.7·22 = 15.4ms", got)
	}
	wantDispatch(t, c, at(200), "pull/r@a")
	if j3.Cost != ms(3) || j3.KeyCost != ms(35) {
		t.Errorf("pull/r: Cost %v KeyCost %v, want its default 3ms, 35ms", j3.Cost, j3.KeyCost)
	}
	s := c.Snapshot(at(200))
	wantEst := []CostEstimate{{Type: "clone", ID: "r", Cost: 15400 * time.Microsecond}}
	if diff := cmp.Diff(wantEst, s.CostEstimates); diff != "" {
		t.Errorf("CostEstimates (-want +got):\n%s", diff)
	}
}

func TestNewKeyJoinsAtMinimumOfActive(t *testing.T) {
	c := newCore(t, 1, clone)
	a := submit(t, c, t0, "clone", "a1", "a")
	submit(t, c, t0, "clone", "a2", "a")
	wantDispatch(t, c, t0, "clone/a1@a")
	c.Finish(at(1), a)
	wantDispatch(t, c, at(1), "clone/a2@a")
	// a has 20ms and is the only active key: b starts at 20ms, not 0.
	submit(t, c, at(2), "clone", "b1", "b")
	if got := c.KeyCost("b"); got != ms(20) {
		t.Errorf("new key b joins at %v, want 20ms", got)
	}
	submit(t, c, at(2), "clone", "a3", "a")
	// b (20ms) and a (20ms) tie: b1 arrived first.
	running := c.Running()
	c.Finish(at(3), running[0])
	wantDispatch(t, c, at(3), "clone/b1@b")
}

func TestWithdraw(t *testing.T) {
	c := newCore(t, 1, clone, pull)
	run := submit(t, c, t0, "clone", "r", "a")
	wait := submit(t, c, t0, "clone", "s", "b")
	submit(t, c, t0, "pull", "r", "c")
	wantDispatch(t, c, t0, "clone/r@a")
	// Global cap 1: wait and the pull pend.
	if c.Withdraw(at(1), run) {
		t.Error("Withdraw of a running job reported true")
	}
	if !c.Withdraw(at(1), wait) {
		t.Error("Withdraw of a pending job reported false")
	}
	if c.Withdraw(at(1), wait) {
		t.Error("second Withdraw reported true")
	}
	if c.Withdraw(at(1), &Job{Job: queue.Job{Type: "clone", ID: "never"}}) {
		t.Error("Withdraw of a job never submitted reported true")
	}
	if c.KeyCost("b") != 0 || wait.Running != nil {
		t.Errorf("withdrawn job charged: key %v, job %+v", c.KeyCost("b"), wait.Running)
	}
	if c.Pending() != 1 {
		t.Errorf("Pending = %d, want 1", c.Pending())
	}
	c.Finish(at(2), run)
	got := wantDispatch(t, c, at(2), "pull/r@c")
	c.Finish(at(3), got[0])
	wantDispatch(t, c, at(3))
	if !c.Idle() {
		t.Error("not idle after everything finished or left")
	}
}

func TestWithdrawParked(t *testing.T) {
	c := newCore(t, 0, clone, pull)
	holder := submit(t, c, t0, "clone", "r", "a")
	wantDispatch(t, c, t0, "clone/r@a")
	p1 := submit(t, c, at(1), "pull", "r", "b")
	submit(t, c, at(1), "pull", "r", "c")
	wantDispatch(t, c, at(1))
	if !p1.Parked() {
		t.Fatal("conflicting job not parked by Dispatch")
	}
	if !c.Withdraw(at(2), p1) {
		t.Fatal("Withdraw of a parked job reported false")
	}
	c.Finish(at(3), holder)
	wantDispatch(t, c, at(3), "pull/r@c")
	if c.Pending() != 0 {
		t.Errorf("Pending = %d: the withdrawn job came back", c.Pending())
	}
}

func TestWithdrawAll(t *testing.T) {
	c := newCore(t, 0, clone, repack, snap)
	run := submit(t, c, t0, "repack", "r", "")
	wantDispatch(t, c, t0, "repack/r@")
	submit(t, c, at(1), "clone", "r", "b") // parked on git/r
	submit(t, c, at(1), "snap", "s", "")   // tier 1 full
	submit(t, c, at(1), "clone", "x", "a") // runs
	submit(t, c, at(1), "repack", "y", "") // type and tier full
	submit(t, c, at(1), "clone", "z", "a") // runs
	submit(t, c, at(1), "clone", "w", "a") // type cap
	wantDispatch(t, c, at(1), "clone/x@a", "clone/z@a")
	out := c.WithdrawAll(at(2))
	want := []string{"clone/r@b", "snap/s@", "repack/y@", "clone/w@a"}
	if diff := cmp.Diff(want, labels(out)); diff != "" {
		t.Errorf("WithdrawAll (-want +got):\n%s", diff)
	}
	if c.Pending() != 0 || c.RunningCount() != 3 {
		t.Errorf("Pending %d, RunningCount %d, want 0, 3", c.Pending(), c.RunningCount())
	}
	if got := c.WithdrawAll(at(2)); len(got) != 0 {
		t.Errorf("second WithdrawAll returned %v", labels(got))
	}
	c.Finish(at(3), run)
	wantDispatch(t, c, at(3))
	// Key b left with its only job at +2ms: it is idle and expires; "" left
	// at +3ms, when its repack finished.
	if keys, _ := c.Evict(at(2).Add(policy.DefaultKeyTTL)); keys != 1 {
		t.Errorf("Evict dropped %d keys, want b", keys)
	}
	if diff := cmp.Diff(map[string]time.Duration{"a": ms(40), "": ms(20)}, c.Snapshot(at(3)).AccumulatedCost); diff != "" {
		t.Errorf("AccumulatedCost (-want +got):\n%s", diff)
	}
}

func TestEvict(t *testing.T) {
	ttl := policy.DefaultKeyTTL
	c := newCore(t, 0, clone)
	a := submit(t, c, t0, "clone", "r1", "a")
	b := submit(t, c, t0, "clone", "r2", "b")
	submit(t, c, t0, "clone", "r3", "c") // type cap: pends, key c stays active
	wantDispatch(t, c, t0, "clone/r1@a", "clone/r2@b")
	c.Finish(at(10), a)
	got := wantDispatch(t, c, at(10), "clone/r3@c")
	c.Finish(at(20), b)

	if k, e := c.Evict(at(10).Add(ttl - 1)); k != 0 || e != 0 {
		t.Errorf("Evict before the TTL dropped %d keys, %d estimates", k, e)
	}
	// a and clone/r1 are a TTL old; b and clone/r2 are not; c is running.
	if k, e := c.Evict(at(10).Add(ttl)); k != 1 || e != 1 {
		t.Errorf("Evict at TTL dropped %d keys, %d estimates, want 1, 1", k, e)
	}
	s := c.Snapshot(at(10).Add(ttl))
	if diff := cmp.Diff(map[string]time.Duration{"b": ms(10), "c": ms(10)}, s.AccumulatedCost); diff != "" {
		t.Errorf("AccumulatedCost (-want +got):\n%s", diff)
	}
	if len(s.CostEstimates) != 1 || s.CostEstimates[0].ID != "r2" {
		t.Errorf("CostEstimates = %+v, want clone/r2 only", s.CostEstimates)
	}
	// The running key never expires.
	if k, e := c.Evict(at(10).Add(100 * ttl)); k != 1 || e != 1 {
		t.Errorf("late Evict dropped %d keys, %d estimates, want b and clone/r2", k, e)
	}
	if diff := cmp.Diff(map[string]time.Duration{"c": ms(10)}, c.Snapshot(t0).AccumulatedCost); diff != "" {
		t.Errorf("AccumulatedCost (-want +got):\n%s", diff)
	}
	c.Finish(at(10).Add(100*ttl), got[0])
}

func TestRegisterTypeIntoFullTier(t *testing.T) {
	one := typeDef{"one", policy.JobTypeConfig{DefaultCost: ms(1), Priority: 1}}
	two := typeDef{"two", policy.JobTypeConfig{DefaultCost: ms(1), Priority: 1}}
	c := newCore(t, 0, one)
	j := submit(t, c, t0, "one", "x", "")
	wantDispatch(t, c, t0, "one/x@")
	if err := c.RegisterType(two.name, two.cfg); err != nil {
		t.Fatal(err)
	}
	submit(t, c, t0, "two", "y", "")
	wantDispatch(t, c, t0)
	if diff := cmp.Diff([]string{"two/y@ tier_limit"}, reasons(c, t0)); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	c.Finish(at(1), j)
	wantDispatch(t, c, at(1), "two/y@")
}

func TestFinishOfJobNotRunningPanics(t *testing.T) {
	c := newCore(t, 1, clone)
	j := submit(t, c, t0, "clone", "r", "a")
	p := submit(t, c, t0, "clone", "s", "a")
	wantDispatch(t, c, t0, "clone/r@a")
	c.Finish(at(1), j)
	for name, job := range map[string]*Job{"finished": j, "pending": p} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Finish of a %s job did not panic", name)
				}
			}()
			c.Finish(at(2), job)
		}()
	}
}

func TestDispatchAppendsToBuf(t *testing.T) {
	c := newCore(t, 0, snap)
	submit(t, c, t0, "snap", "s", "")
	buf := make([]*Job, 1, 4)
	out := c.Dispatch(t0, buf)
	if len(out) != 2 || out[0] != nil || out[1].ID != "s" {
		t.Errorf("Dispatch(buf) = %v", out)
	}
}

func TestRunningInAdmissionOrder(t *testing.T) {
	c := newCore(t, 0, clone, snap)
	// The background job arrives first but is admitted after the clones.
	submit(t, c, t0, "snap", "s", "")
	submit(t, c, t0, "clone", "b", "b")
	submit(t, c, t0, "clone", "a", "a")
	first := wantDispatch(t, c, t0, "clone/b@b", "clone/a@a", "snap/s@")
	c.Finish(at(1), first[0])
	submit(t, c, at(1), "clone", "c", "c")
	wantDispatch(t, c, at(1), "clone/c@c")
	want := []string{"clone/a@a", "snap/s@", "clone/c@c"}
	if diff := cmp.Diff(want, labels(c.Running())); diff != "" {
		t.Errorf("Running (-want +got):\n%s", diff)
	}
	var snapOrder []string
	for _, r := range c.Snapshot(at(1)).Running {
		snapOrder = append(snapOrder, fmt.Sprintf("%s/%s@%s", r.Type, r.ID, r.FairnessKey))
	}
	if diff := cmp.Diff(want, snapOrder); diff != "" {
		t.Errorf("Snapshot.Running (-want +got):\n%s", diff)
	}
}

// snapshotFixture builds a core in which one job of each of the reasons
// tier_limit, type_limit and conflict waits.
func snapshotFixture(t *testing.T) *Core {
	c := newCore(t, 4, clone, pull, repack, snap)
	submit(t, c, t0, "clone", "r1", "a")
	submit(t, c, t0, "clone", "r2", "b")
	submit(t, c, t0, "clone", "r3", "a")
	submit(t, c, t0, "pull", "r1", "c")
	submit(t, c, t0, "repack", "r9", "")
	submit(t, c, t0, "snap", "r5", "")
	wantDispatch(t, c, at(1), "clone/r1@a", "clone/r2@b", "repack/r9@")
	return c
}

func TestSnapshot(t *testing.T) {
	c := snapshotFixture(t)
	types := c.Types()
	want := Snapshot{
		Time:           at(2),
		MaxConcurrency: 4,
		Running: []RunningJob{
			{Type: "clone", ID: "r1", FairnessKey: "a", Priority: 3, EffectivePriority: 3, Submitted: t0, Started: at(1), EstimatedCost: ms(10)},
			{Type: "clone", ID: "r2", FairnessKey: "b", Priority: 3, EffectivePriority: 3, Submitted: t0, Started: at(1), EstimatedCost: ms(10)},
			{Type: "repack", ID: "r9", FairnessKey: "", Priority: 1, EffectivePriority: 1, Submitted: t0, Started: at(1), EstimatedCost: ms(20)},
		},
		Pending: []PendingJob{
			{Type: "pull", ID: "r1", FairnessKey: "c", Priority: 3, EffectivePriority: 3, Submitted: t0, Reason: policy.ReasonConflict, Reasons: []policy.Reason{policy.ReasonConflict},
				Blockers: []Blocker{{Reason: policy.ReasonConflict, Type: "clone", ID: "r1", Key: str("a"), Running: 1}},
				Estimate: &StartEstimate{At: at(11)}, History: []WaitNote{{Reason: policy.ReasonConflict, Since: at(1)}}},
			{Type: "clone", ID: "r3", FairnessKey: "a", Priority: 3, EffectivePriority: 3, Submitted: t0, Reason: policy.ReasonTypeLimit, Reasons: []policy.Reason{policy.ReasonTypeLimit},
				Blockers: []Blocker{{Reason: policy.ReasonTypeLimit, Key: str("a"), Running: 1}, {Reason: policy.ReasonTypeLimit, Key: str("b"), Running: 1}},
				Estimate: &StartEstimate{At: at(11)}, History: []WaitNote{{Reason: policy.ReasonTypeLimit, Since: at(2)}}},
			{Type: "snap", ID: "r5", FairnessKey: "", Priority: 1, EffectivePriority: 1, Submitted: t0, Reason: policy.ReasonTierLimit, Reasons: []policy.Reason{policy.ReasonTierLimit},
				Blockers: []Blocker{{Reason: policy.ReasonTierLimit, Key: str(""), Running: 1}},
				Estimate: &StartEstimate{At: at(21), Ahead: 1}, History: []WaitNote{{Reason: policy.ReasonTierLimit, Since: at(2)}}},
		},
		AccumulatedCost: map[string]time.Duration{"a": ms(10), "b": ms(10), "c": 0, "": ms(20)},
		CostEstimates:   []CostEstimate{},
		RunningByTier:   map[policy.Priority]int{3: 2, 1: 1},
		RunningByType:   map[policy.JobType]int{"clone": 2, "repack": 1},
		Types:           types,
		PendingTotal:    3,
		KeysTotal:       4,
	}
	s := c.Snapshot(at(2))
	if diff := cmp.Diff(want, s); diff != "" {
		t.Fatalf("Snapshot (-want +got):\n%s", diff)
	}
	checkJSON(t, s)

	// Mutating the snapshot in every part leaves the core unchanged.
	s.Running[0].ID = "mutated"
	s.Pending[0].Reason = "mutated"
	s.Pending[0].Reasons[0] = "mutated"
	s.AccumulatedCost["a"] = time.Hour
	s.AccumulatedCost["new"] = time.Hour
	s.RunningByTier[3] = 99
	s.RunningByType["clone"] = 99
	s.Types["clone"] = policy.JobTypeConfig{DefaultCost: time.Hour, Priority: 1}
	s.Types["ghost"] = policy.JobTypeConfig{}
	s.Running = append(s.Running[:0], RunningJob{})
	if diff := cmp.Diff(want, c.Snapshot(at(2))); diff != "" {
		t.Fatalf("Snapshot after mutating an earlier one (-want +got):\n%s", diff)
	}
	if c.KeyCost("a") != ms(10) {
		t.Errorf("KeyCost(a) = %v after mutating a snapshot", c.KeyCost("a"))
	}

	// Learned estimates show up sorted by type then id; the freed conflict
	// and type slot admit two jobs, filling the global cap.
	running := c.Running()
	c.Finish(at(41), running[0]) // clone/r1: 40ms → 0.3·40 + 0.7·10 = 19ms
	c.Finish(at(41), running[2]) // repack/r9: 40ms → 0.3·40 + 0.7·20 = 26ms
	wantDispatch(t, c, at(41), "pull/r1@c", "clone/r3@a", "snap/r5@")
	submit(t, c, at(42), "pull", "r7", "d")
	want2 := Snapshot{
		Time:           at(42),
		MaxConcurrency: 4,
		Running: []RunningJob{
			{Type: "clone", ID: "r2", FairnessKey: "b", Priority: 3, EffectivePriority: 3, Submitted: t0, Started: at(1), EstimatedCost: ms(10)},
			{Type: "pull", ID: "r1", FairnessKey: "c", Priority: 3, EffectivePriority: 3, Submitted: t0, Started: at(41), EstimatedCost: ms(3)},
			{Type: "clone", ID: "r3", FairnessKey: "a", Priority: 3, EffectivePriority: 3, Submitted: t0, Started: at(41), EstimatedCost: ms(10)},
			{Type: "snap", ID: "r5", FairnessKey: "", Priority: 1, EffectivePriority: 1, Submitted: t0, Started: at(41), EstimatedCost: ms(5)},
		},
		Pending: []PendingJob{
			{Type: "pull", ID: "r7", FairnessKey: "d", Priority: 3, EffectivePriority: 3, Submitted: at(42), Reason: policy.ReasonTierLimit, Reasons: []policy.Reason{policy.ReasonTierLimit, policy.ReasonGlobalLimit},
				Blockers: []Blocker{{Reason: policy.ReasonTierLimit, Key: str("a"), Running: 1}, {Reason: policy.ReasonTierLimit, Key: str("b"), Running: 1}, {Reason: policy.ReasonTierLimit, Key: str("c"), Running: 1}},
				// clone/r2 is past its learned cost: it is expected to end now.
				Estimate: &StartEstimate{At: at(42)}, History: []WaitNote{{Reason: policy.ReasonTierLimit, Since: at(42)}}},
		},
		// d joins at the minimum over active keys: c (3ms).
		AccumulatedCost: map[string]time.Duration{"a": ms(20), "b": ms(10), "c": ms(3), "d": ms(3), "": ms(25)},
		CostEstimates: []CostEstimate{
			{Type: "clone", ID: "r1", Cost: ms(19)},
			{Type: "repack", ID: "r9", Cost: ms(26)},
		},
		RunningByTier: map[policy.Priority]int{3: 3, 1: 1},
		RunningByType: map[policy.JobType]int{"clone": 2, "pull": 1, "snap": 1},
		Types:         types,
		PendingTotal:  1, KeysTotal: 5, EstimatesTotal: 2,
	}
	s2 := c.Snapshot(at(42))
	if diff := cmp.Diff(want2, s2); diff != "" {
		t.Fatalf("second Snapshot (-want +got):\n%s", diff)
	}
	checkJSON(t, s2)
	s2.CostEstimates[0].Cost = time.Hour
	if diff := cmp.Diff(want2.CostEstimates, c.Snapshot(at(42)).CostEstimates); diff != "" {
		t.Errorf("CostEstimates after mutating a snapshot (-want +got):\n%s", diff)
	}
}

func TestSnapshotEmpty(t *testing.T) {
	c := newCore(t, 0)
	s := c.Snapshot(t0)
	want := Snapshot{
		Time:            t0,
		Running:         []RunningJob{},
		Pending:         []PendingJob{},
		AccumulatedCost: map[string]time.Duration{},
		CostEstimates:   []CostEstimate{},
		RunningByTier:   map[policy.Priority]int{},
		RunningByType:   map[policy.JobType]int{},
		Types:           map[policy.JobType]policy.JobTypeConfig{},
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("empty Snapshot (-want +got):\n%s", diff)
	}
	checkJSON(t, s)
}

// checkJSON encodes s and decodes it back: the result must equal s.
func checkJSON(t *testing.T, s Snapshot) {
	t.Helper()
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	var back Snapshot
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("Unmarshal: %v\n%s", err, data)
	}
	if diff := cmp.Diff(s, back); diff != "" {
		t.Errorf("JSON round trip (-before +after):\n%s\n%s", diff, data)
	}
	// The field names are part of the contract.
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"time", "max_concurrency", "running", "pending", "accumulated_cost", "cost_estimates", "running_by_tier", "running_by_type", "types"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, data)
		}
	}
}

func TestSnapshotReasonsEveryPendingJob(t *testing.T) {
	// After Dispatch every pending job has a reason: a pending job without
	// one would have been admitted.
	c := snapshotFixture(t)
	for _, p := range c.Snapshot(at(1)).Pending {
		if p.Reason == "" {
			t.Errorf("pending %s/%s has no reason", p.Type, p.ID)
		}
	}
}

// TestSnapshotRows: a bounded snapshot lists the first pending jobs of the
// full one, in the same order with the same reasons, the keys of the listed
// jobs and the most recently used estimates, and counts everything in the
// totals — over random states with aging, so effective priorities differ.
func TestSnapshotRows(t *testing.T) {
	l := policy.DefaultLimits()
	l.MaxConcurrency = 3
	l.Aging = &policy.AgingConfig{GracePeriod: ms(5), Interval: ms(5), Step: 1, MaxEffectivePriority: 6}
	c := New(l)
	for _, td := range []typeDef{clone, pull, repack, snap} {
		if err := c.RegisterType(td.name, td.cfg); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(7, 7))
	now := t0
	var running []*Job
	for i := range 400 {
		now = now.Add(ms(1))
		submit(t, c, now, []policy.JobType{"clone", "pull", "repack", "snap"}[rng.IntN(4)], fmt.Sprint("r", rng.IntN(50)), fmt.Sprint("k", rng.IntN(12)))
		if i%3 == 0 && len(running) > 0 {
			k := rng.IntN(len(running))
			c.Finish(now, running[k])
			running = slices.Delete(running, k, k+1)
		}
		running = append(running, c.Dispatch(now, nil)...)
		if i%40 != 39 {
			continue
		}
		full := c.Snapshot(now)
		for _, rows := range []int{1, 7, 50, 10_000} {
			got := c.SnapshotRows(now, rows)
			n := min(rows, len(full.Pending))
			if diff := cmp.Diff(full.Pending[:n], got.Pending); diff != "" {
				t.Fatalf("op %d, rows %d: pending rows (-full +bounded):\n%s", i, rows, diff)
			}
			if got.PendingTotal != len(full.Pending) || got.KeysTotal != len(full.AccumulatedCost) || got.EstimatesTotal != len(full.CostEstimates) {
				t.Fatalf("op %d, rows %d: totals %d %d %d; want %d %d %d", i, rows, got.PendingTotal, got.KeysTotal, got.EstimatesTotal,
					len(full.Pending), len(full.AccumulatedCost), len(full.CostEstimates))
			}
			for k, v := range got.AccumulatedCost {
				if full.AccumulatedCost[k] != v {
					t.Fatalf("op %d: key %q at %v, the full snapshot says %v", i, k, v, full.AccumulatedCost[k])
				}
			}
			for _, p := range got.Pending {
				if _, ok := got.AccumulatedCost[p.FairnessKey]; !ok {
					t.Fatalf("op %d: listed job's key %q has no cost", i, p.FairnessKey)
				}
			}
			if len(got.CostEstimates) != min(rows, len(full.CostEstimates)) {
				t.Fatalf("op %d, rows %d: %d estimates of %d", i, rows, len(got.CostEstimates), len(full.CostEstimates))
			}
		}
	}
}

// A job's Running record comes with its admission, stays through Finish
// (what reports the end reads it) and, once released, serves the next
// admission: a pending job carries none.
func TestRunningRecordReleasedAndReused(t *testing.T) {
	c := newCore(t, 1, clone)
	first := submit(t, c, t0, "clone", "r", "a")
	second := submit(t, c, t0, "clone", "s", "a")
	if first.Running != nil || second.Running != nil {
		t.Fatal("a pending job has a Running record")
	}
	wantDispatch(t, c, at(1), "clone/r@a")
	r := first.Running
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Release of a running job did not panic")
			}
		}()
		c.Release(first)
	}()
	c.Finish(at(3), first)
	if first.Running != r || !first.Started.Equal(at(1)) || first.Cost != ms(10) {
		t.Fatalf("after Finish: %+v, want its admission's record kept", first.Running)
	}
	c.Release(first)
	if first.Running != nil {
		t.Fatal("Release left the record on the job")
	}
	wantDispatch(t, c, at(4), "clone/s@a")
	if second.Running != r || !second.Started.Equal(at(4)) {
		t.Errorf("next admission took %p (Started %v), want the released %p", second.Running, second.Started, r)
	}
}

// submittedAt is j's Submitted (nanoseconds since c's queue's epoch) as a
// time in the tests' clock's location.
func submittedAt(c *Core, j *Job) time.Time { return c.queue.TimeOf(j.Submitted).In(t0.Location()) }

// deadlineAt is j's Deadline as a time: zero for none.
func deadlineAt(c *Core, j *Job) time.Time {
	if j.Deadline == 0 {
		return time.Time{}
	}
	return c.queue.TimeOf(j.Deadline).In(t0.Location())
}
