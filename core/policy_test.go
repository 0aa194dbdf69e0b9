package core

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/queue"
)

// randomPolicy draws a policy of tier shares (lending, so that no tier can
// hold slots for ever), tenant limits, group settings and a cap.
func randomPolicy(r *rand.Rand) policy.Policy {
	p := policy.Policy{MaxConcurrency: 3 + r.IntN(6), Tiers: map[policy.Priority]policy.TierConfig{}}
	left := 1.0
	for prio := policy.Priority(1); prio <= 3; prio++ {
		if r.IntN(2) == 0 {
			min := float64(r.IntN(4)) / 10
			min = min * left
			left -= min
			p.Tiers[prio] = policy.TierConfig{MinShare: min, BurstShare: 1, LendIdle: true, MaxRunning: r.IntN(4)}
		}
	}
	if r.IntN(2) == 0 {
		p.Tenants = &policy.TenantsConfig{Default: policy.TenantLimits{MaxRunning: r.IntN(3)}}
	}
	p.Groups = &policy.GroupsConfig{DefaultWeight: 1 + r.IntN(3), Groups: map[string]policy.GroupConfig{
		"g": {Weight: 1 + r.IntN(3), Limit: r.IntN(4)},
	}}
	return p
}

// TestApplyPolicyRandomKeepsCountsAndLiveness: random submissions,
// dispatches, completions and policies applied in between. After each
// step the tiers' waiting counts kept by the groups match the pending
// jobs; at the end, with the jobs running allowed to finish, every job
// runs (nothing is held for ever by a count a policy left wrong) and the
// counters are back to zero.
func TestApplyPolicyRandomKeepsCountsAndLiveness(t *testing.T) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 1))
		l := policy.DefaultLimits()
		l.MaxConcurrency, l.PriorityMode = 4, policy.PriorityOrderOnly
		l.Groups = &policy.GroupsConfig{DefaultWeight: 1, Groups: map[string]policy.GroupConfig{}}
		c := New(l)
		for prio := policy.Priority(1); prio <= 3; prio++ {
			if err := c.RegisterType(policy.JobType(fmt.Sprint("t", prio)), policy.JobTypeConfig{DefaultCost: ms(10), Priority: prio}); err != nil {
				t.Fatal(err)
			}
		}
		now, submitted, ran := 0, 0, 0
		step := func() {
			now++
			switch op := r.IntN(10); {
			case op < 4:
				submitted++
				j := &Job{Job: queue.Job{Type: policy.JobType(fmt.Sprint("t", 1+r.IntN(3))), ID: fmt.Sprint(submitted), Key: fmt.Sprint("k", r.IntN(3))}}
				j.Group = []string{"", "g"}[r.IntN(2)]
				if err := c.Submit(at(now), j); err != nil {
					t.Fatalf("seed %d: Submit: %v", seed, err)
				}
			case op < 6 && len(c.running) > 0:
				c.Finish(at(now), c.running[r.IntN(len(c.running))])
			case op < 7:
				if err := c.ApplyPolicy(at(now), randomPolicy(r)); err != nil {
					t.Fatalf("seed %d: ApplyPolicy: %v", seed, err)
				}
			}
			ran += len(c.Dispatch(at(now), nil))
			checkWaitingCounts(t, seed, c)
		}
		for range 200 {
			step()
		}
		for i := 0; c.Pending() > 0 || len(c.running) > 0; i++ {
			if i > 10_000 {
				t.Fatalf("seed %d: %d jobs pending that never start", seed, c.Pending())
			}
			now++
			for len(c.running) > 0 {
				c.Finish(at(now), c.running[0])
			}
			ran += len(c.Dispatch(at(now), nil))
			checkWaitingCounts(t, seed, c)
		}
		if ran < submitted || c.usage.Running() != 0 || len(c.keyRunning) != 0 {
			t.Fatalf("seed %d: %d of %d jobs ran; %d still counted running, keys %v", seed, ran, submitted, c.usage.Running(), c.keyRunning)
		}
	}
}

// checkWaitingCounts: with tier shares, the groups' waiting counts by tier
// are the pending jobs of each tier.
func checkWaitingCounts(t *testing.T, seed uint64, c *Core) {
	t.Helper()
	if !c.usage.Shares() {
		return
	}
	want, got := map[policy.Priority]int{}, map[policy.Priority]int{}
	c.queue.Each(func(qj *queue.Job) { want[jobOf(qj).Priority()]++ })
	for _, g := range c.groups {
		for p, n := range g.waiting {
			if n != 0 {
				got[p] += n
			}
		}
	}
	if !maps.Equal(want, got) {
		t.Fatalf("seed %d: waiting by tier %v; the pending jobs are %v", seed, got, want)
	}
}
