package cluster

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/messages"
)

// TestHandoffFromBeforeTheFenceIsNotStarted: a grant the leader in this
// process handed over before the executor's fence went up, and which the
// executor takes only once the fence has come down, is not started — the
// instance may have been declared lost meanwhile and the job granted
// elsewhere; the full read after the fence starts it if it is still
// granted here. A grant handed over after the fence came down starts.
func TestHandoffFromBeforeTheFenceIsNotStarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &Node{id: "x", cfg: Config{Heartbeat: 200 * time.Millisecond, LostAfter: time.Second}, log: zap.NewNop()}
		x := &executor{n: n, ended: make(chan ended, 4), fenceUp: make(chan struct{}, 1)}
		e := newExecLoop(x)
		defer e.fence.remove()
		started := make(chan string, 4)
		e.handlers["build"] = func(_ context.Context, j messages.DurableJob) error {
			started <- j.ID
			return nil
		}
		grant := func(seq uint64, id string) Grant {
			return Grant{Seq: seq, Instance: "x", Attempt: 1, Record: &core.JobRecord{Seq: seq, Type: "build", ID: id}}
		}

		handedBefore := time.Now()
		time.Sleep(700 * time.Millisecond) // no beat: the fence goes up at 600 ms
		if !e.isFenced() {
			t.Fatal("the fence is not up 700 ms after the last beat")
		}
		now := time.Now()
		x.lastBeat.Store(now.UnixNano())
		e.beaten(now) // a beat succeeds: the fence comes down
		e.handedOver(handoff{grants: []Grant{grant(1, "handed before the fence")}, sent: handedBefore, launched: handedBefore})
		e.handedOver(handoff{grants: []Grant{grant(2, "handed after it")}, sent: time.Now(), launched: time.Now()})
		synctest.Wait()
		close(started)
		var got []string
		for id := range started {
			got = append(got, id)
		}
		if diff := cmp.Diff([]string{"handed after it"}, got); diff != "" {
			t.Errorf("started (-want +got):\n%s", diff)
		}
	})
}
