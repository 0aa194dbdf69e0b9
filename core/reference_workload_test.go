package core

import (
	"math/rand/v2"
	"testing"

	"github.com/fairsched/fairsched/policy"
)

// Workload rules in the differential reference: jobs carry a "lane"
// label, and rules matched by it put a job in a tier other than its
// type's — the priority it competes at and whose cap, share, preemption
// and starvation window it counts against — unless it inherited a
// priority at the call. The reference reads the tier from the lane alone
// (a table), never through policy.Workloads.

// refLanes are the labels jobs draw from ("" carries none).
var refLanes = []string{"", "urgent", "bulk", "other"}

// refLaneTiers returns the rules' tiers by lane for the seed: "urgent" up
// to 4 or 7, "bulk" down to 1 or 2; "other" matches no rule.
func refLaneTiers(seed uint64) map[string]policy.Priority {
	rng := rand.New(rand.NewPCG(seed, 0x1abe1))
	return map[string]policy.Priority{
		"urgent": []policy.Priority{4, 7}[rng.IntN(2)],
		"bulk":   []policy.Priority{1, 2}[rng.IntN(2)],
	}
}

// refWorkloads compiles tiers as the core's workload rules: one rule per
// lane, matched by its label.
func refWorkloads(t *testing.T, tiers map[string]policy.Priority) *policy.Workloads {
	var ws []policy.Workload
	for _, lane := range refLanes {
		if p, ok := tiers[lane]; ok {
			ws = append(ws, policy.Workload{Name: "lane-" + lane, MatchLabels: map[string]string{"lane": lane}, Priority: &p})
		}
	}
	w, err := policy.CompileWorkloads(ws)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// labelled labels j with a random lane and returns it.
func (run *refRun) labelled(j *Job) string {
	lane := refLanes[run.rng.IntN(len(refLanes))]
	if lane != "" {
		j.SetLabels(policy.Labels{"lane": lane})
	}
	return lane
}

// tierOf is the tier a job of type typ in lane competes at: its lane's
// rule's, else its type's.
func (r *refScheduler) tierOf(typ policy.JobType, lane string) policy.Priority {
	if p, ok := r.laneTiers[lane]; ok {
		return p
	}
	return r.types[typ].Priority
}
