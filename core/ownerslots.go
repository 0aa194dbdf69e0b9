package core

// Owner slots. An owner that runs the admitted jobs elsewhere, on slots it
// counts itself — cluster mode's leader, on its instances' Slots — tells
// Dispatch how many of them are free (SetOwnerSlots). A job that takes one
// is admitted only while one is free, so the fair order is decided when a
// slot frees, as one scheduler's cap decides it: without the bound every
// pending job would be admitted at once and wait, in the order of its
// admission, in the owner's own queue, where a job of a key that arrives
// later waits behind all of them. A job that takes no slot (the owner's
// takes says which; a job on a worker's slot never does, its worker's slots
// bound it) is admitted as before. Dispatch stops at the first job that
// needs a slot while none is free, as it stops at the cap: the best job
// waits first, whatever is behind it.

// ownerSlots is the bound SetOwnerSlots sets.
type ownerSlots struct {
	free  int
	takes func(*Job) bool
}

// SetOwnerSlots bounds the jobs Dispatch admits from now on that take one
// of the owner's slots (those takes reports; nil: every job) to free; a
// negative free removes the bound. It reports whether a Dispatch may now
// admit a job it could not (the bound was reached and is not any more):
// the owner dispatches again.
func (c *Core) SetOwnerSlots(free int, takes func(*Job) bool) (freed bool) {
	reached := c.owned != nil && c.owned.free == 0
	if free < 0 {
		c.owned = nil
		return reached
	}
	if c.owned == nil {
		c.owned = &ownerSlots{}
	}
	c.owned.free, c.owned.takes = free, takes
	return reached && free > 0
}

// needsOwnerSlot reports whether j takes one of the owner's slots.
func (c *Core) needsOwnerSlot(j *Job) bool {
	return c.owned != nil && !j.slot.Config.RequiresWorker && (c.owned.takes == nil || c.owned.takes(j))
}

// noOwnerSlot reports whether j waits for one of the owner's slots.
func (c *Core) noOwnerSlot(j *Job) bool {
	return c.owned != nil && c.owned.free == 0 && c.needsOwnerSlot(j)
}

// takeOwnerSlot counts j's admission against the owner's free slots.
func (c *Core) takeOwnerSlot(j *Job) {
	if c.owned != nil && c.owned.free > 0 && c.needsOwnerSlot(j) {
		c.owned.free--
	}
}
