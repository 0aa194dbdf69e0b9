package queue

import (
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/policy"
)

// TestBestOfSeesHeldLanes: BestOf finds the next job of a tier whether or
// not the tier is blocked, its held lanes included once their group may
// run more; Best, which admits, sees neither while the tier is blocked.
// (With tier shares a full global cap blocks every tier, and a preempting
// tier's job its group had held must still be found.)
func TestBestOfSeesHeldLanes(t *testing.T) {
	f := newFixture(map[policy.JobType]policy.Priority{"fg": 40, "bg": 10})
	room := false
	f.q.SetRoom(func(*Group) bool { return room })
	g := f.q.Group("g")
	f.seq++
	held := named(&Job{Type: "fg", ID: "1", Key: "a", Seq: f.seq, Group: g}, "fg/1/a (held)")
	f.q.Push(held, 0)
	f.q.Hold(held) // g runs its allocation
	f.q.BlockTier(40, true)
	bestOf := func() string {
		if j := f.q.BestOf(40); j != nil {
			return ref(j).(string)
		}
		return "nil"
	}
	got := map[string]string{"held, no room": bestOf()}
	room = true
	f.q.ReleaseGroup(g)
	got["room, tier blocked"] = bestOf()
	if j := f.q.Best(); j != nil {
		t.Errorf("tier 40 blocked: Best = %v, want nil", ref(j))
	}
	f.q.BlockTier(40, false)
	got["room, tier open"] = bestOf()
	want := map[string]string{"held, no room": "nil", "room, tier blocked": "fg/1/a (held)", "room, tier open": "fg/1/a (held)"}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("BestOf(40) (-want +got):\n%s", diff)
	}
}
