package core

import (
	"github.com/fairsched/fairsched/queue"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/policy"
)

// TestResumeCountsAgainstEveryLimit: jobs a previous leader granted and
// that still run are resumed before anything else is dispatched; they
// hold the global cap and their conflict ids until they finish, even when
// they fill a cap past its size, and pending work starts only as they end.
func TestResumeCountsAgainstEveryLimit(t *testing.T) {
	l := policy.DefaultLimits()
	l.MaxConcurrency = 2
	c := New(l)
	if err := c.RegisterType("build", policy.JobTypeConfig{DefaultCost: ms(1), Priority: 8, ConflictGroup: "repo"}); err != nil {
		t.Fatal(err)
	}
	now := t0
	submit := func(id string) *Job {
		j := &Job{Job: queue.Job{Type: "build", ID: id, Key: "k"}}
		if err := c.Submit(now, j); err != nil {
			t.Fatal(err)
		}
		return j
	}
	// Three running elsewhere: one more than the cap.
	var resumed []*Job
	for _, id := range []string{"linux", "git", "go"} {
		j := submit(id)
		if !c.Resume(now, j) {
			t.Fatalf("%s not resumed", id)
		}
		resumed = append(resumed, j)
	}
	if c.Resume(now, resumed[0]) {
		t.Error("a running job resumed twice")
	}
	other := submit("rust")
	var log []string
	step := func(what string) {
		for _, j := range c.Dispatch(now, nil) {
			log = append(log, what+": admit "+j.ID)
		}
	}
	step("all three run")
	c.Finish(now, resumed[0])
	step("one of three ended") // two still run: the cap of 2 is full
	c.Finish(now, resumed[1])
	step("two ended")
	if diff := cmp.Diff([]string{"two ended: admit rust"}, log); diff != "" {
		t.Errorf("admissions (-want +got):\n%s", diff)
	}
	if other.Started.IsZero() {
		t.Error("rust never started")
	}
	// A resumed job holds its conflict id: a job on it waits for its end.
	submit("go-2")
	onGo := &Job{Job: queue.Job{Type: "build", ID: "go", Key: "k"}}
	if err := c.Submit(now, onGo); err != nil {
		t.Fatal(err)
	}
	c.Finish(now, other)
	if got := c.Dispatch(now, nil); len(got) != 1 || got[0].ID != "go-2" {
		t.Errorf("with go running elsewhere, dispatch admitted %v, want go-2 only", ids(got))
	}
	c.Finish(now, resumed[2])
	if got := c.Dispatch(now, nil); len(got) != 1 || got[0] != onGo {
		t.Errorf("once go ended, dispatch admitted %v, want go", ids(got))
	}
}

func ids(js []*Job) []string {
	var out []string
	for _, j := range js {
		out = append(out, j.ID)
	}
	return out
}
