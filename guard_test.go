package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/boltstore"
	"github.com/fairsched/fairsched/internal/pgtest"
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

// FuzzCallerStrings feeds random bytes as every caller string — job type,
// id, fairness key, group, conflict group, worker id — and as a durable
// handler's error text, through the public API, on bbolt and, when a
// PostgreSQL is available, on pgstore. Each call either takes its input or
// refuses it at once with the sentinel of its kind — taken exactly when
// every name follows the rule — and then: nothing panics, every call
// returns, every job taken ends, Close returns; after a restart on the
// same store every job taken is there as it was (ids, keys and groups
// byte for byte) or ended: run, or dead with a clean error text.
func FuzzCallerStrings(f *testing.F) {
	long := strings.Repeat("n", policy.MaxNameLen)
	f.Add("mail", "\xff", "key\xff", "", "", "w1", "bad\x00byte")
	f.Add("mail", "\xfe", "k", "g", "repo", "w1", "bad\xff\xfebytes")
	f.Add("mail", strings.Repeat("i", 8000), "k", "", "repo", "w", strings.Repeat("e", 100_000))
	f.Add(long, strings.Repeat("é", policy.MaxNameLen/2), long, long, long, long, "ok")
	f.Add(long+"x", "id", "k", "g", "c", "w", "")
	f.Add("t", "id", "", "", "", "", "")
	f.Add("t\x00", "id", "k", "g\x00", "c\xc3", "w\x00", "\x00")
	f.Add("", "", "", "", "", "", "")
	pgURL := pgtest.URLIfAvailable(f)
	var pg *pgstore.Store
	if pgURL != "" {
		var err error
		if pg, err = pgstore.Open(context.Background(), pgURL); err != nil {
			f.Fatal(err)
		}
		pgtest.CloseAtEnd(f, pg)
	}
	f.Fuzz(func(t *testing.T, typ, id, key, group, cgroup, worker, errText string) {
		in := fuzzNames{typ, id, key, group, cgroup, worker, errText}
		st, err := boltstore.Open(filepath.Join(t.TempDir(), "jobs.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		in.check(t, "bbolt", st)
		if pg != nil {
			in.check(t, "pgstore", pg)
		}
	})
}

type fuzzNames struct{ typ, id, key, group, cgroup, worker, errText string }

// follows reports whether every name follows the rule for caller strings.
func follows(names ...string) bool {
	for _, n := range names {
		if policy.CheckName(n) != nil {
			return false
		}
	}
	return true
}

// refused fails t unless err is nil exactly when ok, and otherwise matches
// sentinel.
func refused(t *testing.T, call string, err error, ok bool, sentinel error) {
	t.Helper()
	switch {
	case ok && err != nil:
		t.Fatalf("%s refused valid names: %v", call, err)
	case !ok && err == nil:
		t.Fatalf("%s took names that break the rule", call)
	case !ok && !errors.Is(err, sentinel):
		t.Fatalf("%s: %v; want %v", call, err, sentinel)
	}
}

// bound is the liveness bound of a fuzz iteration: far above what any
// iteration takes, it turns a stall into a failure instead of a hang.
const bound = 30 * time.Second

// check runs the names through the API on st, which holds no job, and
// leaves it holding none.
func (in fuzzNames) check(t *testing.T, store string, st fairsched.JobStore) {
	ctx := context.Background()
	s, err := fairsched.New(fairsched.WithStore(st), fairsched.WithMaxConcurrency(4))
	if err != nil {
		t.Fatalf("%s: %v", store, err)
	}
	defer s.Close(ctx)

	ty := fairsched.JobType(in.typ)
	err = s.RegisterType(ty, fairsched.JobTypeConfig{DefaultCost: time.Millisecond, Priority: 1, ConflictGroup: fairsched.ConflictGroup(in.cgroup)})
	refused(t, "RegisterType", err, in.typ != "" && follows(in.typ, in.cgroup), fairsched.ErrInvalidConfig)
	if err != nil {
		if err := s.Enqueue(ctx, ty, "x", nil); err == nil {
			t.Fatal("Enqueue took a job of a type that was refused")
		}
		ty = "fallback"
		if err := s.RegisterType(ty, fairsched.JobTypeConfig{DefaultCost: time.Millisecond, Priority: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RegisterType("w", fairsched.JobTypeConfig{DefaultCost: time.Millisecond, Priority: 1, RequiresWorker: true}); err != nil && ty != "w" {
		t.Fatal(err)
	}
	err = s.RegisterWorker(fairsched.WorkerSpec{ID: in.worker, Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{"w"}}}})
	refused(t, "RegisterWorker", err, in.worker != "" && follows(in.worker) && ty != "w", fairsched.ErrInvalidConfig)
	if err == nil {
		if err := s.UnregisterWorker(in.worker); err != nil {
			t.Fatal(err)
		}
	}
	refused(t, "PauseGroup", s.PauseGroup(in.group), in.group != "" && follows(in.group), fairsched.ErrInvalidConfig)
	refused(t, "ResumeGroup", s.ResumeGroup(in.group), in.group != "" && follows(in.group), fairsched.ErrInvalidConfig)
	refused(t, "SetKeyWeight", s.SetKeyWeight(in.key, 2), follows(in.key), fairsched.ErrInvalidConfig)

	ran := make(chan fairsched.Job, 4)
	fail := errors.New(in.errText)
	if err := s.RegisterHandler(ty, func(ctx context.Context, j fairsched.Job) error {
		ran <- j
		if j.ID == in.id && in.errText != "" {
			return fairsched.Permanent(fail)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	jobOK := in.id != "" && follows(in.id, in.key, in.group)
	opts := []fairsched.JobOption{fairsched.WithFairnessKey(in.key), fairsched.InGroup(in.group)}
	err = s.Enqueue(ctx, ty, in.id, []byte("p"), opts...)
	refused(t, "Enqueue", err, jobOK, fairsched.ErrInvalidJob)
	plain := "plain"
	if in.id == plain {
		plain = "plain-2"
	}
	if err := s.Enqueue(ctx, ty, plain, nil); err != nil {
		t.Fatal(err)
	}
	// In process, a caller gets its function's own error.
	err = s.RunSync(ctx, ty, in.id, in.key, func(context.Context) error { return fail }, fairsched.InGroup(in.group))
	refused(t, "RunSync", func() error {
		if errors.Is(err, fail) {
			return nil
		}
		return err
	}(), jobOK, fairsched.ErrInvalidJob)
	submitted := make(chan struct{})
	err = s.Submit(ty, in.id, func(context.Context) error { close(submitted); return nil }, opts...)
	refused(t, "Submit", err, jobOK, fairsched.ErrInvalidJob)

	// Every job taken ends.
	want := map[string]bool{plain: true}
	if jobOK {
		want[in.id] = true
		select {
		case <-submitted:
		case <-time.After(bound):
			t.Fatalf("%s: the submitted job never ran", store)
		}
	}
	for len(want) > 0 {
		select {
		case j := <-ran:
			if !want[j.ID] {
				t.Fatalf("%s: job %q ran, unexpected or twice", store, j.ID)
			}
			delete(want, j.ID)
			if j.ID == in.id && (j.FairnessKey != in.key || j.Group != in.group || string(j.Payload) != "p") {
				t.Fatalf("%s: the job ran with key %q, group %q, payload %q", store, j.FairnessKey, j.Group, j.Payload)
			}
		case <-time.After(bound):
			t.Fatalf("%s: jobs %v never ran", store, want)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatalf("%s: Close: %v", store, err)
	}

	// After the restart: only the job that failed is kept, dead, as it was
	// taken, with a clean error text.
	var recs []fairsched.JobRecord
	if err := st.LoadJobs(func(r fairsched.JobRecord) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatalf("%s: loading after Close: %v", store, err)
	}
	dead := jobOK && in.errText != ""
	if (len(recs) == 1) != dead || len(recs) > 1 {
		t.Fatalf("%s: the store holds %d records; want %d", store, len(recs), map[bool]int{true: 1}[dead])
	}
	if dead {
		r := recs[0]
		if r.Type != ty || r.ID != in.id || r.Key != in.key || r.Group != in.group || r.State != 1 || string(r.Payload) != "p" {
			t.Fatalf("%s: the dead job came back changed: %q/%q key %q group %q state %d", store, r.Type, r.ID, r.Key, r.Group, r.State)
		}
		e := r.LastError
		if !utf8.ValidString(e) || strings.IndexByte(e, 0) >= 0 || len(e) > policy.MaxTextLen {
			t.Fatalf("%s: LastError is not clean (%d bytes)", store, len(e))
		}
		if c := policy.CleanText(in.errText); len(c) < policy.MaxTextLen/2 && !strings.Contains(e, c) {
			t.Fatalf("%s: LastError %q does not carry %q", store, e, c)
		}
	}
	s2, err := fairsched.New(fairsched.WithStore(st))
	if err != nil {
		t.Fatalf("%s: restart: %v", store, err)
	}
	defer s2.Close(ctx)
	if err := s2.RegisterType(ty, fairsched.JobTypeConfig{DefaultCost: time.Millisecond, Priority: 1}); err != nil {
		t.Fatal(err)
	}
	if dead {
		d, err := s2.DeadJobs(ctx, 0)
		if err != nil || len(d) != 1 || d[0].ID != in.id || d[0].FairnessKey != in.key || d[0].LastError != recs[0].LastError {
			t.Fatalf("%s: DeadJobs after the restart: %d jobs, %v", store, len(d), err)
		}
		if n, err := s2.DeleteDead(ctx, ty, in.id); n != 1 || err != nil {
			t.Fatalf("%s: DeleteDead: %d, %v", store, n, err)
		}
	}
	if err := s2.Close(ctx); err != nil {
		t.Fatalf("%s: Close after the restart: %v", store, err)
	}
}

// TestBadCallsAreErrorsNotPanics: every method on a nil or zero *Scheduler,
// a nil Option or JobOption, a nil context and an absurd Subscribe buffer
// give typed errors (or a closed channel), validated before anything is
// done: Close(nil) leaves the scheduler running.
func TestBadCallsAreErrorsNotPanics(t *testing.T) {
	nop := func(context.Context) error { return nil }
	ctx := context.Background()
	calls := func(s *fairsched.Scheduler) map[string]func() error {
		return map[string]func() error{
			"RegisterType": func() error {
				return s.RegisterType("t", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1})
			},
			"RunSync": func() error { return s.RunSync(ctx, "t", "x", "", nop) },
			"Submit":  func() error { return s.Submit("t", "x", nop) },
			"SubmitPeriodic": func() error {
				_, err := s.SubmitPeriodic("t", "x", time.Second, nop)
				return err
			},
			"SetKeyWeight":      func() error { return s.SetKeyWeight("k", 2) },
			"SetGroupWeight":    func() error { return s.SetGroupWeight("g", 2) },
			"ResetGroupWeights": func() error { return s.ResetGroupWeights() },
			"PauseGroup":        func() error { return s.PauseGroup("g") },
			"ResumeGroup":       func() error { return s.ResumeGroup("g") },
			"Snapshot": func() error {
				_, err := s.Snapshot(ctx)
				return err
			},
			"RegisterWorker":   func() error { return s.RegisterWorker(fairsched.WorkerSpec{ID: "w"}) },
			"UnregisterWorker": func() error { return s.UnregisterWorker("w") },
			"Close":            func() error { return s.Close(ctx) },
		}
	}
	for name, s := range map[string]*fairsched.Scheduler{"nil": nil, "zero": {}} {
		for method, call := range calls(s) {
			if err := call(); !errors.Is(err, fairsched.ErrNilScheduler) {
				t.Errorf("%s Scheduler: %s = %v; want ErrNilScheduler", name, method, err)
			}
		}
		events, cancel := s.Subscribe(1)
		if _, open := <-events; open {
			t.Errorf("%s Scheduler: Subscribe gave an open channel", name)
		}
		cancel()
	}

	if _, err := fairsched.New(fairsched.WithMaxConcurrency(2), nil); !errors.Is(err, fairsched.ErrInvalidConfig) {
		t.Errorf("New with a nil option = %v; want ErrInvalidConfig", err)
	}
	s, err := fairsched.New()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if err := s.RegisterType("t", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
		t.Fatal(err)
	}
	var nilCtx context.Context
	for name, tc := range map[string]struct {
		call func() error
		want error
	}{
		"RunSync(nil ctx)": {func() error { return s.RunSync(nilCtx, "t", "x", "", nop) }, fairsched.ErrInvalidJob},
		"Snapshot(nil ctx)": {func() error {
			_, err := s.Snapshot(nilCtx)
			return err
		}, fairsched.ErrInvalidConfig},
		"Close(nil ctx)":          {func() error { return s.Close(nilCtx) }, fairsched.ErrInvalidConfig},
		"Submit(nil JobOption)":   {func() error { return s.Submit("t", "x", nop, nil) }, fairsched.ErrInvalidJob},
		"RunSync(nil JobOption)":  {func() error { return s.RunSync(ctx, "t", "x", "", nop, fairsched.WithQueueTimeout(time.Second), nil) }, fairsched.ErrInvalidJob},
		"SubmitPeriodic(nil opt)": {func() error { _, err := s.SubmitPeriodic("t", "x", time.Second, nop, nil); return err }, fairsched.ErrInvalidJob},
	} {
		if err := tc.call(); !errors.Is(err, tc.want) {
			t.Errorf("%s = %v; want %v", name, err, tc.want)
		}
	}
	// Close(nil) was refused before it acted: the scheduler still runs jobs.
	if err := s.RunSync(ctx, "t", "after", "", nop); err != nil {
		t.Errorf("RunSync after Close(nil) = %v; want nil", err)
	}
	events, cancel := s.Subscribe(math.MaxInt)
	cancel()
	for range events {
	}
	if got := fmt.Sprint(cap(events)); got != fmt.Sprint(fairsched.MaxSubscribeBuffer) {
		t.Errorf("Subscribe(MaxInt) buffer %s; want MaxSubscribeBuffer", got)
	}
}
