package fairsched_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster/memback"
	"github.com/fairsched/fairsched/internal/pgtest"
)

// policyTypesEverywhere plays, on instances that join returns, a policy
// that adds a job type applied through the leader: the other instance
// serves and enqueues the type, an instance that joins after knows it
// (registering it again with another config is a duplicate), and once the
// leader has left the next leader runs the type's jobs. It returns the
// jobs run, in order. eventually waits until cond holds.
func policyTypesEverywhere(t *testing.T, join func(name string) *fairsched.Scheduler, eventually func(what string, cond func() bool)) []string {
	t.Helper()
	ctx := context.Background()
	a, b := join("a"), join("b")
	var leader, other *fairsched.Scheduler
	eventually("a leader", func() bool {
		for _, s := range []*fairsched.Scheduler{a, b} {
			if snap, err := s.Snapshot(ctx); err == nil && snap.Cluster.Leading {
				leader, other = s, map[*fairsched.Scheduler]*fairsched.Scheduler{a: b, b: a}[s]
				return true
			}
		}
		return false
	})
	report := fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}
	if err := leader.ApplyPolicy(ctx, fairsched.Policy{Version: "reports", Types: map[fairsched.JobType]fairsched.JobTypeConfig{"report": report}}); err != nil {
		t.Fatal(err)
	}
	ran := make(chan string, 2)
	if err := other.RegisterHandler("report", func(ctx context.Context, j fairsched.Job) error {
		ran <- j.ID
		return nil
	}); err != nil {
		t.Fatalf("RegisterHandler of the policy's type on the other instance: %v", err)
	}
	if err := other.Enqueue(ctx, "report", "r1", nil); err != nil {
		t.Fatalf("Enqueue of the policy's type on the other instance: %v", err)
	}
	got := []string{<-ran}
	late := join("c")
	if err := late.RegisterType("report", fairsched.JobTypeConfig{Priority: 2, DefaultCost: time.Second}); !errors.Is(err, fairsched.ErrDuplicateType) {
		t.Errorf("RegisterType of the policy's type on an instance joined after = %v, want ErrDuplicateType", err)
	}
	if err := leader.Close(ctx); err != nil {
		t.Fatal(err)
	}
	eventually("a next leader", func() bool {
		for _, s := range []*fairsched.Scheduler{other, late} {
			if snap, err := s.Snapshot(ctx); err == nil && snap.Cluster.Leading {
				return true
			}
		}
		return false
	})
	if err := late.Enqueue(ctx, "report", "r2", nil); err != nil {
		t.Fatalf("Enqueue of the policy's type under the next leader: %v", err)
	}
	return append(got, <-ran)
}

// TestPolicyTypesOnEveryInstance: a policy's types, applied through one
// instance, are known to every instance of the domain and to every later
// leader; on the in-memory backend, in virtual time.
func TestPolicyTypesOnEveryInstance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := memback.New()
		defer b.Close()
		var all []*fairsched.Scheduler
		defer func() {
			for _, s := range all {
				s.Close(context.Background())
			}
		}()
		join := func(name string) *fairsched.Scheduler {
			s, err := fairsched.New(fairsched.WithCluster(b, fairsched.ClusterConfig{Domain: "types", Instance: name, Slots: 2,
				LeaseTTL: 2 * time.Second, Heartbeat: 200 * time.Millisecond, LostAfter: time.Second,
				Poll: 20 * time.Millisecond, ReportEvery: 5 * time.Millisecond}))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, s)
			return s
		}
		eventually := func(what string, cond func() bool) {
			for range 1000 {
				if cond() {
					return
				}
				time.Sleep(10 * time.Millisecond) // virtual time: polls the cluster's state
			}
			t.Fatalf("never: %s", what)
		}
		if diff := cmp.Diff([]string{"r1", "r2"}, policyTypesEverywhere(t, join, eventually)); diff != "" {
			t.Errorf("jobs run (-want +got):\n%s", diff)
		}
	})
}

// TestPolicyTypesOnEveryInstancePG is TestPolicyTypesOnEveryInstance on
// PostgreSQL.
func TestPolicyTypesOnEveryInstancePG(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	join := func(name string) *fairsched.Scheduler { return joinFast(t, url, "types", name) }
	eventually := func(what string, cond func() bool) { pgtest.Eventually(t, what, cond) }
	if diff := cmp.Diff([]string{"r1", "r2"}, policyTypesEverywhere(t, join, eventually)); diff != "" {
		t.Errorf("jobs run (-want +got):\n%s", diff)
	}
}
