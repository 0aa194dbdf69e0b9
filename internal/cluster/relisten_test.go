package cluster_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster"
)

// TestListensAgainAfterTheConnectionIsLost: once the backend stops
// listening (its listening connections lost, as when PostgreSQL
// restarts), every loop listens again at its next heartbeat, and a call
// through the whole cluster is woken through again — not left to polls an
// hour apart.
func TestListensAgainAfterTheConnectionIsLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newMem(t)
		var tl timeline
		var nodes []*fairsched.Scheduler
		for _, in := range []struct {
			name string
			b    cluster.Backend
		}{{"lead", b}, {"w", follower{b}}} {
			cfg := fast("d", in.name, 2)
			cfg.Poll = time.Hour
			s, err := fairsched.New(fairsched.WithCluster(link{in.b}, cfg))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close(context.Background()) })
			if err := s.RegisterType("call", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
				t.Fatal(err)
			}
			nodes = append(nodes, s)
		}
		w := nodes[1]
		call := func(id string) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			start := time.Now()
			err := w.RunSync(ctx, "call", id, "k", func(context.Context) error { return nil })
			tl.note("%s on w: %v after %v", id, err, time.Since(start))
		}
		time.Sleep(500 * time.Millisecond) // the leader knows w (its heartbeats)
		call("before")
		b.Deafen()
		time.Sleep(300 * time.Millisecond) // a heartbeat and more
		call("after")
		tl.check(t, []string{"00.502 before on w: <nil> after 2ms", "00.804 after on w: <nil> after 2ms"})
	})
}
