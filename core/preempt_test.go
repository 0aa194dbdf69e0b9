package core

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/policy"
)

// tierCore returns a core of global cap n, priorities only ordering, with
// the tiers and types given and decision records on.
func tierCore(t *testing.T, n int, tiers map[policy.Priority]policy.TierConfig, types ...typeDef) *Core {
	t.Helper()
	l := policy.DefaultLimits()
	l.MaxConcurrency, l.PriorityMode, l.Tiers = n, policy.PriorityOrderOnly, tiers
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	c := New(l)
	c.SetDecisionLog(true)
	for _, td := range types {
		if err := c.RegisterType(td.name, td.cfg); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// decisions formats the decision records since the last call.
func decisions(c *Core) []string {
	var out []string
	for _, d := range c.TakeDecisions() {
		out = append(out, fmt.Sprintf("+%v %s %s %s tier %d", d.Time.Sub(t0), label(d.Job), d.Decision, d.ReasonCode, d.Tier))
	}
	return out
}

// TestPreemptionDecisions: the core chooses the victim (the most recently
// admitted of the lowest preemptible tier, never a non-preemptible or an
// on-demand job), records it, keeps one preemption in flight per tier,
// and requeues the victim at the head of its lane with its cost estimate
// untouched; with the budget spent NextWake says when it has room again.
func TestPreemptionDecisions(t *testing.T) {
	c := tierCore(t, 3, map[policy.Priority]policy.TierConfig{5: {Preempt: &policy.PreemptBudget{Max: 1, Window: ms(100)}}},
		typeDef{"urgent", policy.JobTypeConfig{DefaultCost: ms(10), Priority: 5}},
		typeDef{"batch", policy.JobTypeConfig{DefaultCost: ms(50), Priority: 1, Preemptible: true}},
		typeDef{"mid", policy.JobTypeConfig{DefaultCost: ms(50), Priority: 2, Preemptible: true}},
	)
	submit(t, c, at(0), "mid", "m", "")
	b1 := submit(t, c, at(0), "batch", "b1", "")
	b2 := submit(t, c, at(0), "batch", "b2", "")
	submit(t, c, at(0), "batch", "b3", "")
	wantDispatch(t, c, at(0), "mid/m@", "batch/b1@", "batch/b2@")
	decisions(c)
	submit(t, c, at(5), "urgent", "u1", "")
	submit(t, c, at(5), "urgent", "u2", "")
	wantDispatch(t, c, at(5))
	if diff := cmp.Diff([]string{label(b2)}, labels(c.TakePreempted())); diff != "" {
		t.Errorf("preempted (-want +got):\n%s", diff)
	}
	wantDispatch(t, c, at(6)) // one in flight: nothing more
	if got := c.TakePreempted(); len(got) != 0 {
		t.Errorf("preempted again while b2 runs: %v", labels(got))
	}
	done := c.Finish(at(7), b2)
	if !done.Preempted || done.Estimate != ms(50) {
		t.Errorf("Finish of the victim = %+v; want Preempted, the estimate unchanged (50ms)", done)
	}
	c.Requeue(at(7), b2)
	wantDispatch(t, c, at(7), "urgent/u1@")
	if w, ok := c.NextWake(); !ok || !w.Equal(at(105)) {
		t.Errorf("NextWake = %v, %v; want +105ms, when the budget has room", w.Sub(t0), ok)
	}
	wantDispatch(t, c, at(105)) // u2 preempts b1
	c.Finish(at(106), b1)
	c.Requeue(at(106), b1)
	wantDispatch(t, c, at(106), "urgent/u2@")
	want := []string{
		"+5ms batch/b2@ preempt preempted tier 1",
		"+7ms batch/b2@ defer preempted tier 1",
		"+7ms urgent/u1@ admit  tier 5",
		"+105ms batch/b1@ preempt preempted tier 1",
		"+106ms batch/b1@ defer preempted tier 1",
		"+106ms urgent/u2@ admit  tier 5",
	}
	if diff := cmp.Diff(want, decisions(c)); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	// The victims wait at the head of their lane: b1, b2 before b3.
	c.Finish(at(110), c.Running()[0])
	wantDispatch(t, c, at(110), "batch/b1@")
	if got, want := c.TierRuleCounts(); got != 2 || want != 0 {
		t.Errorf("TierRuleCounts = %d, %d; want 2, 0", got, want)
	}
}

// TestStarvationWindowDecisions: a lower tier's first admission comes
// when the window has passed since its work arrived, then once per
// window since its last admission; each such admission says so.
func TestStarvationWindowDecisions(t *testing.T) {
	c := tierCore(t, 1, map[policy.Priority]policy.TierConfig{2: {StarvationWindow: ms(25)}},
		typeDef{"fg", policy.JobTypeConfig{DefaultCost: ms(10), Priority: 2}},
		typeDef{"bg", policy.JobTypeConfig{DefaultCost: ms(10), Priority: 1}},
	)
	for i := range 10 {
		submit(t, c, at(0), "fg", fmt.Sprint("f", i), "")
	}
	submit(t, c, at(0), "bg", "b1", "")
	submit(t, c, at(0), "bg", "b2", "")
	var got []string
	for now := 0; c.Pending() > 0; now += 10 {
		for _, j := range c.Dispatch(at(now), nil) {
			got = append(got, fmt.Sprintf("+%dms %s", now, label(j)))
			c.Finish(at(now+10), j)
		}
	}
	want := []string{
		"+0ms fg/f0@", "+10ms fg/f1@", "+20ms fg/f2@",
		"+30ms bg/b1@", // 30 ≥ 0 + 25
		"+40ms fg/f3@", "+50ms fg/f4@",
		"+60ms bg/b2@", // 60 ≥ 30 + 25
		"+70ms fg/f5@", "+80ms fg/f6@", "+90ms fg/f7@", "+100ms fg/f8@", "+110ms fg/f9@",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("admissions (-want +got):\n%s", diff)
	}
	var starved []string
	for _, d := range c.TakeDecisions() {
		if d.ReasonCode == CodeStarved {
			starved = append(starved, label(d.Job))
		}
	}
	if diff := cmp.Diff([]string{"bg/b1@", "bg/b2@"}, starved); diff != "" {
		t.Errorf("admissions by the window (-want +got):\n%s", diff)
	}
}
