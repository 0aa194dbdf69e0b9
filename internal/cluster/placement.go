package cluster

import "github.com/fairsched/fairsched/policy"

// placeView is what placement sees: the instances alive with the jobs
// running on each, where each worker is registered, the leader's own
// instance and Config.LeaderFirst.
type placeView struct {
	instances   map[string]*instance
	workerHome  map[string]string // worker → the instance it is registered on
	self        string
	leaderFirst bool
}

// choice is where a job goes: instance, or "" while it waits — refresh:
// the instances are worth reading again first; ownerUnknown: the instance
// that made it (its owner) is not among those alive.
type choice struct {
	instance     string
	refresh      bool
	ownerUnknown bool
}

// choose places a job of typ: a RunSync or Submit on its owner's instance,
// a job on a worker slot on the instance the worker is registered on, any
// other on the most specialised instance with a free slot (better).
func (v placeView) choose(typ policy.JobType, owner, worker string) choice {
	switch {
	case owner != "":
		if v.instances[owner] == nil {
			return choice{ownerUnknown: true}
		}
		return choice{instance: owner}
	case worker != "":
		home := v.workerHome[worker]
		if home == "" || v.instances[home] == nil {
			return choice{refresh: true} // a worker unregistered meanwhile ends the attempt (ErrWorkerLost)
		}
		return choice{instance: home}
	}
	// The most specialised instance with a free slot (the rule of worker
	// slots): the one with the fewest types, so that those taking
	// more stay free for types only they take; then the most free slots
	// (or the leader's own first: LeaderFirst), then the name (better).
	var best *instance
	for _, in := range v.instances {
		if in.types[string(typ)] && in.running < in.Slots && (best == nil || better(in, best, v.self, v.leaderFirst)) {
			best = in
		}
	}
	if best == nil {
		// An instance may have a handler since the last read.
		return choice{refresh: !handledBy(v.instances, typ)}
	}
	return choice{instance: best.ID}
}
