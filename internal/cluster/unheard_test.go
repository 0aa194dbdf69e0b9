package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster"
)

// deaf is a backend on which successes told are never heard (a leader
// behind a pooler that drops notifications).
type deaf struct{ cluster.Backend }

func (deaf) Successes(context.Context) (<-chan []cluster.End, func()) { return nil, func() {} }

// TestUnheardSuccessIsReportedThroughItsRow: a success its executor told
// the leader (TellSucceeded), which the leader did not hear, is reported
// through the job's row once a read a Poll later — a heartbeat, if the
// polls are further apart — finds the row still running: the job ends
// once, its slot freed. A success heard writes nothing of its own.
func TestUnheardSuccessIsReportedThroughItsRow(t *testing.T) {
	for _, c := range []struct {
		heard bool
		poll  time.Duration
		want  []string
	}{
		{true, 20 * time.Millisecond, []string{"00.505 x starts", "00.535 told job 1 succeeded", "00.545 x's row is gone"}},
		{false, 20 * time.Millisecond, []string{"00.505 x starts", "00.535 told job 1 succeeded", "00.560 reported job 1", "00.565 x's row is gone"}},
		{false, time.Hour, []string{"00.505 x starts", "00.535 told job 1 succeeded", "00.800 reported job 1", "00.805 x's row is gone"}},
	} {
		t.Run(fmt.Sprintf("heard=%v,poll=%v", c.heard, c.poll), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { unheardSuccess(t, c.heard, c.poll, c.want) })
		})
	}
}

func unheardSuccess(t *testing.T, heard bool, poll time.Duration, want []string) {
	ctx := context.Background()
	b := newMem(t)
	var leadB cluster.Backend = b
	if !heard {
		leadB = deaf{b}
	}
	var tl timeline
	note := tl.note
	lead, w := leadAndFollower(t, leadB, reportClock{follower{b}, note}, func(c *fairsched.ClusterConfig) { c.Poll = poll })
	if err := w.RegisterHandler("build", func(ctx context.Context, j fairsched.Job) error {
		note("%s starts", j.ID)
		time.Sleep(30 * time.Millisecond)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(505 * time.Millisecond) // the leader reads w's handler
	if err := lead.Enqueue(ctx, "build", "x", nil); err != nil {
		t.Fatal(err)
	}
	for range 300 {
		time.Sleep(10 * time.Millisecond)
		if rows, err := b.Rows(ctx, []uint64{1}); err == nil && len(rows) == 0 {
			note("x's row is gone")
			break
		}
	}
	tl.check(t, want)
}
