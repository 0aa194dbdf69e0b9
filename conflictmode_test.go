package fairsched_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
)

// span is one job's run in a timeline: seconds from the start.
type span struct {
	Job        string
	Start, End int
}

// runTimeline submits each job at its time (seconds from the start) in
// virtual time (a probe is called instead) and returns every run, sorted by start then name, once all
// have ended. Each job sleeps for its duration.
func runTimeline(t *testing.T, s *fairsched.Scheduler, jobs []timedJob) []span {
	t.Helper()
	start := time.Now()
	spans := make(chan span, len(jobs))
	for _, j := range jobs {
		time.Sleep(start.Add(time.Duration(j.at) * time.Second).Sub(time.Now()))
		if j.probe != nil {
			synctest.Wait() // what is due at this time has happened
			j.probe()
			continue
		}
		name := string(j.typ) + "/" + j.id + "#" + j.tag
		fn := func(ctx context.Context) error {
			began := time.Now()
			time.Sleep(time.Duration(j.dur) * time.Second)
			spans <- span{name, int(began.Sub(start) / time.Second), int(time.Since(start) / time.Second)}
			return nil
		}
		if err := s.Submit(j.typ, j.id, fn, j.opts...); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(context.Background()); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("Close: %v", err)
	}
	close(spans)
	var out []span
	for sp := range spans {
		out = append(out, sp)
	}
	sortSpans(out)
	return out
}

type timedJob struct {
	at      int // seconds
	typ     fairsched.JobType
	id, tag string
	dur     int // seconds
	opts    []fairsched.JobOption
	probe   func() // instead of a job: called at its time
}

func sortSpans(s []span) {
	for i := 1; i < len(s); i++ {
		for k := i; k > 0 && (s[k].Start < s[k-1].Start || s[k].Start == s[k-1].Start && s[k].Job < s[k-1].Job); k-- {
			s[k], s[k-1] = s[k-1], s[k]
		}
	}
}

// gitTypes is a git proxy's registration: clones of one repository share it,
// a repack has it alone.
func gitTypes(t *testing.T, s *fairsched.Scheduler, cloneMode fairsched.ConflictMode) {
	t.Helper()
	for typ, cfg := range map[fairsched.JobType]fairsched.JobTypeConfig{
		"clone":  {DefaultCost: 10 * time.Second, Priority: 8, ConflictGroup: "repo", ConflictMode: cloneMode},
		"repack": {DefaultCost: 20 * time.Second, Priority: 8, ConflictGroup: "repo"},
	} {
		if err := s.RegisterType(typ, cfg); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSharedClonesRunTogether: four clones of one repository run together
// when clones are shared, one at a time when they are exclusive (the zero
// mode, spec 1's rule) — 10 s against 40 s.
func TestSharedClonesRunTogether(t *testing.T) {
	clones := []timedJob{
		{at: 0, typ: "clone", id: "linux", tag: "1", dur: 10},
		{at: 0, typ: "clone", id: "linux", tag: "2", dur: 10},
		{at: 0, typ: "clone", id: "linux", tag: "3", dur: 10},
		{at: 0, typ: "clone", id: "linux", tag: "4", dur: 10},
	}
	for _, tc := range []struct {
		mode fairsched.ConflictMode
		want []span
	}{
		{fairsched.ConflictShared, []span{
			{"clone/linux#1", 0, 10}, {"clone/linux#2", 0, 10}, {"clone/linux#3", 0, 10}, {"clone/linux#4", 0, 10},
		}},
		{fairsched.ConflictExclusive, []span{
			{"clone/linux#1", 0, 10}, {"clone/linux#2", 10, 20}, {"clone/linux#3", 20, 30}, {"clone/linux#4", 30, 40},
		}},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, err := fairsched.New(fairsched.WithMaxConcurrency(8))
				if err != nil {
					t.Fatal(err)
				}
				gitTypes(t, s, tc.mode)
				if diff := cmp.Diff(tc.want, runTimeline(t, s, clones)); diff != "" {
					t.Errorf("timeline (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// TestExclusiveJobIsNotStarvedByShared: a repack of linux arrives while
// clones of it run; clones of linux that arrive after it wait behind it
// (writer preference) even though clones could share the repository, while
// a clone of another repository starts at once. Without the preference the
// stream of clones, one every 5 s, would keep linux busy and the repack
// waiting until the stream ends.
func TestExclusiveJobIsNotStarvedByShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New(fairsched.WithMaxConcurrency(8))
		if err != nil {
			t.Fatal(err)
		}
		gitTypes(t, s, fairsched.ConflictShared)
		jobs := []timedJob{
			{at: 0, typ: "clone", id: "linux", tag: "a", dur: 10},
			{at: 2, typ: "repack", id: "linux", tag: "r", dur: 20},
			{at: 5, typ: "clone", id: "linux", tag: "b", dur: 10},
			{at: 6, typ: "clone", id: "git", tag: "c", dur: 10},
			{at: 10, typ: "clone", id: "linux", tag: "d", dur: 10},
			{at: 15, typ: "clone", id: "linux", tag: "e", dur: 10},
		}
		var reasons []fairsched.Reason
		jobs = append(jobs[:4:4], append([]timedJob{{at: 7, probe: func() {
			for _, p := range snapshot(t, s).Pending {
				reasons = append(reasons, p.Reason)
			}
		}}}, jobs[4:]...)...)
		got := runTimeline(t, s, jobs)
		want := []span{
			{"clone/linux#a", 0, 10},
			{"clone/git#c", 6, 16},
			{"repack/linux#r", 10, 30}, // linux idle at 10: the repack goes first
			{"clone/linux#b", 30, 40},  // arrived after the repack: behind it
			{"clone/linux#d", 30, 40},
			{"clone/linux#e", 30, 40},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("timeline (-want +got):\n%s", diff)
		}
		// At 7 s the repack and clone b wait, both on the conflict.
		if diff := cmp.Diff([]fairsched.Reason{fairsched.ReasonConflict, fairsched.ReasonConflict}, reasons); diff != "" {
			t.Errorf("reasons at 7 s (-want +got):\n%s", diff)
		}
	})
}

// TestConflictModeValidation: a shared type needs a conflict group, and an
// unknown mode is refused, both with ErrInvalidConfig.
func TestConflictModeValidation(t *testing.T) {
	s, err := fairsched.New()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	for name, cfg := range map[string]fairsched.JobTypeConfig{
		"shared-without-group": {DefaultCost: time.Second, Priority: 1, ConflictMode: fairsched.ConflictShared},
		"unknown-mode":         {DefaultCost: time.Second, Priority: 1, ConflictGroup: "g", ConflictMode: 7},
	} {
		if err := s.RegisterType(fairsched.JobType(name), cfg); !errors.Is(err, fairsched.ErrInvalidConfig) {
			t.Errorf("%s: RegisterType = %v; want ErrInvalidConfig", name, err)
		}
	}
}
