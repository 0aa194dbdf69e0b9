package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/fairschedtest"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/google/go-cmp/cmp"
)

// tierPolicy is a policy of two tiers sharing 10 slots: hi (priority 10)
// and lo (priority 5), each reserving and capped at its share.
func tierPolicy(version string, hi, lo float64) fairsched.Policy {
	return fairsched.Policy{
		Version:        version,
		MaxConcurrency: 10,
		Tiers: map[fairsched.Priority]fairsched.TierConfig{
			10: {MinShare: hi, BurstShare: hi},
			5:  {MinShare: lo, BurstShare: lo},
		},
		Types: map[fairsched.JobType]fairsched.JobTypeConfig{
			"hi": {DefaultCost: 10 * time.Second, Priority: 10},
			"lo": {DefaultCost: 10 * time.Second, Priority: 5},
		},
	}
}

// TestPolicyTierShareChangedMidRun is spec 5's tier table changed while
// running: hi holds 80 % of 10 slots and lo 20 %, both flooded with 10 s
// jobs; at 5 s a policy gives hi 30 % and lo 70 %. The 8 hi jobs running
// are not stopped (they end at 10 s, and the tier is over its new cap
// meanwhile); from the next decision on the queued work follows the new
// shares: 3 hi and 7 lo at a time. The applied version is an event.
func TestPolicyTierShareChangedMidRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New(fairsched.WithPolicy(tierPolicy("v1", 0.8, 0.2)))
		if err != nil {
			t.Fatal(err)
		}
		events, stop := s.Subscribe(256)
		defer stop()
		var jobs []timedJob
		for i := range 16 {
			jobs = append(jobs, timedJob{typ: "hi", id: fmt.Sprint("h", i), dur: 10}, timedJob{typ: "lo", id: fmt.Sprint("l", i), dur: 10})
		}
		jobs = append(jobs, timedJob{at: 5, probe: func() {
			if err := s.ApplyPolicy(context.Background(), tierPolicy("v2", 0.3, 0.7)); err != nil {
				t.Fatal(err)
			}
			snap := snapshot(t, s)
			if diff := cmp.Diff(map[fairsched.Priority]int{10: 8, 5: 2}, snap.RunningByTier); diff != "" {
				t.Errorf("running by tier at 5 s, just after the change (-want +got):\n%s", diff)
			}
		}})
		starts := map[int]map[string]int{} // start second → type → jobs started
		for _, sp := range runTimeline(t, s, jobs) {
			typ, _, _ := strings.Cut(sp.Job, "/")
			if starts[sp.Start] == nil {
				starts[sp.Start] = map[string]int{}
			}
			starts[sp.Start][typ]++
			if sp.End-sp.Start != 10 {
				t.Errorf("%s ran %d s; want its whole 10 s", sp.Job, sp.End-sp.Start)
			}
		}
		want := map[int]map[string]int{
			0:  {"hi": 8, "lo": 2},
			10: {"hi": 3, "lo": 7},
			20: {"hi": 3, "lo": 7},
			30: {"hi": 2},
		}
		if diff := cmp.Diff(want, starts); diff != "" {
			t.Errorf("jobs started, by second and type (-want +got):\n%s", diff)
		}
		var applied []fairsched.PolicyApplied
		for e := range drain(events) {
			if pa, ok := e.(fairsched.PolicyApplied); ok {
				pa.Time = time.Time{}
				applied = append(applied, pa)
			}
		}
		if diff := cmp.Diff([]fairsched.PolicyApplied{{Version: "v2", Seq: 1}}, applied); diff != "" {
			t.Errorf("PolicyApplied events (-want +got):\n%s", diff)
		}
	})
}

// drain returns the events already delivered on ch, without waiting.
func drain(ch <-chan fairsched.Event) func(func(fairsched.Event) bool) {
	return func(yield func(fairsched.Event) bool) {
		for {
			select {
			case e, ok := <-ch:
				if !ok || !yield(e) {
					return
				}
			default:
				return
			}
		}
	}
}

// workloadPolicy has three rules, the first match winning: gold jobs
// compete at priority 9, state 3 s and take their key from the tenant
// label; dev and test jobs that are not urgent wait at most 30 s and state
// 2 s; any other job with a tenant label takes its key from it.
func workloadPolicy() fairsched.Policy {
	nine := fairsched.Priority(9)
	return fairsched.Policy{
		MaxConcurrency: 1,
		Types: map[fairsched.JobType]fairsched.JobTypeConfig{
			"work": {DefaultCost: time.Second, Priority: 5},
			"hold": {DefaultCost: time.Second, Priority: 5},
		},
		Workloads: []fairsched.Workload{
			{Name: "vip", MatchLabels: map[string]string{"tier": "gold"}, Priority: &nine, Tokens: 3 * time.Second, FairnessLabelKey: "tenant"},
			{Name: "batch", MatchExpressions: []fairsched.LabelRequirement{
				{Key: "env", Op: fairsched.SelectorIn, Values: []string{"dev", "test"}},
				{Key: "urgent", Op: fairsched.SelectorDoesNotExist},
			}, QueueTimeout: 30 * time.Second, Tokens: 2 * time.Second},
			{Name: "anyone", MatchExpressions: []fairsched.LabelRequirement{{Key: "tenant", Op: fairsched.SelectorExists}}, FairnessLabelKey: "tenant"},
		},
	}
}

// wlAdmission is what a test compares of a JobAdmitted or JobExpired.
type wlAdmission struct {
	ID        string
	At        int // seconds
	Key       string
	Effective fairsched.Priority
	Cost      time.Duration
	Expired   bool
}

// TestWorkloadMatchOrderAndOverride: one slot, held for 45 s, while six
// labelled jobs queue. The first matching rule applies (c is batch, not
// anyone; d, urgent, is not batch but anyone), a job no rule matches keeps
// its options (e), and the call's own options override the rule's (b's
// WithFairnessKey, f's WithQueueTimeout): c expires at 30 s, f does not.
func TestWorkloadMatchOrderAndOverride(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New(fairsched.WithPolicy(workloadPolicy()))
		if err != nil {
			t.Fatal(err)
		}
		events, stop := s.Subscribe(256)
		defer stop()
		start := time.Now()
		sleep := func(d time.Duration) func(context.Context) error {
			return func(context.Context) error { time.Sleep(d); return nil }
		}
		if err := s.Submit("hold", "h", sleep(45*time.Second)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		for _, j := range []struct {
			id     string
			labels map[string]string
			opts   []fairsched.JobOption
		}{
			{"a", map[string]string{"tier": "gold", "tenant": "acme"}, nil},
			{"b", map[string]string{"tier": "gold", "tenant": "acme"}, []fairsched.JobOption{fairsched.WithFairnessKey("own")}},
			{"c", map[string]string{"env": "dev", "tenant": "beta"}, nil},
			{"d", map[string]string{"env": "dev", "urgent": "yes", "tenant": "beta"}, nil},
			{"e", map[string]string{"env": "prod"}, nil},
			{"f", map[string]string{"env": "test"}, []fairsched.JobOption{fairsched.WithQueueTimeout(time.Minute)}},
		} {
			opts := append([]fairsched.JobOption{fairsched.WithLabels(j.labels)}, j.opts...)
			if err := s.Submit("work", j.id, sleep(time.Second), opts...); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		var got []wlAdmission
		for e := range drain(events) {
			switch e := e.(type) {
			case fairsched.JobAdmitted:
				got = append(got, wlAdmission{e.ID, int(e.Time.Sub(start) / time.Second), e.FairnessKey, e.EffectivePriority, e.Cost, false})
			case fairsched.JobExpired:
				got = append(got, wlAdmission{e.ID, int(e.Time.Sub(start) / time.Second), e.FairnessKey, 0, 0, true})
			}
		}
		want := []wlAdmission{
			{"h", 0, "", 5, time.Second, false},
			{"c", 30, "", 0, 0, true},
			{"a", 45, "acme", 9, 3 * time.Second, false},
			{"b", 46, "own", 9, 3 * time.Second, false},
			{"d", 47, "beta", 5, time.Second, false},
			{"e", 48, "", 5, time.Second, false},
			{"f", 49, "", 5, 2 * time.Second, false},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("admissions and expiries (-want +got):\n%s", diff)
		}
	})
}

// TestApplyPolicyAllOrNothing: each invalid policy — a bad tier share, a
// bad selector, a registered type changed, rate limits changed, groups
// started — is refused with ErrInvalidConfig naming the field, and leaves
// the scheduler exactly as it was: limits, types, no event, and its
// workloads (a labelled job matches no rule of a refused policy). The
// valid policy after them applies whole.
func TestApplyPolicyAllOrNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := tierPolicy("v1", 0.5, 0.5)
		base.KeyWeights = map[string]float64{"acme": 2}
		s, err := fairsched.New(fairsched.WithPolicy(base), fairsched.WithRateLimit(fairsched.RateForKey("acme"), 1, 1))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(context.Background())
		events, stop := s.Subscribe(64)
		defer stop()
		before := snapshot(t, s)
		nine := fairsched.Priority(9)
		catchAll := fairsched.Workload{Name: "all", Priority: &nine}
		for _, tc := range []struct {
			name, field string
			change      func(p *fairsched.Policy)
		}{
			{"tier share", "BurstShare", func(p *fairsched.Policy) { p.Tiers[10] = fairsched.TierConfig{MinShare: 0.5, BurstShare: 1.5} }},
			{"selector", "MatchExpressions[0].Op", func(p *fairsched.Policy) {
				p.Workloads = append(p.Workloads, fairsched.Workload{Name: "bad", Priority: &nine,
					MatchExpressions: []fairsched.LabelRequirement{{Key: "env", Op: "Like", Values: []string{"x"}}}})
			}},
			{"type changed", `Types["hi"]`, func(p *fairsched.Policy) {
				p.Types["hi"] = fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 10}
			}},
			{"rate limits", "RateLimits", func(p *fairsched.Policy) { p.RateLimits = []fairsched.RateLimit{} }},
			{"groups", "Groups", func(p *fairsched.Policy) { p.Groups = &fairsched.GroupsConfig{DefaultWeight: 1} }},
		} {
			p := tierPolicy("bad", 0.2, 0.8)
			p.KeyWeights = map[string]float64{"beta": 3}
			p.Workloads = []fairsched.Workload{catchAll}
			p.Types["new"] = fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 5}
			tc.change(&p)
			err := s.ApplyPolicy(context.Background(), p)
			if !errors.Is(err, fairsched.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("%s: ApplyPolicy = %v; want ErrInvalidConfig naming %s", tc.name, err, tc.field)
			}
			if diff := cmp.Diff(before, snapshot(t, s)); diff != "" {
				t.Errorf("%s: the snapshot changed (-before +after):\n%s", tc.name, diff)
			}
		}
		if err := s.Submit("new", "x", func(context.Context) error { return nil }); !errors.Is(err, fairsched.ErrUnknownJobType) {
			t.Errorf("Submit of a type only refused policies add = %v; want ErrUnknownJobType", err)
		}
		if err := s.Submit("lo", "x", func(context.Context) error { return nil }, fairsched.WithLabels(map[string]string{"k": "v"})); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		for e := range drain(events) {
			switch e := e.(type) {
			case fairsched.PolicyApplied:
				t.Errorf("event %+v after refused policies only", e)
			case fairsched.JobAdmitted:
				if e.EffectivePriority != 5 {
					t.Errorf("%s admitted at priority %d; want 5 (no rule of a refused policy applies)", e.ID, e.EffectivePriority)
				}
			}
		}

		p := tierPolicy("v2", 0.2, 0.8)
		p.KeyWeights = map[string]float64{"beta": 3}
		p.RateLimits = []fairsched.RateLimit{{Scope: fairsched.RateForKey("acme"), PerSecond: 1, Burst: 1}}
		if err := s.ApplyPolicy(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		after := snapshot(t, s)
		got := struct {
			Tiers      map[fairsched.Priority]fairsched.TierConfig
			KeyWeights map[string]float64
		}{after.Tiers, after.KeyWeights}
		want := got
		want.Tiers, want.KeyWeights = p.Tiers, p.KeyWeights
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("after a valid policy (-want +got):\n%s", diff)
		}
	})
}

// TestLabelsRejected: labels beyond the bounds, or that are not clean
// text, are refused at the call with ErrInvalidJob naming the label, and
// nothing is queued.
func TestLabelsRejected(t *testing.T) {
	s := newScheduler(t)
	if err := s.RegisterType("work", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
		t.Fatal(err)
	}
	many := map[string]string{}
	for i := range fairsched.MaxLabels + 1 {
		many[fmt.Sprint("k", i)] = "v"
	}
	for _, tc := range []struct {
		labels map[string]string
		want   string
	}{
		{many, "labels: 33 pairs"},
		{map[string]string{"": "v"}, "label key"},
		{map[string]string{"k\x00": "v"}, "NUL"},
		{map[string]string{"k": "\xff"}, `label "k" value`},
		{map[string]string{"k": strings.Repeat("v", fairsched.MaxLabelLen+1)}, "over the limit of 256"},
	} {
		err := s.Submit("work", "x", func(context.Context) error { return nil }, fairsched.WithLabels(tc.labels))
		if !errors.Is(err, fairsched.ErrInvalidJob) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Submit(WithLabels(%.40q)) = %v; want ErrInvalidJob saying %q", fmt.Sprint(tc.labels), err, tc.want)
		}
	}
	if n := snapshot(t, s).PendingTotal; n != 0 {
		t.Errorf("%d jobs pending after refused submissions", n)
	}
}

// TestDurableLabelsMatchedAfterRestart: a durable job's labels are kept in
// its record and matched again, against the policy of the day, when a
// restart queues it: enqueued under no policy, it runs after the restart
// with the key the new policy's rule takes from its tenant label, while a
// job with a key of its own keeps it.
func TestDurableLabelsMatchedAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	ctx := context.Background()
	mail := fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		st := durableStore(t, path)
		s, err := fairsched.New(fairsched.WithClock(env.Clock), fairsched.WithStore(st))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType("mail", mail); err != nil {
			t.Fatal(err)
		}
		labels := fairsched.WithLabels(map[string]string{"tenant": "acme"})
		if err := s.Enqueue(ctx, "mail", "m1", nil, labels); err != nil {
			t.Fatal(err)
		}
		if err := s.Enqueue(ctx, "mail", "m2", nil, labels, fairsched.WithFairnessKey("own")); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(ctx); err != nil { // no handler: both stay in the store
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	})
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		st := durableStore(t, path)
		p := fairsched.Policy{Workloads: []fairsched.Workload{{Name: "tenants", FairnessLabelKey: "tenant"}}}
		s, err := fairsched.New(fairsched.WithClock(env.Clock), fairsched.WithStore(st), fairsched.WithPolicy(p))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(ctx)
		if err := s.RegisterType("mail", mail); err != nil {
			t.Fatal(err)
		}
		var log ranLog
		if err := s.RegisterHandler("mail", func(ctx context.Context, j fairsched.Job) error {
			log.add(j.ID + " key " + j.FairnessKey)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		fairschedtest.WaitIdle(t, s)
		got := log.get()
		slices.Sort(got)
		if diff := cmp.Diff([]string{"m1 key acme", "m2 key own"}, got); diff != "" {
			t.Errorf("runs after the restart (-want +got):\n%s", diff)
		}
	})
}

// TestPolicyTenantLimitDrains: four slots, four jobs of tenant acme running
// and more of acme and beta queued, when a policy caps acme at one running
// job. The four running are not stopped; when they end, acme starts one
// job and beta its two, and acme goes on one at a time (its limit counts
// the jobs that ran before the policy).
func TestPolicyTenantLimitDrains(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{"w": {DefaultCost: 10 * time.Second, Priority: 8}},
			fairsched.WithMaxConcurrency(4))
		var jobs []timedJob
		acme := []fairsched.JobOption{fairsched.WithFairnessKey("acme")}
		for i := range 4 {
			jobs = append(jobs, timedJob{typ: "w", id: fmt.Sprint("a", i), tag: "acme", dur: 10, opts: acme})
		}
		for i := range 2 {
			jobs = append(jobs, timedJob{at: 1, typ: "w", id: fmt.Sprint("b", i), tag: "beta", dur: 10, opts: []fairsched.JobOption{fairsched.WithFairnessKey("beta")}})
		}
		for i := 4; i < 8; i++ {
			jobs = append(jobs, timedJob{at: 1, typ: "w", id: fmt.Sprint("a", i), tag: "acme", dur: 10, opts: acme})
		}
		jobs = append(jobs, timedJob{at: 2, probe: func() {
			p := fairsched.Policy{Tenants: &fairsched.TenantsConfig{Keys: map[string]fairsched.TenantLimits{"acme": {MaxRunning: 1}}}}
			if err := s.ApplyPolicy(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			if n := len(snapshot(t, s).Running); n != 4 {
				t.Errorf("%d jobs running after the policy; want the 4 of acme", n)
			}
		}})
		starts := map[int][]string{}
		for _, sp := range runTimeline(t, s, jobs) {
			_, tag, _ := strings.Cut(sp.Job, "#")
			starts[sp.Start] = append(starts[sp.Start], tag)
		}
		want := map[int][]string{0: {"acme", "acme", "acme", "acme"}, 10: {"acme", "beta", "beta"}, 20: {"acme"}, 30: {"acme"}, 40: {"acme"}}
		if diff := cmp.Diff(want, starts); diff != "" {
			t.Errorf("tenants started, by second (-want +got):\n%s", diff)
		}
	})
}

// TestPolicyReservationCountsQueuedWork: a reservation that lends while
// its tier has nothing waiting, applied while jobs of that tier already
// wait, holds for them at once: four slots, priorities only order; hi
// fills them and has four more queued, lo has two queued, when a policy
// reserves half the slots for lo. At 10 s lo takes its two slots and hi
// the rest, although hi ranks first.
func TestPolicyReservationCountsQueuedWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			"hi": {DefaultCost: 10 * time.Second, Priority: 2},
			"lo": {DefaultCost: 10 * time.Second, Priority: 1},
		}, fairsched.WithMaxConcurrency(4), fairsched.WithPriorityMode(fairsched.PriorityOrderOnly))
		var jobs []timedJob
		for i := range 8 {
			jobs = append(jobs, timedJob{typ: "hi", id: fmt.Sprint("h", i), dur: 10})
		}
		for i := range 2 {
			jobs = append(jobs, timedJob{typ: "lo", id: fmt.Sprint("l", i), dur: 10})
		}
		jobs = append(jobs, timedJob{at: 1, probe: func() {
			p := fairsched.Policy{Tiers: map[fairsched.Priority]fairsched.TierConfig{1: {MinShare: 0.5, BurstShare: 1, LendIdle: true}}}
			if err := s.ApplyPolicy(context.Background(), p); err != nil {
				t.Fatal(err)
			}
		}})
		starts := map[int]map[string]int{}
		for _, sp := range runTimeline(t, s, jobs) {
			typ, _, _ := strings.Cut(sp.Job, "/")
			if starts[sp.Start] == nil {
				starts[sp.Start] = map[string]int{}
			}
			starts[sp.Start][typ]++
		}
		want := map[int]map[string]int{0: {"hi": 4}, 10: {"hi": 2, "lo": 2}, 20: {"hi": 2}}
		if diff := cmp.Diff(want, starts); diff != "" {
			t.Errorf("jobs started, by second and type (-want +got):\n%s", diff)
		}
	})
}

// TestPolicyFromFollowerReachesLeader: on PostgreSQL, a policy applied on
// the instance that does not lead caps the tier of priority 8 at one job
// (its value, 8, capped it before): the leader then runs one of two
// pending jobs and holds the other with reason tier_limit. When the
// leader leaves, the next leader applies the stored policy before it
// decides: the same holds for the next two jobs. The policy's workload
// rule gives each job the key its tenant label names: labels travel in the
// job's record to the leader, which matches them.
func TestPolicyFromFollowerReachesLeader(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	ctx := context.Background()
	// Each round's jobs wait for their round's release.
	release := map[byte]chan struct{}{'a': make(chan struct{}), 'b': make(chan struct{})}
	var instances []*fairsched.Scheduler
	for _, name := range []string{"pa", "pb"} {
		s := joinFast(t, url, "policy", name)
		if err := s.RegisterType("t", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterHandler("t", func(ctx context.Context, j fairsched.Job) error {
			select {
			case <-release[j.ID[0]]:
			case <-ctx.Done():
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		instances = append(instances, s)
	}
	var leader, follower *fairsched.Scheduler
	pgtest.Eventually(t, "a leader", func() bool {
		for i, s := range instances {
			if snap, err := s.Snapshot(ctx); err == nil && snap.Cluster.Leading {
				leader, follower = s, instances[1-i]
				return true
			}
		}
		return false
	})
	p := fairsched.Policy{Version: "one-at-a-time", Tiers: map[fairsched.Priority]fairsched.TierConfig{8: {MaxRunning: 1}},
		Workloads: []fairsched.Workload{{Name: "tenants", FairnessLabelKey: "tenant"}}}
	if err := follower.ApplyPolicy(ctx, p); err != nil {
		t.Fatal(err)
	}
	// held waits until the leader s runs one job of ids and holds the
	// other on its tier's cap.
	held := func(s *fairsched.Scheduler, ids ...string) {
		t.Helper()
		for _, id := range ids {
			if err := s.Enqueue(ctx, "t", id, nil, fairsched.WithLabels(map[string]string{"tenant": "of-" + id})); err != nil {
				t.Fatal(err)
			}
		}
		var got []any
		pgtest.Eventually(t, "one running, one held on its tier", func() bool {
			snap, err := s.Snapshot(ctx, fairsched.SnapshotAll())
			if err != nil || len(snap.Running) != 1 || len(snap.Pending) != 1 {
				return false
			}
			keys := []string{snap.Running[0].FairnessKey, snap.Pending[0].FairnessKey}
			slices.Sort(keys)
			got = []any{snap.Tiers, snap.Pending[0].Reason, keys}
			return true
		})
		want := []any{p.Tiers, fairsched.ReasonTierLimit, []string{"of-" + ids[0], "of-" + ids[1]}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the leader's tiers and the held job's reason (-want +got):\n%s", diff)
		}
	}
	held(leader, "a1", "a2")
	if err := leader.Close(ctx); err != nil {
		t.Fatal(err)
	}
	pgtest.Eventually(t, "the follower leads", func() bool {
		snap, err := follower.Snapshot(ctx)
		return err == nil && snap.Cluster.Leading
	})
	close(release['a']) // the jobs left by the first leader end
	pgtest.Eventually(t, "nothing left", func() bool {
		snap, err := follower.Snapshot(ctx, fairsched.SnapshotAll())
		return err == nil && len(snap.Running)+len(snap.Pending) == 0
	})
	held(follower, "b1", "b2")
	close(release['b'])
}
