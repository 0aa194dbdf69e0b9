package fairsched_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/fairschedtest"
)

// Tenants read from the key's path: "acme" spreads its jobs over four
// keys, "solo" uses one. On one slot the tenants take turns, acme's turns
// going round its keys, where without WithKeyPath acme's four keys would
// get four turns in five.
func ExampleWithKeyPath() {
	s, _ := fairsched.New(fairsched.WithMaxConcurrency(1), fairsched.WithKeyPath("/"))
	defer s.Close(context.Background())
	_ = s.RegisterType("sync", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1})
	events, cancel := s.Subscribe(64)
	defer cancel()
	gate := fairschedtest.NewBlocker() // holds the slot while the jobs queue
	_ = s.Submit("sync", "gate", gate.Run, fairsched.WithFairnessKey("gate"))
	noop := func(context.Context) error { return nil }
	for i := range 4 {
		_ = s.Submit("sync", fmt.Sprint("a", i), noop, fairsched.WithFairnessKey(fmt.Sprintf("acme/u%d", i)))
		_ = s.Submit("sync", fmt.Sprint("s", i), noop, fairsched.WithFairnessKey("solo/main"))
	}
	_, _ = s.Snapshot(context.Background()) // answered after every Submit above
	gate.Release(nil)
	for n := 0; n < 8; {
		if a, ok := (<-events).(fairsched.JobAdmitted); ok && a.FairnessKey != "gate" {
			fmt.Print(a.FairnessKey, " ")
			n++
		}
	}
	fmt.Println()
	// Output:
	// acme/u0 solo/main acme/u1 solo/main acme/u2 solo/main acme/u3 solo/main
}

// A snapshot lists the tenants with work: acme (weight 3) runs one job on
// the one slot and has two waiting on two keys, zeta one; with both
// having work, acme's fair share is 3/4.
func ExampleTenantSnapshot() {
	s, _ := fairsched.New(fairsched.WithMaxConcurrency(1), fairsched.WithKeyPath("/"), fairsched.WithTenantWeight("acme", 3))
	defer s.Close(context.Background())
	_ = s.RegisterType("sync", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1})
	gate := fairschedtest.NewBlocker() // holds the slot while the others queue
	defer gate.Release(nil)
	_ = s.Submit("sync", "a0", gate.Run, fairsched.WithFairnessKey("acme/ann"))
	_ = s.Submit("sync", "a1", gate.Run, fairsched.WithFairnessKey("acme/ann"))
	_ = s.Submit("sync", "a2", gate.Run, fairsched.WithFairnessKey("acme/bob"))
	_ = s.Submit("sync", "z0", gate.Run, fairsched.WithFairnessKey("zeta/zed"))
	snap, _ := s.Snapshot(context.Background()) // answered after every Submit above
	for _, t := range snap.Tenants {
		fmt.Printf("%s: weight %g, keys with work %d, running %d, pending %d, fair share %.0f%%\n",
			t.Name, t.Weight, t.Keys, t.Running, t.Pending, 100*t.Share)
	}
	// Output:
	// acme: weight 3, keys with work 2, running 1, pending 2, fair share 75%
	// zeta: weight 1, keys with work 1, running 0, pending 1, fair share 25%
}
