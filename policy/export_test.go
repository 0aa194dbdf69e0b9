package policy

// What only the tests ask of the rules.

// TypeRunning returns the running count of type t.
func (u *Usage) TypeRunning(t JobType) int {
	if s := u.slots[t]; s != nil {
		return *s.running
	}
	return 0
}
