package policy

import (
	"maps"
	"slices"
)

// Usage counts running jobs along every dimension an admission rule limits
// and answers whether one more job may start. It is the whole admission rule
// set of the core: global cap, tier cap (the priority value), type cap and
// conflict exclusion, checked in that order.
//
// Usage is not safe for concurrent use; the scheduler's owner goroutine holds
// it.
type Usage struct {
	max       int  // 0 = unlimited
	orderOnly bool // priorities only order: no tier cap but configured ones
	running   int
	tiers     map[Priority]*int
	slots     map[JobType]*Slot
	// conflicts counts the running jobs on each (conflict group, id), and
	// exclusive those of them that are exclusive.
	conflicts, exclusive map[ConflictKey]int
	// shares are the tiers with a TierConfig (see SetTiers).
	shares  map[Priority]*tierShare
	configs map[Priority]TierConfig
	// tierList lists every registered tier once, for SyncTiers.
	tierList []tierEntry
}

// tierEntry is a registered tier: its running count and its share, if any.
type tierEntry struct {
	p       Priority
	running *int
	share   *tierShare
}

// tierShare is a configured tier's reservation and cap, in slots, and how
// many of its jobs wait.
type tierShare struct {
	reserved, burst int
	lendIdle        bool
	waiting         int
}

// Slot is one job type's place in the counters. It is resolved once, when
// the type is registered, so that admitting and finishing a job look up no
// map but the conflict table.
//
// A workload rule may put a job of the type in another tier (AtTier): its
// slot there shares the type's count and differs in Config.Priority and
// the tier it counts against.
type Slot struct {
	Type    JobType
	Config  JobTypeConfig
	running *int // jobs of this type, in every tier
	tier    *int // jobs of this type's tier
	tierCap int  // the tier's cap: its priority, its burst share or MaxRunning, or none
	// atTier are the type's slots in other tiers (AtTier), on its own
	// slot only.
	atTier map[Priority]*Slot
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
		tiers:     map[Priority]*int{},
		slots:     map[JobType]*Slot{},
		conflicts: map[ConflictKey]int{},
		exclusive: map[ConflictKey]int{},
	}
}

// Lookup returns the slot of a registered type.
func (u *Usage) Lookup(t JobType) (*Slot, bool) {
	s, ok := u.slots[t]
	return s, ok
}

// Configs returns a copy of every registered type's config.
func (u *Usage) Configs() map[JobType]JobTypeConfig {
	out := make(map[JobType]JobTypeConfig, len(u.slots))
	for t, s := range u.slots {
		out[t] = s.Config
	}
	return out
}

// Slot returns the slot of type t, creating it with config c the first time.
func (u *Usage) Slot(t JobType, c JobTypeConfig) *Slot {
	if s := u.slots[t]; s != nil {
		return s
	}
	s := &Slot{Type: t, Config: c, running: new(int), tier: u.tierCount(c.Priority), tierCap: u.tierCap(c.Priority)}
	u.slots[t] = s
	return s
}

// AtTier returns the slot of s's type whose jobs count against tier p and
// compete at priority p (a workload rule's priority): s's own when p is
// its type's, else one made the first time, which shares the type's
// running count, cap and conflicts.
func (u *Usage) AtTier(s *Slot, p Priority) *Slot {
	base := u.slots[s.Type]
	if base == nil || p == base.Config.Priority {
		return base
	}
	if v := base.atTier[p]; v != nil {
		return v
	}
	c := base.Config
	c.Priority = p
	v := &Slot{Type: base.Type, Config: c, running: base.running, tier: u.tierCount(p), tierCap: u.tierCap(p)}
	if base.atTier == nil {
		base.atTier = map[Priority]*Slot{}
	}
	base.atTier[p] = v
	return v
}

// tierCount is tier p's running count, listed the first time.
func (u *Usage) tierCount(p Priority) *int {
	tier := u.tiers[p]
	if tier == nil {
		tier = new(int)
		u.tiers[p] = tier
		u.tierList = append(u.tierList, tierEntry{p, tier, u.shares[p]})
	}
	return tier
}

// recap sets every slot's tier cap again (the global cap or the tiers
// changed).
func (u *Usage) recap() {
	for _, s := range u.slots {
		s.tierCap = u.tierCap(s.Config.Priority)
		for _, v := range s.atTier {
			v.tierCap = u.tierCap(v.Config.Priority)
		}
	}
}

// SetMax changes the global cap (adaptive limit); tier shares follow it.
func (u *Usage) SetMax(n int) {
	u.max = n
	for p, t := range u.configs {
		r, b := t.Slots(n)
		u.shares[p].reserved, u.shares[p].burst = r, b
	}
	u.recap()
}

// GlobalFull reports whether the global cap is reached.
func (u *Usage) GlobalFull() bool { return u.max > 0 && u.running >= u.max }

// TierFull reports whether tier p runs its cap: int(p), or its burst share
// and MaxRunning; never for a tier without a cap.
func (u *Usage) TierFull(p Priority) bool { return u.TierRunning(p) >= u.tierCap(p) }

func (u *Usage) tierCap(p Priority) int {
	if t := u.shares[p]; t != nil {
		return t.burst
	}
	if u.orderOnly || p < 1 { // priority 0 registers only where it is no cap
		return noCap
	}
	return int(p)
}

// SetPriorityMode sets what a priority's value means (see PriorityMode);
// call it before any type is registered.
func (u *Usage) SetPriorityMode(m PriorityMode) { u.orderOnly = m == PriorityOrderOnly }

// SetTiers gives tiers reserved and burst shares of the global cap and
// absolute caps (MaxRunning); call it before any type is registered.
func (u *Usage) SetTiers(tiers map[Priority]TierConfig) {
	tiers = cappedTiers(tiers) // a tier with only preemption rules keeps its default cap
	if len(tiers) == 0 {
		return
	}
	u.shares = map[Priority]*tierShare{}
	u.configs = tiers
	for _, p := range slices.Sorted(maps.Keys(tiers)) { // one order every run
		t := tiers[p]
		r, b := t.Slots(u.max)
		share := &tierShare{reserved: r, burst: b, lendIdle: t.LendIdle}
		u.shares[p] = share
		// Listed now, registered types or not: its reservation counts.
		running := new(int)
		u.tiers[p] = running
		u.tierList = append(u.tierList, tierEntry{p, running, share})
	}
}

// Shares reports whether tiers have shares: then whether a tier may start a
// job depends on the others (Reserved), and the caller re-asks every tier
// after each change (SyncTiers) instead of following Transitions.
func (u *Usage) Shares() bool { return u.shares != nil }

// Waiting counts a job of tier p that joins (delta 1) or leaves (-1) the
// queue: a tier that lends its idle reservation takes it back when it has
// jobs waiting.
func (u *Usage) Waiting(p Priority, delta int) {
	if t := u.shares[p]; t != nil {
		t.waiting += delta
	}
}

// owed returns what tier entry e is still owed of its reservation:
// max(0, reserved − running), nothing while it lends and has no job waiting.
func (e tierEntry) owed() int {
	t := e.share
	if t == nil || t.lendIdle && t.waiting == 0 {
		return 0
	}
	return max(0, t.reserved-*e.running)
}

// totalOwed sums what every tier is still owed of its reservation.
func (u *Usage) totalOwed() int {
	total := 0
	for _, e := range u.tierList {
		total += e.owed()
	}
	return total
}

// reservedFor reports whether one more job would leave fewer free slots
// than the other tiers are owed (othersOwed).
func (u *Usage) reservedFor(othersOwed int) bool {
	return u.shares != nil && u.max > 0 && u.running+1+othersOwed > u.max
}

// Reserved reports whether the free slots are owed to other tiers'
// reservations, so that tier p may not take one:
//
//	running + 1 + Σ_{q ≠ p} owed(q) > MaxConcurrency
func (u *Usage) Reserved(p Priority) bool {
	others := u.totalOwed()
	for _, e := range u.tierList {
		if e.p == p {
			others -= e.owed()
		}
	}
	return u.reservedFor(others)
}

// SyncTiers tells block, for every registered tier, whether it may not
// start a job now: the global cap, its own cap (its burst share, or its
// value) or the other tiers' reservations. The reservations owed are summed
// once: O(tiers).
func (u *Usage) SyncTiers(block func(p Priority, blocked bool)) {
	total := u.totalOwed()
	full := u.GlobalFull()
	for _, e := range u.tierList {
		block(e.p, full || *e.running >= u.tierCap(e.p) || u.reservedFor(total-e.owed()))
	}
}

// TypeFull reports whether the slot's type runs its MaxConcurrency.
func (s *Slot) TypeFull() bool {
	return s.Config.MaxConcurrency > 0 && *s.running >= s.Config.MaxConcurrency
}

func (s *Slot) tierFull() bool { return *s.tier >= s.tierCap }

// Conflicting reports whether a job of type config c on id may not start
// because of the jobs running on its (conflict group, id): any of them for
// an exclusive job, an exclusive one for a shared job. (Whether a waiting
// exclusive job holds a shared one back is the caller's to add.)
func (u *Usage) Conflicting(c JobTypeConfig, id string) bool {
	k, ok := c.Conflicts(id)
	if !ok {
		return false
	}
	if c.ConflictMode == ConflictShared {
		return u.exclusive[k] > 0
	}
	return u.conflicts[k] > 0
}

// ExclusiveBusy reports whether an exclusive job runs on conflict key k.
func (u *Usage) ExclusiveBusy(k ConflictKey) bool { return u.exclusive[k] > 0 }

// Blocker returns the first rule that refuses one more job of the slot's
// type on id, or "" when the job may start now.
func (u *Usage) Blocker(s *Slot, id string) Reason {
	switch {
	case u.GlobalFull():
		return ReasonGlobalLimit
	case s.tierFull():
		return ReasonTierLimit
	case u.Reserved(s.Config.Priority):
		return ReasonGlobalLimit // the free slots are other tiers' reservations
	case s.TypeFull():
		return ReasonTypeLimit
	case u.Conflicting(s.Config, id):
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

// Start counts one more running job of the slot's type on id.
func (u *Usage) Start(s *Slot, id string) Transition {
	u.running++
	*s.tier++
	*s.running++
	if k, ok := s.Config.Conflicts(id); ok {
		u.conflicts[k]++
		if s.Config.ConflictMode == ConflictExclusive {
			u.exclusive[k]++
		}
	}
	return Transition{TierFull: s.tierFull(), TypeFull: s.TypeFull()}
}

// Finish counts one fewer running job of the slot's type on id.
func (u *Usage) Finish(s *Slot, id string) Transition {
	var tr Transition
	wasTierFull, wasTypeFull := s.tierFull(), s.TypeFull()
	u.running--
	*s.tier--
	*s.running--
	tr.TierFreed = wasTierFull && !s.tierFull()
	tr.TypeFreed = wasTypeFull && !s.TypeFull()
	if k, ok := s.Config.Conflicts(id); ok {
		if s.Config.ConflictMode == ConflictExclusive {
			decrement(u.exclusive, k)
		}
		if decrement(u.conflicts, k) == 0 {
			tr.Released, tr.HasReleased = k, true
		}
	}
	return tr
}

// Running returns the number of running jobs.
func (u *Usage) Running() int { return u.running }

// TierRunning returns the running count of tier p.
func (u *Usage) TierRunning(p Priority) int {
	if n := u.tiers[p]; n != nil {
		return *n
	}
	return 0
}

// ByTier returns the running counts of the tiers that run jobs.
func (u *Usage) ByTier() map[Priority]int {
	out := make(map[Priority]int, len(u.tiers))
	for p, n := range u.tiers {
		if *n > 0 {
			out[p] = *n
		}
	}
	return out
}

// ByType returns the running counts of the types that run jobs.
func (u *Usage) ByType() map[JobType]int {
	out := make(map[JobType]int, len(u.slots))
	for t, s := range u.slots {
		if *s.running > 0 {
			out[t] = *s.running
		}
	}
	return out
}

func decrement[K comparable](m map[K]int, k K) int {
	n := m[k] - 1
	if n <= 0 {
		delete(m, k)
		return 0
	}
	m[k] = n
	return n
}
