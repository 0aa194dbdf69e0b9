package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster/memback"
	"github.com/fairsched/fairsched/internal/pgtest"
)

// starvedStart is one handler's start: the job and the whole seconds since
// the flood was enqueued.
type starvedStart struct {
	ID string
	At int
}

// TestStarvationWindowInClusterMem: the leader runs the same core, so a
// flood of tier-2 jobs (2 s each) cannot keep tier-1 work waiting longer
// than the tier's window (5 s) plus one tier-2 job: one slot cluster-wide,
// eight interactive jobs enqueued ahead of three batch jobs. Without the
// window the first batch job started only once the flood was over (16 s).
// On the in-memory backend, in virtual time.
func TestStarvationWindowInClusterMem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := memback.New()
		defer b.Close()
		s, err := fairsched.New(fairsched.WithMaxConcurrency(1),
			fairsched.WithTier(2, fairsched.TierConfig{StarvationWindow: 5 * time.Second}),
			fairsched.WithCluster(b, fast("d", "lead", 1)))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(context.Background())
		synctest.Wait() // the instance takes the lease
		starts := make(chan starvedStart, 16)
		begin := time.Now()
		types := map[fairsched.JobType]time.Duration{"interactive": 2 * time.Second, "batch": time.Second}
		// In a fixed order, both known to the leader before the first job:
		// a type it learns later has its jobs adopted later.
		for _, typ := range []fairsched.JobType{"interactive", "batch"} {
			prio := map[fairsched.JobType]fairsched.Priority{"interactive": 2, "batch": 1}[typ]
			dur := types[typ]
			if err := s.RegisterType(typ, fairsched.JobTypeConfig{Priority: prio, DefaultCost: dur}); err != nil {
				t.Fatal(err)
			}
			if err := s.RegisterHandler(typ, func(ctx context.Context, j fairsched.Job) error {
				starts <- starvedStart{j.ID, int(time.Since(begin) / time.Second)}
				time.Sleep(dur)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		ctx := context.Background()
		for i := 1; i <= 8; i++ {
			if err := s.Enqueue(ctx, "interactive", fmt.Sprint("i", i), nil); err != nil {
				t.Fatal(err)
			}
		}
		for i := 1; i <= 3; i++ {
			if err := s.Enqueue(ctx, "batch", fmt.Sprint("b", i), nil); err != nil {
				t.Fatal(err)
			}
		}
		var got []starvedStart
		for range 11 {
			got = append(got, <-starts)
		}
		want := []starvedStart{{"i1", 0}, {"i2", 2}, {"i3", 4}, {"b1", 6}, {"i4", 7}, {"i5", 9}, {"b2", 11},
			{"i6", 12}, {"i7", 14}, {"b3", 16}, {"i8", 17}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("starts (-want +got):\n%s", diff)
		}
		// The spec's bound itself: the first batch admission within the
		// window plus one interactive job.
		for _, st := range got {
			if st.ID == "b1" && st.At > 5+2 {
				t.Errorf("first batch admission at %d s, after window + one job (7 s)", st.At)
			}
		}
	})
}

// TestStarvationWindowInCluster is the same flood on PostgreSQL, in real
// time (a unit of 600 ms): the first five starts, where the window's end
// (5 units) falls inside the third interactive job (4 to 6 units), a
// unit's margin either side.
func TestStarvationWindowInCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("real time, a unit of 600 ms; TestStarvationWindowInClusterMem is its virtual-time twin; make check runs it")
	}
	url := pgtest.URL(t)
	const unit = 600 * time.Millisecond // a unit of margin either side of the window's end
	lead := joinLeader(t, url, fast("d", "lead", 1), fairsched.WithMaxConcurrency(1),
		fairsched.WithTier(2, fairsched.TierConfig{StarvationWindow: 5 * unit}))
	s := lead.s
	starts := make(chan string, 16)
	types := map[fairsched.JobType]time.Duration{"interactive": 2 * unit, "batch": unit}
	for typ, prio := range map[fairsched.JobType]fairsched.Priority{"interactive": 2, "batch": 1} {
		dur := types[typ]
		if err := s.RegisterType(typ, fairsched.JobTypeConfig{Priority: prio, DefaultCost: dur}); err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterHandler(typ, func(ctx context.Context, j fairsched.Job) error {
			starts <- j.ID
			select {
			case <-time.After(dur):
			case <-ctx.Done():
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	for i := 1; i <= 8; i++ {
		if err := s.Enqueue(ctx, "interactive", fmt.Sprint("i", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Enqueue(ctx, "batch", "b1", nil); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 5 {
		got = append(got, <-starts)
	}
	if diff := cmp.Diff([]string{"i1", "i2", "i3", "b1", "i4"}, got); diff != "" {
		t.Errorf("starts (-want +got):\n%s", diff)
	}
}
