package core

import (
	"math"
	"slices"
	"time"

	"github.com/fairsched/fairsched/policy"
)

// Fair shedding in the reference, written out again by scanning: every
// key's claim is its accumulated cost plus the weighted costs its pending,
// never-started jobs had at their submission; the largest claim (ties: the
// smaller key) is the furthest over its share.

// refWeighted is cost / weight, rounded, at least 1 ns.
func (r *refScheduler) refWeighted(key string, cost time.Duration) time.Duration {
	w, ok := r.weights[key]
	if !ok {
		w = 1
	}
	charge := time.Duration(math.Round(float64(cost) / w))
	if charge == 0 && cost > 0 {
		charge = 1
	}
	return charge
}

// shedCostOf is what a job of (typ, id) with tokens would claim of key.
func (r *refScheduler) shedCostOf(typ policy.JobType, id, key string, tokens time.Duration) time.Duration {
	cost := tokens
	if cost <= 0 {
		cost = r.types[typ].DefaultCost
		if e := r.est[refEstKey{typ, id}]; e != nil {
			cost = e.cost
		}
	}
	return r.refWeighted(key, cost)
}

// shedVictim returns the job to shed for a newcomer of key claiming cost,
// or nil when the newcomer is refused.
func (r *refScheduler) shedVictim(key string, cost time.Duration) *refJob {
	demand := map[string]time.Duration{}
	newest := map[string]*refJob{}
	for _, j := range r.pending {
		if !j.started.IsZero() {
			continue // requeued after a run: not shed
		}
		demand[j.key] += j.shedCost
		if n := newest[j.key]; n == nil || j.seq > n.seq {
			newest[j.key] = j
		}
	}
	top, topClaim := "", time.Duration(-1)
	for k := range newest {
		c := r.acc[k] + demand[k]
		if c > topClaim || c == topClaim && k < top {
			top, topClaim = k, c
		}
	}
	if topClaim < 0 || top == key {
		return nil
	}
	mine := r.acc[key]
	if r.jobs[key] == 0 {
		floor := r.lastMin
		if m, ok := r.activeMin(); ok {
			floor = m
		}
		mine = max(mine, floor)
	}
	if topClaim <= mine+demand[key]+cost {
		return nil
	}
	return newest[top]
}

// shedJob drops pending job v for a newcomer: it ends as the core's shed
// job does, among the denials.
func (r *refScheduler) shedJob(now time.Time, v *refJob) {
	r.pending = slices.DeleteFunc(r.pending, func(o *refJob) bool { return o == v })
	r.leave(now, v.key)
	err := &policy.RefusalError{Reason: policy.ReasonShed, Type: v.typ, ID: v.id, Key: v.key, Limit: r.maxPending}
	r.denied = append(r.denied, refDenial{v, err, false})
}
