package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/fairschedtest"
	"github.com/fairsched/fairsched/internal/cluster/memback"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// spreadWorkload is the workload of the hierarchical share tests: tenant
// "a" spreads 1 000 jobs over 100 keys, tenant "b" sends 1 000 on one key,
// all queued behind a gate so that both are backlogged from the start.
// Every job runs 10 ms, its type's default cost.
const (
	spreadKeys    = 100
	spreadPerKey  = 10
	spreadRunTime = 10 * time.Millisecond
)

// tenantShares runs the spread workload on s (one slot) and returns each
// tenant's share of the service (every job costs the same) over the first
// spreadJobs starts after the gate: both tenants have work waiting
// throughout. submit queues a job of key whose function sends the key on
// started when it starts.
func tenantShares(t *testing.T, s *fairsched.Scheduler, submit func(id, key string, started chan<- string) error) map[string]float64 {
	return tenantSharesOf(t, s, submit, spreadKeys, spreadPerKey)
}

// tenantSharesOf is tenantShares with tenant a's jobs spread over keys
// keys, perKey each.
func tenantSharesOf(t *testing.T, s *fairsched.Scheduler, submit func(id, key string, started chan<- string) error, keys, perKey int) map[string]float64 {
	t.Helper()
	spreadJobs := keys * perKey
	started := make(chan string, 2*spreadJobs)
	gate := fairschedtest.NewBlocker()
	if err := s.Submit(work, "gate-hold", gate.Run, fairsched.WithFairnessKey("gate")); err != nil {
		t.Fatal(err)
	}
	gate.WaitStarted(t)
	for i := range spreadJobs {
		if err := submit(fmt.Sprint("a", i), fmt.Sprintf("a/u%d", i%keys), started); err != nil {
			t.Fatal(err)
		}
		if err := submit(fmt.Sprint("b", i), "b/main", started); err != nil {
			t.Fatal(err)
		}
	}
	gate.Release(nil)
	served := map[string]int{}
	for range spreadJobs { // every job starts: the receives wait for them
		tenant, _, _ := strings.Cut(<-started, "/")
		served[tenant]++
	}
	for range spreadJobs {
		<-started
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	shares := map[string]float64{}
	for k, v := range served {
		shares[k] = float64(v) / float64(spreadJobs)
	}
	return shares
}

// spreadScheduler starts a one-slot scheduler of type work (10 ms) with
// opts, and returns it with tenantShares' submit.
func spreadScheduler(t *testing.T, opts ...fairsched.Option) (*fairsched.Scheduler, func(id, key string, started chan<- string) error) {
	s, err := fairsched.New(append([]fairsched.Option{fairsched.WithMaxConcurrency(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s, spreadSubmit(t, s, spreadRunTime)
}

// spreadSubmit registers type work (10 ms of cost) on s and returns
// tenantShares' submit, whose jobs run for d.
func spreadSubmit(t *testing.T, s *fairsched.Scheduler, d time.Duration) func(id, key string, started chan<- string) error {
	if err := s.RegisterType(work, fairsched.JobTypeConfig{Priority: 8, DefaultCost: spreadRunTime}); err != nil {
		t.Fatal(err)
	}
	return func(id, key string, started chan<- string) error {
		run := func(context.Context) error {
			started <- key
			if d > 0 { // virtual time: the bubble's tests run jobs for d
				time.Sleep(d)
			}
			return nil
		}
		return s.Submit(work, id, run, fairsched.WithFairnessKey(key))
	}
}

// TestHierarchicalShare: with tenants (WithKeyPath), a tenant that spreads
// its jobs over 100 keys and one that uses a single key each get half the
// service while both have work waiting; with one level the spreading
// tenant gets 100 keys' worth, about 99 %.
func TestHierarchicalShare(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     []fairsched.Option
		min, max float64 // tenant a's share
	}{
		{"one level", nil, 0.95, 1},
		{"key path", []fairsched.Option{fairsched.WithKeyPath("/")}, 0.45, 0.55},
		{"tenant function", []fairsched.Option{fairsched.WithKeyTenant(func(key string) string {
			tenant, _, _ := strings.Cut(key, "/")
			return tenant
		})}, 0.45, 0.55},
		// A mapping that panics makes each key its own tenant: one level.
		{"panicking tenant function", []fairsched.Option{fairsched.WithKeyTenant(func(string) string { panic("no tenant") })}, 0.95, 1},
		// Weights 3:1 give a three quarters.
		{"weighted", []fairsched.Option{fairsched.WithKeyPath("/"), fairsched.WithTenantWeight("a", 3)}, 0.70, 0.80},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, submit := spreadScheduler(t, tc.opts...)
				shares := tenantShares(t, s, submit)
				t.Logf("tenant a %.1f %%, tenant b %.1f %%", 100*shares["a"], 100*shares["b"])
				if a := shares["a"]; a < tc.min || a > tc.max {
					t.Errorf("tenant a's share = %.3f; want within [%.2f, %.2f] (shares %v)", a, tc.min, tc.max, shares)
				}
			})
		})
	}
}

// TestHierarchicalShareCluster: the same in cluster mode, on the
// in-memory backend: the leader's core splits the service as one
// process's does.
func TestHierarchicalShareCluster(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     []fairsched.Option
		min, max float64
	}{
		{"one level", nil, 0.95, 1},
		{"key path", []fairsched.Option{fairsched.WithKeyPath("/")}, 0.45, 0.55},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := memback.New()
				defer b.Close()
				cfg := fairsched.ClusterConfig{Domain: "hier", Instance: "one", Slots: 1}
				s, submit := spreadScheduler(t, append(tc.opts, fairsched.WithCluster(b, cfg))...)
				shares := tenantShares(t, s, submit)
				t.Logf("tenant a %.1f %%, tenant b %.1f %%", 100*shares["a"], 100*shares["b"])
				if a := shares["a"]; a < tc.min || a > tc.max {
					t.Errorf("tenant a's share = %.3f; want within [%.2f, %.2f] (shares %v)", a, tc.min, tc.max, shares)
				}
			})
		})
	}
}

// TestHierarchicalSharePG: the cluster's split once on PostgreSQL, in
// real time: tenant a spreads 200 jobs over 20 keys, tenant b sends 200
// on one; jobs take no time, and every new job is charged its type's
// 10 ms, so the share in starts is the share in cost.
func TestHierarchicalSharePG(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := pgstore.Open(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := fairsched.New(fairsched.WithMaxConcurrency(1), fairsched.WithKeyPath("/"),
		fairsched.WithCluster(st, fairsched.ClusterConfig{Domain: "hier", Instance: "one", Slots: 1}))
	if err != nil {
		t.Fatal(err)
	}
	shares := tenantSharesOf(t, s, spreadSubmit(t, s, 0), 20, 10)
	t.Logf("tenant a %.1f %%, tenant b %.1f %%", 100*shares["a"], 100*shares["b"])
	if a := shares["a"]; a < 0.45 || a > 0.55 {
		t.Errorf("tenant a's share = %.3f; want within [0.45, 0.55] (shares %v)", a, shares)
	}
}

// TestHierarchyRejected: bad hierarchy options are ErrInvalidConfig from
// New, naming what is at fault.
func TestHierarchyRejected(t *testing.T) {
	tenantOf := func(key string) string { return key }
	for _, tc := range []struct {
		name string
		opts []fairsched.Option
		want string
	}{
		{"empty separator", []fairsched.Option{fairsched.WithKeyPath("")}, "separator"},
		{"path and function", []fairsched.Option{fairsched.WithKeyPath("/"), fairsched.WithKeyTenant(tenantOf)}, "not both"},
		{"weight without tenants", []fairsched.Option{fairsched.WithTenantWeight("a", 2)}, "separator"},
		{"weight zero", []fairsched.Option{fairsched.WithKeyPath("/"), fairsched.WithTenantWeight("a", 0)}, `TenantWeight["a"]`},
		{"weight too large", []fairsched.Option{fairsched.WithKeyPath("/"), fairsched.WithTenantWeight("a", 1e7)}, `TenantWeight["a"]`},
		{"weight NaN", []fairsched.Option{fairsched.WithKeyPath("/"), fairsched.WithTenantWeight("a", nan())}, `TenantWeight["a"]`},
		{"bad tenant name", []fairsched.Option{fairsched.WithKeyPath("/"), fairsched.WithTenantWeight("a\x00", 2)}, "TenantWeight tenant"},
	} {
		s, err := fairsched.New(tc.opts...)
		if !errors.Is(err, fairsched.ErrInvalidConfig) || s != nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New = %v, %v; want ErrInvalidConfig naming %s", tc.name, s, err, tc.want)
		}
	}
}

// TestSnapshotTenants: a snapshot lists the tenants with work, by name —
// weight, active keys, pending and running jobs, fair share among the
// tenants with work — and a bounded one the tenants of its rows; with
// every job done, or with one level, none.
func TestSnapshotTenants(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New(fairsched.WithMaxConcurrency(2), fairsched.WithKeyPath("/"), fairsched.WithTenantWeight("a", 3))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType(work, fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Second}); err != nil {
			t.Fatal(err)
		}
		gate := fairschedtest.NewBlocker()
		for _, j := range []struct{ id, key string }{{"x1", "a/1"}, {"y1", "b/1"}, {"x2", "a/1"}, {"x3", "a/2"}, {"y2", "b/1"}, {"z1", "c"}, {"w1", "d"}} {
			if err := s.Submit(work, j.id, gate.Run, fairsched.WithFairnessKey(j.key)); err != nil {
				t.Fatal(err)
			}
			synctest.Wait() // each queued (and x1, y1 admitted) before the next joins: the same costs every run
		}
		snap, err := s.Snapshot(context.Background(), fairsched.SnapshotAll())
		if err != nil {
			t.Fatal(err)
		}
		want := []fairsched.TenantSnapshot{
			{Name: "a", Weight: 3, Keys: 2, Pending: 2, Running: 1, Share: 0.5},
			{Name: "b", Weight: 1, Keys: 1, Pending: 1, Running: 1, Share: 1.0 / 6},
			{Name: "c", Weight: 1, Keys: 1, Pending: 1, Running: 0, Share: 1.0 / 6},
			{Name: "d", Weight: 1, Keys: 1, Pending: 1, Running: 0, Share: 1.0 / 6},
		}
		if diff := cmp.Diff(want, snap.Tenants); diff != "" || snap.TenantsTotal != 4 {
			t.Errorf("Tenants (-want +got):\n%s; TenantsTotal %d, want 4", diff, snap.TenantsTotal)
		}
		// One row: the tenants of the first pending job in rank order (x2:
		// the keys that joined after x1's charge joined at its cost, and x2
		// came first) and of the running jobs; c and d are left out.
		snap, err = s.Snapshot(context.Background(), fairsched.SnapshotRows(1))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tn := range snap.Tenants {
			names = append(names, tn.Name)
		}
		if len(snap.Pending) != 1 || snap.Pending[0].ID != "x2" {
			t.Errorf("bounded pending %+v, want x2 alone", snap.Pending)
		}
		if diff := cmp.Diff([]string{"a", "b"}, names); diff != "" || snap.TenantsTotal != 4 {
			t.Errorf("bounded Tenants (-want +got):\n%s; TenantsTotal %d, want 4", diff, snap.TenantsTotal)
		}
		for range 7 {
			gate.Release(nil)
		}
		synctest.Wait()
		if snap, err = s.Snapshot(context.Background()); err != nil || snap.Tenants != nil || snap.TenantsTotal != 0 {
			t.Errorf("Snapshot with every job done: tenants %v (total %d), %v; want none", snap.Tenants, snap.TenantsTotal, err)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		one := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{work: {Priority: 8, DefaultCost: time.Second}})
		if err := one.Submit(work, "w", func(context.Context) error { return nil }, fairsched.WithFairnessKey("a/1")); err != nil {
			t.Fatal(err)
		}
		if snap, err = one.Snapshot(context.Background()); err != nil || snap.Tenants != nil {
			t.Errorf("Snapshot with one level: tenants %v, %v; want none", snap.Tenants, err)
		}
	})
}

// TestSnapshotTenantsCluster (virtual time, in-memory backend): in cluster
// mode the leader's snapshot lists the tenants as in one process.
func TestSnapshotTenantsCluster(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := memback.New()
		defer b.Close()
		ctx := context.Background()
		cfg := fairsched.ClusterConfig{Domain: "tenants", Instance: "one", Slots: 1,
			LeaseTTL: 2 * time.Second, Heartbeat: 200 * time.Millisecond, LostAfter: time.Second, Poll: 20 * time.Millisecond}
		s, err := fairsched.New(fairsched.WithCluster(b, cfg), fairsched.WithMaxConcurrency(1), fairsched.WithKeyPath("/"),
			fairsched.WithTenantWeight("acme", 3))
		if err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		if err := s.RegisterType(work, fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Second}); err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterHandler(work, func(ctx context.Context, j fairsched.Job) error {
			<-release
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for i, key := range []string{"acme/ann", "acme/bob", "zeta/zed"} {
			if err := s.Enqueue(ctx, work, fmt.Sprint("j", i), nil, fairsched.WithFairnessKey(key)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(3 * time.Second) // a leader is elected, j0 is granted
		synctest.Wait()
		snap, err := s.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []fairsched.TenantSnapshot{
			{Name: "acme", Weight: 3, Keys: 2, Pending: 1, Running: 1, Share: 0.75},
			{Name: "zeta", Weight: 1, Keys: 1, Pending: 1, Share: 0.25},
		}
		if diff := cmp.Diff(want, snap.Tenants); diff != "" {
			t.Errorf("Tenants in cluster mode (-want +got):\n%s", diff)
		}
		close(release)
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
