package fairsched_test

import (
	"context"
	"errors"
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
