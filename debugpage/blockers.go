package debugpage

import (
	"fmt"
	"strings"
	"time"

	"github.com/fairsched/fairsched"
)

// heldBy names what holds a pending job, briefly: "edit a (alice)", "key
// alice: 2 slots", "tier 8: 3 slots", "group g: 2 slots".
func heldBy(bs []fairsched.Blocker) string {
	var out []string
	for _, b := range bs {
		switch {
		case b.ID != "":
			who := ""
			if b.Key != nil {
				who = " (" + keyName(*b.Key) + ")"
			}
			out = append(out, fmt.Sprintf("%s %s%s", b.Type, b.ID, who))
		case b.Key != nil:
			out = append(out, fmt.Sprintf("key %s: %s", keyName(*b.Key), slots(b.Running)))
		case b.Tier != nil:
			out = append(out, fmt.Sprintf("tier %d: %s", *b.Tier, slots(b.Running)))
		default:
			out = append(out, fmt.Sprintf("group %s: %s", groupName(b.Group), slots(b.Running)))
		}
	}
	return strings.Join(out, ", ")
}

func slots(n int) string {
	if n == 1 {
		return "1 slot"
	}
	return fmt.Sprintf("%d slots", n)
}

// startsIn says when a pending job is expected to start, from now: "in
// ~3s", "in ≥ 2m" past the estimate's bound; "" without an estimate.
func startsIn(e *fairsched.StartEstimate, now time.Time) string {
	if e == nil {
		return ""
	}
	if e.Bounded {
		return "in ≥ " + short(e.At.Sub(now))
	}
	return "in ~" + short(max(e.At.Sub(now), 0))
}

// history lists the reasons a job has waited on, with how long ago each
// began: "conflict 12s ago → global_limit 3s ago".
func history(notes []fairsched.WaitNote, now time.Time) string {
	var out []string
	for _, n := range notes {
		out = append(out, fmt.Sprintf("%s %s ago", reasonLabel(n.Reason), short(now.Sub(n.Since))))
	}
	return strings.Join(out, " → ")
}
