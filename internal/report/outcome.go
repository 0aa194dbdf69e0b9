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
	return Outcome{Report: Build(sc, res), Checks: scenario.Check(sc, res)}, nil
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

// Verdict is the scenario in one line: passed or not, and the figures a
// reader checks first.
func (o Outcome) Verdict() string {
	verdict, failed := "ok  ", o.Failed()
	if failed > 0 {
		verdict = "FAIL"
	}
	wait := fmt.Sprintf("longest wait %ds (%s)", o.LongestWait.Wait, o.LongestWait.Job)
	if o.Aging {
		wait += fmt.Sprintf(", aging bound %ds", o.LongestWait.Bound)
	}
	return fmt.Sprintf("%s %-28s %4d jobs, makespan %4ds, Jain %.3f, %s, %d/%d checks ok",
		verdict, o.Name, o.Jobs, o.Makespan, o.Jain, wait, len(o.Checks)-failed, len(o.Checks))
}
