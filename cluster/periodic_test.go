package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
)

// TestPeriodicRunsOncePerSlot: a schedule every replica submits runs once
// per period across the cluster, not once per replica: over the slots
// between its first and its last run there are no more runs than slots.
// It keeps running when the instance that ran it last closes, and stops
// once every instance stopped it.
func TestPeriodicRunsOncePerSlot(t *testing.T) {
	url := pgtest.URL(t)
	const every = 100 * time.Millisecond
	type run struct {
		where string
		at    time.Time
	}
	runs := make(chan run, 256)
	var ms []*member
	var stops []func()
	for i := range 3 {
		name := fmt.Sprint("r", i+1)
		m := join(t, url, fast("d", name, 2))
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
	for i, m := range ms {
		if fmt.Sprint("r", i+1) == last {
			stops[i]()
			m.close()
		}
	}
	for range 4 {
		r := <-runs
		if r.where == last {
			t.Errorf("an occurrence ran on %s after it closed", last)
		}
		got = append(got, r)
	}
	for _, stop := range stops {
		stop()
	}
	first, end := got[0].at, got[len(got)-1].at
	slots := int(end.Sub(first)/every) + 2 // each end may fall just inside a slot
	if len(got) > slots {
		t.Errorf("%d runs in %d slots of %v: a slot ran more than once", len(got), slots, every)
	}
	t.Logf("%d runs over %d slots", len(got), slots)
}
