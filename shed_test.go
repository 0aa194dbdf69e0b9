package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/fairschedtest"
)

// shedOutcome names how a RunSync ended, for a whole-result comparison.
func shedOutcome(err error) string {
	var re *fairsched.RefusalError
	switch {
	case err == nil:
		return "ran"
	case errors.As(err, &re) && errors.Is(err, fairsched.ErrOverloaded):
		return string(re.Reason)
	default:
		return err.Error()
	}
}

// shedRun is one timeline of the shedding tests: with one slot and a queue
// of 4, key noisy runs one job and fills the queue, then sends one more;
// quiet keys a and b send one job each, then noisy one more again.
type shedRun struct {
	Outcomes map[string]string        // job id: how its RunSync ended
	Starts   map[string]time.Duration // job id: when it started
	Refused  []string                 // JobRefused events: "id reason"
}

func runShedTimeline(t *testing.T, opts ...fairsched.Option) shedRun {
	var got shedRun
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		opts = append([]fairsched.Option{fairsched.WithMaxConcurrency(1), fairsched.WithMaxPending(4)}, opts...)
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{work: workCfg}, opts...)
		events, cancel := s.Subscribe(64)
		defer cancel()
		var mu sync.Mutex // the test's own record, written by the callers' goroutines
		got = shedRun{Outcomes: map[string]string{}, Starts: map[string]time.Duration{}}
		var wg sync.WaitGroup
		send := func(id, key string) {
			wg.Go(func() {
				err := s.RunSync(context.Background(), work, id, key, func(context.Context) error {
					mu.Lock()
					got.Starts[id] = time.Since(start)
					mu.Unlock()
					time.Sleep(time.Second)
					return nil
				})
				mu.Lock()
				got.Outcomes[id] = shedOutcome(err)
				mu.Unlock()
			})
			synctest.Wait() // queued (or refused) before the next
		}
		for i := range 6 {
			send(fmt.Sprintf("noisy%d", i), "noisy")
		}
		send("a0", "a")
		send("b0", "b")
		send("noisy6", "noisy")
		wg.Wait()
		synctest.Wait()
		for {
			select {
			case e := <-events:
				if r, ok := e.(fairsched.JobRefused); ok {
					got.Refused = append(got.Refused, r.ID+" "+string(r.Reason))
				}
				continue
			default:
			}
			break
		}
	})
	return got
}

// TestShedQuietKeysAccepted: a noisy key fills WithMaxPending; with
// shedding, the quiet keys' jobs are accepted and run, each in place of
// the noisy key's newest pending job (reason shed), while the noisy key's
// own newcomers are refused as without shedding.
func TestShedQuietKeysAccepted(t *testing.T) {
	got := runShedTimeline(t, fairsched.WithShedding())
	want := shedRun{
		Outcomes: map[string]string{
			"noisy0": "ran", "noisy1": "ran", "noisy2": "ran", "noisy3": "shed", "noisy4": "shed",
			"noisy5": "pool_overloaded", "noisy6": "pool_overloaded", "a0": "ran", "b0": "ran",
		},
		Starts: map[string]time.Duration{
			// a and b join at the floor, noisy's cost after noisy0: noisy1,
			// queued first, wins the tie.
			"noisy0": 0, "noisy1": time.Second, "a0": 2 * time.Second, "b0": 3 * time.Second, "noisy2": 4 * time.Second,
		},
		Refused: []string{"noisy5 pool_overloaded", "noisy4 shed", "noisy3 shed", "noisy6 pool_overloaded"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
}

// TestShedOff: without WithShedding the full queue refuses the quiet keys
// too, and the noisy key's queued jobs all run.
func TestShedOff(t *testing.T) {
	got := runShedTimeline(t)
	want := shedRun{
		Outcomes: map[string]string{
			"noisy0": "ran", "noisy1": "ran", "noisy2": "ran", "noisy3": "ran", "noisy4": "ran",
			"noisy5": "pool_overloaded", "noisy6": "pool_overloaded", "a0": "pool_overloaded", "b0": "pool_overloaded",
		},
		Starts: map[string]time.Duration{
			"noisy0": 0, "noisy1": time.Second, "noisy2": 2 * time.Second, "noisy3": 3 * time.Second, "noisy4": 4 * time.Second,
		},
		Refused: []string{"noisy5 pool_overloaded", "a0 pool_overloaded", "b0 pool_overloaded", "noisy6 pool_overloaded"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
}

// TestSheddingNeedsMaxPending: WithShedding without a queue bound is
// ErrInvalidConfig.
func TestSheddingNeedsMaxPending(t *testing.T) {
	if _, err := fairsched.New(fairsched.WithShedding()); !errors.Is(err, fairsched.ErrInvalidConfig) {
		t.Errorf("New = %v, want ErrInvalidConfig", err)
	}
}

// shedDurableRun is a timeline of durable jobs under shedding: with one
// slot and a queue of 2, key noisy enqueues 3 durable jobs (one runs, two
// wait), then key a calls RunSync.
type shedDurableRun struct {
	Quiet  string   // how a's RunSync ended
	Ran    []string // handler runs, in order
	Stored []string // records left in the store: "id state"
}

func runShedDurable(t *testing.T, opts ...fairsched.Option) shedDurableRun {
	var got shedDurableRun
	synctest.Test(t, func(t *testing.T) {
		st := durableStore(t, filepath.Join(t.TempDir(), "jobs.db"))
		opts = append([]fairsched.Option{fairsched.WithStore(st), fairsched.WithMaxConcurrency(1),
			fairsched.WithMaxPending(2)}, opts...)
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{work: workCfg}, opts...)
		ran := make(chan string, 8)
		if err := s.RegisterHandler(work, func(_ context.Context, j fairsched.Job) error {
			ran <- j.ID
			time.Sleep(time.Second)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := s.Enqueue(context.Background(), work, fmt.Sprintf("d%d", i), nil, fairsched.WithFairnessKey("noisy")); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		got.Quiet = shedOutcome(s.RunSync(context.Background(), work, "a0", "a", func(context.Context) error { return nil }))
		fairschedtest.WaitIdle(t, s)
		synctest.Wait() // the store's last commits
		close(ran)
		for id := range ran {
			got.Ran = append(got.Ran, id)
		}
		if err := st.LoadJobs(func(r fairsched.JobRecord) error {
			got.Stored = append(got.Stored, fmt.Sprintf("%s %v: %s", r.ID, r.State, r.LastError))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
	return got
}

// TestShedDurableKeptByDefault: durable jobs are never shed unless
// ShedDurable: the quiet key is refused as without shedding, and every
// durable job runs.
func TestShedDurableKeptByDefault(t *testing.T) {
	got := runShedDurable(t, fairsched.WithShedding())
	want := shedDurableRun{Quiet: "pool_overloaded", Ran: []string{"d0", "d1", "d2"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
}

// TestShedDurable: with ShedDurable the noisy key's newest durable job is
// shed for the quiet key's: its record ends dead with the shed error.
func TestShedDurable(t *testing.T) {
	got := runShedDurable(t, fairsched.WithShedding(fairsched.ShedDurable()))
	want := shedDurableRun{Quiet: "ran", Ran: []string{"d0", "d1"}, Stored: []string{
		fmt.Sprintf(`d2 %v: fairsched: job work/d2 of key "noisy" shed: the queue held its bound (2) and a key under its fair share submitted`, core.RecordDead),
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
}
