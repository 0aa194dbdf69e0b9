package actor

import (
	"context"

	"go.uber.org/zap"

	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// ApplyPolicy replaces the scheduler's policy through the owner, all of it
// or none (see core.Core.ApplyPolicy). A ctx that ends first returns its
// error; the policy may still apply then.
func (a *Actor) ApplyPolicy(ctx context.Context, p policy.Policy) error {
	if a.closed.Load() {
		return ErrClosed
	}
	reply := make(chan error, 1)
	if err := a.send(ctx, messages.ApplyPolicy{Policy: p, Reply: reply}); err != nil {
		return err
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// applyPolicy applies p on the owner: the core first (which checks it
// whole), then what the actor keeps of it — the published types, the
// coalescing ones, whether a submission may be refused — and a dispatch,
// since a larger share may start queued work now.
func (a *Actor) applyPolicy(p policy.Policy) error {
	now := a.now()
	if err := a.core.ApplyPolicy(now, p); err != nil {
		return err
	}
	a.publishTypes()
	for t, cfg := range p.Types {
		if cfg.Coalesce {
			a.coalescing[t] = true
		}
	}
	a.refuses.Store(a.core.Refuses())
	v := a.core.PolicyVersion()
	a.log.Info("policy applied", zap.String("version", v.Version), zap.Uint64("seq", v.Seq))
	if len(a.subs) > 0 {
		a.emit(messages.PolicyApplied{Time: now, Version: v.Version, Seq: v.Seq})
	}
	if !a.aborted {
		a.dispatch(now)
	}
	return nil
}
