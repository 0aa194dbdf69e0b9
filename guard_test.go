package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
)

// TestBadCallsAreErrorsNotPanics: every method on a nil or zero *Scheduler,
// a nil Option or JobOption, a nil context and an absurd Subscribe buffer
// give typed errors (or a closed channel), validated before anything is
// done: Close(nil) leaves the scheduler running.
func TestBadCallsAreErrorsNotPanics(t *testing.T) {
	nop := func(context.Context) error { return nil }
	ctx := context.Background()
	calls := func(s *fairsched.Scheduler) map[string]func() error {
		return map[string]func() error{
			"RegisterType": func() error {
				return s.RegisterType("t", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1})
			},
			"RunSync": func() error { return s.RunSync(ctx, "t", "x", "", nop) },
			"Submit":  func() error { return s.Submit("t", "x", nop) },
			"SubmitPeriodic": func() error {
				_, err := s.SubmitPeriodic("t", "x", time.Second, nop)
				return err
			},
			"SetKeyWeight":      func() error { return s.SetKeyWeight("k", 2) },
			"SetGroupWeight":    func() error { return s.SetGroupWeight("g", 2) },
			"ResetGroupWeights": func() error { return s.ResetGroupWeights() },
			"PauseGroup":        func() error { return s.PauseGroup("g") },
			"ResumeGroup":       func() error { return s.ResumeGroup("g") },
			"Snapshot": func() error {
				_, err := s.Snapshot(ctx)
				return err
			},
			"RegisterWorker":   func() error { return s.RegisterWorker(fairsched.WorkerSpec{ID: "w"}) },
			"UnregisterWorker": func() error { return s.UnregisterWorker("w") },
			"Close":            func() error { return s.Close(ctx) },
		}
	}
	for name, s := range map[string]*fairsched.Scheduler{"nil": nil, "zero": {}} {
		for method, call := range calls(s) {
			if err := call(); !errors.Is(err, fairsched.ErrNilScheduler) {
				t.Errorf("%s Scheduler: %s = %v; want ErrNilScheduler", name, method, err)
			}
		}
		events, cancel := s.Subscribe(1)
		if _, open := <-events; open {
			t.Errorf("%s Scheduler: Subscribe gave an open channel", name)
		}
		cancel()
	}

	if _, err := fairsched.New(fairsched.WithMaxConcurrency(2), nil); !errors.Is(err, fairsched.ErrInvalidConfig) {
		t.Errorf("New with a nil option = %v; want ErrInvalidConfig", err)
	}
	s, err := fairsched.New()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if err := s.RegisterType("t", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
		t.Fatal(err)
	}
	var nilCtx context.Context
	for name, tc := range map[string]struct {
		call func() error
		want error
	}{
		"RunSync(nil ctx)": {func() error { return s.RunSync(nilCtx, "t", "x", "", nop) }, fairsched.ErrInvalidJob},
		"Snapshot(nil ctx)": {func() error {
			_, err := s.Snapshot(nilCtx)
			return err
		}, fairsched.ErrInvalidConfig},
		"Close(nil ctx)":          {func() error { return s.Close(nilCtx) }, fairsched.ErrInvalidConfig},
		"Submit(nil JobOption)":   {func() error { return s.Submit("t", "x", nop, nil) }, fairsched.ErrInvalidJob},
		"RunSync(nil JobOption)":  {func() error { return s.RunSync(ctx, "t", "x", "", nop, fairsched.WithQueueTimeout(time.Second), nil) }, fairsched.ErrInvalidJob},
		"SubmitPeriodic(nil opt)": {func() error { _, err := s.SubmitPeriodic("t", "x", time.Second, nop, nil); return err }, fairsched.ErrInvalidJob},
	} {
		if err := tc.call(); !errors.Is(err, tc.want) {
			t.Errorf("%s = %v; want %v", name, err, tc.want)
		}
	}
	// Close(nil) was refused before it acted: the scheduler still runs jobs.
	if err := s.RunSync(ctx, "t", "after", "", nop); err != nil {
		t.Errorf("RunSync after Close(nil) = %v; want nil", err)
	}
	events, cancel := s.Subscribe(math.MaxInt)
	cancel()
	for range events {
	}
	if got := fmt.Sprint(cap(events)); got != fmt.Sprint(fairsched.MaxSubscribeBuffer) {
		t.Errorf("Subscribe(MaxInt) buffer %s; want MaxSubscribeBuffer", got)
	}
}
