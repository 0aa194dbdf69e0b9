package cluster_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster"
)

// reportClock notes each report of ends, and each telling of successes,
// that went through.
type reportClock struct {
	cluster.Backend
	note func(format string, args ...any)
}

func (r reportClock) ReportEnds(ctx context.Context, ends []cluster.End) (int, error) {
	n, err := r.Backend.ReportEnds(ctx, ends)
	if err == nil {
		for _, e := range ends {
			r.note("reported job %d", e.Seq)
		}
	}
	return n, err
}

func (r reportClock) TellSucceeded(ctx context.Context, ends []cluster.End) error {
	err := r.Backend.TellSucceeded(ctx, ends)
	if err == nil {
		for _, e := range ends {
			r.note("told job %d succeeded", e.Seq)
		}
	}
	return err
}

// TestStalledReadsHoldNoReport: an executor whose reads of its grants hang
// (each until its beat-long timeout, then again) tells a job's success as
// soon as the job ends — its slot is free for the leader then — not once
// a read gives up; and once the reads go through, the grant they were
// held from starts.
func TestStalledReadsHoldNoReport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b := newMem(t)
		var tl timeline
		note := tl.note
		f := &faulty{b: b}
		f.follower.Store(true)
		lead, w := leadAndFollower(t, b, reportClock{f, note})
		finish := make(chan struct{})
		if err := w.RegisterHandler("build", func(ctx context.Context, j fairsched.Job) error {
			note("%s starts", j.ID)
			if j.ID == "x" {
				<-finish
			}
			note("%s ends", j.ID)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(505 * time.Millisecond) // the leader reads w's handler; between w's polls
		if err := lead.Enqueue(ctx, "build", "x", nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		// From 0.605 on the reads of the grants hang: y, granted to w,
		// waits for one to go through; x ends meanwhile.
		releaseSince := b.Stall("GrantsSince")
		releaseAll := b.Stall("Granted")
		if err := lead.Enqueue(ctx, "build", "y", nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(45 * time.Millisecond)
		close(finish)
		time.Sleep(300 * time.Millisecond)
		releaseSince()
		releaseAll()
		time.Sleep(300 * time.Millisecond)
		want := []string{
			"00.520 x starts",
			"00.650 x ends",
			"00.650 told job 1 succeeded",
			"00.950 y starts",
			"00.950 y ends",
			"00.950 told job 2 succeeded",
		}
		tl.check(t, want)
	})
}
