package core

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/policy"
)

// TestOwnerSlotsBoundDispatch: with the owner's free slots bounded,
// Dispatch admits that many of the jobs that take one, in the fair order,
// and stops at the best job while none is free — the jobs behind it wait
// too — until SetOwnerSlots frees one, which it reports; a job that takes
// no slot is admitted whatever the bound when it is the best; a pending
// job held by the bound says no_free_slot; a negative bound removes it.
func TestOwnerSlotsBoundDispatch(t *testing.T) {
	c := newCore(t, 0, typeDef{"work", policy.JobTypeConfig{Priority: 8, DefaultCost: ms(1)}},
		typeDef{"call", policy.JobTypeConfig{Priority: 16, DefaultCost: ms(1)}})
	free := func(j *Job) bool { return j.ID[0] != 's' } // "s…": runs in its caller, takes no slot
	if c.SetOwnerSlots(2, free) {
		t.Fatal("a first bound reported slots freed")
	}
	for i, k := range []string{"a", "a", "a", "b", "b"} {
		submit(t, c, at(i), "work", k+string(rune('0'+i)), k)
	}
	wantDispatch(t, c, at(10), "work/a0@a", "work/b3@b")
	wantDispatch(t, c, at(11))
	got := reasons(c, at(11))
	slices.Sort(got)
	if diff := cmp.Diff([]string{"work/a1@a no_free_slot", "work/a2@a no_free_slot", "work/b4@b no_free_slot"}, got); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	submit(t, c, at(12), "call", "s5", "c") // the higher tier: the best
	wantDispatch(t, c, at(13), "call/s5@c")
	if !c.SetOwnerSlots(1, free) {
		t.Error("a slot freed after the bound was reached was not reported")
	}
	if c.SetOwnerSlots(3, free) {
		t.Error("more slots with some free already were reported freed")
	}
	c.SetOwnerSlots(1, free)
	wantDispatch(t, c, at(14), "work/a1@a")
	if !c.SetOwnerSlots(-1, nil) {
		t.Error("removing a reached bound was not reported")
	}
	wantDispatch(t, c, at(15), "work/b4@b", "work/a2@a")
}
