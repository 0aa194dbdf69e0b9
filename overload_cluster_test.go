package fairsched_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
)

// switchSignal is a load signal the test turns on and off; it counts its
// readings and says on read when it has been read overloaded.
type switchSignal struct {
	over  atomic.Bool
	reads atomic.Int64
	read  chan bool // each reading's verdict, dropped when full
}

func newSwitchSignal() *switchSignal { return &switchSignal{read: make(chan bool, 1)} }

func (s *switchSignal) Load(fairsched.LoadState) (float64, error) {
	s.reads.Add(1)
	over := s.over.Load()
	select {
	case s.read <- over:
	default:
	}
	if over {
		return 1, nil
	}
	return 0, nil
}

// waitRead waits for a reading with verdict over: the reading and whatever
// the leader takes after it are ordered, both on its owner goroutine.
func (s *switchSignal) waitRead(t *testing.T, over bool) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case got := <-s.read:
			if got == over {
				return
			}
		case <-timeout:
			t.Fatalf("the leader never read the signal as overloaded=%v", over)
		}
	}
}

// TestOverloadInCluster: in cluster mode the leader reads its own load
// signal and decides for every instance: durable jobs enqueued on either
// instance while it reads overloaded wait (reason overloaded, in the
// leader's snapshot) and run once it reads clear. The other instance's
// signal is never read.
func TestOverloadInCluster(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	ran := make(chan string, 10)
	sigs := map[string]*switchSignal{}
	scheds := map[string]*fairsched.Scheduler{}
	for _, name := range []string{"ov-a", "ov-b"} {
		sig := newSwitchSignal()
		sig.over.Store(true)
		s, leave, err := JoinCluster(ctx, url, name,
			fairsched.WithLoadSignal(fairsched.LoadConfig{Signal: sig, Every: 20 * time.Millisecond}))
		if err != nil {
			t.Fatal(err)
		}
		defer leave()
		if err := s.RegisterType("render", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterHandler("render", func(ctx context.Context, j fairsched.Job) error {
			ran <- j.ID
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		sigs[name], scheds[name] = sig, s
	}
	// The first signal read is the leader's: the other instance's scheduler
	// only checks and relays, and reads none.
	var leader, other string
	select {
	case <-sigs["ov-a"].read:
		leader, other = "ov-a", "ov-b"
	case <-sigs["ov-b"].read:
		leader, other = "ov-b", "ov-a"
	case <-time.After(30 * time.Second):
		t.Fatal("no instance read its signal: none leads")
	}
	sigs[leader].waitRead(t, true)
	for i, name := range []string{"ov-a", "ov-b", "ov-a"} {
		if err := scheds[name].Enqueue(ctx, "render", string(rune('x'+i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	// The leader holds all three: its snapshot says why.
	deadline := time.Now().Add(30 * time.Second)
	for {
		snap, err := scheds[leader].Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held := 0
		for _, p := range snap.Pending {
			if p.Reason == fairsched.ReasonOverloaded {
				held++
			}
		}
		if len(snap.Running) != 0 {
			t.Fatalf("a job runs while the leader reads overloaded: %+v", snap.Running)
		}
		if held == 3 && snap.Load != nil && snap.Load.Overloaded {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the leader's snapshot never held 3 jobs on overloaded: %+v", snap.Pending)
		}
		sigs[leader].waitRead(t, true) // the next reading, then look again
	}
	select {
	case id := <-ran:
		t.Fatalf("job %s ran while the leader read overloaded", id)
	default:
	}
	sigs[leader].over.Store(false)
	got := map[string]bool{}
	timeout := time.After(30 * time.Second)
	for len(got) < 3 {
		select {
		case id := <-ran:
			got[id] = true
		case <-timeout:
			t.Fatalf("ran %v after the signal cleared, want x, y, z", got)
		}
	}
	if n := sigs[other].reads.Load(); n != 0 {
		t.Errorf("the instance that does not lead read its signal %d times", n)
	}
}
