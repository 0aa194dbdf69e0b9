package cluster_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster/memback"
)

// TestOneSlotRunsOneJob: an instance of Slots 1, with no cap in the
// scheduler, runs its durable jobs one at a time — many jobs, of several
// keys, some short, some long (in-memory backend, virtual time): the most
// running at once is 1, and every job runs.
func TestOneSlotRunsOneJob(t *testing.T) {
	for seed := range 20 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { oneSlot(t, seed) })
		})
	}
}

func oneSlot(t *testing.T, seed int) {
	b := memback.New()
	defer b.Close()
	s, err := fairsched.New(fairsched.WithCluster(b, fast("slots", "one", 1)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if err := s.RegisterType("work", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	var running, peak, ran atomic.Int32
	if err := s.RegisterHandler("work", func(_ context.Context, j fairsched.Job) error {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		var d int
		fmt.Sscan(j.ID[1:], &d)
		time.Sleep(time.Duration((d*7+seed)%5) * time.Millisecond) // virtual
		running.Add(-1)
		ran.Add(1)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const jobs = 60
	for i := range jobs {
		if err := s.Enqueue(ctx, "work", fmt.Sprint("j", i), nil, fairsched.WithFairnessKey(fmt.Sprint("k", (i+seed)%4))); err != nil {
			t.Fatal(err)
		}
		if i%(seed%7+1) == 0 {
			time.Sleep(time.Duration(seed%3) * time.Millisecond)
		}
	}
	for deadline := time.Now().Add(time.Hour); ran.Load() < jobs; time.Sleep(10 * time.Millisecond) { // virtual
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d jobs ran in an hour", ran.Load(), jobs)
		}
	}
	if p := peak.Load(); p != 1 {
		t.Errorf("%d jobs ran at once on an instance of one slot", p)
	}
}

// TestOneSlotAcrossAHandover: the jobs a previous leader granted count on
// their instance's slots from the next leader's first turn until they
// end, whatever the order of its reads: an instance of Slots 1 running a
// long job when the leader hands over runs no other beside it (in-memory
// backend, virtual time; several seeds of the runtime's choices).
func TestOneSlotAcrossAHandover(t *testing.T) {
	for i := range 20 {
		t.Run(fmt.Sprint(i), func(t *testing.T) { synctest.Test(t, oneSlotAcrossAHandover) })
	}
}

func oneSlotAcrossAHandover(t *testing.T) {
	b := memback.New()
	defer b.Close()
	ctx := context.Background()
	start := func(name string) *fairsched.Scheduler {
		s, err := fairsched.New(fairsched.WithCluster(b, fast("handover", name, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType("work", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	lead := start("lead")
	time.Sleep(time.Second) // virtual: lead holds the lease
	work := start("work")
	defer work.Close(ctx)
	var running, peak, ran atomic.Int32
	if err := work.RegisterHandler("work", func(_ context.Context, j fairsched.Job) error {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		if j.ID == "long" {
			time.Sleep(10 * time.Second) // virtual: it runs across the handover
		}
		running.Add(-1)
		ran.Add(1)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := lead.Enqueue(ctx, "work", "long", nil); err != nil {
		t.Fatal(err)
	}
	for running.Load() == 0 {
		time.Sleep(10 * time.Millisecond) // virtual
	}
	if err := lead.Close(ctx); err != nil { // hands the lease over: work leads
		t.Fatal(err)
	}
	const jobs = 10
	for i := range jobs {
		if err := work.Enqueue(ctx, "work", fmt.Sprint("j", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(time.Hour); ran.Load() < jobs+1; time.Sleep(10 * time.Millisecond) { // virtual
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d jobs ran in an hour", ran.Load(), jobs+1)
		}
	}
	if p := peak.Load(); p != 1 {
		t.Errorf("%d jobs ran at once on an instance of one slot", p)
	}
}
