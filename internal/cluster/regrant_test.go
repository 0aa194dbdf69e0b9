package cluster_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/internal/cluster/memback"
)

// TestRegrantWhileRunningStopsTheOldAttempt: an executor that reads a
// new attempt of a job whose earlier attempt still runs there (the grant
// was taken back and granted to it again between two reads) stops the
// old attempt and runs the new one once, whose end it reports. The test
// is the leader: it writes the grants itself.
func TestRegrantWhileRunningStopsTheOldAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b := memback.New()
		defer b.Close()
		f := &faulty{b: b}
		f.follower.Store(true) // the test leads
		s, err := fairsched.New(fairsched.WithCluster(link{f}, fast("d", "x", 2)))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = s.Close(ctx) }()
		if err := s.RegisterType("build", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		var tl timeline
		note := tl.note
		if err := s.RegisterHandler("build", func(ctx context.Context, j fairsched.Job) error {
			note("attempt %d starts", j.Attempt)
			select {
			case <-time.After(time.Second):
				note("attempt %d ends", j.Attempt)
				return nil
			case <-ctx.Done():
				note("attempt %d stopped", j.Attempt)
				return context.Cause(ctx)
			}
		}); err != nil {
			t.Fatal(err)
		}
		epoch, ok, err := b.Acquire(ctx, "d", "test", time.Hour)
		if err != nil || !ok {
			t.Fatalf("the test's lease: %v, %v", ok, err)
		}
		rec := &core.JobRecord{Type: "build", ID: "b", EnqueuedAt: time.Now()}
		if err := b.Insert(ctx, rec); err != nil {
			t.Fatal(err)
		}
		// x beats: its id is listed. The grants come between its reads
		// (every Poll, 20 ms), never at one.
		time.Sleep(time.Second + 5*time.Millisecond)
		ins, err := b.Instances(ctx, "d")
		if err != nil || len(ins) != 1 {
			t.Fatalf("instances %v, %v", ins, err)
		}
		grant := func(attempt int) {
			t.Helper()
			note("attempt %d granted", attempt)
			if _, _, err := b.Grant(ctx, "d", epoch, nil, nil, []cluster.Grant{{Seq: rec.Seq, Instance: ins[0].ID, Attempt: attempt, Record: rec}}); err != nil {
				t.Fatal(err)
			}
		}
		grant(1)
		time.Sleep(100 * time.Millisecond)
		// Taken back and granted to x again at once: x reads only the new
		// attempt.
		if _, err := b.Revoke(ctx, "d", epoch, ins[0].ID); err != nil {
			t.Fatal(err)
		}
		grant(2)
		time.Sleep(3 * time.Second)
		rows, err := b.Rows(ctx, []uint64{rec.Seq})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			"01.005 attempt 1 granted",
			"01.020 attempt 1 starts",
			"01.105 attempt 2 granted",
			"01.120 attempt 1 stopped",
			"01.120 attempt 2 starts",
			"02.120 attempt 2 ends",
		}
		tl.checkSorted(t, want)
		wantRow := []cluster.Row{{Seq: rec.Seq, Instance: ins[0].ID, Attempt: 2, Ended: true, End: cluster.End{Seq: rec.Seq, Instance: ins[0].ID, Attempt: 2, Kind: cluster.EndOK}}}
		if diff := cmp.Diff(wantRow, rows); diff != "" {
			t.Errorf("the job's row (-want +got):\n%s", diff)
		}
	})
}
