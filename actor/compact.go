package actor

import "github.com/fairsched/fairsched/internal/shrink"

// compact gives back the memory of the owner's maps keyed by callers'
// strings once they shrank to a quarter of their peak: a burst of a million
// background jobs must not keep its map buckets for ever. Run on the
// eviction tick.
func (a *Actor) compact() {
	a.joinable = shrink.Map(a.joinable, &a.peaks.joinable)
}

// done reports whether c is closed (a nil channel never is).
func done(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
