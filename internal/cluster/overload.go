package cluster

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/policy"
)

// Overload signals in cluster mode. The leader reads its load signal, as
// a scheduler of one process does, and decides for the whole domain; with
// refusal on (RefuseWhenOverloaded) it publishes its verdict beside its
// lease at each heartbeat, and every instance — the leader's own too —
// reads the verdict at its own heartbeat and refuses new jobs while it
// says overloaded. The leader's signal, not each instance's: the queue and
// the slots it measures are the domain's, which only the leader sees
// whole, and one verdict makes every instance answer alike. A verdict is
// at most one load period and two heartbeats old (the reading, the
// leader's beat, the instance's beat). Without a live leader, or before
// its first verdict, every instance accepts.

// Overload is the leader's verdict on its load signal.
type Overload struct {
	// Overloaded: the leader's last good reading was at or above its
	// threshold, and new jobs are refused.
	Overloaded bool
	// At is when the leader took that reading, by its clock.
	At time.Time
}

// OverloadVerdicts is the backend's part of the verdicts.
type OverloadVerdicts interface {
	// SetOverload (fenced) writes domain's verdict under epoch beside its
	// lease.
	SetOverload(ctx context.Context, domain string, epoch int64, v Overload) error
	// Overload returns the verdict the current, unexpired lease's epoch
	// wrote, and false when there is none (no live leader, or it wrote
	// none yet).
	Overload(ctx context.Context, domain string) (Overload, bool, error)
}

// RefuseWhenOverloaded turns refusal on overload on or off: while on, this
// instance's leader publishes its load signal's verdict, and every call
// that makes a job here (Enqueue, Submit, RunSync, EnqueueMany) is refused
// while the last verdict read says overloaded.
func (n *Node) RefuseWhenOverloaded(on bool) {
	n.overloadRefuse.Store(on)
	if !on {
		n.verdict.Store(nil)
	}
}

// overloadRefusal is the refusal of a job made now: a RefusalError with
// reason overloaded while the last verdict read says overloaded.
func (n *Node) overloadRefusal(rec *core.JobRecord) error {
	if v := n.verdict.Load(); v != nil && v.Overloaded && n.overloadRefuse.Load() {
		return &policy.RefusalError{Reason: policy.ReasonOverloaded, Type: rec.Type, ID: rec.ID, Key: rec.Key}
	}
	return nil
}

// overloadBeat is a heartbeat's part of the verdicts: the leader writes
// its own when it changed (or it leads under a new epoch), then every
// instance reads the domain's.
func (s *leaseLoop) overloadBeat(ctx context.Context) {
	n := s.n
	if !n.overloadRefuse.Load() {
		return
	}
	if s.l != nil {
		s.publishOverload(ctx)
	}
	v, ok, err := n.b.Overload(ctx, n.cfg.Domain)
	switch {
	case err != nil:
		// The last verdict stays: the database out of reach refuses the
		// inserts anyway.
		n.log.Debug("reading the overload verdict failed", zap.Error(err))
	case !ok:
		n.verdict.Store(nil)
	default:
		n.verdict.Store(&v)
	}
}

// publishOverload writes the leader's verdict when it differs from the
// last this epoch wrote.
func (s *leaseLoop) publishOverload(ctx context.Context) {
	lv, ok := s.l.m.LoadVerdict()
	if !ok {
		return
	}
	v := Overload{Overloaded: lv.Overloaded, At: lv.At}
	if s.pub.epoch == s.epoch && s.pub.v == v {
		return
	}
	if err := s.n.b.SetOverload(ctx, s.n.cfg.Domain, s.epoch, v); err != nil {
		s.n.log.Debug("publishing the overload verdict failed", zap.Error(err))
		return
	}
	s.pub.epoch, s.pub.v = s.epoch, v
}

// published is the verdict a leader wrote last, under its epoch.
type published struct {
	epoch int64
	v     Overload
}
