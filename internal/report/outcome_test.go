package report

import (
	"bytes"
	"fmt"
	"strings"
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
// it held, then the figures; a failure names its first failed check; the
// fairness figure says between how many parties, or that none competed.
func TestVerdict(t *testing.T) {
	o := Outcome{Report: Report{Name: "02-burst", Title: "Two clients burst", Jobs: 16, Makespan: 12, Jain: 0.76, JainOver: "keys", JainParties: 2, JainFrom: 2, JainTo: 7,
		LongestWait: Wait{Job: "clone(a9)", Wait: 6}}, Checks: []string{"ok b1 starts at 4", "ok b2 starts at 4"}}
	want := "ok   02-burst: Two clients burst — held: 2 of 2 checks passed\n" +
		"       16 jobs in 12s; fairness 0.76 between 2 clients; longest wait 6s (clone(a9))"
	if got := o.Verdict(); got != want {
		t.Errorf("verdict:\n%s\nwant:\n%s", got, want)
	}
	o.Checks[1] = "FAIL b2 started at 9, want 4"
	o.Aging, o.LongestWait.Bound = true, 7
	o.Jain, o.JainOver, o.JainParties = 1, "groups", 1
	want = "FAIL 02-burst: Two clients burst — DID NOT HOLD: 1 of 2 checks failed\n" +
		"       16 jobs in 12s; fairness n/a (one group only); longest wait 6s (clone(a9)) against an aging bound of 7s\n" +
		"       first failure: FAIL b2 started at 9, want 4"
	if got := o.Verdict(); got != want {
		t.Errorf("verdict:\n%s\nwant:\n%s", got, want)
	}
	for _, c := range []struct {
		over              string
		parties, from, to int
		want              string
	}{
		{"tiers", 3, 0, 5, "; fairness 1.00 between 3 priority tiers; "},
		{"keys", 0, 0, 0, "; fairness n/a (no clients: background work only); "},
		{"keys", 6, 0, 0, "; fairness n/a (the 6 clients never all had work at once); "},
	} {
		o.JainOver, o.JainParties, o.JainFrom, o.JainTo = c.over, c.parties, c.from, c.to
		if got := o.Verdict(); !strings.Contains(got, c.want) {
			t.Errorf("verdict:\n%s\nwant it to contain %q", got, c.want)
		}
	}
}
