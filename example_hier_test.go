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
