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
// through the job's row once a read a Poll later finds the row still
// running — the job ends once, its slot freed — while a success heard
// writes nothing of its own.
func TestUnheardSuccessIsReportedThroughItsRow(t *testing.T) {
	for _, heard := range []bool{true, false} {
		t.Run(fmt.Sprint("heard=", heard), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { unheardSuccess(t, heard) })
		})
	}
}

func unheardSuccess(t *testing.T, heard bool) {
	ctx := context.Background()
	b := newMem(t)
	var leadB cluster.Backend = b
	if !heard {
		leadB = deaf{b}
	}
	var tl timeline
	note := tl.note
	f := &faulty{b: b}
	f.follower.Store(true)
	lead, w := leadAndFollower(t, leadB, reportClock{f, note})
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
	for range 100 {
		time.Sleep(10 * time.Millisecond)
		if rows, err := b.Rows(ctx, []uint64{1}); err == nil && len(rows) == 0 {
			note("x's row is gone")
			break
		}
	}
	want := []string{"00.520 x starts", "00.550 told job 1 succeeded", "00.555 x's row is gone"}
	if !heard {
		want = []string{"00.520 x starts", "00.550 told job 1 succeeded", "00.580 reported job 1", "00.585 x's row is gone"}
	}
	tl.check(t, want)
}
