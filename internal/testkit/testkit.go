// Package testkit holds the helpers this module's own tests share: a
// scheduler opened with a test's job types, and Gate, a job function that
// runs until it is released. Users testing their code want the exported
// fairschedtest package instead; its Blocker releases every run at once,
// while a Gate lets one run return per Release.
package testkit

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/fairsched/fairsched"
)

// Open starts a scheduler with opts and registers types on it; the test
// closes it.
func Open(t testing.TB, types map[fairsched.JobType]fairsched.JobTypeConfig, opts ...fairsched.Option) *fairsched.Scheduler {
	t.Helper()
	s, err := fairsched.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	for typ, cfg := range types {
		if err := s.RegisterType(typ, cfg); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// New is Open with a graceful Close when the test ends, whose error fails
// the test.
func New(t testing.TB, types map[fairsched.JobType]fairsched.JobTypeConfig, opts ...fairsched.Option) *fairsched.Scheduler {
	t.Helper()
	s := Open(t, types, opts...)
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("scheduler Close: %v", err)
		}
	})
	return s
}

// Gate is a job function (Run) that runs until it is released or its
// context ends. Each Release lets one run return with the error given; the
// first Release may come before any run starts. Started tells, without a
// data race, whether a run has begun.
type Gate struct {
	started chan struct{} // closed when the first run starts
	release chan error
	runs    atomic.Int32
}

// NewGate returns a gate no run has passed.
func NewGate() *Gate {
	return &Gate{started: make(chan struct{}), release: make(chan error, 1)}
}

// Run is the job function: it waits for a Release or the end of ctx.
func (g *Gate) Run(ctx context.Context) error {
	if g.runs.Add(1) == 1 {
		close(g.started)
	}
	select {
	case err := <-g.release:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Release lets one run return err; it waits while an earlier release is
// still untaken.
func (g *Gate) Release(err error) { g.release <- err }

// Started reports whether a run has begun.
func (g *Gate) Started() bool {
	select {
	case <-g.started:
		return true
	default:
		return false
	}
}

// WaitStarted blocks until a run has begun.
func (g *Gate) WaitStarted() { <-g.started }
