package scenario_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/scenario"
	"github.com/fairsched/fairsched/policy"
)

// fuzzBroken are malformed scenario files, seeds for FuzzParse next to the
// repository's own files.
var fuzzBroken = []string{
	"",
	"name: [",
	"types:\n\t- {name: a}\n",
	"types: []\n---\nname: second\n",
	"nosuch: 1\ntypes:\n  - {name: a, priority: 1, default_cost: 1s, colour: red}\n",
	"types:\n  - {name: a, priority: x, default_cost: 1s}\njobs:\n  - {type: a, id: j, duration: 1}\n",
	"types:\n  - {name: a, priority: 0, default_cost: -1s}\n  - {name: a, priority: 1, default_cost: 1s}\njobs:\n  - {type: b, id: '', at: -1, duration: 0}\n",
	"scheduler:\n  aging: {grace: 1s}\n  scoring: {age_weight: -1}\n  groups: {weights: {A: 0}}\ntypes:\n  - {name: a, priority: 1, default_cost: 1s}\njobs:\n  - {type: a, id: j, duration: 1}\n",
	"types:\n  - {name: w, priority: 2, default_cost: 1s, requires_worker: true}\n  - {name: a, priority: 1, default_cost: 1s}\nworkers:\n  - {id: w1, slots: [[w], [a], []]}\n  - {id: w1, slots: []}\njobs:\n  - {type: w, id: j, duration: 1}\n",
	"types:\n  - {name: a, priority: 0, default_cost: 1s}\njobs:\n  - {type: a, id: j, duration: 1}\nscheduler: {priority_mode: order_only, tiers: {0: {max_running: 0}, 1: {max_running: 2, min_share: 0.5}}}\n",
	"types:\n  - {name: a, priority: 1, default_cost: 1s}\ngenerators:\n  - {type: a, count: 3, every: 2, spread: 4, duration: {min: 3, max: 1}, id: 'x'}\nexpect:\n  - {job: a(zz), start: 1}\n",
}

// Inputs that once broke a property are kept as
// testdata/fuzz/FuzzParse/regress-*: every go test replays them.

// fuzzErrRE is the form of every error Parse returns for file f.yaml: the
// file, a line (from 1) and the message.
var fuzzErrRE = regexp.MustCompile(`^f\.yaml:[1-9][0-9]*: `)

// fuzzCmpOpts compare two parsed scenarios: the options are functions,
// compared by count instead.
var fuzzCmpOpts = cmpopts.IgnoreFields(scenario.Scenario{}, "Options")

func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("../../testdata/scenarios/*.yaml")
	if err != nil || len(files) == 0 {
		f.Fatalf("no scenario files to seed with: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range fuzzBroken {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := scenario.Parse("f.yaml", data)
		if err != nil {
			fuzzCheckParseError(t, err)
			_, again := scenario.Parse("f.yaml", data)
			if again == nil || again.Error() != err.Error() {
				t.Fatalf("Parse is not deterministic: error %q, then %v", err, again)
			}
			return
		}
		fuzzCheckScenario(t, sc)
		again, err := scenario.Parse("f.yaml", data)
		if err != nil {
			t.Fatalf("second Parse failed: %v", err)
		}
		if diff := cmp.Diff(sc, again, fuzzCmpOpts); diff != "" || len(sc.Options) != len(again.Options) {
			t.Fatalf("Parse is not deterministic (options %d vs %d):\n%s", len(sc.Options), len(again.Options), diff)
		}
		fuzzCheckScheduler(t, sc)
	})
}

// fuzzCheckParseError checks that every error names the file and a line.
func fuzzCheckParseError(t *testing.T, err error) {
	t.Helper()
	if !fuzzErrRE.MatchString(err.Error()) {
		t.Fatalf("error %q does not start with f.yaml:<line>:", err)
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var fe *scenario.FileError
		if !errors.As(e, &fe) {
			t.Fatalf("error %q (%T) is not a *FileError", e, e)
		}
		if fe.File != "f.yaml" || fe.Line < 1 {
			t.Fatalf("error %q: file %q, line %d", e, fe.File, fe.Line)
		}
	}
}

// fuzzCheckScenario checks that a parsed scenario is consistent.
func fuzzCheckScenario(t *testing.T, sc scenario.Scenario) {
	t.Helper()
	if sc.Name == "" {
		t.Fatal("scenario without a name")
	}
	if sc.MaxConcurrency < 0 {
		t.Fatalf("MaxConcurrency %d", sc.MaxConcurrency)
	}
	if a := sc.Aging; a != nil {
		if err := a.Validate(); err != nil {
			t.Fatalf("aging %+v: %v", *a, err)
		}
	}
	if s := sc.Scoring; s != nil {
		if err := s.Validate(); err != nil {
			t.Fatalf("scoring %+v: %v", *s, err)
		}
	}
	if len(sc.Types) == 0 {
		t.Fatal("no types")
	}
	types := map[fairsched.JobType]fairsched.JobTypeConfig{}
	for _, ty := range sc.Types {
		if _, dup := types[ty.Name]; dup {
			t.Fatalf("type %q declared twice", ty.Name)
		}
		l := policy.DefaultLimits() // the priority mode and scoring decide whether priority 0 is valid
		if sc.OrderOnly {
			l.PriorityMode = policy.PriorityOrderOnly
		}
		l.Scoring = sc.Scoring
		if err := ty.Config.ValidateFor(ty.Name, l); err != nil {
			t.Fatalf("type %q: %v", ty.Name, err)
		}
		types[ty.Name] = ty.Config
	}
	workers := map[string]bool{}
	for _, w := range sc.Workers {
		if w.ID == "" || workers[w.ID] {
			t.Fatalf("worker id %q empty or twice", w.ID)
		}
		workers[w.ID] = true
		if len(w.Slots) == 0 {
			t.Fatalf("worker %q without slots", w.ID)
		}
		for i, slot := range w.Slots {
			if len(slot.Types) == 0 {
				t.Fatalf("worker %q slot %d takes no type", w.ID, i)
			}
			for _, ty := range slot.Types {
				cfg, ok := types[ty]
				if !ok || !cfg.RequiresWorker {
					t.Fatalf("worker %q slot %d: type %q declared %v, requires a worker %v", w.ID, i, ty, ok, cfg.RequiresWorker)
				}
			}
		}
	}
	if len(sc.Jobs) == 0 {
		t.Fatal("no jobs")
	}
	names := map[string]bool{}
	for _, j := range sc.Jobs {
		if _, ok := types[j.Type]; !ok {
			t.Fatalf("job %s: type %q not declared", j.Name(), j.Type)
		}
		if j.ID == "" {
			t.Fatalf("job %s: empty id", j.Name())
		}
		if j.Duration < 1 || j.Arrival < 0 {
			t.Fatalf("job %s: arrival %d, duration %d", j.Name(), j.Arrival, j.Duration)
		}
		if names[j.Name()] {
			t.Fatalf("job %s twice", j.Name())
		}
		names[j.Name()] = true
	}
	for _, e := range sc.Expect {
		if e.HasRunning {
			if e.At < 0 || e.Running < 0 {
				t.Fatalf("expectation %+v", e)
			}
			continue
		}
		if !names[e.Job] || e.Start < 0 || e.StartBy < 0 || !e.HasStart && !e.HasBy && e.Slot == "" {
			t.Fatalf("expectation %+v", e)
		}
	}
}

// fuzzCheckScheduler checks that the scheduler takes what Parse accepted:
// its options, types and workers, as Run hands them over.
func fuzzCheckScheduler(t *testing.T, sc scenario.Scenario) {
	t.Helper()
	s, err := fairsched.New(sc.SchedulerOptions(fairsched.WithClock(clock.NewMock()))...)
	if err != nil {
		t.Fatalf("Parse accepted a scheduler New rejects: %v", err)
	}
	defer func() {
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}()
	for _, ty := range sc.Types {
		if err := s.RegisterType(ty.Name, ty.Config); err != nil {
			t.Fatalf("Parse accepted a type RegisterType rejects: %v", err)
		}
	}
	for _, w := range sc.Workers {
		if err := s.RegisterWorker(w); err != nil {
			t.Fatalf("Parse accepted a worker RegisterWorker rejects: %v", err)
		}
	}
}
