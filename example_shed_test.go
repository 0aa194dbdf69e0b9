package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/fairschedtest"
)

// ExampleWithShedding: key noisy fills a queue of 2; its next job is
// refused, but key quiet's is accepted and noisy's newest pending job is
// shed in its place.
func ExampleWithShedding() {
	s, _ := fairsched.New(fairsched.WithMaxConcurrency(1), fairsched.WithMaxPending(2), fairsched.WithShedding())
	defer s.Close(context.Background())
	_ = s.RegisterType("render", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1})
	events, cancel := s.Subscribe(16)
	defer cancel()
	busy := fairschedtest.NewBlocker() // holds the one slot
	defer busy.Release(nil)
	submit := func(id, key string, fn func(context.Context) error) error {
		return s.Submit("render", id, fn, fairsched.WithFairnessKey(key))
	}
	idle := func(context.Context) error { return nil }
	_ = submit("n0", "noisy", busy.Run)
	for e := range events { // n0 holds the slot: the queue is empty again
		if a, ok := e.(fairsched.JobAdmitted); ok && a.ID == "n0" {
			break
		}
	}
	_ = submit("n1", "noisy", idle)
	_ = submit("n2", "noisy", idle)
	err := submit("n3", "noisy", idle)
	var refusal *fairsched.RefusalError
	if !errors.As(err, &refusal) {
		fmt.Println("n3:", err)
		return
	}
	fmt.Println("n3:", refusal.Reason)
	fmt.Println("q0:", submit("q0", "quiet", idle))
	for e := range events {
		if r, ok := e.(fairsched.JobRefused); ok && r.Reason == fairsched.ReasonShed {
			fmt.Println("shed:", r.ID, r.FairnessKey)
			break
		}
	}
	// Output:
	// n3: pool_overloaded
	// q0: <nil>
	// shed: n2 noisy
}
