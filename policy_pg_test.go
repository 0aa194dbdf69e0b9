package fairsched_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
)

// TestPolicyFromFollowerReachesLeader: on PostgreSQL, a policy applied on
// the instance that does not lead caps the tier of priority 8 at one job
// (its value, 8, capped it before): the leader then runs one of two
// pending jobs and holds the other with reason tier_limit. When the
// leader leaves, the next leader applies the stored policy before it
// decides: the same holds for the next two jobs. The policy's workload
// rule gives each job the key its tenant label names: labels travel in the
// job's record to the leader, which matches them.
func TestPolicyFromFollowerReachesLeader(t *testing.T) {
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
