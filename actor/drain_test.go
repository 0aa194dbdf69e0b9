package actor

import (
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/zap"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// TestDrainEndsItsBatchAtARead: the owner stamps every message of a batch
// with one time, so a batch must end once it has answered a read — its
// reader may move a mock clock and end a job before it sends again, and
// that end must not be stamped with the time before the move (the demo's
// polling settler saw jobs that ran a second measured as running none).
func TestDrainEndsItsBatchAtARead(t *testing.T) {
	a := newActor(core.New(policy.DefaultLimits()), machine.Config{Clock: clock.NewMock(), Logger: zap.NewNop(), Tick: time.Minute})
	replies := []chan core.Snapshot{make(chan core.Snapshot, 1), make(chan core.Snapshot, 1)}
	for _, r := range replies {
		a.inflight.Add(1)
		a.requests <- messages.SnapshotRequest{Reply: r}
	}
	if !a.drain() {
		t.Fatal("drain took nothing")
	}
	if got := [2]int{len(replies[0]), len(replies[1])}; got != [2]int{1, 0} {
		t.Fatalf("answered %v after one batch; want only the first read", got)
	}
	a.m.EndTurn()
	if !a.drain() || len(replies[1]) != 1 {
		t.Fatal("the second read was not answered by the next batch")
	}
}
