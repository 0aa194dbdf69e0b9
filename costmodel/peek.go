package costmodel

import "time"

// Peek returns the current estimate for k, or def for a key never seen (or
// expired), without marking it used: an estimate of what is ahead reads
// many keys and must not reorder what eviction drops first.
func (e *Estimates) Peek(k EstimateKey, def time.Duration) time.Duration {
	if est, ok := e.find(hashOf(k), k); ok {
		return est.cost
	}
	return def
}

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
