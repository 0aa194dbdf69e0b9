package fairsched_test

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster/memback"
)

// tierAdmission is what TestWorkloadPriorityIsATier compares of a
// JobAdmitted.
type tierAdmission struct {
	ID   string
	At   int // seconds
	Tier fairsched.Priority
}

// TestWorkloadPriorityIsATier: a workload rule's priority is the job's
// tier, as spec 4's workloads and spec 5's tiers say — not a floor. Two
// slots; jobs of one type (priority 3) run for a second each; a "vip"
// rule puts its jobs in tier 5, capped at one running job, and a "bulk"
// rule puts its jobs in tier 1. Two jobs hold the slots for the first
// second while six queue, bulk ones first. At 1 s v1 goes first (tier 5)
// and v2 waits on tier 5's cap, so n1 (tier 3) takes the other slot; at
// 2 s v2 and n2; the bulk jobs, first to arrive, run last. (As a floor,
// the rule would have run v1 and v2 at once, and b1 before n1.)
func TestWorkloadPriorityIsATier(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		vip, bulk := fairsched.Priority(5), fairsched.Priority(1)
		s, err := fairsched.New(fairsched.WithPriorityMode(fairsched.PriorityOrderOnly), fairsched.WithPolicy(fairsched.Policy{
			MaxConcurrency: 2,
			Tiers:          map[fairsched.Priority]fairsched.TierConfig{5: {MaxRunning: 1}},
			Types:          map[fairsched.JobType]fairsched.JobTypeConfig{"task": {DefaultCost: time.Second, Priority: 3}},
			Workloads: []fairsched.Workload{
				{Name: "vip", MatchLabels: map[string]string{"class": "vip"}, Priority: &vip},
				{Name: "bulk", MatchLabels: map[string]string{"class": "bulk"}, Priority: &bulk},
			},
		}))
		if err != nil {
			t.Fatal(err)
		}
		events, stop := s.Subscribe(64)
		defer stop()
		start := time.Now()
		sleep := func(context.Context) error { time.Sleep(time.Second); return nil }
		for _, id := range []string{"h1", "h2"} {
			if err := s.Submit("task", id, sleep); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait() // both hold their slot
		for _, j := range []struct{ id, class string }{
			{"b1", "bulk"}, {"b2", "bulk"}, {"n1", ""}, {"n2", ""}, {"v1", "vip"}, {"v2", "vip"},
		} {
			var opts []fairsched.JobOption
			if j.class != "" {
				opts = append(opts, fairsched.WithLabels(map[string]string{"class": j.class}))
			}
			if err := s.Submit("task", j.id, sleep, opts...); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		var got []tierAdmission
		for e := range drain(events) {
			if e, ok := e.(fairsched.JobAdmitted); ok {
				got = append(got, tierAdmission{e.ID, int(e.Time.Sub(start) / time.Second), e.BasePriority})
			}
		}
		// Jobs that end at one instant free their slots in either order:
		// the admissions of one second are compared as a set.
		slices.SortFunc(got, func(a, b tierAdmission) int { return cmp.Or(cmp.Compare(a.At, b.At), strings.Compare(a.ID, b.ID)) })
		want := []tierAdmission{
			{"h1", 0, 3}, {"h2", 0, 3},
			{"n1", 1, 3}, {"v1", 1, 5},
			{"n2", 2, 3}, {"v2", 2, 5},
			{"b1", 3, 1}, {"b2", 3, 1},
		}
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Errorf("admissions (-want +got):\n%s", diff)
		}
	})
}

// TestWorkloadTierInCluster: in cluster mode the leader matches a durable
// job's labels and puts it in its workload's tier: while it runs, tier 5
// counts it (its type's tier, 3, does not). One instance on the in-memory
// backend, in virtual time.
func TestWorkloadTierInCluster(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := memback.New()
		defer b.Close()
		vip := fairsched.Priority(5)
		s, err := fairsched.New(fairsched.WithPriorityMode(fairsched.PriorityOrderOnly), fairsched.WithPolicy(fairsched.Policy{
			Types:     map[fairsched.JobType]fairsched.JobTypeConfig{"task": {DefaultCost: time.Second, Priority: 3}},
			Workloads: []fairsched.Workload{{Name: "vip", MatchLabels: map[string]string{"class": "vip"}, Priority: &vip}},
		}), fairsched.WithCluster(b, fairsched.ClusterConfig{Domain: "wl", Instance: "one", Slots: 2,
			LeaseTTL: 2 * time.Second, Heartbeat: 200 * time.Millisecond, LostAfter: time.Second,
			Poll: 20 * time.Millisecond, ReportEvery: 5 * time.Millisecond}))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(context.Background())
		started, release := make(chan string, 2), make(chan struct{})
		if err := s.RegisterHandler("task", func(ctx context.Context, j fairsched.Job) error {
			started <- j.ID
			<-release
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := s.Enqueue(ctx, "task", "v1", nil, fairsched.WithLabels(map[string]string{"class": "vip"})); err != nil {
			t.Fatal(err)
		}
		if err := s.Enqueue(ctx, "task", "n1", nil); err != nil {
			t.Fatal(err)
		}
		<-started
		<-started
		snap, err := s.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		close(release)
		if diff := gocmp.Diff(map[fairsched.Priority]int{3: 1, 5: 1}, snap.RunningByTier); diff != "" {
			t.Errorf("running by tier (-want +got):\n%s", diff)
		}
	})
}
