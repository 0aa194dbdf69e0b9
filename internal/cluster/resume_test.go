package cluster_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// TestResumedSuccessOfALostInstance: a leader resumes a job whose success
// an instance reported under the last leader, which died before it read
// it. That instance goes silent and is declared lost before the new
// leader reads the job's row (its reads of ends fail meanwhile): the job
// is not run again as interrupted — the row, read once it can be, says it
// succeeded, and it is deleted.
func TestResumedSuccessOfALostInstance(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	st, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	pgtest.CloseAtEnd(t, st) // after the instance's own cleanup: it holds connections
	// The last leader's epoch: the job granted to x, its success reported.
	const domain, x = "resume", "x#000000000001"
	rec := &fairsched.JobRecord{Type: "work", ID: "j", EnqueuedAt: time.Now().UTC()}
	if err := st.ClusterBackend().Insert(ctx, rec); err != nil {
		t.Fatal(err)
	}
	epoch, ok, err := st.ClusterBackend().Acquire(ctx, domain, "old#000000000002", 2*time.Second)
	if err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	if _, err := st.ClusterBackend().Heartbeat(ctx, domain, cluster.Instance{ID: x, Slots: 1, Types: []string{"work"}}); err != nil {
		t.Fatal(err)
	}
	if _, took, err := st.ClusterBackend().Grant(ctx, domain, epoch, nil, nil, []cluster.Grant{{Seq: rec.Seq, Instance: x, Attempt: 1}}); err != nil || len(took) != 1 {
		t.Fatalf("grant: %v %v", took, err)
	}
	if n, err := st.ClusterBackend().ReportEnds(ctx, []cluster.End{{Seq: rec.Seq, Instance: x, Attempt: 1, Kind: cluster.EndOK}}); err != nil || n != 1 {
		t.Fatalf("report: %d %v", n, err)
	}
	if err := st.ClusterBackend().Release(ctx, domain, "old#000000000002", epoch); err != nil {
		t.Fatal(err)
	}

	// The new leader, blind to ends until told.
	f := &faulty{b: st.ClusterBackend()}
	f.blindEnds.Store(true)
	s, err := fairsched.New(fairsched.WithCluster(link{f}, fast(domain, "a", 1)))
	if err != nil {
		t.Fatal(err)
	}
	a := &member{s: s, st: st}
	t.Cleanup(a.close)
	if err := s.RegisterType("work", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	ran := make(chan int, 4)
	if err := s.RegisterHandler("work", func(_ context.Context, j fairsched.Job) error { ran <- j.Attempt; return nil }); err != nil {
		t.Fatal(err)
	}
	leaderOf(t, a)
	waitFor(t, func() bool { // resumed on x
		snap, err := s.Snapshot(ctx)
		return err == nil && slices.ContainsFunc(snap.Running, func(r fairsched.RunningJob) bool { return r.ID == "j" && r.Instance == "x" })
	})
	// x goes silent: the leader declares it lost at its next beat.
	pgtest.Exec(t, url, `UPDATE fairsched_instances SET heartbeat_at = now() - interval '1 hour' WHERE instance = $1`, x)
	waitFor(t, func() bool { // its read of the instances, after the loss, is done
		snap, err := s.Snapshot(ctx)
		return err == nil && snap.Cluster != nil && len(snap.Cluster.Instances) > 0 &&
			!slices.ContainsFunc(snap.Cluster.Instances, func(in fairsched.InstanceSnapshot) bool { return in.Incarnation == x })
	})
	f.blindEnds.Store(false)
	waitFor(t, func() bool {
		n, err := st.CountJobs(ctx)
		return err == nil && n == 0
	})
	select {
	case attempt := <-ran:
		t.Errorf("the job ran again (attempt %d): its reported success was taken for an interruption", attempt)
	default:
	}
}
