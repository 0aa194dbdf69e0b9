package messages

import (
	"context"
	"errors"
	"testing"

	"github.com/fairsched/fairsched/policy"
)

type valueKey struct{}

func TestRunContextCancelBeforeDone(t *testing.T) {
	parent := context.WithValue(context.Background(), valueKey{}, "trace")
	j := NewJob("t", "id", "k", nil)
	rc := new(Attempts).Attempt(j, parent, "owner", 7, SlotRef{}, false)
	if rc.Err() != nil {
		t.Fatal("a new attempt's context is done")
	}
	if rc.scope.Load() != nil {
		t.Fatal("the attempt made a cancellation nobody asked for")
	}
	cause := errors.New("cancelled by Cancel")
	rc.Cancel(cause)
	<-rc.Done()
	if !errors.Is(rc.Err(), context.Canceled) || context.Cause(rc) != cause {
		t.Fatalf("Err %v, Cause %v; want Canceled and the cause", rc.Err(), context.Cause(rc))
	}
	if p, ok := RunningPriority(rc); !ok || p != policy.Priority(7) {
		t.Fatalf("RunningPriority = %v, %v", p, ok)
	}
	if owner, in := Inside(rc); owner != "owner" || in != j {
		t.Fatalf("Inside = %v, %v", owner, in)
	}
	if rc.Value(valueKey{}) != "trace" {
		t.Fatal("the parent's values are lost")
	}
	if _, ok := SlotOf(rc); ok {
		t.Fatal("a slot for a job on none")
	}
}

func TestRunContextFollowsParentAndDerivedContexts(t *testing.T) {
	parent, cancel := context.WithCancelCause(context.Background())
	j := NewJob("t", "id", "k", nil)
	rc := new(Attempts).Attempt(j, parent, nil, 1, SlotRef{Worker: "w", Slot: 2}, true)
	child, stop := context.WithCancel(rc) // asks for Done: the scope is made
	defer stop()
	boom := errors.New("parent gone")
	cancel(boom)
	<-child.Done()
	if context.Cause(rc) != boom || context.Cause(child) != boom {
		t.Fatalf("causes %v, %v; want the parent's", context.Cause(rc), context.Cause(child))
	}
	if s, ok := SlotOf(child); !ok || s != (SlotRef{Worker: "w", Slot: 2}) {
		t.Fatalf("SlotOf = %v, %v", s, ok)
	}
}

func TestRunContextEnd(t *testing.T) {
	j := NewJob("t", "id", "k", nil)
	first := new(Attempts).Attempt(j, context.Background(), nil, 1, SlotRef{}, false)
	first.End() // nobody asked for Done: no cancellation is made
	if !errors.Is(first.Err(), context.Canceled) || !errors.Is(context.Cause(first), context.Canceled) {
		t.Fatalf("an ended attempt: Err %v, Cause %v", first.Err(), context.Cause(first))
	}
	<-first.Done()
	second := new(Attempts).Attempt(j, context.Background(), nil, 1, SlotRef{}, false)
	if second == first || second.Err() != nil {
		t.Fatal("a retry reuses the first attempt's context")
	}
	second.End()
	<-second.Done()
}

// TestRunContextEndedNamesNoJob: once its attempt ended, a context kept
// by a goroutine the job left behind names no job (its record may serve
// another by then).
func TestRunContextEndedNamesNoJob(t *testing.T) {
	j := NewPooledJob("t", "id", "k", nil)
	rc := new(Attempts).Attempt(j, context.Background(), "owner", 1, SlotRef{}, false)
	if owner, in := Inside(rc); owner != "owner" || in != j {
		t.Fatalf("Inside during the attempt = %v, %v", owner, in)
	}
	rc.End()
	Recycle(j)
	if owner, in := Inside(rc); owner != nil || in != nil {
		t.Fatalf("Inside after the end = %v, %v", owner, in)
	}
	if !errors.Is(rc.Err(), context.Canceled) {
		t.Fatalf("an ended attempt's context: %v", rc.Err())
	}
}

// TestAttemptsNeverReuse: contexts carved from Attempts' blocks are each
// an attempt's own, across blocks, and one kept after its attempt ended
// keeps its values and its cancellation while later attempts are made.
func TestAttemptsNeverReuse(t *testing.T) {
	type key struct{}
	var p Attempts
	j := NewJob("t", "id", "k", nil)
	kept := p.Attempt(j, context.WithValue(context.Background(), key{}, "kept"), "owner", 3, SlotRef{}, false)
	kept.End()
	seen := map[*RunContext]bool{kept: true}
	for i := range 3 * attemptBlock {
		rc := p.Attempt(j, context.Background(), "owner", policy.Priority(i), SlotRef{}, false)
		if seen[rc] {
			t.Fatalf("attempt %d reuses a context", i)
		}
		seen[rc] = true
		if got, _ := RunningPriority(rc); got != policy.Priority(i) || rc.Err() != nil {
			t.Fatalf("attempt %d: priority %d, Err %v", i, got, rc.Err())
		}
		rc.End()
	}
	if kept.Value(key{}) != "kept" || !errors.Is(kept.Err(), context.Canceled) {
		t.Fatalf("a kept context after later attempts: value %v, Err %v", kept.Value(key{}), kept.Err())
	}
	if got, _ := RunningPriority(kept); got != 3 {
		t.Fatalf("a kept context's priority: %d, want 3", got)
	}
	if owner, _ := Inside(kept); owner != nil {
		t.Fatalf("an ended attempt's context names owner %v", owner)
	}
}
