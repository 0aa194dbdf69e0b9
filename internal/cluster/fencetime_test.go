package cluster_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
)

// TestFenceOnTimeDespiteSlowReads: an instance whose heartbeats fail
// stops the job running there LostAfter − 2 beats after its last good
// heartbeat began — before the leader can declare it lost and grant the
// job elsewhere — even while its executor waits on slow reads of the
// database (each read of the grants hangs until its beat-long timeout).
func TestFenceOnTimeDespiteSlowReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b := newMem(t)
		f := &faulty{b: b}
		f.follower.Store(true)
		lead, w := leadAndFollower(t, b, f)
		var tl timeline
		note := tl.note
		if err := w.RegisterHandler("build", func(ctx context.Context, j fairsched.Job) error {
			note("attempt %d starts", j.Attempt)
			<-ctx.Done()
			note("attempt %d stopped, worker lost %v", j.Attempt, errors.Is(context.Cause(ctx), fairsched.ErrWorkerLost))
			return context.Cause(ctx)
		}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(505 * time.Millisecond) // the leader reads w's handler; between w's polls
		if err := lead.Enqueue(ctx, "build", "x", nil); err != nil {
			t.Fatal(err)
		}
		// w's last good heartbeat begins at 1.000; then its beats hang,
		// and so do the reads of the grants.
		time.Sleep(time.Until(time.Unix(946684801, 10e6))) // 00:00:01.010 in the bubble
		f.slow.Store(true)
		b.Stall("Granted")
		b.Stall("GrantsSince")
		time.Sleep(2 * time.Second)
		want := []string{
			"00.520 attempt 1 starts",
			"01.600 attempt 1 stopped, worker lost true",
		}
		tl.check(t, want)
	})
}
