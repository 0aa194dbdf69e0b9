package invariant

import (
	"math/rand/v2"

	"github.com/fairsched/fairsched"
)

// Workload rules in chaos mode: on some seeds, jobs carry a "lane" label
// and rules matched by it put two lanes in tiers of their own — a job's
// tier is then its lane's, not its type's, for every check that counts
// by tier. Drawn from a stream of their own, so that the other seeds'
// draws stay as they were.

// laneNames are the lanes a job may carry ("" none).
var laneNames = []string{"", "fast", "slow", "plain"}

// drawLanes gives c, on a third of the seeds, the rules' tiers by lane:
// "fast" at a tier above every type's, "slow" at one of the types'.
func drawLanes(seed uint64, c *config) *rand.Rand {
	r := rand.New(rand.NewPCG(seed, 0x1a9e5))
	if r.IntN(3) != 0 || len(c.types) == 0 {
		return nil
	}
	top := fairsched.Priority(0)
	for _, t := range c.types {
		top = max(top, t.cfg.Priority)
	}
	c.lanes = map[string]fairsched.Priority{
		"fast": top + 1 + fairsched.Priority(r.IntN(2)),
		"slow": c.types[r.IntN(len(c.types))].cfg.Priority,
	}
	return r
}

// workloadPolicy is the rules as a Policy's workloads, one per lane.
func (c *config) workloadPolicy() []fairsched.Option {
	if c.lanes == nil {
		return nil
	}
	var ws []fairsched.Workload
	for _, lane := range laneNames {
		if p, ok := c.lanes[lane]; ok {
			ws = append(ws, fairsched.Workload{Name: "lane-" + lane, MatchLabels: map[string]string{"lane": lane}, Priority: &p})
		}
	}
	return []fairsched.Option{fairsched.WithPolicy(fairsched.Policy{Workloads: ws})}
}

// tierOf is the tier a job of type t in lane competes at.
func (c *config) tierOf(t *typeSpec, lane string) fairsched.Priority {
	if p, ok := c.lanes[lane]; ok {
		return p
	}
	return t.cfg.Priority
}

// lane gives j a lane, when the seed has rules.
func (g *gen) lane(j *jobSpec) {
	if g.lanes != nil {
		j.lane = laneNames[g.lanes.IntN(len(laneNames))]
	}
}

// tier is the tier attempt a counts against: its job's lane's, or its
// type's (a periodic run has no lane).
func (sm *sim) tier(a *attempt) fairsched.Priority {
	if a.job == nil {
		return a.typ.cfg.Priority
	}
	return sm.cfg.tierOf(a.typ, a.job.spec.lane)
}
