package core

import (
	"cmp"
	"slices"
	"time"

	"github.com/fairsched/fairsched/internal/shrink"
	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/queue"
)

// group is the core's record of one job group.
type group struct {
	name             string
	q                *queue.Group
	running, pending int
	alloc            int // slots allocated by weight; meaningful with Groups configured
	// waiting counts the group's pending jobs by tier, with tier shares
	// and groups configured; they count in their tiers' waiting jobs only
	// while alloc > 0 (see Core.countWaiting).
	waiting map[policy.Priority]int
	limit   int // its configured limit (0 = none): changed only by ApplyPolicy
}

func (g *group) demand() int {
	if g.q.Paused() {
		return 0
	}
	return g.running + g.pending
}

// AllocationChange reports a group's new slot allocation.
type AllocationChange struct {
	Group         string
	Previous, New int
	Reason        string // "weight_change", "rebalance" or "group_drained"
}

// The reasons of an AllocationChange.
const (
	AllocWeightChange = "weight_change"
	AllocRebalance    = "rebalance"
	AllocGroupDrained = "group_drained"
)

// groupOf returns the record of group name, creating it.
func (c *Core) groupOf(name string) *group {
	g := c.groups[name]
	if g == nil {
		g = &group{name: name, q: c.queue.Group(name)}
		g.q.Ref = g
		if c.limits.Groups != nil {
			g.limit = c.limits.Groups.Config(name).Limit
		}
		c.groups[name] = g
		shrink.Note(c.groups, &c.gpeak)
	}
	return g
}

// forgetIdle drops the records of the groups that have no job, are not
// paused, hold no slot and have no settings of their own, on the eviction
// tick (Evict), like idle keys: a group name a caller passed once is not
// kept for ever. The group "" stays. O(groups).
func (c *Core) forgetIdle() {
	for name, g := range c.groups {
		if name == "" || g.pending > 0 || g.running > 0 || g.alloc > 0 || g.q.Paused() {
			continue
		}
		if c.limits.Groups != nil {
			if _, configured := c.limits.Groups.Groups[name]; configured {
				continue
			}
		}
		if c.queue.ForgetGroup(g.q) {
			delete(c.groups, name)
		}
	}
}

// track keeps g in the set reallocation walks — the groups with demand or
// slots — so that allocation costs O(groups with work), however many
// names have been seen.
func (c *Core) track(g *group) {
	if g.demand() > 0 || g.alloc > 0 {
		if c.busy == nil {
			c.busy = map[*group]struct{}{}
		}
		c.busy[g] = struct{}{}
		shrink.Note(c.busy, &c.bpeak)
	} else {
		delete(c.busy, g)
	}
}

// demandChanged is called after a group's pending or running count moved
// from before. The allocation depends on a group's demand only while the
// demand does not exceed what the group holds, so a change among values
// above the allocation — the common case for a busy group — costs nothing.
func (c *Core) demandChanged(g *group, before int) {
	if c.limits.Groups == nil {
		return
	}
	c.track(g)
	// Above its allocation a group's demand moves no share — unless its
	// minimum is above its allocation, which happens when the minimums do
	// not fit a (shrunk, adaptive) limit and are apportioned: up to its
	// minimum, its demand is its claim.
	floor := max(g.alloc, c.limits.Groups.Config(g.name).MinSlots)
	if after := g.demand(); before > floor && after > floor {
		return
	}
	reason := AllocRebalance
	if g.demand() == 0 {
		reason = AllocGroupDrained
	}
	c.reallocate(reason, g.name)
}

// reallocate splits the global cap among the groups with demand (see
// policy.AllocateSlots) and releases the groups that may now run more. The
// group named cause, if any, reports reason; the others "rebalance".
func (c *Core) reallocate(reason, cause string) {
	if c.limits.Groups == nil {
		return
	}
	names := make([]string, 0, len(c.busy))
	for g := range c.busy {
		if g.demand() > 0 || g.alloc > 0 {
			names = append(names, g.name)
		}
	}
	slices.Sort(names)
	shares := make([]policy.GroupShare, len(names))
	for i, name := range names {
		cfg := c.limits.Groups.Config(name)
		shares[i] = policy.GroupShare{Name: name, Weight: cfg.Weight, MinSlots: cfg.MinSlots, Limit: cfg.Limit, Demand: c.groups[name].demand()}
	}
	tiersMoved := false
	for i, slots := range policy.AllocateSlots(c.limits.MaxConcurrency, shares) {
		g := c.groups[names[i]]
		if slots == g.alloc {
			continue
		}
		if (slots == 0) != (g.alloc == 0) && len(g.waiting) > 0 {
			// Its waiting jobs start or stop counting for their tiers.
			sign := 1
			if slots == 0 {
				sign = -1
			}
			for p, n := range g.waiting {
				c.usage.Waiting(p, sign*n)
			}
			tiersMoved = true
		}
		why := AllocRebalance
		if reason == AllocWeightChange || g.name == cause {
			why = reason
		}
		c.allocChanges = append(c.allocChanges, AllocationChange{Group: g.name, Previous: g.alloc, New: slots, Reason: why})
		g.alloc = slots
		c.track(g)
		if c.room(g) > 0 {
			c.queue.ReleaseGroup(g.q)
		}
	}
	if tiersMoved {
		c.syncTiers()
	}
}

// lend is Dispatch's answer to a free slot that no pending job may take
// within the groups' allocations: a group whose pending jobs all wait on a
// rate limit, a conflict or another rule of their own holds slots it cannot
// use, so for the rest of this Dispatch every group may run up to its limit
// (work conservation). Its allocation is unchanged: once it can run again,
// the next free slot is its. It reports whether there was anything to lend
// to: O(groups), only when slots stay free while jobs wait.
func (c *Core) lend() bool {
	if c.limits.Groups == nil || c.queue.Len() == 0 {
		return false
	}
	c.lending = true
	for g := range c.busy {
		if c.room(g) > 0 {
			c.queue.ReleaseGroup(g.q)
		}
	}
	return true
}

// mayRun reports whether group g may start one more job that is not urgent.
func (c *Core) mayRun(g *group) bool {
	return (c.limits.Groups == nil || c.room(g) > 0) && !c.rateBlocksGroup(g)
}

// room returns how many more jobs group g may start that are not urgent.
func (c *Core) room(g *group) int {
	if c.limits.Groups == nil {
		return 0 // nothing is ever held for an allocation
	}
	if c.lending {
		if g.limit > 0 {
			return max(g.limit-g.running, 0)
		}
		return c.limits.MaxConcurrency
	}
	n := g.alloc - g.running
	if g.limit > 0 {
		n = min(n, g.limit-g.running)
	}
	return max(n, 0)
}

// hasRoom is the core's answer to queue.SetRoom.
func (c *Core) hasRoom(g *queue.Group) bool { return c.mayRun(g.Ref.(*group)) }

// mayBorrow reports whether an urgent job of g may start past g's
// allocation: never past the group's limit.
func (c *Core) mayBorrow(g *group) bool {
	return g.limit == 0 || g.running < g.limit
}

// groupBlocks reports whether j's group keeps it waiting: its group runs its
// allocation (or limit) and j is not urgent enough to borrow.
func (c *Core) groupBlocks(j *Job) bool {
	return c.rateBlocksGroup(j.grp()) || c.allocationBlocks(j) // a rate limit is not borrowed past
}

// allocationBlocks is groupBlocks without the group's rate limit.
func (c *Core) allocationBlocks(j *Job) bool {
	g := j.grp()
	if c.limits.Groups == nil || c.room(g) > 0 {
		return false
	}
	if a := c.limits.Aging; a != nil && a.Urgent(c.queue.Effective(&j.Job, j.Priority())) {
		return !c.mayBorrow(g)
	}
	return true
}

// TakeAllocationChanges returns the allocation changes since the last call.
// The slice is reused: use it before the next call into the core.
func (c *Core) TakeAllocationChanges() []AllocationChange {
	out := c.allocChanges
	c.allocChanges = c.allocChanges[:0]
	return out
}

// SetGroupWeight changes the weight of group name (0 restores the default).
func (c *Core) SetGroupWeight(now time.Time, name string, weight int) error {
	cfg, err := policy.CheckGroupWeight(c.limits.Groups, name, weight)
	if err != nil {
		return err
	}
	c.queue.At(now)
	groups := c.groupsCopy()
	groups.Groups[name] = cfg
	c.limits.Groups = groups
	c.reallocate(AllocWeightChange, name)
	return nil
}

// ResetGroupWeights gives every group the default weight, keeping minimums
// and limits.
func (c *Core) ResetGroupWeights(now time.Time) error {
	if err := policy.CheckResetGroupWeights(c.limits.Groups); err != nil {
		return err
	}
	c.queue.At(now)
	groups := c.groupsCopy()
	for name, g := range groups.Groups {
		g.Weight = groups.DefaultWeight
		groups.Groups[name] = g
	}
	c.limits.Groups = groups
	c.reallocate(AllocWeightChange, "")
	return nil
}

// groupsCopy copies the group settings, so that snapshots taken before keep
// theirs.
func (c *Core) groupsCopy() *policy.GroupsConfig {
	g := *c.limits.Groups
	g.Groups = make(map[string]policy.GroupConfig, len(c.limits.Groups.Groups)+1)
	for k, v := range c.limits.Groups.Groups {
		g.Groups[k] = v
	}
	return &g
}

// PauseGroup holds every pending job of group name (reason paused) and stops
// their aging; the group's allocation goes to the others.
func (c *Core) PauseGroup(now time.Time, name string) error {
	if err := policy.CheckGroupName("PauseGroup", name); err != nil {
		return err
	}
	c.queue.At(now)
	g := c.groupOf(name)
	if g.q.Paused() {
		return nil
	}
	c.queue.Pause(g.q)
	c.wakeAllShared() // its writers hold no shared job back while paused
	c.track(g)
	c.reallocate(AllocRebalance, "")
	return nil
}

// ResumeGroup undoes PauseGroup.
func (c *Core) ResumeGroup(now time.Time, name string) error {
	if err := policy.CheckGroupName("ResumeGroup", name); err != nil {
		return err
	}
	c.queue.At(now)
	g := c.groupOf(name)
	if !g.q.Paused() {
		return nil
	}
	c.queue.Resume(g.q)
	if c.limits.Groups != nil {
		c.track(g)
	}
	c.reallocate(AllocRebalance, "")
	return nil
}

// GroupSnapshot is one group in a Snapshot.
type GroupSnapshot struct {
	Name     string `json:"name"`
	Weight   int    `json:"weight,omitempty"`
	MinSlots int    `json:"min_slots,omitempty"`
	Limit    int    `json:"limit,omitempty"`
	// Allocation is the slots the group holds by weight (0 without group
	// weights).
	Allocation int  `json:"allocation"`
	Running    int  `json:"running"`
	Pending    int  `json:"pending"`
	Paused     bool `json:"paused,omitempty"`
}

func (c *Core) groupSnapshots() []GroupSnapshot {
	var out []GroupSnapshot
	for _, g := range c.groups {
		if g.running+g.pending == 0 && !g.q.Paused() && g.alloc == 0 || g.name == "" && c.limits.Groups == nil {
			continue
		}
		gs := GroupSnapshot{Name: g.name, Allocation: g.alloc, Running: g.running, Pending: g.pending, Paused: g.q.Paused()}
		if c.limits.Groups != nil {
			cfg := c.limits.Groups.Config(g.name)
			gs.Weight, gs.MinSlots, gs.Limit = cfg.Weight, cfg.MinSlots, cfg.Limit
		}
		out = append(out, gs)
	}
	slices.SortFunc(out, func(a, b GroupSnapshot) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// ResumeAll resumes every paused group: Close drains pending work, and a
// paused group's jobs would otherwise never run.
func (c *Core) ResumeAll(now time.Time) {
	for name, g := range c.groups {
		if g.q.Paused() {
			_ = c.ResumeGroup(now, name)
		}
	}
}
