package cluster_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/internal/pgtest"
)

// TestPeriodicRunsOncePerSlot: a schedule every replica submits runs once
// per slot across the cluster, not once per replica: there are no more
// runs than slots claimed (each replica fires at every slot; the claim in
// the database picks one), counted by the backend, not by the clock. It
// keeps running when the instance that ran it last closes, and stops once
// every instance stopped it.
func TestPeriodicRunsOncePerSlot(t *testing.T) {
	url := pgtest.URL(t)
	const every = 100 * time.Millisecond
	type run struct {
		where string
		at    time.Time
	}
	runs := make(chan run, 256)
	var claimed atomic.Int64
	var ms []*member
	var stops []func()
	for i := range 3 {
		name := fmt.Sprint("r", i+1)
		m := joinVia(t, url, func(b cluster.Backend) cluster.Backend { return &claims{Backend: b, n: &claimed} }, fast("d", name, 2))
		if err := m.s.RegisterType("tick", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		stop, err := m.s.SubmitPeriodic("tick", "beat", every, func(ctx context.Context) error {
			runs <- run{name, time.Now()}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		ms, stops = append(ms, m), append(stops, stop)
	}
	var got []run
	for len(got) < 8 {
		got = append(got, <-runs)
	}
	// The instance that ran the last closes: the others go on.
	last := got[len(got)-1].where
	var closed time.Time
	for i, m := range ms {
		if fmt.Sprint("r", i+1) == last {
			stops[i]()
			m.close()
			closed = time.Now() // every run it started has sent by now
		}
	}
	for n := 0; n < 4; {
		r := <-runs
		got = append(got, r)
		if r.at.Before(closed) {
			continue // started before the close returned: still in the channel
		}
		if r.where == last {
			t.Errorf("an occurrence ran on %s after it closed", last)
		}
		n++
	}
	for _, stop := range stops {
		stop()
	}
	if n := claimed.Load(); int64(len(got)) > n {
		t.Errorf("%d runs of %d slots claimed: a slot ran more than once", len(got), n)
	}
	t.Logf("%d runs, %d slots claimed", len(got), claimed.Load())
}

// claims counts the periodic slots claimed through a backend.
type claims struct {
	cluster.Backend
	n *atomic.Int64
}

func (c *claims) ClaimSlot(ctx context.Context, domain, name string, slot int64) (bool, error) {
	ok, err := c.Backend.ClaimSlot(ctx, domain, name, slot)
	if ok {
		c.n.Add(1)
	}
	return ok, err
}
