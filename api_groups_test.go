package fairsched_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/testkit"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The job types of the group and aging tests. work has room for every slot
// and no conflict group, so only the global cap and the groups decide who
// runs; low is a background tier that ages.
const (
	work fairsched.JobType = "work"
	low  fairsched.JobType = "low"
)

var (
	workCfg = fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8}
	lowCfg  = fairsched.JobTypeConfig{DefaultCost: 2 * time.Second, Priority: 2}
)

// startScheduler starts a scheduler with the given types, closed when the
// test ends.
func startScheduler(t *testing.T, types map[fairsched.JobType]fairsched.JobTypeConfig, opts ...fairsched.Option) *fairsched.Scheduler {
	t.Helper()
	s, err := fairsched.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	for typ, cfg := range types {
		if err := s.RegisterType(typ, cfg); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// submit queues a background job of group g that runs until released, and
// waits until the scheduler has handled it.
func submit(t *testing.T, s *fairsched.Scheduler, typ fairsched.JobType, id, g string) *testkit.Gate {
	t.Helper()
	b := testkit.NewGate()
	if err := s.Submit(typ, id, b.Run, fairsched.InGroup(g)); err != nil {
		t.Fatalf("Submit %s: %v", id, err)
	}
	synctest.Wait()
	return b
}

// finish releases a running job and waits until the scheduler has handled
// its end.
func finish(t *testing.T, b *testkit.Gate) {
	t.Helper()
	if !b.Started() {
		t.Fatal("released a job that is not running")
	}
	b.Release(nil)
	synctest.Wait()
}

// keep keeps the events of the listed kinds, in order.
func keep(events []fairsched.Event, kinds ...fairsched.Event) []fairsched.Event {
	var out []fairsched.Event
	for _, e := range events {
		for _, k := range kinds {
			if fmt.Sprintf("%T", e) == fmt.Sprintf("%T", k) {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

// ignoreCosts leaves out of event comparisons the learned costs, which the
// core's tests cover.
var ignoreCosts = cmp.Options{
	cmpopts.IgnoreFields(fairsched.JobAdmitted{}, "Cost", "KeyCost"),
	cmpopts.IgnoreFields(fairsched.JobCompleted{}, "Estimate"),
}

func pendingRow(snap fairsched.Snapshot, id string) (fairsched.PendingJob, bool) {
	for _, p := range snap.Pending {
		if p.ID == id {
			return p, true
		}
	}
	return fairsched.PendingJob{}, false
}

// TestGroupAndAgingOptionsRejected: every out-of-range group or aging option
// makes New fail with ErrInvalidConfig and an error naming the field; the
// values at the edge of each range are accepted.
func TestGroupAndAgingOptionsRejected(t *testing.T) {
	aging := func(f func(*fairsched.AgingConfig)) fairsched.Option {
		cfg := fairsched.AgingConfig{GracePeriod: time.Minute, Interval: time.Minute, MaxEffectivePriority: 8, UrgentThreshold: 6}
		f(&cfg)
		return fairsched.WithAging(cfg)
	}
	capped := func(opts ...fairsched.Option) []fairsched.Option {
		return append([]fairsched.Option{fairsched.WithMaxConcurrency(4)}, opts...)
	}
	for name, tc := range map[string]struct {
		opts  []fairsched.Option
		field string
	}{
		"weight 0":                     {capped(fairsched.WithGroupWeight("a", 0)), `WithGroupWeight("a") = 0`},
		"weight -1":                    {capped(fairsched.WithGroupWeight("a", -1)), `WithGroupWeight("a") = -1`},
		"default weight 0":             {capped(fairsched.WithDefaultGroupWeight(0)), "DefaultGroupWeight = 0"},
		"default weight -2":            {capped(fairsched.WithDefaultGroupWeight(-2)), "DefaultGroupWeight = -2"},
		"negative minimum":             {capped(fairsched.WithGroupMinSlots("b", -1)), `GroupMinSlots["b"] = -1`},
		"negative limit":               {capped(fairsched.WithGroupLimit("b", -1)), `GroupLimit["b"] = -1`},
		"minimum over limit":           {capped(fairsched.WithGroupLimit("b", 2), fairsched.WithGroupMinSlots("b", 3)), `GroupMinSlots["b"] = 3`},
		"minimums over capacity":       {capped(fairsched.WithGroupMinSlots("a", 3), fairsched.WithGroupMinSlots("b", 2)), "GroupMinSlots = 5"},
		"weight without cap":           {[]fairsched.Option{fairsched.WithGroupWeight("a", 2)}, "MaxConcurrency"},
		"default weight without cap":   {[]fairsched.Option{fairsched.WithDefaultGroupWeight(2)}, "MaxConcurrency"},
		"minimum without cap":          {[]fairsched.Option{fairsched.WithGroupMinSlots("a", 1)}, "MaxConcurrency"},
		"limit without cap":            {[]fairsched.Option{fairsched.WithGroupLimit("a", 1)}, "MaxConcurrency"},
		"aging interval 0":             {[]fairsched.Option{aging(func(c *fairsched.AgingConfig) { c.Interval = 0 })}, "AgingConfig.Interval = 0s"},
		"aging interval negative":      {[]fairsched.Option{aging(func(c *fairsched.AgingConfig) { c.Interval = -time.Second })}, "AgingConfig.Interval = -1s"},
		"aging ceiling 0":              {[]fairsched.Option{aging(func(c *fairsched.AgingConfig) { c.MaxEffectivePriority, c.UrgentThreshold = 0, 0 })}, "AgingConfig.MaxEffectivePriority = 0"},
		"aging threshold over ceiling": {[]fairsched.Option{aging(func(c *fairsched.AgingConfig) { c.UrgentThreshold = 9 })}, "AgingConfig.UrgentThreshold = 9"},
		"aging negative grace":         {[]fairsched.Option{aging(func(c *fairsched.AgingConfig) { c.GracePeriod = -time.Second })}, "AgingConfig.GracePeriod = -1s"},
		"aging negative step":          {[]fairsched.Option{aging(func(c *fairsched.AgingConfig) { c.Step = -1 })}, "AgingConfig.Step = -1"},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := fairsched.New(tc.opts...)
			if !errors.Is(err, fairsched.ErrInvalidConfig) || s != nil {
				if s != nil {
					s.Close(context.Background())
				}
				t.Fatalf("New = %v, %v; want nil, ErrInvalidConfig", s, err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error %q does not name %s", err, tc.field)
			}
		})
	}

	// The edges of the ranges are valid.
	for name, opts := range map[string][]fairsched.Option{
		"weight 1":                 capped(fairsched.WithGroupWeight("a", 1)),
		"default weight 1":         capped(fairsched.WithDefaultGroupWeight(1)),
		"minimum 0, limit 0":       capped(fairsched.WithGroupMinSlots("a", 0), fairsched.WithGroupLimit("a", 0)),
		"minimum equal to limit":   capped(fairsched.WithGroupMinSlots("a", 2), fairsched.WithGroupLimit("a", 2)),
		"minimums equal capacity":  capped(fairsched.WithGroupMinSlots("a", 3), fairsched.WithGroupMinSlots("b", 1)),
		"aging without grace":      {aging(func(c *fairsched.AgingConfig) { c.GracePeriod = 0 })},
		"aging threshold=ceiling":  {aging(func(c *fairsched.AgingConfig) { c.UrgentThreshold = 8 })},
		"aging without threshold":  {aging(func(c *fairsched.AgingConfig) { c.UrgentThreshold = 0 })},
		"aging ceiling 1, step 0":  {aging(func(c *fairsched.AgingConfig) { c.MaxEffectivePriority, c.UrgentThreshold, c.Step = 1, 0, 0 })},
		"aging and groups at once": capped(fairsched.WithGroupWeight("a", 3), aging(func(*fairsched.AgingConfig) {})),
	} {
		t.Run("valid "+name, func(t *testing.T) {
			s, err := fairsched.New(opts...)
			if err != nil {
				t.Fatalf("New = %v; want a scheduler", err)
			}
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestGroupSettersValidate: the runtime setters reject what the options
// reject, with ErrInvalidConfig naming the field, and then change nothing:
// neither the snapshot nor the allocation, and no event is sent. A valid
// call right after does change both, so the comparison can see a change.
func TestGroupSettersValidate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{work: workCfg},
			fairsched.WithClock(clock.NewMock()), fairsched.WithMaxConcurrency(4),
			fairsched.WithGroupWeight("a", 2), fairsched.WithGroupWeight("b", 1))
		var jobs []*testkit.Gate
		for _, j := range []struct{ id, group string }{{"a1", "a"}, {"a2", "a"}, {"a3", "a"}, {"b1", "b"}, {"b2", "b"}} {
			jobs = append(jobs, submit(t, s, work, j.id, j.group))
		}
		defer func() {
			for _, b := range jobs {
				b.Release(nil)
			}
		}()
		before := snapshot(t, s)
		wantGroups := []fairsched.GroupSnapshot{
			{Name: "a", Weight: 2, Allocation: 3, Running: 3},
			{Name: "b", Weight: 1, Allocation: 1, Running: 1, Pending: 1},
		}
		if diff := cmp.Diff(wantGroups, before.Groups); diff != "" {
			t.Fatalf("groups before (-want +got):\n%s", diff)
		}
		events, cancel := s.Subscribe(16)
		defer cancel()

		for name, tc := range map[string]struct {
			call  func() error
			field string
		}{
			"SetGroupWeight -1":           {func() error { return s.SetGroupWeight("a", -1) }, `GroupWeight["a"] = -1`},
			"SetGroupWeight -5 new group": {func() error { return s.SetGroupWeight("new", -5) }, `GroupWeight["new"] = -5`},
			"PauseGroup empty":            {func() error { return s.PauseGroup("") }, "PauseGroup"},
			"ResumeGroup empty":           {func() error { return s.ResumeGroup("") }, "ResumeGroup"},
		} {
			err := tc.call()
			if !errors.Is(err, fairsched.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("%s = %v; want ErrInvalidConfig naming %s", name, err, tc.field)
			}
		}
		synctest.Wait()
		after := snapshot(t, s)
		if diff := cmp.Diff(before.Groups, after.Groups); diff != "" {
			t.Errorf("rejected calls changed the groups (-before +after):\n%s", diff)
		}
		if diff := cmp.Diff(before.Pending, after.Pending); diff != "" {
			t.Errorf("rejected calls changed the pending jobs (-before +after):\n%s", diff)
		}
		synctest.Wait()
		if n := len(events); n != 0 {
			t.Errorf("rejected calls sent %d events: %v", n, <-events)
		}

		// Weight 0 restores the default weight (1): 2:2 now.
		if err := s.SetGroupWeight("a", 0); err != nil {
			t.Fatalf("SetGroupWeight(a, 0) = %v", err)
		}
		synctest.Wait()
		wantGroups = []fairsched.GroupSnapshot{
			{Name: "a", Weight: 1, Allocation: 2, Running: 3},
			{Name: "b", Weight: 1, Allocation: 2, Running: 1, Pending: 1},
		}
		if diff := cmp.Diff(wantGroups, snapshot(t, s).Groups); diff != "" {
			t.Errorf("groups after SetGroupWeight(a, 0) (-want +got):\n%s", diff)
		}
		synctest.Wait()
		var got []fairsched.Event
		for len(events) > 0 {
			got = append(got, <-events)
		}
		now := after.Time
		want := []fairsched.Event{
			fairsched.GroupAllocationChanged{Time: now, Group: "a", PreviousSlots: 3, NewSlots: 2, Reason: fairsched.AllocationWeightChange},
			fairsched.GroupAllocationChanged{Time: now, Group: "b", PreviousSlots: 1, NewSlots: 2, Reason: fairsched.AllocationWeightChange},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("events of SetGroupWeight(a, 0) (-want +got):\n%s", diff)
		}
	})
}

// TestGroupSettersWithoutGroups: without group options there is no
// allocation to change: SetGroupWeight and ResetGroupWeights fail with
// ErrInvalidConfig and the snapshot lists no group.
func TestGroupSettersWithoutGroups(t *testing.T) {
	s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{work: workCfg}, fairsched.WithMaxConcurrency(4))
	if err := s.SetGroupWeight("a", 2); !errors.Is(err, fairsched.ErrInvalidConfig) || !strings.Contains(err.Error(), "SetGroupWeight") {
		t.Errorf("SetGroupWeight without groups = %v; want ErrInvalidConfig naming SetGroupWeight", err)
	}
	if err := s.ResetGroupWeights(); !errors.Is(err, fairsched.ErrInvalidConfig) || !strings.Contains(err.Error(), "ResetGroupWeights") {
		t.Errorf("ResetGroupWeights without groups = %v; want ErrInvalidConfig naming ResetGroupWeights", err)
	}
	if g := snapshot(t, s).Groups; g != nil {
		t.Errorf("groups = %+v; want none", g)
	}
}

// TestGroupSettersAfterClose: every group call after Close fails with
// ErrClosed.
func TestGroupSettersAfterClose(t *testing.T) {
	s, err := fairsched.New(fairsched.WithMaxConcurrency(2), fairsched.WithGroupWeight("a", 2))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for call, err := range map[string]error{
		"SetGroupWeight":    s.SetGroupWeight("a", 3),
		"ResetGroupWeights": s.ResetGroupWeights(),
		"PauseGroup":        s.PauseGroup("a"),
		"ResumeGroup":       s.ResumeGroup("a"),
	} {
		if !errors.Is(err, fairsched.ErrClosed) {
			t.Errorf("%s after Close = %v; want ErrClosed", call, err)
		}
	}
}

// TestGroupSnapshot: pending jobs carry their group, base and effective
// priority and the reasons group_limit and paused; Groups lists every group
// with work or a pause, its settings resolved (the default weight
// included), allocation and counts; Aging echoes the configuration; all of
// it round-trips through JSON.
func TestGroupSnapshot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		t0 := mock.Now()
		cfg := fairsched.AgingConfig{GracePeriod: 10 * time.Second, Interval: 10 * time.Second, Step: 1, MaxEffectivePriority: 6}
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{work: workCfg, low: lowCfg},
			fairsched.WithClock(mock), fairsched.WithMaxConcurrency(4), fairsched.WithAging(cfg),
			fairsched.WithDefaultGroupWeight(3),
			fairsched.WithGroupWeight("a", 2), fairsched.WithGroupLimit("a", 1),
			fairsched.WithGroupMinSlots("b", 1))
		if err := s.PauseGroup("p"); err != nil {
			t.Fatal(err)
		}
		jobs := []*testkit.Gate{
			submit(t, s, work, "a1", "a"), // runs: a's limit
			submit(t, s, low, "a2", "a"),  // waits on a's limit with a slot free
			submit(t, s, low, "p1", "p"),  // waits: p is paused
			submit(t, s, low, "u1", ""),   // runs, in the group ""
			submit(t, s, work, "b1", "b"), // runs
		}
		defer func() {
			for _, b := range jobs {
				b.Release(nil)
			}
			// A graceful Close waits for p1, which runs only once p resumes.
			if err := s.ResumeGroup("p"); err != nil {
				t.Error(err)
			}
		}()
		mock.Add(25 * time.Second)
		snap := snapshot(t, s)

		if snap.MaxConcurrency != 4 {
			t.Errorf("MaxConcurrency = %d; want 4", snap.MaxConcurrency)
		}
		wantRunning := []fairsched.RunningJob{
			{Type: work, ID: "a1", Group: "a", Priority: 8, EffectivePriority: 8, Submitted: t0, Started: t0, EstimatedCost: time.Second},
			{Type: low, ID: "u1", Priority: 2, EffectivePriority: 2, Submitted: t0, Started: t0, EstimatedCost: 2 * time.Second},
			{Type: work, ID: "b1", Group: "b", Priority: 8, EffectivePriority: 8, Submitted: t0, Started: t0, EstimatedCost: time.Second},
		}
		if diff := cmp.Diff(wantRunning, snap.Running); diff != "" {
			t.Errorf("running (-want +got):\n%s", diff)
		}
		// a2 has waited 25s: one interval past the grace period. p1's clock
		// has stood still since it arrived in the paused group.
		wantPending := []fairsched.PendingJob{
			{Type: low, ID: "a2", Group: "a", Priority: 2, EffectivePriority: 3, Submitted: t0, Reason: fairsched.ReasonGroupLimit,
				Reasons: []fairsched.Reason{fairsched.ReasonGroupLimit}},
			{Type: low, ID: "p1", Group: "p", Priority: 2, EffectivePriority: 2, Submitted: t0, Reason: fairsched.ReasonPaused,
				Reasons: []fairsched.Reason{fairsched.ReasonPaused}},
		}
		if diff := cmp.Diff(wantPending, reasonsOnly(snap.Pending)); diff != "" {
			t.Errorf("pending (-want +got):\n%s", diff)
		}
		wantGroups := []fairsched.GroupSnapshot{
			{Name: "", Weight: 3, Allocation: 1, Running: 1},
			{Name: "a", Weight: 2, Limit: 1, Allocation: 1, Running: 1, Pending: 1},
			{Name: "b", Weight: 3, MinSlots: 1, Allocation: 1, Running: 1},
			{Name: "p", Weight: 3, Pending: 1, Paused: true},
		}
		if diff := cmp.Diff(wantGroups, snap.Groups); diff != "" {
			t.Errorf("groups (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(&cfg, snap.Aging); diff != "" {
			t.Errorf("aging (-want +got):\n%s", diff)
		}

		raw, err := json.Marshal(snap)
		if err != nil {
			t.Fatal(err)
		}
		for _, frag := range []string{`"reason":"group_limit"`, `"reason":"paused"`, `"effective_priority":3`,
			`"group":"a"`, `"paused":true`, `"min_slots":1`, `"limit":1`, `"max_effective_priority":6`} {
			if !strings.Contains(string(raw), frag) {
				t.Errorf("snapshot JSON lacks %s: %s", frag, raw)
			}
		}
		var back fairsched.Snapshot
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(snap, back); diff != "" {
			t.Errorf("JSON round trip (-orig +back):\n%s", diff)
		}
	})
}

// TestGroupSnapshotAgingIsACopy: a snapshot shares nothing with the
// scheduler, its aging configuration included.
func TestGroupSnapshotAgingIsACopy(t *testing.T) {
	cfg := fairsched.AgingConfig{GracePeriod: time.Minute, Interval: time.Minute, MaxEffectivePriority: 8, UrgentThreshold: 6}
	s := startScheduler(t, nil, fairsched.WithAging(cfg))
	first := snapshot(t, s)
	first.Aging.UrgentThreshold = 1
	first.Aging.MaxEffectivePriority = 99
	if diff := cmp.Diff(&cfg, snapshot(t, s).Aging); diff != "" {
		t.Errorf("changing a snapshot's Aging changed the scheduler's (-configured +now):\n%s", diff)
	}
}

// TestGroupAllocationEvents: a scripted run on two slots, groups a and b of
// equal weight, then b's weight raised to 4, then all weights reset. Each
// allocation change is reported once, with its reason — rebalance when
// demand moves, weight_change for SetGroupWeight and ResetGroupWeights,
// group_drained when a group runs out of work — and ahead of the admissions
// it explains.
func TestGroupAllocationEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		t0 := mock.Now()
		at := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
		s, err := fairsched.New(fairsched.WithClock(mock), fairsched.WithMaxConcurrency(2),
			fairsched.WithGroupWeight("a", 1), fairsched.WithGroupWeight("b", 1))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType(work, workCfg); err != nil {
			t.Fatal(err)
		}
		events, cancel := s.Subscribe(64)
		defer cancel()
		tick := func() { mock.Add(time.Second) }

		a1 := submit(t, s, work, "a1", "a") // t0: a takes 1, runs a1
		tick()
		a2 := submit(t, s, work, "a2", "a") // t1: a takes 2, runs a2
		tick()
		a3 := submit(t, s, work, "a3", "a") // t2: waits; a holds all it can
		tick()
		b1 := submit(t, s, work, "b1", "b") // t3: 1:1
		tick()
		b2 := submit(t, s, work, "b2", "b") // t4: no change
		tick()
		if err := s.SetGroupWeight("b", 4); err != nil { // t5: 2/5 and 8/5 of 2 slots: 0:2
			t.Fatal(err)
		}
		synctest.Wait()
		tick()
		finish(t, a1) // t6: a is over its share; b1 runs
		if snap := snapshot(t, s); len(snap.Pending) != 2 || snap.Pending[0].ID != "a3" || snap.Pending[0].Reason != fairsched.ReasonGroupLimit {
			t.Fatalf("pending at t6 = %+v; want a3 first (group_limit: a is over its share), then b2", snap.Pending)
		}
		tick()
		if err := s.ResetGroupWeights(); err != nil { // t7: 1:1 again
			t.Fatal(err)
		}
		synctest.Wait()
		tick()
		finish(t, a2) // t8: a3 runs in a's slot
		tick()
		finish(t, b1) // t9: b2 runs
		tick()
		finish(t, a3) // t10: a drained
		tick()
		finish(t, b2) // t11: b drained
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}

		got := keep(collect(events), fairsched.GroupAllocationChanged{}, fairsched.JobAdmitted{})
		alloc := func(n int, g string, from, to int, why fairsched.AllocationReason) fairsched.Event {
			return fairsched.GroupAllocationChanged{Time: at(n), Group: g, PreviousSlots: from, NewSlots: to, Reason: why}
		}
		admit := func(n int, id, g string, submitted int) fairsched.Event {
			return fairsched.JobAdmitted{Time: at(n), Type: work, ID: id, Group: g, BasePriority: 8, EffectivePriority: 8,
				Waited: time.Duration(n-submitted) * time.Second}
		}
		const (
			rebalance = fairsched.AllocationRebalance
			weight    = fairsched.AllocationWeightChange
			drained   = fairsched.AllocationGroupDrained
		)
		want := []fairsched.Event{
			alloc(0, "a", 0, 1, rebalance), admit(0, "a1", "a", 0),
			alloc(1, "a", 1, 2, rebalance), admit(1, "a2", "a", 1),
			alloc(3, "a", 2, 1, rebalance), alloc(3, "b", 0, 1, rebalance),
			alloc(5, "a", 1, 0, weight), alloc(5, "b", 1, 2, weight),
			admit(6, "b1", "b", 3),
			alloc(7, "a", 0, 1, weight), alloc(7, "b", 2, 1, weight),
			admit(8, "a3", "a", 2),
			admit(9, "b2", "b", 4),
			alloc(10, "a", 1, 0, drained),
			alloc(11, "b", 1, 0, drained),
		}
		if diff := cmp.Diff(want, got, ignoreCosts); diff != "" {
			t.Errorf("allocation changes and admissions (-want +got):\n%s", diff)
		}
	})
}

// TestAgingEventsOncePerStep: low-priority jobs wait behind a running job
// while the scheduler is looked at often, several times within each
// interval and twice at the same instant, and while more jobs join their
// queues. Each job reports each rise of its effective priority once, with
// the priority it reached and the time it has waited; none is reported past
// the ceiling or for a job whose base priority is at the ceiling already.
func TestAgingEventsOncePerStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		t0 := mock.Now()
		sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
		const (
			grace, interval = 10 * time.Second, 10 * time.Second
			ceiling         = fairsched.Priority(4)
			base            = fairsched.Priority(1)
		)
		const lowest fairsched.JobType = "lowest"
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			work:   workCfg,
			lowest: {DefaultCost: time.Second, Priority: base},
		}, fairsched.WithClock(mock), fairsched.WithMaxConcurrency(1),
			fairsched.WithAging(fairsched.AgingConfig{GracePeriod: grace, Interval: interval, MaxEffectivePriority: ceiling}))
		events, cancel := s.Subscribe(64)
		defer cancel()

		// Background jobs share the fairness key ""; foreground ones run
		// for "alice".
		submitted := map[string]int{}
		var jobs []*testkit.Gate
		results := make(chan error, 2)
		add := func(id, key string) {
			submitted[id] = int(mock.Now().Sub(t0) / time.Second)
			if key == "" {
				jobs = append(jobs, submit(t, s, lowest, id, ""))
				return
			}
			b := testkit.NewGate()
			jobs = append(jobs, b)
			go func() { results <- s.RunSync(context.Background(), lowest, id, key, b.Run) }()
			synctest.Wait()
		}
		hog := submit(t, s, work, "hog", "")
		add("l1", "")
		mock.Add(7 * time.Second)
		add("l2", "alice")

		// The documented formula, computed here rather than by the library.
		effective := func(waited time.Duration) fairsched.Priority {
			if waited <= grace {
				return base
			}
			return min(base+fairsched.Priority((waited-grace)/interval), ceiling)
		}
		ids := []string{"l1", "l2", "l3", "l4"}
		var gotRows, wantRows [][]any
		for _, n := range []int{8, 15, 19, 20, 20, 25, 27, 27, 30, 33, 35, 37, 39, 40, 41, 47, 60, 100} {
			mock.Set(t0.Add(sec(n)))
			if n == 33 { // more jobs join the aged jobs' queues
				add("l3", "")
				add("l4", "alice")
			}
			snap := snapshot(t, s)
			synctest.Wait() // the events of what the snapshot saw are out
			gotRow, wantRow := []any{n}, []any{n}
			for _, id := range ids {
				if at, ok := submitted[id]; ok {
					p, _ := pendingRow(snap, id)
					gotRow = append(gotRow, p.EffectivePriority)
					wantRow = append(wantRow, effective(sec(n-at)))
				}
			}
			gotRows, wantRows = append(gotRows, gotRow), append(wantRows, wantRow)
		}
		if diff := cmp.Diff(wantRows, gotRows); diff != "" {
			t.Errorf("effective priorities in snapshots, [time l1 l2 l3 l4] (-want +got):\n%s", diff)
		}
		aged := func(n int, id, key string) fairsched.Event {
			waited := sec(n - submitted[id])
			return fairsched.JobAged{Time: t0.Add(sec(n)), Type: lowest, ID: id, FairnessKey: key,
				BasePriority: base, EffectivePriority: effective(waited), Waited: waited}
		}
		want := []fairsched.Event{
			aged(20, "l1", ""), aged(27, "l2", "alice"),
			aged(30, "l1", ""), aged(37, "l2", "alice"),
			aged(40, "l1", ""), aged(47, "l2", "alice"),
		}
		var got []fairsched.Event
		for len(events) > 0 {
			if e, ok := (<-events).(fairsched.JobAged); ok && (e.ID == "l1" || e.ID == "l2") {
				got = append(got, e)
			}
		}
		// l3 and l4 wait behind l1 and l2: TestAgingEventsBehindTheHead.
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("aged events of l1 and l2 up to t100 (-want +got):\n%s", diff)
		}

		// The hog ends: the aged jobs run one by one, at the ceiling.
		for _, b := range jobs {
			b.Release(nil)
		}
		finish(t, hog)
		for range 2 {
			if err := <-results; err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		// Every aged event, l3's and l4's included, reports a rise to the
		// priority the formula gives for the time waited, each job rising
		// at most once per step and never past the ceiling.
		last := map[string]fairsched.Priority{}
		for _, e := range collect(events) {
			switch e := e.(type) {
			case fairsched.JobAdmitted:
				if e.EffectivePriority != ceiling {
					t.Errorf("%s admitted at effective priority %d; want the ceiling %d", e.ID, e.EffectivePriority, ceiling)
				}
			case fairsched.JobAged:
				prev, ok := last[e.ID]
				if !ok {
					prev = base
				}
				if e.EffectivePriority <= prev || e.EffectivePriority > ceiling || e.EffectivePriority != effective(e.Waited) {
					t.Errorf("%+v: after %d, rose to %d for a wait of %v (formula: %d)", e, prev, e.EffectivePriority, e.Waited, effective(e.Waited))
				}
				last[e.ID] = e.EffectivePriority
			}
		}
	})
}

// TestAgingEventsOnlyAtTheHead: a job queued behind an older job of the
// same type, fairness key and group ages like any other (its snapshot row
// shows it), but JobAged is reported for the head of each such queue only —
// the most aged job, the one that competes — so that aging never scans the
// jobs behind it (see JobAged). While "front" waits, "behind" reports none.
func TestAgingEventsOnlyAtTheHead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		t0 := mock.Now()
		sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
		const lowest fairsched.JobType = "lowest"
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			work:   workCfg,
			lowest: {DefaultCost: time.Second, Priority: 1},
		}, fairsched.WithClock(mock), fairsched.WithMaxConcurrency(1),
			fairsched.WithAging(fairsched.AgingConfig{GracePeriod: 10 * time.Second, Interval: 10 * time.Second, MaxEffectivePriority: 4}))
		events, cancel := s.Subscribe(64)
		defer cancel()
		hog := submit(t, s, work, "hog", "")
		front := submit(t, s, lowest, "front", "")
		mock.Set(t0.Add(sec(5)))
		behind := submit(t, s, lowest, "behind", "")
		defer func() {
			for _, b := range []*testkit.Gate{hog, front, behind} {
				b.Release(nil)
			}
		}()
		var rows []fairsched.Priority
		for n := 6; n <= 50; n++ {
			mock.Set(t0.Add(sec(n)))
			p, _ := pendingRow(snapshot(t, s), "behind")
			rows = append(rows, p.EffectivePriority)
		}
		if rows[44] != 4 {
			t.Fatalf("behind's effective priority at t50 = %d; want 4", rows[44])
		}
		synctest.Wait()
		var got []fairsched.Event
		for len(events) > 0 {
			if e, ok := (<-events).(fairsched.JobAged); ok && e.ID == "behind" {
				got = append(got, e)
			}
		}
		if len(got) != 0 {
			t.Errorf("aged events of the job behind the head: %v; want none while it is not the head", got)
		}
		if rows[0] != 1 || rows[19] != 2 || rows[29] != 3 {
			t.Errorf("behind's effective priority at t6, t25, t35 = %d, %d, %d; want 1, 2, 3", rows[0], rows[19], rows[29])
		}
	})
}

// TestPauseGroup: pausing a group holds its pending jobs (reason paused),
// stops their aging clocks and gives its slots to the others, while its
// running job finishes normally; pausing it again changes nothing; resuming
// gives its slots back and its jobs age on from where they stopped and run.
// The whole event stream is checked.
func TestPauseGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		t0 := mock.Now()
		at := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
		set := func(n int) { mock.Set(at(n)) }
		s, err := fairsched.New(fairsched.WithClock(mock), fairsched.WithMaxConcurrency(2),
			fairsched.WithGroupWeight("fg", 1), fairsched.WithGroupWeight("bg", 1),
			fairsched.WithAging(fairsched.AgingConfig{GracePeriod: 10 * time.Second, Interval: 10 * time.Second, MaxEffectivePriority: 8}))
		if err != nil {
			t.Fatal(err)
		}
		for typ, cfg := range map[fairsched.JobType]fairsched.JobTypeConfig{work: workCfg, low: lowCfg} {
			if err := s.RegisterType(typ, cfg); err != nil {
				t.Fatal(err)
			}
		}
		events, cancel := s.Subscribe(64)
		defer cancel()

		r := submit(t, s, work, "r", "bg")
		f1 := submit(t, s, work, "f1", "fg")
		p := submit(t, s, low, "p", "bg")
		f2 := submit(t, s, work, "f2", "fg")

		type view struct {
			Pending []fairsched.PendingJob
			Groups  []fairsched.GroupSnapshot
		}
		look := func() view {
			snap := snapshot(t, s)
			return view{reasonsOnly(snap.Pending), snap.Groups}
		}
		f2Row := fairsched.PendingJob{Type: work, ID: "f2", Group: "fg", Priority: 8, EffectivePriority: 8, Submitted: t0, Reason: fairsched.ReasonGlobalLimit,
			Reasons: []fairsched.Reason{fairsched.ReasonGlobalLimit}}
		pRow := func(eff fairsched.Priority, why ...fairsched.Reason) fairsched.PendingJob {
			return fairsched.PendingJob{Type: low, ID: "p", Group: "bg", Priority: 2, EffectivePriority: eff, Submitted: t0, Reason: why[0], Reasons: why}
		}

		set(25) // p has aged one step
		if err := s.PauseGroup("bg"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		want := view{
			Pending: []fairsched.PendingJob{f2Row, pRow(3, fairsched.ReasonPaused, fairsched.ReasonGlobalLimit)},
			Groups: []fairsched.GroupSnapshot{
				{Name: "bg", Weight: 1, Allocation: 0, Running: 1, Pending: 1, Paused: true},
				{Name: "fg", Weight: 1, Allocation: 2, Running: 1, Pending: 1},
			},
		}
		if diff := cmp.Diff(want, look()); diff != "" {
			t.Errorf("paused at t25 (-want +got):\n%s", diff)
		}

		set(30)
		finish(t, r) // the paused group's running job ends normally; f2 takes its slot
		set(60)
		if err := s.PauseGroup("bg"); err != nil { // again: nothing happens
			t.Errorf("second PauseGroup = %v", err)
		}
		synctest.Wait()
		want = view{
			Pending: []fairsched.PendingJob{pRow(3, fairsched.ReasonPaused, fairsched.ReasonGlobalLimit)},
			Groups: []fairsched.GroupSnapshot{
				{Name: "bg", Weight: 1, Allocation: 0, Pending: 1, Paused: true},
				{Name: "fg", Weight: 1, Allocation: 2, Running: 2},
			},
		}
		if diff := cmp.Diff(want, look()); diff != "" {
			t.Errorf("paused twice, at t60 (-want +got):\n%s", diff)
		}
		set(200) // a long pause: p's clock still reads 25s
		if diff := cmp.Diff(want, look()); diff != "" {
			t.Errorf("paused at t200 (-want +got):\n%s", diff)
		}
		if p.Started() {
			t.Fatal("a job of the paused group ran")
		}

		for range 2 { // resuming twice is one resume
			if err := s.ResumeGroup("bg"); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		want = view{
			Pending: []fairsched.PendingJob{pRow(3, fairsched.ReasonGlobalLimit)},
			Groups: []fairsched.GroupSnapshot{
				{Name: "bg", Weight: 1, Allocation: 1, Pending: 1},
				{Name: "fg", Weight: 1, Allocation: 1, Running: 2},
			},
		}
		if diff := cmp.Diff(want, look()); diff != "" {
			t.Errorf("resumed at t200 (-want +got):\n%s", diff)
		}
		set(205) // 25s + 5s: p rises a step
		want.Pending = []fairsched.PendingJob{pRow(4, fairsched.ReasonGlobalLimit)}
		if diff := cmp.Diff(want, look()); diff != "" {
			t.Errorf("resumed, at t205 (-want +got):\n%s", diff)
		}
		synctest.Wait()
		set(210)
		finish(t, f1) // p runs in bg's slot
		set(211)
		finish(t, f2)
		set(212)
		finish(t, p)
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}

		alloc := func(n int, g string, from, to int, why fairsched.AllocationReason) fairsched.Event {
			return fairsched.GroupAllocationChanged{Time: at(n), Group: g, PreviousSlots: from, NewSlots: to, Reason: why}
		}
		admit := func(n int, typ fairsched.JobType, id, g string, base, eff fairsched.Priority) fairsched.Event {
			return fairsched.JobAdmitted{Time: at(n), Type: typ, ID: id, Group: g, BasePriority: base, EffectivePriority: eff,
				Waited: time.Duration(n) * time.Second}
		}
		done := func(n int, typ fairsched.JobType, id string, started int) fairsched.Event {
			return fairsched.JobCompleted{Time: at(n), Type: typ, ID: id, Elapsed: time.Duration(n-started) * time.Second}
		}
		aged := func(n int, eff fairsched.Priority) fairsched.Event {
			return fairsched.JobAged{Time: at(n), Type: low, ID: "p", BasePriority: 2, EffectivePriority: eff, Waited: time.Duration(n) * time.Second}
		}
		wantEvents := []fairsched.Event{
			alloc(0, "bg", 0, 1, fairsched.AllocationRebalance), admit(0, work, "r", "bg", 8, 8),
			alloc(0, "fg", 0, 1, fairsched.AllocationRebalance), admit(0, work, "f1", "fg", 8, 8),
			// t25: the pause hands bg's slot to fg; p had aged before.
			alloc(25, "bg", 1, 0, fairsched.AllocationRebalance), alloc(25, "fg", 1, 2, fairsched.AllocationRebalance),
			aged(25, 3),
			done(30, work, "r", 0), admit(30, work, "f2", "fg", 8, 8),
			// t200: resumed; no aged event while paused.
			alloc(200, "bg", 0, 1, fairsched.AllocationRebalance), alloc(200, "fg", 2, 1, fairsched.AllocationRebalance),
			aged(205, 4),
			done(210, work, "f1", 0), admit(210, low, "p", "bg", 2, 4),
			done(211, work, "f2", 30), alloc(211, "fg", 1, 0, fairsched.AllocationGroupDrained),
			done(212, low, "p", 210), alloc(212, "bg", 1, 0, fairsched.AllocationGroupDrained),
		}
		if diff := cmp.Diff(wantEvents, collect(events), ignoreCosts); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})
}

// TestPauseGroupSubmittedWhilePaused: a job that arrives in a paused group
// starts its aging clock when the group resumes, not before and not after:
// the pause before its arrival is no part of its wait.
func TestPauseGroupSubmittedWhilePaused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		t0 := mock.Now()
		const grace, interval = 10 * time.Second, 10 * time.Second
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{work: workCfg, low: lowCfg},
			fairsched.WithClock(mock), fairsched.WithMaxConcurrency(1), fairsched.WithGroupWeight("bg", 1),
			fairsched.WithAging(fairsched.AgingConfig{GracePeriod: grace, Interval: interval, MaxEffectivePriority: 8}))
		hog := submit(t, s, work, "hog", "fg")
		defer func() { hog.Release(nil) }()
		if err := s.PauseGroup("bg"); err != nil {
			t.Fatal(err)
		}
		mock.Set(t0.Add(50 * time.Second))
		p := submit(t, s, low, "p", "bg") // arrives 50s into the pause
		defer func() { p.Release(nil) }()
		mock.Set(t0.Add(100 * time.Second))
		if err := s.ResumeGroup("bg"); err != nil {
			t.Fatal(err)
		}
		type row struct {
			Since  time.Duration // since the resume: the whole wait that counts
			Effect fairsched.Priority
		}
		var got, want []row
		for _, since := range []time.Duration{0, 19 * time.Second, 20 * time.Second, 50 * time.Second} {
			mock.Set(t0.Add(100*time.Second + since))
			row0, ok := pendingRow(snapshot(t, s), "p")
			if !ok {
				t.Fatal("p is not pending")
			}
			got = append(got, row{since, row0.EffectivePriority})
			eff := lowCfg.Priority
			if since > grace {
				eff = min(eff+fairsched.Priority((since-grace)/interval), 8)
			}
			want = append(want, row{since, eff})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("effective priority of a job submitted during a pause (-want +got):\n%s", diff)
		}
	})
}

// TestAgingMaxWaitUnderStream: two slots and a stream of foreground work
// that always has two jobs waiting when the slots free, every second. A
// background job of base priority 1 starts no later than MaxWait(1) after
// it arrives (the stream frees a slot every second, so "plus the time until
// the next slot frees" adds nothing), and not before its effective priority
// has reached the stream's. Without aging it never starts while the stream
// lasts.
func TestAgingMaxWaitUnderStream(t *testing.T) {
	const (
		fg  fairsched.JobType = "fg"
		bgt fairsched.JobType = "bg"
	)
	cfg := fairsched.AgingConfig{GracePeriod: 10 * time.Second, Interval: 5 * time.Second, MaxEffectivePriority: 5}
	maxWait := cfg.MaxWait(1)
	if maxWait != 30*time.Second {
		t.Fatalf("MaxWait(1) = %v; want 10s + ⌈(5−1)/1⌉·5s = 30s", maxWait)
	}
	// run plays the stream for at most limit and returns when the
	// background job started (-1 if it did not) and its effective priority
	// then.
	run := func(t *testing.T, opts ...fairsched.Option) (time.Duration, fairsched.Priority) {
		mock := clock.NewMock()
		t0 := mock.Now()
		opts = append(opts, fairsched.WithClock(mock), fairsched.WithMaxConcurrency(2))
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			fg:  {DefaultCost: time.Second, Priority: 4},
			bgt: {DefaultCost: time.Second, Priority: 1},
		}, opts...)
		var stream []*testkit.Gate
		results := make(chan error, 256)
		request := func() {
			b := testkit.NewGate()
			stream = append(stream, b)
			id := fmt.Sprintf("req%d", len(stream))
			go func() { results <- s.RunSync(context.Background(), fg, id, "user", b.Run) }()
			synctest.Wait()
		}
		for range 4 {
			request()
		}
		big := submit(t, s, bgt, "big", "")
		released := 0
		defer func() { // let everything run out, so Close drains
			big.Release(nil)
			for _, b := range stream[released:] {
				b.Release(nil)
			}
			for range stream {
				if err := <-results; err != nil {
					t.Errorf("RunSync = %v", err)
				}
			}
		}()
		const limit = 3 * 30 * time.Second
		for mock.Now().Sub(t0) < limit {
			mock.Add(time.Second)
			// The running requests end; the waiting ones (or big) take
			// their slots; two more requests arrive. Which requests run is
			// decided before any is released: once one is, the scheduler
			// admits the next while this loop goes on.
			n := 0
			for released+n < len(stream) && stream[released+n].Started() {
				n++
			}
			for range n {
				stream[released].Release(nil)
				released++
			}
			synctest.Wait()
			if big.Started() {
				for _, r := range snapshot(t, s).Running {
					if r.ID == "big" {
						return mock.Now().Sub(t0), r.EffectivePriority
					}
				}
				t.Fatal("big runs but is not in the snapshot")
			}
			if n := len(snapshot(t, s).Running); n != 2 {
				t.Fatalf("%d running at %v; the stream must keep both slots busy", n, mock.Now().Sub(t0))
			}
			request()
			request()
		}
		return -1, 0
	}

	t.Run("aging", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			start, eff := run(t, fairsched.WithAging(cfg))
			t.Logf("background job started after %v at effective priority %d", start, eff)
			// Effective priority 4, the stream's, is reached after
			// grace + 3 intervals = 25s.
			if start < 25*time.Second || start > maxWait {
				t.Errorf("background job started after %v; want within [25s, MaxWait(1) = %v]", start, maxWait)
			}
			if eff < 4 {
				t.Errorf("background job admitted at effective priority %d; want at least the stream's 4", eff)
			}
		})
	})
	t.Run("no aging", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			if start, _ := run(t); start >= 0 {
				t.Errorf("without aging the background job started after %v under a saturating stream", start)
			}
		})
	})
}

// MaxWait bounds the wait of a pending job before it reaches the urgent
// threshold (or, without one, the ceiling).
func ExampleAgingConfig_MaxWait() {
	cfg := fairsched.AgingConfig{
		GracePeriod:          5 * time.Minute,
		Interval:             time.Minute,
		MaxEffectivePriority: 8,
		UrgentThreshold:      6,
	}
	for _, base := range []fairsched.Priority{1, 4, 6, 8} {
		fmt.Printf("base %d: %v\n", base, cfg.MaxWait(base))
	}
	cfg.Step = 2 // ⌈(6−1)/2⌉ = 3 intervals
	fmt.Println("step 2, base 1:", cfg.MaxWait(1))
	cfg.UrgentThreshold = 0 // up to the ceiling: ⌈(8−1)/2⌉ = 4 intervals
	fmt.Println("no threshold, step 2, base 1:", cfg.MaxWait(1))
	// Output:
	// base 1: 10m0s
	// base 4: 7m0s
	// base 6: 0s
	// base 8: 0s
	// step 2, base 1: 8m0s
	// no threshold, step 2, base 1: 9m0s
}

// TestCloseResumesPausedGroups: a graceful Close drains all pending work,
// the jobs of a paused group included.
func TestCloseResumesPausedGroups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New(fairsched.WithClock(clock.NewMock()))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType(work, workCfg); err != nil {
			t.Fatal(err)
		}
		if err := s.PauseGroup("g"); err != nil {
			t.Fatal(err)
		}
		ran := false
		if err := s.Submit(work, "j", func(context.Context) error { ran = true; return nil }, fairsched.InGroup("g")); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if ran {
			t.Fatal("a job of a paused group ran")
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatalf("Close = %v", err)
		}
		if !ran {
			t.Error("Close returned without running the paused group's job")
		}
	})
}

// TestPauseFreezesTTL is spec 2's "freeze while paused, same as TTL freeze"
// through the public API: one slot is taken for 100 s, so jobs with a TTL
// of 10 s can only expire. A job whose group is paused from 2 s to 32 s —
// three times its TTL — does not expire while paused, and expires after 10 s
// of unpaused waiting: at 40 s. Its type's QueueTimeout stands still the
// same way; a job of another group expires at 10 s.
func TestPauseFreezesTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New(fairsched.WithMaxConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		for typ, cfg := range map[fairsched.JobType]fairsched.JobTypeConfig{
			"work":  {DefaultCost: time.Second, Priority: 1},
			"timed": {DefaultCost: time.Second, Priority: 1, QueueTimeout: 10 * time.Second},
		} {
			if err := s.RegisterType(typ, cfg); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		hold := testkit.NewGate()
		if err := s.Submit("work", "hold", hold.Run); err != nil {
			t.Fatal(err)
		}
		hold.WaitStarted()
		type outcome struct {
			Job     string
			Expired bool
			At      time.Duration
		}
		results := make(chan outcome, 3)
		wait := func(name string, typ fairsched.JobType, opts ...fairsched.JobOption) {
			go func() {
				err := s.RunSync(context.Background(), typ, name, "", func(context.Context) error { return nil }, opts...)
				results <- outcome{name, errors.Is(err, fairsched.ErrExpired), time.Since(start)}
			}()
		}
		wait("paused-ttl", "work", fairsched.InGroup("g"), fairsched.WithQueueTimeout(10*time.Second))
		wait("paused-timeout", "timed", fairsched.InGroup("g"))
		wait("other", "work", fairsched.InGroup("h"), fairsched.WithQueueTimeout(10*time.Second))
		time.Sleep(2 * time.Second)
		if err := s.PauseGroup("g"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Second)
		if err := s.ResumeGroup("g"); err != nil {
			t.Fatal(err)
		}
		var got []outcome
		for range 3 {
			got = append(got, <-results)
		}
		hold.Release(nil)
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := []outcome{
			{"other", true, 10 * time.Second},
			{"paused-timeout", true, 40 * time.Second},
			{"paused-ttl", true, 40 * time.Second},
		}
		if got[1].Job > got[2].Job {
			got[1], got[2] = got[2], got[1]
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("outcomes (-want +got):\n%s", diff)
		}
	})
}

// TestPauseFreezesCoalescedWaitersTTL: RunSync callers that share one
// coalesced run each keep their own time to live, and like the run's it
// stands still while the run's group is paused. The only slot is taken
// for 100 s; group g is paused from 2 s to 32 s. A waiter of 5 s that
// joined at 0 expires at 35 s, one of 20 s at 50 s, and one of 5 s that
// joined during the pause, at 10 s, waits 5 s from the resume: 37 s. A
// waiter of group h, not paused, expires at 5 s.
func TestPauseFreezesCoalescedWaitersTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			"hold":  {DefaultCost: time.Second, Priority: 1},
			"fetch": {DefaultCost: time.Second, Priority: 1, Coalesce: true},
		}, fairsched.WithMaxConcurrency(1))
		hold := testkit.NewGate()
		if err := s.Submit("hold", "h", hold.Run); err != nil {
			t.Fatal(err)
		}
		hold.WaitStarted()
		start := time.Now()
		type outcome struct {
			Waiter  string
			Expired bool
			At      time.Duration
		}
		results := make(chan outcome, 4)
		wait := func(name, id, group string, ttl time.Duration) {
			go func() {
				err := s.RunSync(context.Background(), "fetch", id, "", func(context.Context) error { return nil },
					fairsched.InGroup(group), fairsched.WithQueueTimeout(ttl))
				results <- outcome{name, errors.Is(err, fairsched.ErrExpired), time.Since(start)}
			}()
			synctest.Wait()
		}
		wait("g-5s", "repo", "g", 5*time.Second)
		wait("g-20s", "repo", "g", 20*time.Second)
		wait("h-5s", "other", "h", 5*time.Second)
		time.Sleep(2 * time.Second)
		if err := s.PauseGroup("g"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(8 * time.Second)
		wait("g-5s-late", "repo", "g", 5*time.Second)
		time.Sleep(22 * time.Second)
		if err := s.ResumeGroup("g"); err != nil {
			t.Fatal(err)
		}
		var got []outcome
		for range 4 {
			got = append(got, <-results)
		}
		hold.Release(nil)
		want := []outcome{
			{"h-5s", true, 5 * time.Second},
			{"g-5s", true, 35 * time.Second},
			{"g-5s-late", true, 37 * time.Second},
			{"g-20s", true, 50 * time.Second},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("outcomes (-want +got):\n%s", diff)
		}
	})
}

// TestGroupsLendSlotsTheyCannotUse is spec 2's work conservation through
// the public API: two groups of equal weight share 4 slots, 2 each. Group a
// can use only one of its slots — its other jobs wait on its rate limit, or
// on a conflict with its own running job — so group b runs in the slot a
// cannot use instead of leaving it idle; a's allocation is unchanged, and a
// takes its slots again as soon as it can run (its token at 10 s and 20 s).
// Without lending b ran 2 at a time and finished at 40 s instead of 30 s.
func TestGroupsLendSlotsTheyCannotUse(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []fairsched.Option
		a    fairsched.JobType
		want []span
	}{
		{"rate-limited", []fairsched.Option{fairsched.WithRateLimit(fairsched.RateForGroup("a"), 0.1, 1)}, "work", []span{
			{"work/a1#a", 0, 10}, {"work/b1#b", 0, 10}, {"work/b2#b", 0, 10}, {"work/b3#b", 0, 10},
			{"work/a2#a", 10, 20}, {"work/b4#b", 10, 20}, {"work/b5#b", 10, 20}, {"work/b6#b", 10, 20},
			{"work/a3#a", 20, 30}, {"work/b7#b", 20, 30}, {"work/b8#b", 20, 30},
		}},
		{"conflict-blocked", nil, "repack", []span{
			{"repack/linux#a1", 0, 10}, {"work/b1#b", 0, 10}, {"work/b2#b", 0, 10}, {"work/b3#b", 0, 10},
			{"repack/linux#a2", 10, 20}, {"work/b4#b", 10, 20}, {"work/b5#b", 10, 20}, {"work/b6#b", 10, 20},
			{"repack/linux#a3", 20, 30}, {"work/b7#b", 20, 30}, {"work/b8#b", 20, 30},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := append([]fairsched.Option{fairsched.WithMaxConcurrency(4),
					fairsched.WithGroupWeight("a", 1), fairsched.WithGroupWeight("b", 1)}, tc.opts...)
				s, err := fairsched.New(opts...)
				if err != nil {
					t.Fatal(err)
				}
				for typ, cfg := range map[fairsched.JobType]fairsched.JobTypeConfig{
					"work":   {DefaultCost: 10 * time.Second, Priority: 8},
					"repack": {DefaultCost: 10 * time.Second, Priority: 8, ConflictGroup: "repo"},
				} {
					if err := s.RegisterType(typ, cfg); err != nil {
						t.Fatal(err)
					}
				}
				var jobs []timedJob
				for i := 1; i <= 3; i++ {
					j := timedJob{typ: tc.a, id: fmt.Sprintf("a%d", i), tag: "a", dur: 10, opts: []fairsched.JobOption{fairsched.InGroup("a")}}
					if tc.a == "repack" {
						j.id, j.tag = "linux", fmt.Sprintf("a%d", i)
					}
					jobs = append(jobs, j)
				}
				for i := 1; i <= 8; i++ {
					jobs = append(jobs, timedJob{typ: "work", id: fmt.Sprintf("b%d", i), tag: "b", dur: 10, opts: []fairsched.JobOption{fairsched.InGroup("b")}})
				}
				jobs = append(jobs, timedJob{at: 5, probe: func() {
					snap := snapshot(t, s)
					got := map[string][2]int{}
					for _, g := range snap.Groups {
						got[g.Name] = [2]int{g.Allocation, g.Running}
					}
					// a keeps its 2 slots' allocation while b runs in one of them.
					if diff := cmp.Diff(map[string][2]int{"a": {2, 1}, "b": {2, 3}}, got); diff != "" {
						t.Errorf("groups at 5 s, [allocation running] (-want +got):\n%s", diff)
					}
				}})
				if diff := cmp.Diff(tc.want, runTimeline(t, s, jobs)); diff != "" {
					t.Errorf("timeline (-want +got):\n%s", diff)
				}
			})
		})
	}
}
