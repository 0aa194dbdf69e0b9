package core

import (
	"fmt"
	"github.com/fairsched/fairsched/queue"
	"math"
	"testing"
	"time"

	"github.com/fairsched/fairsched/costmodel"
	"github.com/fairsched/fairsched/policy"
	"github.com/google/go-cmp/cmp"
)

// TestCostsRebaseInsteadOfSaturating: two keys weighted 1e-6 and 2e-6
// stating a minute each charge 2^55.7 and 2^54.7 ns per job, so their
// accumulated costs pass 2^63 within a few hundred jobs. Saturating there
// would tie them for good (1:1, and every newcomer joins at the ceiling);
// the ledger rebases against the floor instead, so b keeps running twice as
// often as a for the whole run, a newcomer still takes its turn at once,
// and no cost ever reaches the ceiling.
func TestCostsRebaseInsteadOfSaturating(t *testing.T) {
	l := policy.DefaultLimits()
	l.MaxConcurrency = 1
	l.KeyWeights = map[string]float64{"a": 1e-6, "b": 2e-6}
	c := New(l)
	if err := c.RegisterType("t", policy.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
		t.Fatal(err)
	}
	now := t0
	submit := func(key string, n int) {
		for i := range n {
			j := &Job{Job: queue.Job{Type: "t", ID: fmt.Sprint(key, i), Key: key}}
			j.SetTokens(time.Minute)
			if err := c.Submit(now, j); err != nil {
				t.Fatal(err)
			}
		}
	}
	submit("a", 400)
	submit("b", 800)
	runs := map[string]int{}
	var rebases int
	var last time.Duration
	run := func(n int) (order []string) {
		for range n {
			now = now.Add(time.Second)
			js := c.Dispatch(now, nil)
			if len(js) != 1 {
				t.Fatalf("dispatched %d jobs", len(js))
			}
			j := js[0]
			if j.KeyCost == math.MaxInt64 || j.KeyCost > costmodel.RebaseAt+32*policy.MaxCharge {
				t.Fatalf("key %s's cost reached %d", j.Key, j.KeyCost)
			}
			if j.KeyCost < last-policy.MaxCharge {
				rebases++
			}
			last = j.KeyCost
			runs[j.Key]++
			order = append(order, j.Key)
			c.Finish(now, j)
		}
		return order
	}
	run(900)
	if rebases == 0 {
		t.Fatal("900 jobs of 2^55 ns never rebased the costs")
	}
	if diff := cmp.Diff(map[string]int{"a": 300, "b": 600}, runs); diff != "" {
		t.Errorf("runs by key, weights 1:2 (-want +got):\n%s", diff)
	}
	// A newcomer joins at the floor, level with the least served key (here
	// both): it runs once the heads that arrived before it have, not after
	// the others' whole backlog.
	submit("c", 1)
	if diff := cmp.Diff([]string{"a", "b", "c"}, run(3)); diff != "" {
		t.Errorf("after a newcomer (-want +got):\n%s", diff)
	}
	t.Logf("%d rebases in 900 jobs", rebases)
}
