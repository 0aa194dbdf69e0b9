package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/benbjohnson/clock"

	"github.com/fairsched/fairsched/internal/scenario"
)

// Outcome is what the simulator reports of one scenario: the report and
// the checks (scenario.Check), each a line starting with "ok" or "FAIL".
type Outcome struct {
	Report
	Checks []string `json:"checks"`
	// Figures are the measurements a scenario states (scenario.Figures).
	Figures []string `json:"figures,omitempty"`
}

// progressMin is the number of jobs from which Play reports progress.
var progressMin = 1000

// Play runs sc on a mock clock with settle and builds its outcome; the CLI
// and the golden tests both go through it. progress, if not nil, receives a
// progress line every 500 steps, and at the end, of a run of 1,000 jobs or
// more.
func Play(sc scenario.Scenario, settle scenario.Settler, progress io.Writer) (Outcome, error) {
	if progress != nil && len(sc.Jobs) >= progressMin {
		sc.Progress = func(step, ended, total int) {
			if step%500 == 0 || ended == total {
				fmt.Fprintf(progress, "\r%s: T=%d, %d of %d jobs ended", sc.Name, step, ended, total)
				if ended == total {
					fmt.Fprintln(progress)
				}
			}
		}
	}
	res, err := scenario.Run(sc, clock.NewMock(), settle)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Report: Build(sc, res), Checks: scenario.Check(sc, res), Figures: scenario.Figures(sc, res)}, nil
}

// Failed returns the number of checks that failed.
func (o Outcome) Failed() int {
	n := 0
	for _, c := range o.Checks {
		if !strings.HasPrefix(c, "ok") {
			n++
		}
	}
	return n
}

// Text writes the report, then the checks.
func (o Outcome) Text(w io.Writer) error {
	if err := o.Report.Text(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nchecks:\n  %s\n", strings.Join(o.Checks, "\n  "))
	return err
}

// Verdict is the scenario in two lines for someone who has not read it:
// what it shows and whether that held, in words, then the figures a
// reader checks first (and the first check that failed, if one did).
func (o Outcome) Verdict() string {
	failed := o.Failed()
	held := fmt.Sprintf("held: %d of %d checks passed", len(o.Checks), len(o.Checks))
	verdict := "ok  "
	if failed > 0 {
		verdict = "FAIL"
		held = fmt.Sprintf("DID NOT HOLD: %d of %d checks failed", failed, len(o.Checks))
	}
	if len(o.Checks) == 0 {
		held = "ran (no checks)"
	}
	wait := fmt.Sprintf("longest wait %ds (%s)", o.LongestWait.Wait, o.LongestWait.Job)
	if o.Aging {
		wait += fmt.Sprintf(" against an aging bound of %ds", o.LongestWait.Bound)
	}
	line := fmt.Sprintf("%s %s: %s — %s\n       %d jobs in %ds; %s; %s",
		verdict, o.Name, o.Title, held, o.Jobs, o.Makespan, o.fairness(), wait)
	for _, f := range o.Figures {
		line += "\n       " + f
	}
	for _, c := range o.Checks {
		if !strings.HasPrefix(c, "ok") {
			line += "\n       first failure: " + c
			break
		}
	}
	return line
}
