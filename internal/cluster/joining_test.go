package cluster_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
)

// TestAJoiningInstanceTakesWorkAtOnce: an instance that joins a busy
// cluster — a job waiting for a slot — is given that job as soon as its
// heartbeat says it handles the type, not at the leader's next beat of its
// own (a second here): its beat wakes the leader to read the instances
// (InstanceReads).
func TestAJoiningInstanceTakesWorkAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b := newMem(t)
		slow := func(c *fairsched.ClusterConfig) {
			c.Heartbeat, c.LostAfter, c.LeaseTTL = time.Second, 5*time.Second, 3*time.Second
		}
		var tl timeline
		hold := make(chan struct{})
		runs := func(on string) fairsched.Handler {
			return func(_ context.Context, j fairsched.Job) error {
				tl.note("%s runs %s", on, j.ID)
				if on == "lead" {
					<-hold
				}
				return nil
			}
		}
		lead := memNode(t, b, "lead", slow)
		if err := lead.RegisterHandler("build", runs("lead")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond) // lead takes the lease
		for _, id := range []string{"x", "y", "z"} {
			if err := lead.Enqueue(ctx, "build", id, nil); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(100 * time.Millisecond) // x and y run on lead's two slots; z waits
		tl.note("w joins")
		w := memNode(t, b, "w", slow)
		if err := w.RegisterHandler("build", runs("w")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		close(hold)
		time.Sleep(time.Second)
		tl.checkSorted(t, []string{
			"00.100 lead runs x",
			"00.100 lead runs y",
			"00.200 w joins",
			"00.200 w runs z",
		})
	})
}
