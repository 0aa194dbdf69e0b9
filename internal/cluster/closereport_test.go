package cluster_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
)

// TestGracefulCloseReportsItsEndsDespiteAFailure: an instance closed
// gracefully while its job runs reports the job's end before it stops,
// trying again when the report fails, so the job is done, not left to
// run again after the instance is declared lost.
func TestGracefulCloseReportsItsEndsDespiteAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		back := newMem(t)
		f := &faulty{b: back}
		f.follower.Store(true)
		a, b := leadAndFollower(t, back, f)
		release, runs := make(chan struct{}), 0
		if err := b.RegisterHandler("build", func(context.Context, fairsched.Job) error { // b alone runs it
			runs++
			<-release
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := a.Enqueue(ctx, "build", "x", nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second) // granted to b, running
		closed := make(chan error, 1)
		go func() {
			c, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			closed <- b.Close(c)
		}()
		time.Sleep(100 * time.Millisecond)
		back.Fail("ReportEnds", 2, nil) // the next two reports fail
		close(release)
		if err := <-closed; err != nil {
			t.Fatalf("Close: %v", err)
		}
		time.Sleep(5 * time.Second) // b declared lost meanwhile
		snap, err := a.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if runs != 1 || snap.PendingTotal != 0 || len(snap.Running) != 0 {
			t.Errorf("after b's Close: %d runs, %d pending, %d running; want 1 run, the job done", runs, snap.PendingTotal, len(snap.Running))
		}
	})
}
