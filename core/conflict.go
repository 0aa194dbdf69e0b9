package core

// conflictBlocks reports whether j may not start now because of its
// (conflict group, id): the one place dispatch and the snapshot's reasons
// ask.
func (c *Core) conflictBlocks(j *Job) bool {
	return c.usage.Conflicting(j.slot.Config, j.ID)
}
