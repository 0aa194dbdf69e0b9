package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/queue"
)

// Explain explains why the job of (t, id) waits (core.Core.Explain): the
// leader answers from its scheduler, another instance asks the leader
// through the database, like Cancel — ErrNoLeader when none answers
// within ctx.
func (n *Node) Explain(ctx context.Context, t policy.JobType, id string) (core.Explanation, error) {
	in, err := n.Info(ctx)
	if err != nil {
		return core.Explanation{}, err
	}
	if in.inTurn != nil {
		var e core.Explanation
		var eerr error
		if err := in.inTurn(ctx, func(m *machine.Machine) { e, eerr = m.Explain(t, id) }); err != nil {
			return core.Explanation{}, err
		}
		return e, eerr
	}
	r, err := n.ask(ctx, cmdExplain, cmdArgs{Type: t, ID: id})
	if err != nil {
		return core.Explanation{}, err
	}
	if r.Explanation == nil { // a leader that knows no explain command
		return core.Explanation{}, fmt.Errorf("%w: its answer explains nothing", ErrNoLeader)
	}
	return *r.Explanation, nil
}

// checkStart is deadline-aware admission of a RunSync (its type's
// DeadlineAdmission, a deadline on ctx): the leader estimates when rec
// would start were it queued now, and a start after the deadline is
// refused here, before anything is written (*policy.LateStartError). On
// another instance than the leader it costs a command's round trip; when
// no leader answers within half the time left, the call is queued as
// without the check.
func (n *Node) checkStart(ctx context.Context, rec *core.JobRecord) error {
	cfg, ok := n.Registry().Type(rec.Type)
	deadline, has := ctx.Deadline()
	if !ok || !cfg.DeadlineAdmission || !has {
		return nil
	}
	within := time.Until(deadline)
	in, err := n.Info(ctx)
	if err != nil {
		return err
	}
	if in.inTurn != nil {
		var cerr error
		if err := in.inTurn(ctx, func(m *machine.Machine) { cerr = m.CheckStart(probe(rec), within) }); err != nil {
			return err
		}
		return cerr
	}
	askCtx, cancel := context.WithTimeout(ctx, within/2)
	defer cancel()
	r, err := n.ask(askCtx, cmdStartCheck, cmdArgs{Type: rec.Type, ID: rec.ID, Key: rec.Key, Group: rec.Group, Within: within})
	switch {
	case r.Late != nil:
		return r.Late
	case errors.Is(err, ErrNoLeader):
		return nil // not known in time: queued as without the check
	}
	return err
}

// startCheck answers a start check on the leader: the caller's deadline
// is the time it had left, from the leader's now (the command's transit
// is not counted).
func (l *leader) startCheck(args cmdArgs, r *cmdReply) error {
	err := l.m.CheckStart(probe(&core.JobRecord{Type: args.Type, ID: args.ID, Key: args.Key, Group: args.Group}), args.Within)
	var late *policy.LateStartError
	if errors.As(err, &late) {
		r.Late = late
		return nil
	}
	return err
}

// probe is the job rec would be, for a start check.
func probe(rec *core.JobRecord) *core.Job {
	return &core.Job{Job: queue.Job{Type: rec.Type, ID: rec.ID, Key: rec.Key, Floor: rec.Floor, Floored: rec.Floored, OnDemand: true}, Group: rec.Group}
}
