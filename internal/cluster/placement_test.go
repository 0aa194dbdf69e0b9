package cluster_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
)

// TestPlacement: among instances as specialised, a durable job goes to the
// one with the most free slots, the leader's own on a tie (a job there
// costs the database least) — whatever the names' order; with LeaderFirst,
// to the leader's own while it has a free slot, the others after.
func TestPlacement(t *testing.T) {
	for _, c := range []struct {
		leaderFirst bool
		want        []string
	}{
		{false, []string{"j0 on z-lead", "j1 on a-other", "j2 on z-lead", "j3 on a-other"}},
		{true, []string{"j0 on z-lead", "j1 on z-lead", "j2 on a-other", "j3 on a-other"}},
	} {
		t.Run(fmt.Sprint("LeaderFirst=", c.leaderFirst), func(t *testing.T) {
			url := pgtest.URL(t)
			cfg := func(name string) fairsched.ClusterConfig {
				c2 := fast("d", name, 2)
				c2.LeaderFirst = c.leaderFirst
				return c2
			}
			// Named so that the names' order would pick the other one.
			lead := joinLeader(t, url, cfg("z-lead"))
			other := join(t, url, cfg("a-other"))
			ran := make(chan string, 4)
			release := make(chan struct{})
			defer close(release)
			for _, m := range []struct {
				m    *member
				name string
			}{{lead, "z-lead"}, {other, "a-other"}} {
				serve(t, m.m, "work", func(ctx context.Context, j fairsched.Job) error {
					ran <- j.ID + " on " + m.name
					<-release
					return nil
				})
			}
			waitTypes(t, lead, 2)
			var got []string
			for i := range 4 {
				if err := other.s.Enqueue(context.Background(), "work", fmt.Sprint("j", i), nil); err != nil {
					t.Fatal(err)
				}
				got = append(got, <-ran) // one at a time: each sees the slots the last one took
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("placements (-want +got):\n%s", diff)
			}
		})
	}
}
