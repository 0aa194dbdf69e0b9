package fairsched_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/boltstore"
	"github.com/fairsched/fairsched/pgstore"
	"github.com/fairsched/fairsched/policy"
)

// badNames are the three ways a caller string breaks the rule: a NUL byte,
// invalid UTF-8, one byte over the bound.
var badNames = map[string]string{
	"NUL":       "bad\x00name",
	"not UTF-8": "bad\xffname",
	"too long":  strings.Repeat("n", policy.MaxNameLen+1),
}

// TestCallerStringsRefusedAtEveryEntryPoint: every call that takes a name
// refuses one that breaks the rule, at the call, with the sentinel of its
// kind (ErrInvalidJob for a job's, ErrInvalidConfig for a configuration's)
// and the field named; nothing is queued, nothing written to the store.
func TestCallerStringsRefusedAtEveryEntryPoint(t *testing.T) {
	ctx := context.Background()
	nop := func(context.Context) error { return nil }
	type entry struct {
		name, field string
		sentinel    error
		call        func(s *fairsched.Scheduler, bad string) error
	}
	entries := []entry{
		{"RunSync type", "job type", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error {
			return s.RunSync(ctx, fairsched.JobType(b), "id", "k", nop)
		}},
		{"RunSync id", "job id", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error { return s.RunSync(ctx, "t", b, "k", nop) }},
		{"RunSync key", "fairness key", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error { return s.RunSync(ctx, "t", "id", b, nop) }},
		{"RunSync WithFairnessKey", "fairness key", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error {
			return s.RunSync(ctx, "t", "id", "k", nop, fairsched.WithFairnessKey(b))
		}},
		{"RunSync InGroup", "group", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error {
			return s.RunSync(ctx, "t", "id", "k", nop, fairsched.InGroup(b))
		}},
		{"Submit type", "job type", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error { return s.Submit(fairsched.JobType(b), "id", nop) }},
		{"Submit id", "job id", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error { return s.Submit("t", b, nop) }},
		{"Submit key", "fairness key", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error {
			return s.Submit("t", "id", nop, fairsched.WithFairnessKey(b))
		}},
		{"Submit group", "group", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error { return s.Submit("t", "id", nop, fairsched.InGroup(b)) }},
		{"SubmitPeriodic id", "job id", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error {
			stop, err := s.SubmitPeriodic("t", b, time.Hour, nop)
			if stop != nil {
				stop()
			}
			return err
		}},
		{"SubmitPeriodic group", "group", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error {
			stop, err := s.SubmitPeriodic("t", "id", time.Hour, nop, fairsched.InGroup(b))
			if stop != nil {
				stop()
			}
			return err
		}},
		{"SubmitMany id", "job id", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error {
			return s.SubmitMany([]fairsched.Submission{{Type: "t", ID: "ok", Fn: nop}, {Type: "t", ID: b, Fn: nop}})
		}},
		{"SubmitMany key", "fairness key", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error {
			return s.SubmitMany([]fairsched.Submission{{Type: "t", ID: "ok", Fn: nop}, {Type: "t", ID: "id", Fn: nop, Options: []fairsched.JobOption{fairsched.WithFairnessKey(b)}}})
		}},
		{"Enqueue type", "job type", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error { return s.Enqueue(ctx, fairsched.JobType(b), "id", nil) }},
		{"Enqueue id", "job id", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error { return s.Enqueue(ctx, "d", b, nil) }},
		{"Enqueue key", "fairness key", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error {
			return s.Enqueue(ctx, "d", "id", nil, fairsched.WithFairnessKey(b))
		}},
		{"Enqueue group", "group", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error {
			return s.Enqueue(ctx, "d", "id", nil, fairsched.InGroup(b))
		}},
		{"EnqueueMany id", "job id", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error {
			return s.EnqueueMany(ctx, []fairsched.Enqueueing{{Type: "d", ID: "ok"}, {Type: "d", ID: b}})
		}},
		{"EnqueueMany group", "group", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error {
			return s.EnqueueMany(ctx, []fairsched.Enqueueing{{Type: "d", ID: "ok"}, {Type: "d", ID: "id", Options: []fairsched.JobOption{fairsched.InGroup(b)}}})
		}},
		{"Cancel type", "job type", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error {
			_, err := s.Cancel(ctx, fairsched.JobType(b), "id")
			return err
		}},
		{"Cancel id", "job id", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error { _, err := s.Cancel(ctx, "t", b); return err }},
		{"RequeueDead id", "job id", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error { _, err := s.RequeueDead(ctx, "d", b); return err }},
		{"DeleteDead type", "job type", fairsched.ErrInvalidJob, func(s *fairsched.Scheduler, b string) error {
			_, err := s.DeleteDead(ctx, fairsched.JobType(b), "")
			return err
		}},
		{"RegisterType type", "JobType", fairsched.ErrInvalidConfig, func(s *fairsched.Scheduler, b string) error {
			return s.RegisterType(fairsched.JobType(b), fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1})
		}},
		{"RegisterType conflict group", "ConflictGroup", fairsched.ErrInvalidConfig, func(s *fairsched.Scheduler, b string) error {
			return s.RegisterType("c", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1, ConflictGroup: fairsched.ConflictGroup(b)})
		}},
		{"RegisterWorker id", "WorkerSpec.ID", fairsched.ErrInvalidConfig, func(s *fairsched.Scheduler, b string) error {
			return s.RegisterWorker(fairsched.WorkerSpec{ID: b, Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{"w"}}}})
		}},
		{"PauseGroup", "group", fairsched.ErrInvalidConfig, func(s *fairsched.Scheduler, b string) error { return s.PauseGroup(b) }},
		{"ResumeGroup", "group", fairsched.ErrInvalidConfig, func(s *fairsched.Scheduler, b string) error { return s.ResumeGroup(b) }},
		{"SetGroupWeight", "group", fairsched.ErrInvalidConfig, func(s *fairsched.Scheduler, b string) error { return s.SetGroupWeight(b, 2) }},
		{"SetKeyWeight", "key", fairsched.ErrInvalidConfig, func(s *fairsched.Scheduler, b string) error { return s.SetKeyWeight(b, 2) }},
		{"SetKeyWeight 0", "key", fairsched.ErrInvalidConfig, func(s *fairsched.Scheduler, b string) error { return s.SetKeyWeight(b, 0) }},
	}
	for _, e := range entries {
		for kind, bad := range badNames {
			t.Run(e.name+"/"+kind, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "jobs.db")
				st := durableStore(t, path)
				s, err := fairsched.New(fairsched.WithStore(st), fairsched.WithMaxConcurrency(4),
					fairsched.WithGroupWeight("g", 1))
				if err != nil {
					t.Fatal(err)
				}
				for _, ty := range []fairsched.JobType{"t", "d"} {
					if err := s.RegisterType(ty, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.RegisterType("w", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1, RequiresWorker: true}); err != nil {
					t.Fatal(err)
				}
				// No handler: an Enqueue that got through would stay queued.
				err = e.call(s, bad)
				if !errors.Is(err, e.sentinel) || !strings.Contains(err.Error(), e.field) {
					t.Errorf("err = %v; want %v naming %q", err, e.sentinel, e.field)
				}
				if err != nil && (strings.IndexByte(err.Error(), 0) >= 0 || len(err.Error()) > 600) {
					t.Errorf("the error's text carries the bad name raw: %q", err.Error()[:min(len(err.Error()), 100)])
				}
				snap, err := s.Snapshot(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if snap.PendingTotal != 0 || len(snap.Running) != 0 {
					t.Errorf("queued: %d pending, %d running", snap.PendingTotal, len(snap.Running))
				}
				if err := s.Close(ctx); err != nil {
					t.Fatal(err)
				}
				n := 0
				if err := st.LoadJobs(func(fairsched.JobRecord) error { n++; return nil }); err != nil || n != 0 {
					t.Errorf("the store holds %d records (%v); want none", n, err)
				}
			})
		}
	}
}

// TestConfigNamesRefusedByNew: names in the configuration — groups,
// fairness keys with limits or weights, rate-limit scopes, a cluster's
// domain and instance — follow the rule too: New fails with
// ErrInvalidConfig naming the field.
func TestConfigNamesRefusedByNew(t *testing.T) {
	for _, tc := range []struct {
		name, field string
		opt         func(bad string) fairsched.Option
	}{
		{"WithGroupWeight", "group", func(b string) fairsched.Option { return fairsched.WithGroupWeight(b, 2) }},
		{"WithGroupLimit", "group", func(b string) fairsched.Option { return fairsched.WithGroupLimit(b, 2) }},
		{"WithGroupMinSlots", "group", func(b string) fairsched.Option { return fairsched.WithGroupMinSlots(b, 1) }},
		{"WithKeyLimits", "KeyLimits", func(b string) fairsched.Option {
			return fairsched.WithKeyLimits(b, fairsched.TenantLimits{MaxPending: 1})
		}},
		{"WithKeyWeight", "KeyWeight", func(b string) fairsched.Option { return fairsched.WithKeyWeight(b, 2) }},
		{"WithTenantWeight", "TenantWeight", func(b string) fairsched.Option { return fairsched.WithTenantWeight(b, 2) }},
		{"WithRateLimit key", "RateLimit", func(b string) fairsched.Option {
			return fairsched.WithRateLimit(fairsched.RateForKey(b), 1, 1)
		}},
		{"WithRateLimit type", "RateLimit", func(b string) fairsched.Option {
			return fairsched.WithRateLimit(fairsched.RateForType(fairsched.JobType(b)), 1, 1)
		}},
		{"ClusterConfig.Domain", "Domain", func(b string) fairsched.Option {
			return fairsched.WithCluster((*pgstore.Store)(nil), fairsched.ClusterConfig{Domain: b, Instance: "a"}) // refused before any use
		}},
		{"ClusterConfig.Instance", "Instance", func(b string) fairsched.Option {
			return fairsched.WithCluster((*pgstore.Store)(nil), fairsched.ClusterConfig{Domain: "d", Instance: b})
		}},
	} {
		for kind, bad := range badNames {
			_, err := fairsched.New(fairsched.WithMaxConcurrency(4), tc.opt(bad))
			if !errors.Is(err, fairsched.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("%s/%s: New = %v; want ErrInvalidConfig naming %q", tc.name, kind, err, tc.field)
			}
		}
	}
}

// TestBoltKeepsNamesExactly: with bbolt, ids "\xff" and "\xfe" and key
// "key\xff" — which JSON would turn into one "\uFFFD" each — are refused
// at the call; valid names of any script come back after a restart
// byte for byte.
func TestBoltKeepsNamesExactly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "jobs.db")
	open := func() (*fairsched.Scheduler, *boltstore.Store) {
		st, err := boltstore.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := fairsched.New(fairsched.WithStore(st))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType("d", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		return s, st
	}
	s, st := open()
	for _, tc := range []struct{ id, key, field string }{
		{"\xff", "k", "job id"},
		{"\xfe", "k", "job id"},
		{"ok", "key\xff", "fairness key"},
	} {
		err := s.Enqueue(ctx, "d", tc.id, nil, fairsched.WithFairnessKey(tc.key))
		if !errors.Is(err, fairsched.ErrInvalidJob) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("Enqueue(%q, key %q) = %v; want ErrInvalidJob naming %q", tc.id, tc.key, err, tc.field)
		}
	}
	kept := map[string]string{"ключ": "ключ-日本", "\u00e9\u0301": "key\ufffd", strings.Repeat("x", policy.MaxNameLen): strings.Repeat("é", policy.MaxNameLen/2)}
	for id, key := range kept {
		if err := s.Enqueue(ctx, "d", id, nil, fairsched.WithFairnessKey(key)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()
	s, st = open()
	defer st.Close()
	defer s.Close(ctx)
	got := map[string]string{}
	if err := st.LoadJobs(func(r fairsched.JobRecord) error { got[r.ID] = r.Key; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(kept) {
		t.Errorf("after a restart the store holds %d jobs; want %d", len(got), len(kept))
	}
	for id, key := range kept {
		if got[id] != key {
			t.Errorf("job %q came back with key %q; want %q", id[:min(len(id), 10)], got[id], key)
		}
	}
}
