package cluster

import (
	"context"
	"fmt"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/policy"
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
	if in.a != nil {
		return in.a.Explain(ctx, t, id)
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
