package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"go.uber.org/zap"

	"github.com/fairsched/fairsched/policy"
)

// The domain's types. A new leader must count every job a previous
// leader granted against every limit before it admits anything — but an
// instance that starts takes the lease before its own RegisterType calls
// reach it, and an instance need not register every type. So the types
// are the domain's: each RegisterType is written to the settings table
// (settingType) before the type reaches the leader's scheduler, and a
// leader registers every type written there first. A type's jobs can only
// have been granted by a leader that knew it, so they are all counted.
//
// The configuration an instance registers last is the domain's; a leader
// takes a changed configuration at its start (a running leader keeps the
// one it registered).

const settingType = "type/"

// typeSettings encodes regs as settings.
func typeSettings(regs []typeReg) (map[string][]byte, error) {
	out := make(map[string][]byte, len(regs))
	for _, r := range regs {
		v, err := json.Marshal(r.cfg)
		if err != nil {
			return nil, err
		}
		out[settingType+string(r.t)] = v
	}
	return out, nil
}

// domainTypes returns the types written in settings, by name.
func domainTypes(settings map[string][]byte, log *zap.Logger) map[policy.JobType]policy.JobTypeConfig {
	out := map[policy.JobType]policy.JobTypeConfig{}
	for name, v := range settings {
		t, ok := strings.CutPrefix(name, settingType)
		if !ok {
			continue
		}
		var cfg policy.JobTypeConfig
		if err := json.Unmarshal(v, &cfg); err != nil {
			log.Error("a type of the domain does not decode", zap.String("type", t), zap.Error(err))
			continue
		}
		out[policy.JobType(t)] = cfg
	}
	return out
}

// learnTypes registers the domain's types this leader does not know yet
// (another instance registered them); it reads the settings only when an
// instance has a handler for a type unknown here.
func (l *leader) learnTypes(ctx context.Context, handled map[string]bool) {
	unknown := false
	for t := range handled {
		if !l.known[policy.JobType(t)] {
			unknown = true
		}
	}
	if !unknown {
		return
	}
	settings, err := l.n.b.Settings(ctx, l.n.cfg.Domain)
	if err != nil {
		l.n.log.Warn("reading the domain's types failed", zap.Error(err))
		return
	}
	for t, cfg := range domainTypes(settings, l.n.log) {
		if !l.known[t] {
			l.register(typeReg{t, cfg})
		}
	}
}

// register adds type r to the leader's scheduler with the remote handler.
func (l *leader) register(r typeReg) {
	if err := l.m.Register(r.t, r.cfg); err != nil && !errors.Is(err, policy.ErrDuplicateType) {
		l.n.log.Error("registering a type in the leader failed", zap.String("type", string(r.t)), zap.Error(err))
		return
	}
	l.known[r.t] = true
	l.conflicts[r.t] = conflictOf(r.cfg)
	_ = l.m.RegisterRemote([]policy.JobType{r.t})
}
