package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster"
)

// grantsFailing is a leader's backend whose turns fail while on is set.
type grantsFailing struct {
	cluster.Backend
	on     atomic.Bool
	failed atomic.Int32 // the writes refused
}

func (g *grantsFailing) Grant(ctx context.Context, domain string, epoch int64, ops []fairsched.JobOp, succeeded []cluster.End, grants []cluster.Grant) ([]uint64, []uint64, error) {
	if g.on.Load() {
		g.failed.Add(1)
		return nil, nil, errors.New("test: the turn's write fails")
	}
	return g.Backend.Grant(ctx, domain, epoch, ops, succeeded, grants)
}

// TestSuccessesOutliveAFailedDeleteBeforeARevoke: the leader holds the
// rows of the successes it answered until a turn deletes them. When it
// declares an instance lost it deletes first the successes it holds; if
// that write fails, the successes of the other instances are kept for the
// next turn — answered already, their rows are read no more, and a row
// left running would leave its RunSync's caller waiting for ever. Here
// RunSyncs on w and z succeed, the leader's writes fail from then on, z
// goes silent and is declared lost, then the writes go through: w's call
// returns.
func TestSuccessesOutliveAFailedDeleteBeforeARevoke(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b := newMem(t)
		lb := &grantsFailing{Backend: b}
		memNode(t, lb, "lead")
		wf, zf := &faulty{b: b}, &faulty{b: b}
		wf.follower.Store(true)
		zf.follower.Store(true)
		w, z := memNode(t, wf, "w"), memNode(t, zf, "z")
		time.Sleep(500 * time.Millisecond) // every instance known
		var ran atomic.Int32
		fn := func(context.Context) error {
			if ran.Add(1) == 2 { // both granted: the successes' deletes fail from now on
				lb.on.Store(true)
				zf.slow.Store(true) // and z goes silent
			}
			return nil
		}
		answered := make(chan error, 1)
		go func() {
			wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			answered <- w.RunSync(wctx, "build", "x", "", fn)
		}()
		zDone := make(chan struct{})
		go func() {
			defer close(zDone)
			zctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			_ = z.RunSync(zctx, "build", "y", "", fn) // its instance is lost: any answer
		}()
		time.Sleep(3 * time.Second) // z declared lost meanwhile, the delete before its revoke failed
		var got []string
		got = append(got, fmt.Sprintf("%d functions ran, the leader's writes failing %v", ran.Load(), lb.on.Load()))
		lb.on.Store(false)
		select {
		case err := <-answered:
			got = append(got, fmt.Sprintf("w's RunSync returned %v", err))
		case <-time.After(time.Minute):
			got = append(got, "w's RunSync still waits")
			<-answered // its context ends
		}
		if d := cmp.Diff([]string{"2 functions ran, the leader's writes failing true", "w's RunSync returned <nil>"}, got); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
		zf.slow.Store(false)
		<-zDone
	})
}

// TestFailedWritesBackOff: while the database refuses the leader's writes,
// the leader tries again on a timer that backs off to Poll (20 ms here),
// not at every wake-up — a success waiting for its delete wakes the loop
// every 2 ms —, and once the writes go through the next job runs within a
// Poll.
func TestFailedWritesBackOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b := newMem(t)
		lb := &grantsFailing{Backend: b}
		lead := memNode(t, lb, "lead")
		var tl timeline
		if err := lead.RegisterHandler("build", func(_ context.Context, j fairsched.Job) error {
			tl.note("runs %s", j.ID)
			if j.ID == "x" {
				lb.on.Store(true) // its success's delete fails, and every write after
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		if err := lead.Enqueue(ctx, "build", "x", nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		tl.note("writes refused while out of reach: %d", lb.failed.Load())
		lb.on.Store(false)
		if err := lead.Enqueue(ctx, "build", "y", nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		tl.check(t, []string{
			"00.100 runs x",
			"01.100 writes refused while out of reach: 46",
			"01.102 runs y",
		})
	})
}
