package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
)

// start is one admission of a timeline: when, after the test's start, and
// which job.
type start struct {
	At time.Duration
	ID string
}

// starts returns the admissions among events, in order.
func starts(events []fairsched.Event, t0 time.Time) []start {
	var got []start
	for _, e := range keep(events, fairsched.JobAdmitted{}) {
		a := e.(fairsched.JobAdmitted)
		got = append(got, start{a.Time.Sub(t0), a.ID})
	}
	return got
}

// TestPriorityZeroRegisters: priority 0 is refused while a priority's value
// is its tier's cap, with an error that names the option to use; it
// registers with WithScoring and with PriorityOrderOnly. A negative
// priority is refused in every mode, and so is a mode that is none.
func TestPriorityZeroRegisters(t *testing.T) {
	for name, tc := range map[string]struct {
		opts    []fairsched.Option
		p       fairsched.Priority
		wantErr string // "" for success
	}{
		"default, priority 0":    {nil, 0, "WithPriorityMode(PriorityOrderOnly)"},
		"default, priority 1":    {nil, 1, ""},
		"default, negative":      {nil, -1, "must not be negative"},
		"scoring, priority 0":    {[]fairsched.Option{fairsched.WithScoring(fairsched.ScoreConfig{})}, 0, ""},
		"scoring, negative":      {[]fairsched.Option{fairsched.WithScoring(fairsched.ScoreConfig{})}, -3, "must not be negative"},
		"order only, priority 0": {[]fairsched.Option{fairsched.WithPriorityMode(fairsched.PriorityOrderOnly)}, 0, ""},
		"order only, negative":   {[]fairsched.Option{fairsched.WithPriorityMode(fairsched.PriorityOrderOnly)}, -1, "must not be negative"},
	} {
		t.Run(name, func(t *testing.T) {
			s := startScheduler(t, nil, tc.opts...)
			err := s.RegisterType("t", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: tc.p})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("RegisterType(priority %d) = %v; want success", tc.p, err)
			case tc.wantErr != "" && (!errors.Is(err, fairsched.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("RegisterType(priority %d) = %v; want ErrInvalidConfig saying %q", tc.p, err, tc.wantErr)
			}
		})
	}
	if _, err := fairsched.New(fairsched.WithPriorityMode(fairsched.PriorityMode(7))); !errors.Is(err, fairsched.ErrInvalidConfig) {
		t.Errorf("New(WithPriorityMode(7)) = %v; want ErrInvalidConfig", err)
	}
}

// TestPriorityZeroPassesFreshPriorityFiveAt320s: spec 3's crossover with
// its own numbers. With the default scoring and one slot, a priority-0 job
// waits under a stream of fresh priority-5 jobs, one arriving as each
// ends, every 10s. Its score grows 16 a second: at 320s it ties a fresh
// priority-5 job (5·1024) and wins on arrival — not a second earlier.
func TestPriorityZeroPassesFreshPriorityFiveAt320s(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		t0 := mock.Now()
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			"low":  {DefaultCost: 10 * time.Second, Priority: 0},
			"high": {DefaultCost: 10 * time.Second, Priority: 5},
		}, fairsched.WithClock(mock), fairsched.WithMaxConcurrency(1), fairsched.WithScoring(fairsched.ScoreConfig{}))
		events, cancel := s.Subscribe(128)
		running := newBlocker()
		if err := s.Submit("high", "h0", running.fn); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		patient := newBlocker()
		if err := s.Submit("low", "patient", patient.fn); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // queued at T=0
		want := []start{{0, "h0"}}
		var fresh *blocker // the priority-5 job the patient one passed
		for i := 1; !patient.running(); i++ {
			if i > 40 {
				t.Fatal("the priority-0 job never started")
			}
			mock.Add(10 * time.Second)
			next := newBlocker() // a fresh priority-5 job arrives as the running one ends
			id := fmt.Sprintf("h%d", i)
			if err := s.Submit("high", id, next.fn); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			finish(t, running)
			if at := time.Duration(i) * 10 * time.Second; at < 320*time.Second {
				want = append(want, start{at, id})
				running = next
			} else {
				want = append(want, start{at, "patient"}, start{at, id}) // id right after
				fresh = next
			}
		}
		finish(t, patient)
		finish(t, fresh)
		cancel()
		if diff := cmp.Diff(want, starts(collect(events), t0)); diff != "" {
			t.Errorf("admissions (-want +got):\n%s", diff)
		}
	})
}

// TestPriorityOrderOnly: with PriorityOrderOnly priorities only order.
// Priority 1 caps nothing (under the default it would run one job at a
// time), so high-priority work takes every slot it finds; WithTier's
// MaxRunning (spec 5's max_inflight) then caps a tier absolutely, without
// shares, and the lower tier gets the rest.
func TestPriorityOrderOnly(t *testing.T) {
	types := map[fairsched.JobType]fairsched.JobTypeConfig{
		"batch":       {DefaultCost: time.Second, Priority: 0},
		"interactive": {DefaultCost: time.Second, Priority: 1},
	}
	for name, tc := range map[string]struct {
		opts []fairsched.Option
		want map[fairsched.Priority]int // running by tier once all are submitted
	}{
		"no tier caps":        {nil, map[fairsched.Priority]int{1: 3}},
		"MaxRunning 2":        {[]fairsched.Option{fairsched.WithTier(1, fairsched.TierConfig{MaxRunning: 2})}, map[fairsched.Priority]int{0: 1, 1: 2}},
		"priority 0 capped":   {[]fairsched.Option{fairsched.WithTier(0, fairsched.TierConfig{MaxRunning: 1}), fairsched.WithTier(1, fairsched.TierConfig{MaxRunning: 1})}, map[fairsched.Priority]int{0: 1, 1: 1}},
		"shares and absolute": {[]fairsched.Option{fairsched.WithTier(1, fairsched.TierConfig{BurstShare: 1, MaxRunning: 1})}, map[fairsched.Priority]int{0: 2, 1: 1}},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := append([]fairsched.Option{fairsched.WithMaxConcurrency(3), fairsched.WithPriorityMode(fairsched.PriorityOrderOnly)}, tc.opts...)
				s := startScheduler(t, types, opts...)
				var blockers []*blocker
				for _, typ := range []fairsched.JobType{"interactive", "batch"} {
					for i := range 3 {
						b := newBlocker()
						blockers = append(blockers, b)
						if err := s.Submit(typ, fmt.Sprint(typ, i), b.fn); err != nil {
							t.Fatal(err)
						}
					}
				}
				synctest.Wait()
				snap := snapshot(t, s)
				if diff := cmp.Diff(tc.want, snap.RunningByTier); diff != "" {
					t.Errorf("running by tier (-want +got):\n%s", diff)
				}
				for _, b := range blockers {
					b.release <- nil
				}
				synctest.Wait()
			})
		})
	}
}

// TestTierMaxRunningOptions: MaxRunning must not be negative and a tier
// must cap something; a tier with MaxRunning alone needs no global cap,
// shares still do.
func TestTierMaxRunningOptions(t *testing.T) {
	for name, tc := range map[string]struct {
		opts    []fairsched.Option
		wantErr string
	}{
		"alone, no global cap": {[]fairsched.Option{fairsched.WithTier(2, fairsched.TierConfig{MaxRunning: 3})}, ""},
		"negative":             {[]fairsched.Option{fairsched.WithTier(2, fairsched.TierConfig{MaxRunning: -1})}, "Tier[2].MaxRunning = -1"},
		"nothing":              {[]fairsched.Option{fairsched.WithTier(2, fairsched.TierConfig{LendIdle: true})}, "Tier[2] = no cap"},
		"shares, no cap":       {[]fairsched.Option{fairsched.WithTier(2, fairsched.TierConfig{BurstShare: 0.5, MaxRunning: 3})}, "need a global cap"},
		"MinShare alone":       {[]fairsched.Option{fairsched.WithMaxConcurrency(4), fairsched.WithTier(2, fairsched.TierConfig{MinShare: 0.5})}, "Tier[2].BurstShare = 0"},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := fairsched.New(tc.opts...)
			if err == nil {
				defer s.Close(context.Background())
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("New = %v; want success", err)
			case tc.wantErr != "" && (!errors.Is(err, fairsched.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("New = %v; want ErrInvalidConfig saying %q", err, tc.wantErr)
			}
		})
	}
}
