package messages

import "slices"

// Subscribers are the channels an owner delivers its events to, in
// subscription order. Only the owner touches them, and it never waits for
// a subscriber: an event a full channel cannot take is lost for it.
type Subscribers []chan Event

// Deliver offers e to every subscriber and returns how many had no room
// for it.
func (s Subscribers) Deliver(e Event) (missed uint64) {
	for _, ch := range s {
		select {
		case ch <- e:
		default:
			missed++
		}
	}
	return missed
}

// Remove closes ch and returns s without it; a ch not in s (removed
// already) is left alone.
func (s Subscribers) Remove(ch chan Event) Subscribers {
	i := slices.Index(s, ch)
	if i < 0 {
		return s
	}
	close(ch)
	return slices.Delete(s, i, i+1)
}

// Close closes every channel: their owner will send nothing more.
func (s Subscribers) Close() {
	for _, ch := range s {
		close(ch)
	}
}
