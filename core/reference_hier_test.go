package core

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/fairsched/fairsched/policy"
)

// Hierarchical fair share in the differential reference: the tenant of
// each reference key, and the share a key's charge divides by, computed
// from scratch over the active keys at every admission (hier.go keeps
// the sums incrementally).

// refTenantOf puts "" and "a" in tenant "x", "b" in "y", and leaves "c"
// its own tenant (an empty answer).
func refTenantOf(key string) string {
	switch key {
	case "", "a":
		return "x"
	case "b":
		return "y"
	}
	return ""
}

// refHierarchy returns a hierarchy over refTenantOf with random tenant
// weights for the seed.
func refHierarchy(seed uint64) Hierarchy {
	rng := rand.New(rand.NewPCG(seed, 0x41e))
	w := map[string]float64{}
	for _, t := range []string{"x", "y", "c"} {
		if v := refWeights[rng.IntN(len(refWeights))]; v != 1 {
			w[t] = v
		}
	}
	return Hierarchy{TenantOf: refTenantOf, Weights: w}
}

// refTenant is key's tenant under h (the key itself for an empty answer).
func refTenant(h *Hierarchy, key string) string {
	if t := h.TenantOf(key); t != "" {
		return t
	}
	return key
}

// hierShare returns the weight the charge of key (of weight w) divides by:
// its tenant's weight times w over the sum of its active siblings'
// weights (in millionths, as the core sums them).
func (r *refScheduler) hierShare(key string, w float64) float64 {
	h := r.hier
	t := refTenant(h, key)
	var sum int64
	for k, n := range r.jobs {
		if n > 0 && refTenant(h, k) == t {
			kw, ok := r.weights[k]
			if !ok {
				kw = 1
			}
			sum += int64(math.Round(kw * 1e6))
		}
	}
	tw, ok := h.Weights[t]
	if !ok {
		tw = 1
	}
	return tw * w / (float64(sum) / 1e6)
}

// stagger places key, which becomes active with a job of type typ, behind
// its tenant's other active keys: at least at the tenant's cursor, which
// then moves one job of the type (its default cost over the tenant's
// weight, rounded, at least 1 ns) past the key. Without active siblings
// the key keeps its cost and only sets the cursor.
func (r *refScheduler) stagger(key string, typ policy.JobType) {
	h := r.hier
	if h == nil {
		return
	}
	t := refTenant(h, key)
	for k, n := range r.jobs {
		if n > 0 && k != key && refTenant(h, k) == t {
			r.acc[key] = max(r.acc[key], r.cursor[t])
			break
		}
	}
	tw, ok := h.Weights[t]
	if !ok {
		tw = 1
	}
	step := time.Duration(math.Round(float64(r.types[typ].DefaultCost) / tw))
	if step == 0 && r.types[typ].DefaultCost > 0 {
		step = 1
	}
	if r.cursor == nil {
		r.cursor = map[string]time.Duration{}
	}
	r.cursor[t] = r.acc[key] + step
}
