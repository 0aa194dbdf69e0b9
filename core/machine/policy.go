package machine

import (
	"go.uber.org/zap"

	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// applyPolicy applies p on the owner: the core first (which checks it
// whole), then what the actor keeps of it — the published types, the
// coalescing ones, whether a submission may be refused — and a dispatch,
// since a larger share may start queued work now.
func (a *Machine) applyPolicy(p policy.Policy) error {
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
