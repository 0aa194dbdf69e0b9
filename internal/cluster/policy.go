package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// The domain's scheduling policy: ApplyPolicy on any instance is a
// command that the leader applies to its scheduler and keeps as the
// setting settingPolicy, which every later leader applies first
// (applySettings), before the weights and pauses set after it. The stored
// policy keeps its types, so that every instance can learn them
// (PolicyTypes): a type is registered by instances, which write it in the
// domain (types.go); the leader's scheduler takes it from there.

const (
	cmdPolicy     = "policy"
	settingPolicy = "policy"
)

func init() { kind[messages.PolicyApplied]("policy") }

// ApplyPolicy asks the leader to apply p (its types aside: an instance
// registers those, RegisterType) and to keep it, types included, for
// every later leader and every instance (PolicyTypes).
func (n *Node) ApplyPolicy(ctx context.Context, p policy.Policy) error {
	data, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("%w: the policy does not encode: %w", policy.ErrInvalidConfig, err)
	}
	_, err = n.ask(ctx, cmdPolicy, cmdArgs{Policy: data})
	return err
}

// runPolicy applies the policy of a command on the leader's scheduler and
// writes it as the domain's setting; the key and group weights set before
// it are replaced by its own, so their settings go.
func (l *leader) runPolicy(ctx context.Context, args cmdArgs, settings map[string][]byte) error {
	var p policy.Policy
	if err := json.Unmarshal(args.Policy, &p); err != nil {
		return fmt.Errorf("%w: a policy command does not decode: %w", policy.ErrInvalidConfig, err)
	}
	p.Types = nil // registered by the instances, with the leader's remote handler
	if err := l.m.ApplyPolicy(p); err != nil {
		return err
	}
	stored, err := l.n.b.Settings(ctx, l.n.cfg.Domain)
	if err != nil {
		return err
	}
	for name := range stored {
		if strings.HasPrefix(name, settingKeyWeight) || strings.HasPrefix(name, settingGroup) {
			settings[name] = nil
		}
	}
	settings[settingPolicy] = args.Policy
	return nil
}

// applyStoredPolicy applies the domain's stored policy on a new leader.
func (l *leader) applyStoredPolicy(data []byte) error {
	var p policy.Policy
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("%w: the stored policy does not decode: %w", policy.ErrInvalidConfig, err)
	}
	p.Types = nil // the leader registered the domain's types first
	return l.m.ApplyPolicy(p)
}

// PolicyTypes returns the job types of the domain's stored policy (none
// when no policy was applied): an instance registers those it lacks, so
// that a policy applied through any instance adds its types to every one.
// The stored text is untrusted: the caller checks each config before it
// registers it.
func (n *Node) PolicyTypes(ctx context.Context) (map[policy.JobType]policy.JobTypeConfig, error) {
	settings, err := n.b.Settings(ctx, n.cfg.Domain)
	if err != nil {
		return nil, err
	}
	data, ok := settings[settingPolicy]
	if !ok {
		return nil, nil
	}
	var p policy.Policy
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("%w: the stored policy does not decode: %w", policy.ErrInvalidConfig, err)
	}
	return p.Types, nil
}
