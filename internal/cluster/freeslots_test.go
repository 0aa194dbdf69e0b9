package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster/memback"
)

// TestFairOrderWithoutACapIsOneSchedulers: a cluster with no cap in its
// scheduler decides the fair order when an instance's slot is free, as
// one scheduler with a cap of the cluster's slots does — not when a job
// arrives. One instance of Slots 1 and a scheduler of one process with
// MaxConcurrency 1 (virtual time) run the same arrivals: 30 jobs of one
// key, then, as the 4th job starts, 5 of a second key, and as the 10th
// starts, one of a third; every job runs 10 ms. The orders of the starts
// are the same, the third key's job starting within three starts of its
// arrival (with the scheduler deciding ahead, the cluster ran it 20th,
// after the jobs it had decided already).
func TestFairOrderWithoutACapIsOneSchedulers(t *testing.T) {
	var orders [2][]string
	for i, cluster := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) { orders[i] = fairOrder(t, cluster) })
	}
	if diff := cmp.Diff(orders[0], orders[1]); diff != "" {
		t.Errorf("the cluster's order of starts differs from one scheduler's (-one +cluster):\n%s", diff)
	}
	if i := indexOf(orders[1], "small0"); i < 10 || i > 12 {
		t.Errorf("the third key's job, arrived at the 10th start, started %dth: %v", i+1, orders[1])
	}
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

// fairOrder runs fairOrder's arrivals on a cluster of one instance or on
// one scheduler and returns the jobs in the order they started.
func fairOrder(t *testing.T, cluster bool) []string {
	ctx := context.Background()
	started := make(chan string)
	ack := make(chan struct{})
	body := func(id string) error {
		started <- id
		<-ack
		time.Sleep(10 * time.Millisecond) // virtual: the job's work
		return nil
	}
	var add func(id, key string)
	if cluster {
		b := memback.New()
		defer b.Close()
		s, err := fairsched.New(fairsched.WithCluster(b, fast("order", "one", 1)))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(ctx)
		if err := s.RegisterType("work", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterHandler("work", func(_ context.Context, j fairsched.Job) error { return body(j.ID) }); err != nil {
			t.Fatal(err)
		}
		add = func(id, key string) {
			if err := s.Enqueue(ctx, "work", id, nil, fairsched.WithFairnessKey(key)); err != nil {
				t.Fatal(err)
			}
		}
	} else {
		s, err := fairsched.New(fairsched.WithMaxConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(ctx)
		if err := s.RegisterType("work", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		add = func(id, key string) {
			if err := s.Submit("work", id, func(context.Context) error { return body(id) }, fairsched.WithFairnessKey(key)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 30 {
		add(fmt.Sprint("big", i), "big")
	}
	var order []string
	for len(order) < 36 {
		order = append(order, <-started)
		switch len(order) {
		case 4:
			for i := range 5 {
				add(fmt.Sprint("mid", i), "mid")
			}
		case 10:
			add("small0", "small")
		}
		ack <- struct{}{}
	}
	return order
}
