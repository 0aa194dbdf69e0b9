package messages

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSubscribers: an event goes to every channel with room and is counted
// lost for each full one; Remove closes the channel it removes and leaves
// one it does not hold alone; Close closes them all.
func TestSubscribers(t *testing.T) {
	full, roomy, other := make(chan Event), make(chan Event, 2), make(chan Event, 1)
	subs := Subscribers{full, roomy}
	var lost []uint64
	lost = append(lost, subs.Deliver(JobQueued{ID: "1"}), subs.Deliver(JobQueued{ID: "2"}), subs.Deliver(JobQueued{ID: "3"}))
	if diff := cmp.Diff([]uint64{1, 1, 2}, lost); diff != "" {
		t.Errorf("missed (-want +got):\n%s", diff)
	}
	subs = subs.Remove(full)
	subs = subs.Remove(other) // not a subscriber: left open
	subs = subs.Remove(full)  // removed already: not closed twice
	other <- JobQueued{}
	var got []string
	for _, e := range drain(roomy) {
		got = append(got, e.(JobQueued).ID)
	}
	subs.Close()
	_, fullOpen := <-full
	_, roomyOpen := <-roomy
	if diff := cmp.Diff([]any{[]string{"1", "2"}, 1, false, false}, []any{got, len(subs), fullOpen, roomyOpen}); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// drain returns what ch holds now, without waiting.
func drain(ch chan Event) []Event {
	var out []Event
	for {
		select {
		case e := <-ch:
			out = append(out, e)
		default:
			return out
		}
	}
}
