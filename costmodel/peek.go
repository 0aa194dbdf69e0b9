package costmodel

import "time"

// Joining returns the accumulated cost key would have if one more job of it
// joined now (Join), without joining.
func (l *Ledger) Joining(key string) time.Duration {
	a := l.accounts[key]
	if a != nil && a.jobs > 0 {
		return a.cost
	}
	var c time.Duration
	if a != nil {
		c = a.cost
	}
	return max(c, l.Floor())
}
