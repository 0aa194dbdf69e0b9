package policy

// Usage counts running jobs along every dimension an admission rule limits
// and answers whether one more job may start. It is the whole admission rule
// set of the core: global cap, tier cap (the priority value), type cap and
// conflict exclusion, checked in that order.
//
// Usage is not safe for concurrent use; the scheduler's owner goroutine holds
// it.
type Usage struct {
	max       int // 0 = unlimited
	running   int
	byTier    map[Priority]int
	byType    map[JobType]int
	conflicts map[ConflictKey]int
}

// ConflictKey identifies the resource a conflict group protects: one job id
// within one group.
type ConflictKey struct {
	Group ConflictGroup
	ID    string
}

// Conflicts returns the resource a job of the given config and id holds
// while it runs, and false when the config has no conflict group.
func (c JobTypeConfig) Conflicts(id string) (ConflictKey, bool) {
	if c.ConflictGroup == "" {
		return ConflictKey{}, false
	}
	return ConflictKey{Group: c.ConflictGroup, ID: id}, true
}

// NewUsage returns an empty tracker with a global cap (0 = unlimited).
func NewUsage(maxConcurrency int) *Usage {
	return &Usage{
		max:       maxConcurrency,
		byTier:    map[Priority]int{},
		byType:    map[JobType]int{},
		conflicts: map[ConflictKey]int{},
	}
}

// GlobalFull reports whether the global cap is reached.
func (u *Usage) GlobalFull() bool { return u.max > 0 && u.running >= u.max }

// TierFull reports whether tier p runs int(p) jobs.
func (u *Usage) TierFull(p Priority) bool { return u.byTier[p] >= int(p) }

// TypeFull reports whether type t runs its MaxConcurrency.
func (u *Usage) TypeFull(t JobType, c JobTypeConfig) bool {
	return c.MaxConcurrency > 0 && u.byType[t] >= c.MaxConcurrency
}

// Conflicting reports whether a job of type config c on id would overlap a
// running job of the same conflict group on the same id.
func (u *Usage) Conflicting(c JobTypeConfig, id string) bool {
	k, ok := c.Conflicts(id)
	return ok && u.conflicts[k] > 0
}

// Blocker returns the first rule that refuses one more job of type t on id,
// or "" when the job may start now.
func (u *Usage) Blocker(t JobType, c JobTypeConfig, id string) Reason {
	switch {
	case u.GlobalFull():
		return ReasonGlobalLimit
	case u.TierFull(c.Priority):
		return ReasonTierLimit
	case u.TypeFull(t, c):
		return ReasonTypeLimit
	case u.Conflicting(c, id):
		return ReasonConflict
	}
	return ""
}

// Transition reports which limits a start or a finish moved across, so the
// caller can block or wake exactly the pending jobs those limits hold.
type Transition struct {
	TierFull, TierFreed bool
	TypeFull, TypeFreed bool
	// Released is set when a finish left no running job on a conflict key.
	Released    ConflictKey
	HasReleased bool
}

// Start counts one more running job of type t on id.
func (u *Usage) Start(t JobType, c JobTypeConfig, id string) Transition {
	u.running++
	u.byTier[c.Priority]++
	u.byType[t]++
	if k, ok := c.Conflicts(id); ok {
		u.conflicts[k]++
	}
	return Transition{TierFull: u.TierFull(c.Priority), TypeFull: u.TypeFull(t, c)}
}

// Finish counts one fewer running job of type t on id.
func (u *Usage) Finish(t JobType, c JobTypeConfig, id string) Transition {
	var tr Transition
	wasTierFull, wasTypeFull := u.TierFull(c.Priority), u.TypeFull(t, c)
	u.running--
	decrement(u.byTier, c.Priority)
	decrement(u.byType, t)
	tr.TierFreed = wasTierFull && !u.TierFull(c.Priority)
	tr.TypeFreed = wasTypeFull && !u.TypeFull(t, c)
	if k, ok := c.Conflicts(id); ok {
		if decrement(u.conflicts, k) == 0 {
			tr.Released, tr.HasReleased = k, true
		}
	}
	return tr
}

// Running returns the number of running jobs.
func (u *Usage) Running() int { return u.running }

// TierRunning returns the running count of tier p.
func (u *Usage) TierRunning(p Priority) int { return u.byTier[p] }

// TypeRunning returns the running count of type t.
func (u *Usage) TypeRunning(t JobType) int { return u.byType[t] }

// ByTier returns a copy of the running counts per tier.
func (u *Usage) ByTier() map[Priority]int { return copyMap(u.byTier) }

// ByType returns a copy of the running counts per type.
func (u *Usage) ByType() map[JobType]int { return copyMap(u.byType) }

func decrement[K comparable](m map[K]int, k K) int {
	n := m[k] - 1
	if n <= 0 {
		delete(m, k)
		return 0
	}
	m[k] = n
	return n
}

func copyMap[K comparable](m map[K]int) map[K]int {
	out := make(map[K]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
