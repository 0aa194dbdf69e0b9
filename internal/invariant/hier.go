package invariant

import (
	"fmt"
	"maps"
	"math"
	"strings"
	"time"

	"github.com/fairsched/fairsched"
)

// hierarchy gives fairness mode's configuration c, on half the seeds,
// tenants: key "ka" becomes tenant "ka" spread over 2 to 5 keys (ka/1 …,
// of random weights) beside tenant "kb" on its one key, the tenants of
// random weights, read from the key path (WithKeyPath "/"). Drawn last, so
// that the seeds without it play as before.
func (g *gen) hierarchy(c *config) {
	if !g.chance(0.5) {
		return
	}
	ws := []float64{0.5, 1, 2, 3, 1.5}
	n := 2 + g.intn(4)
	c.keys = c.keys[:0]
	weights := map[string]float64{"kb": 1}
	for i := 1; i <= n; i++ {
		k := fmt.Sprintf("ka/%d", i)
		c.keys = append(c.keys, k)
		weights[k] = ws[g.intn(len(ws))]
	}
	c.keys = append(c.keys, "kb")
	c.keyWeights = weights
	c.tenantWeights = map[string]float64{"ka": ws[g.intn(len(ws))], "kb": ws[g.intn(len(ws))]}
}

// hierOptions are the options of c's tenants, if any.
func (c *config) hierOptions() []fairsched.Option {
	if c.tenantWeights == nil {
		return nil
	}
	o := []fairsched.Option{fairsched.WithKeyPath("/")}
	for _, t := range sortedKeys(c.tenantWeights) {
		o = append(o, fairsched.WithTenantWeight(t, c.tenantWeights[t]))
	}
	return o
}

// share is the weight key's charges divide by while every key has work:
// its weight without tenants; with them, its tenant's weight times its
// weight over the sum of its tenant's keys' weights.
func (c *config) share(key string) float64 {
	w := c.keyWeights[key]
	if c.tenantWeights == nil {
		return w
	}
	t, _, _ := strings.Cut(key, "/")
	sum := 0.0
	for _, o := range c.keys {
		if ot, _, _ := strings.Cut(o, "/"); ot == t {
			sum += c.keyWeights[o]
		}
	}
	return c.tenantWeights[t] * w / sum
}

// shareLedger is the simulation's own account of fairness mode's service:
// each key's raw charges (JobAdmitted.Cost), summed, and their sums when
// every key first had work waiting.
type shareLedger struct {
	charged map[string]time.Duration
	from    map[string]time.Duration // nil until every key had work waiting
}

// note counts an admission's charge.
func (l *shareLedger) note(e fairsched.Event) {
	if a, ok := e.(fairsched.JobAdmitted); ok {
		if l.charged == nil {
			l.charged = map[string]time.Duration{}
		}
		l.charged[a.FairnessKey] += a.Cost
	}
}

// checkShares checks the shares the scheduler gave against the
// configuration's, without its accumulated costs: from the first check at
// which every key had work waiting on, each key's raw charges divided by
// its configured share stay within two bounds of the others'. A key's
// backlog arrives at once and only drains, so every key has had work
// throughout; the keys' accumulated costs were within one bound at the
// start and are at this check, and each charge between moved its key's by
// cost over its share — so a share computed wrong (a tenant's split
// ignored, a weight dropped) shows here even when the costs agree.
func (sm *sim) checkShares(bound time.Duration) {
	c, l := sm.cfg, &sm.shares
	if l.from == nil {
		l.from = maps.Clone(l.charged)
		if l.from == nil {
			l.from = map[string]time.Duration{}
		}
		return
	}
	served := func(k string) float64 { return float64(l.charged[k]-l.from[k]) / c.share(k) }
	lo, hi := c.keys[0], c.keys[0]
	for _, k := range c.keys {
		if served(k) < served(lo) {
			lo = k
		}
		if served(k) > served(hi) {
			hi = k
		}
	}
	// Each charge rounds to the nanosecond: a microsecond covers them.
	if gap := time.Duration(served(hi) - served(lo)); gap > 2*bound+time.Microsecond {
		sm.violate("configured shares: since every key had work, %s got %v of service over its share %.3g, %s %v over %.3g: apart by %v, more than two jobs' weighted cost %v (tenants %v)",
			hi, time.Duration(served(hi)), c.share(hi), lo, time.Duration(served(lo)), c.share(lo), gap, 2*bound, c.tenantWeights)
	}
}

// lightestShare is the least weight a charge of c's fairness keys has
// divided by (share, all of them active: the least share a key ever had).
func (c *config) lightestShare() float64 {
	lightest := math.Inf(1)
	for _, k := range c.keys {
		lightest = math.Min(lightest, c.share(k))
	}
	return lightest
}
