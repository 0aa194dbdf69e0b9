package invariant

import (
	"fmt"
	"math"
	"strings"

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

// lightestShare is the least weight a charge of c's fairness keys has
// divided by: a key's weight without tenants; with them, its tenant's
// weight times its weight over the sum of its tenant's keys' weights (all
// of them active: the least share a key ever had).
func (c *config) lightestShare() float64 {
	lightest := math.Inf(1)
	for _, k := range c.keys {
		w := c.keyWeights[k]
		if c.tenantWeights != nil {
			t, _, _ := strings.Cut(k, "/")
			sum := 0.0
			for _, o := range c.keys {
				if ot, _, _ := strings.Cut(o, "/"); ot == t {
					sum += c.keyWeights[o]
				}
			}
			w = c.tenantWeights[t] * w / sum
		}
		lightest = math.Min(lightest, w)
	}
	return lightest
}
