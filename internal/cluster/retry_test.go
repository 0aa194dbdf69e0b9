package cluster_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
)

// TestFailedReadRetriedBeforeThePoll: a read that a wake-up causes and
// that fails is made again soon, not at the next poll. The loops poll an
// hour apart; a RunSync on the follower needs the leader's read of the
// new job (Next), its executor's read of the grant (GrantsSince), the
// leader's read of the end (EndsSince; the rows when it fails) and its executor's
// read of the job's end (Finals). Each of those fails once in turn, and
// the call still returns within a virtual second.
func TestFailedReadRetriedBeforeThePoll(t *testing.T) {
	for _, method := range []string{"Next", "GrantsSince", "EndsSince", "Finals"} {
		t.Run(method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newHC(t)
				c.config = func(cfg *fairsched.ClusterConfig) { cfg.Poll = time.Hour }
				c.join("lead", false, false)
				c.leads("lead")
				c.join("b", true, true)
				s := c.nodes["b"]
				ctx := context.Background()
				call := func(id string) time.Duration {
					start := time.Now()
					if err := s.RunSync(ctx, hcType, id, "k", func(context.Context) error { return nil }); err != nil {
						t.Fatalf("RunSync %s: %v", id, err)
					}
					return time.Since(start)
				}
				call("warm") // every loop has read once: the next reads are wake-ups'
				c.b.Fail(method, 1, nil)
				if took := call("after-a-failed-" + method); took > time.Second {
					t.Errorf("RunSync took %v of virtual time with one %s failing: its wake-up waited for the poll", took, method)
				}
			})
		})
	}
}
