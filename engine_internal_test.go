package fairsched

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// TestCheckGroupOp: the pure check a cluster instance makes of a group
// change gives what a scheduler's core gives when it makes the change —
// nil or the same error — for every operation, with and without groups
// configured.
func TestCheckGroupOp(t *testing.T) {
	grouped := policy.DefaultLimits()
	grouped.MaxConcurrency = 4
	grouped.Groups = &policy.GroupsConfig{DefaultWeight: 1, Groups: map[string]policy.GroupConfig{
		"a": {Weight: 2, MinSlots: 1, Limit: 2}}}
	type op struct {
		kind   messages.GroupOpKind
		group  string
		weight int
	}
	ops := []op{
		{messages.SetGroupWeight, "a", 3}, {messages.SetGroupWeight, "a", 0}, {messages.SetGroupWeight, "new", 5},
		{messages.SetGroupWeight, "a", -1}, {messages.SetGroupWeight, "\xff", 2}, {messages.SetGroupWeight, "", 2},
		{messages.ResetGroupWeights, "", 0},
		{messages.PauseGroup, "a", 0}, {messages.PauseGroup, "", 0}, {messages.PauseGroup, "a\x00", 0},
		{messages.ResumeGroup, "a", 0}, {messages.ResumeGroup, "", 0}, {messages.ResumeGroup, "\xff", 0},
	}
	for name, limits := range map[string]policy.Limits{"no groups": policy.DefaultLimits(), "groups": grouped} {
		if err := limits.Validate(); err != nil {
			t.Fatal(err)
		}
		var fromCore, fromCheck []string
		for _, o := range ops {
			c := core.New(limits) // a fresh one each: no change depends on another
			now := time.Unix(0, 0)
			var err error
			switch o.kind {
			case messages.SetGroupWeight:
				err = c.SetGroupWeight(now, o.group, o.weight)
			case messages.ResetGroupWeights:
				err = c.ResetGroupWeights(now)
			case messages.PauseGroup:
				err = c.PauseGroup(now, o.group)
			case messages.ResumeGroup:
				err = c.ResumeGroup(now, o.group)
			}
			fromCore = append(fromCore, errText(err))
			fromCheck = append(fromCheck, errText(checkGroupOp(limits.Groups, o.kind, o.group, o.weight)))
		}
		if diff := cmp.Diff(fromCore, fromCheck); diff != "" {
			t.Errorf("%s: checkGroupOp differs from the core (-core +check):\n%s", name, diff)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}
