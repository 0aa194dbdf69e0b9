package cluster_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/internal/cluster/memback"
	"github.com/fairsched/fairsched/messages"
)

// TestRelay: an instance hands the domain's events to its subscribers as
// a scheduler hands its own: each channel gets what its buffer takes, the
// rest is counted lost (EventsLost), another domain's events are not
// delivered; cancel closes a channel (twice is safe), Close closes the
// others, and a Subscribe after Close returns a closed channel. The
// instance does not lead: no scheduler runs in it.
func TestRelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b := memback.New()
		defer b.Close()
		if _, ok, err := b.Acquire(ctx, "relay", "elsewhere", time.Hour); !ok || err != nil {
			t.Fatalf("Acquire: %v, %v", ok, err)
		}
		n, err := cluster.Start(b, cluster.Config{Domain: "relay", Instance: "one", Slots: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		unbuffered, _ := n.Subscribe(0)
		one, cancelOne := n.Subscribe(1)
		roomy, _ := n.Subscribe(8)
		synctest.Wait() // listening
		evs := []messages.Event{messages.JobQueued{Type: "a", ID: "1"}, messages.JobQueued{Type: "a", ID: "2"}, messages.JobQueued{Type: "a", ID: "3"}}
		for _, p := range [][]byte{cluster.EventsPayload(t, "other", evs[0]), cluster.EventsPayload(t, "relay", evs...)} {
			if err := b.Publish(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait() // relayed
		got := map[string][]messages.Event{"unbuffered": drain(unbuffered), "one": drain(one), "roomy": drain(roomy)}
		lost := n.EventsLost()
		cancelOne()
		cancelOne()
		_, oneOpen := <-one
		if err := n.Close(ctx); err != nil {
			t.Fatal(err)
		}
		_, roomyOpen := <-roomy
		late, cancelLate := n.Subscribe(1)
		cancelLate()
		_, lateOpen := <-late
		want := map[string][]messages.Event{"unbuffered": nil, "one": evs[:1], "roomy": evs}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("delivered (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]any{uint64(3 + 2), false, false, false}, []any{lost, oneOpen, roomyOpen, lateOpen}); diff != "" {
			t.Errorf("lost; open after cancel, after Close, after a late Subscribe (-want +got):\n%s", diff)
		}
	})
}

// drain returns what ch holds now, without waiting.
func drain(ch <-chan messages.Event) []messages.Event {
	var out []messages.Event
	for {
		select {
		case e := <-ch:
			out = append(out, e)
		default:
			return out
		}
	}
}
