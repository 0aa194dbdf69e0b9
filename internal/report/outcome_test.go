package report

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/scenario"
)

// TestPlayShowsProgress: a long run (here from 100 jobs) reports its
// progress on the writer given, every 500 steps and at the end; a short
// one says nothing.
func TestPlayShowsProgress(t *testing.T) {
	defer func(n int) { progressMin = n }(progressMin)
	progressMin = 100
	sc := scenario.Scenario{Name: "long", MaxConcurrency: 1,
		Types: []scenario.Type{{Name: "t", Config: fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}}}}
	for i := range 120 {
		sc.Jobs = append(sc.Jobs, scenario.Job{Type: "t", ID: fmt.Sprint(i), Arrival: i, Duration: 5})
	}
	var progress bytes.Buffer
	out, err := Play(sc, scenario.Poll, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if out.Failed() > 0 || out.Makespan != 600 {
		t.Errorf("checks %v, makespan %d", out.Checks, out.Makespan)
	}
	if got := progress.String(); got != "\rlong: T=0, 0 of 120 jobs ended\rlong: T=500, 100 of 120 jobs ended\rlong: T=600, 120 of 120 jobs ended\n" {
		t.Errorf("progress: %q", got)
	}
	progress.Reset()
	sc.Jobs = sc.Jobs[:10]
	if _, err := Play(sc, scenario.Poll, &progress); err != nil || progress.Len() != 0 {
		t.Errorf("short run: %v, progress %q", err, progress.String())
	}
}

// TestVerdict: the line says in words what the scenario shows and whether
// it held, then the figures; a failure names its first failed check.
func TestVerdict(t *testing.T) {
	o := Outcome{Report: Report{Name: "02-burst", Title: "Two clients burst", Jobs: 16, Makespan: 12, Jain: 1, JainOver: "keys",
		LongestWait: Wait{Job: "clone(a9)", Wait: 6}}, Checks: []string{"ok b1 starts at 4", "ok b2 starts at 4"}}
	want := "ok   02-burst: Two clients burst — held: 2 of 2 checks passed\n" +
		"       16 jobs in 12s; fairness 1.00 over keys; longest wait 6s (clone(a9))"
	if got := o.Verdict(); got != want {
		t.Errorf("verdict:\n%s\nwant:\n%s", got, want)
	}
	o.Checks[1] = "FAIL b2 started at 9, want 4"
	o.Aging, o.LongestWait.Bound = true, 7
	want = "FAIL 02-burst: Two clients burst — DID NOT HOLD: 1 of 2 checks failed\n" +
		"       16 jobs in 12s; fairness 1.00 over keys; longest wait 6s (clone(a9)) against an aging bound of 7s\n" +
		"       first failure: FAIL b2 started at 9, want 4"
	if got := o.Verdict(); got != want {
		t.Errorf("verdict:\n%s\nwant:\n%s", got, want)
	}
}
