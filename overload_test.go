package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/google/go-cmp/cmp"
)

// scripted is a fake load signal: its value at each reading is the
// script's entry for the whole seconds since start (the last entry after
// the script ends), so a test states a load timeline in virtual time.
func scripted(start time.Time, script ...float64) fairsched.LoadSignal {
	return fairsched.LoadFunc(func(s fairsched.LoadState) (float64, error) {
		i := min(int(s.Now.Sub(start)/time.Second), len(script)-1)
		return script[i], nil
	})
}

// started is a job's start, for a timeline.
type started struct {
	ID string
	At time.Duration
}

// sleeper returns a job function that records its start on ch and then
// runs for d.
func sleeper(ch chan<- started, start time.Time, id string, d time.Duration) func(context.Context) error {
	return func(ctx context.Context) error {
		ch <- started{id, time.Since(start)}
		time.Sleep(d)
		return nil
	}
}

// TestOverloadDefers: while the signal reads at or above the threshold no
// job is admitted (reason overloaded); running ones go on, and the next
// reading below it lets the queue run again.
func TestOverloadDefers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		// Readings at 1 s, 2 s, 3 s…: overloaded at 1 s and 2 s, clear at 3 s.
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{work: workCfg},
			fairsched.WithMaxConcurrency(2),
			fairsched.WithLoadSignal(fairsched.LoadConfig{Signal: scripted(start, 0.1, 0.95, 0.9, 0.3), Every: time.Second}))
		ch := make(chan started, 6)
		for i := range 6 {
			id := fmt.Sprintf("j%d", i)
			if err := s.Submit(work, id, sleeper(ch, start, id, 1500*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(2500 * time.Millisecond)
		snap := snapshot(t, s)
		var reasons []fairsched.Reason
		for _, p := range snap.Pending {
			reasons = append(reasons, p.Reason)
		}
		wantLoad := &fairsched.LoadSnapshot{Value: 0.9, Overloaded: true, Threshold: 0.9, Readings: 2}
		if diff := cmp.Diff(wantLoad, snap.Load); diff != "" {
			t.Errorf("load at 2.5 s (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(slices.Repeat([]fairsched.Reason{fairsched.ReasonOverloaded}, 4), reasons); diff != "" {
			t.Errorf("pending reasons at 2.5 s (-want +got):\n%s", diff)
		}
		var got []started
		for range 6 {
			got = append(got, <-ch)
		}
		slices.SortFunc(got, func(a, b started) int { return strings.Compare(a.ID, b.ID) })
		want := []started{ // j2, j3 wait from 1.5 s (overloaded) to the clear reading at 3 s
			{"j0", 0}, {"j1", 0}, {"j2", 3 * time.Second}, {"j3", 3 * time.Second},
			{"j4", 4500 * time.Millisecond}, {"j5", 4500 * time.Millisecond},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("starts (-want +got):\n%s", diff)
		}
	})
}

// TestOverloadRefuses: with OverloadRefuse, a submission while the last
// reading is overloaded is refused (ErrOverloaded, reason overloaded) and
// queues nothing; one after a clear reading is accepted.
func TestOverloadRefuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{work: workCfg},
			fairsched.WithMaxConcurrency(2),
			fairsched.WithLoadSignal(fairsched.LoadConfig{Signal: scripted(start, 0, 1, 0.5), Every: time.Second, Action: fairsched.OverloadRefuse}))
		type outcome struct {
			At      time.Duration
			Refused bool
			Reason  fairsched.Reason
		}
		var got []outcome
		for i, at := range []time.Duration{500 * time.Millisecond, 1500 * time.Millisecond, 2500 * time.Millisecond} {
			time.Sleep(start.Add(at).Sub(time.Now()))
			err := s.Submit(work, fmt.Sprintf("j%d", i), func(context.Context) error { return nil })
			o := outcome{At: time.Since(start)}
			var re *fairsched.RefusalError
			if errors.As(err, &re) {
				o.Refused, o.Reason = errors.Is(err, fairsched.ErrOverloaded), re.Reason
			} else if err != nil {
				t.Fatalf("Submit at %v: %v", at, err)
			}
			got = append(got, o)
		}
		want := []outcome{{At: 500 * time.Millisecond}, {At: 1500 * time.Millisecond, Refused: true, Reason: fairsched.ReasonOverloaded}, {At: 2500 * time.Millisecond}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("submissions (-want +got):\n%s", diff)
		}
	})
}

// TestAdaptiveLimitFollowsLoad: with a LoadTarget the adaptive limit
// follows the signal's readings, not latency: it grows by one a reading at
// or below the target while in use, and backs off above it.
func TestAdaptiveLimitFollowsLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		cpu := scripted(start, 0, 0.5, 0.5, 0.5, 0.9, 0.95, 0.6, 0.6)
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{work: workCfg},
			fairsched.WithMaxConcurrency(4),
			fairsched.WithAdaptiveLimit(fairsched.AdaptiveLimitConfig{Min: 1, Max: 8, Backoff: 0.5, LoadTarget: 0.7}),
			fairsched.WithLoadSignal(fairsched.LoadConfig{Signal: cpu, Every: time.Second, Action: fairsched.OverloadObserve}))
		for i := range 40 { // always more than the limit: it is in use
			if err := s.Submit(work, fmt.Sprintf("j%d", i), func(context.Context) error {
				time.Sleep(time.Hour) // slow jobs: latency alone would shrink the limit
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		var limits, running []int
		for k := 1; k <= 7; k++ {
			time.Sleep(start.Add(time.Duration(k)*time.Second + 500*time.Millisecond).Sub(time.Now()))
			snap := snapshot(t, s)
			limits = append(limits, snap.MaxConcurrency)
			running = append(running, len(snap.Running))
		}
		// 4 → 5, 6, 7 (0.5 ≤ 0.7, in use) → 3, 1 (0.9, 0.95 > 0.7: halved)
		// → 2, 3 (0.6: the limit binds, 7 run from before it shrank).
		if diff := cmp.Diff([]int{5, 6, 7, 3, 1, 2, 3}, limits); diff != "" {
			t.Errorf("limit after each reading (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]int{5, 6, 7, 7, 7, 7, 7}, running); diff != "" {
			t.Errorf("running after each reading (-want +got):\n%s", diff)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = s.Close(ctx) // drop the queue, cancel the hour-long jobs
	})
}

// TestLoadSignalFailures: an error, a NaN or a panic skips the reading:
// the last good one stays in force; values outside [0, 1] are clamped.
func TestLoadSignalFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		n := 0
		sig := fairsched.LoadFunc(func(fairsched.LoadState) (float64, error) {
			n++
			switch n {
			case 1:
				return 7, nil // clamped to 1: overloaded
			case 2:
				return 0, errors.New("no reading")
			case 3:
				return math.NaN(), nil
			case 4:
				panic("signal bug")
			}
			return -3, nil // clamped to 0
		})
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{work: workCfg},
			fairsched.WithLoadSignal(fairsched.LoadConfig{Signal: sig, Every: time.Second}))
		var got []fairsched.LoadSnapshot
		for k := 1; k <= 5; k++ {
			time.Sleep(start.Add(time.Duration(k)*time.Second + 500*time.Millisecond).Sub(time.Now()))
			got = append(got, *snapshot(t, s).Load)
		}
		at := func(v float64, over bool, readings, skipped uint64) fairsched.LoadSnapshot {
			return fairsched.LoadSnapshot{Value: v, Overloaded: over, Threshold: 0.9, Readings: readings, Skipped: skipped}
		}
		want := []fairsched.LoadSnapshot{at(1, true, 1, 0), at(1, true, 1, 1), at(1, true, 1, 2), at(1, true, 1, 3), at(0, false, 2, 3)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("load after each reading (-want +got):\n%s", diff)
		}
	})
}

// TestLoadSignalConfig: the settings are checked at New.
func TestLoadSignalConfig(t *testing.T) {
	sig := fairsched.QueueLengthSignal(10)
	for name, opts := range map[string][]fairsched.Option{
		"no signal":       {fairsched.WithLoadSignal(fairsched.LoadConfig{})},
		"short period":    {fairsched.WithLoadSignal(fairsched.LoadConfig{Signal: sig, Every: time.Microsecond})},
		"threshold above": {fairsched.WithLoadSignal(fairsched.LoadConfig{Signal: sig, Threshold: 1.5})},
		"threshold NaN":   {fairsched.WithLoadSignal(fairsched.LoadConfig{Signal: sig, Threshold: math.NaN()})},
		"action":          {fairsched.WithLoadSignal(fairsched.LoadConfig{Signal: sig, Action: 9})},
		"target, no signal": {fairsched.WithMaxConcurrency(2),
			fairsched.WithAdaptiveLimit(fairsched.AdaptiveLimitConfig{Min: 1, Max: 4, LoadTarget: 0.5})},
		"target 1": {fairsched.WithLoadSignal(fairsched.LoadConfig{Signal: sig}), fairsched.WithMaxConcurrency(2),
			fairsched.WithAdaptiveLimit(fairsched.AdaptiveLimitConfig{Min: 1, Max: 4, LoadTarget: 1})},
	} {
		if _, err := fairsched.New(opts...); !errors.Is(err, fairsched.ErrInvalidConfig) {
			t.Errorf("%s: New = %v, want ErrInvalidConfig", name, err)
		}
	}
}

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
	t.Parallel()
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
