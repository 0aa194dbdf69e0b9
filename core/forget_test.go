package core

import (
	"fmt"
	"github.com/fairsched/fairsched/queue"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/policy"
)

// TestIdleGroupsAreForgotten: 20 000 distinct group names, each used by one
// job, leave no record behind once their jobs end (run, withdrawn or
// expired) — only the configured group and a paused one stay — so
// reallocation walks the groups with work, not every name ever seen.
func TestIdleGroupsAreForgotten(t *testing.T) {
	l := policy.DefaultLimits()
	l.MaxConcurrency = 4
	l.Groups = &policy.GroupsConfig{DefaultWeight: 1, Groups: map[string]policy.GroupConfig{"configured": {Weight: 2}}}
	c := New(l)
	if err := c.RegisterType("t", policy.JobTypeConfig{DefaultCost: ms(1), Priority: 8, QueueTimeout: time.Second}); err != nil {
		t.Fatal(err)
	}
	now := t0
	for i := range 20_000 {
		j := &Job{Job: queue.Job{Type: "t", ID: fmt.Sprint(i)}, Group: fmt.Sprint("g", i)}
		if err := c.Submit(now, j); err != nil {
			t.Fatal(err)
		}
		switch i % 3 {
		case 0: // runs
			for _, r := range c.Dispatch(now, nil) {
				c.Finish(now, r)
			}
		case 1: // withdrawn
			c.Withdraw(now, j)
		case 2: // expires
			now = now.Add(2 * time.Second)
			c.Advance(now)
		}
	}
	if err := c.PauseGroup(now, "paused"); err != nil {
		t.Fatal(err)
	}
	submit := &Job{Job: queue.Job{Type: "t", ID: "c"}, Group: "configured"}
	if err := c.Submit(now, submit); err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Dispatch(now, nil) {
		c.Finish(now, r)
	}
	c.Evict(now)
	var got []string
	for name := range c.groups {
		got = append(got, name)
	}
	slices.Sort(got)
	if diff := cmp.Diff([]string{"configured", "paused"}, got); diff != "" {
		t.Errorf("groups kept (-want +got):\n%s", diff)
	}
	if n := c.queue.GroupCount(); n != 2 {
		t.Errorf("the queue keeps %d group records", n)
	}
}
