package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/boltstore"
	"github.com/fairsched/fairsched/fairschedtest"
)

// occupied registers the type "sync" on env's scheduler (of one slot) and
// starts a job that holds the slot until hold is released.
func occupied(t *testing.T, env *fairschedtest.Env) (s *fairsched.Scheduler, hold *fairschedtest.Blocker) {
	t.Helper()
	s = env.Scheduler
	if err := s.RegisterType("sync", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
		t.Fatal(err)
	}
	hold = fairschedtest.NewBlocker()
	if err := s.Submit("sync", "hold", hold.Run); err != nil {
		t.Fatal(err)
	}
	hold.WaitStarted(t)
	return s, hold
}

// TestSubmitManyRunsEveryJob: the jobs of one SubmitMany all run, each
// with its own id, options and fairness key, and their admissions follow
// the scheduler's order as that many Submit calls would (one key's jobs
// in arrival order, the keys taking turns).
func TestSubmitManyRunsEveryJob(t *testing.T) {
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		s, hold := occupied(t, env)
		var (
			mu  sync.Mutex
			ran []string
		)
		record := func(id string) func(context.Context) error {
			return func(context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				ran = append(ran, id)
				return nil
			}
		}
		var subs []fairsched.Submission
		for _, key := range []string{"a", "b"} {
			for i := range 3 {
				id := fmt.Sprintf("%s%d", key, i)
				subs = append(subs, fairsched.Submission{Type: "sync", ID: id, Fn: record(id),
					Options: []fairsched.JobOption{fairsched.WithFairnessKey(key)}})
			}
		}
		if err := s.SubmitMany(subs); err != nil {
			t.Fatal(err)
		}
		env.WaitPending(6)
		hold.Release(nil)
		env.WaitIdle()
		want := []string{"a0", "b0", "a1", "b1", "a2", "b2"}
		if !slices.Equal(ran, want) {
			t.Fatalf("ran %v, want %v (keys take turns, each in arrival order)", ran, want)
		}
	}, fairsched.WithMaxConcurrency(1))
}

// TestSubmitManyInvalidQueuesNothing: one invalid job (here an unknown
// type, then a nil function) and none of the batch is queued; the error
// names its index and matches the error Submit gives.
func TestSubmitManyInvalidQueuesNothing(t *testing.T) {
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		s := env.Scheduler
		if err := s.RegisterType("sync", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		nop := func(context.Context) error { return nil }
		for _, tc := range []struct {
			bad  fairsched.Submission
			want error
		}{
			{fairsched.Submission{Type: "nope", ID: "x", Fn: nop}, fairsched.ErrUnknownJobType},
			{fairsched.Submission{Type: "sync", ID: "x"}, fairsched.ErrInvalidJob},
			{fairsched.Submission{Type: "sync", ID: "x", Fn: nop, Options: []fairsched.JobOption{nil}}, fairsched.ErrInvalidJob},
		} {
			err := s.SubmitMany([]fairsched.Submission{{Type: "sync", ID: "ok", Fn: nop}, tc.bad})
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), "job 1") {
				t.Fatalf("SubmitMany with %+v: %v, want %v naming job 1", tc.bad, err, tc.want)
			}
		}
		snap, err := s.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if snap.PendingTotal != 0 || len(snap.Running) != 0 {
			t.Fatalf("a refused batch left %d pending, %d running", snap.PendingTotal, len(snap.Running))
		}
	})
}

// TestSubmitManyRefusalsPerJob: with a pending bound, the jobs over it are
// refused each with its *RefusalError (ErrOverloaded) at its index in a
// *ManyError; the others are queued and run.
func TestSubmitManyRefusalsPerJob(t *testing.T) {
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		s, hold := occupied(t, env)
		ran := make(chan string, 4)
		var subs []fairsched.Submission
		for i := range 4 {
			id := fmt.Sprint("job-", i)
			subs = append(subs, fairsched.Submission{Type: "sync", ID: id, Fn: func(context.Context) error { ran <- id; return nil }})
		}
		err := s.SubmitMany(subs)
		var me *fairsched.ManyError
		if !errors.As(err, &me) || len(me.Errs) != 4 {
			t.Fatalf("SubmitMany over the bound: %v, want a *ManyError of 4", err)
		}
		if !errors.Is(err, fairsched.ErrOverloaded) {
			t.Fatalf("%v does not match ErrOverloaded", err)
		}
		for i, e := range me.Errs {
			var re *fairsched.RefusalError
			if refused := errors.As(e, &re); refused != (i >= 2) {
				t.Fatalf("job %d: %v; want the first two queued, the others refused", i, e)
			}
		}
		hold.Release(nil)
		env.WaitIdle()
		close(ran)
		var got []string
		for id := range ran {
			got = append(got, id)
		}
		if !slices.Equal(got, []string{"job-0", "job-1"}) {
			t.Fatalf("ran %v, want the two queued jobs", got)
		}
	}, fairsched.WithMaxConcurrency(1), fairsched.WithMaxPending(2))
}

// TestSubmitManyAfterClose: ErrClosed, as Submit.
func TestSubmitManyAfterClose(t *testing.T) {
	s, err := fairsched.New(fairsched.WithClock(clock.NewMock()))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterType("sync", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	err = s.SubmitMany([]fairsched.Submission{{Type: "sync", ID: "x", Fn: func(context.Context) error { return nil }}})
	if !errors.Is(err, fairsched.ErrClosed) {
		t.Fatalf("SubmitMany after Close: %v, want ErrClosed", err)
	}
	if err := s.SubmitMany(nil); err != nil {
		t.Fatalf("an empty SubmitMany: %v", err)
	}
}

// putsStore reports the records each commit writes, by id.
type putsStore struct {
	*boltstore.Store
	commits chan []string
}

func (p *putsStore) ApplyJobs(ops []fairsched.JobOp) error {
	var ids []string
	for _, op := range ops {
		if op.Put != nil {
			ids = append(ids, op.Put.ID)
		}
	}
	if len(ids) > 0 {
		p.commits <- ids
	}
	return p.Store.ApplyJobs(ops)
}

// TestEnqueueManyCommitsOnce: the records of one EnqueueMany are written
// in one commit of the store; a duplicate among them gets ErrDuplicateJob
// at its index while the others are committed and run.
func TestEnqueueManyCommitsOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		st := &putsStore{Store: durableStore(t, path), commits: make(chan []string, 16)}
		s, err := fairsched.New(fairsched.WithClock(env.Clock), fairsched.WithStore(st), fairsched.WithMaxConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(context.Background())
		if err := s.RegisterType("mail", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 2}); err != nil {
			t.Fatal(err)
		}
		ran := make(chan string, 8)
		if err := s.RegisterHandler("mail", func(ctx context.Context, j fairsched.Job) error {
			ran <- j.ID + "=" + string(j.Payload)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		jobs := []fairsched.Enqueueing{
			{Type: "mail", ID: "a", Payload: []byte("1")},
			{Type: "mail", ID: "b", Payload: []byte("2")},
			{Type: "mail", ID: "a", Payload: []byte("3")}, // a is pending: a duplicate
			{Type: "mail", ID: "c", Payload: []byte("4")},
		}
		err = s.EnqueueMany(context.Background(), jobs)
		var me *fairsched.ManyError
		if !errors.As(err, &me) || !errors.Is(me.Errs[2], fairsched.ErrDuplicateJob) || me.Errs[0] != nil || me.Errs[1] != nil || me.Errs[3] != nil {
			t.Fatalf("EnqueueMany with a duplicate at 2: %v", err)
		}
		// EnqueueMany returned: the commit of its records is reported.
		if first := <-st.commits; !slices.Equal(first, []string{"a", "b", "c"}) {
			t.Fatalf("the first commit wrote %v, want a, b and c together", first)
		}
		fairschedtest.WaitIdle(t, s)
		close(ran)
		var got []string
		for r := range ran {
			got = append(got, r)
		}
		if !slices.Equal(got, []string{"a=1", "b=2", "c=4"}) {
			t.Fatalf("ran %v", got)
		}
	})
}

// TestEnqueueManyInvalidWritesNothing: a payload over WithMaxPayload in the
// batch and nothing is written; the error names the job's index.
func TestEnqueueManyInvalidWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		st := &countingStore{Store: durableStore(t, path)}
		s, err := fairsched.New(fairsched.WithClock(env.Clock), fairsched.WithStore(st), fairsched.WithMaxPayload(4))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(context.Background())
		if err := s.RegisterType("mail", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 2}); err != nil {
			t.Fatal(err)
		}
		before := st.commits.Load()
		err = s.EnqueueMany(context.Background(), []fairsched.Enqueueing{
			{Type: "mail", ID: "a", Payload: []byte("ok")},
			{Type: "mail", ID: "b", Payload: []byte("too long")},
		})
		if !errors.Is(err, fairsched.ErrInvalidJob) || !strings.Contains(err.Error(), "job 1") {
			t.Fatalf("EnqueueMany with a payload too long: %v", err)
		}
		if commits := st.commits.Load() - before; commits != 0 {
			t.Fatalf("an invalid batch made %d commits", commits)
		}
		snap, err := s.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if snap.PendingTotal != 0 {
			t.Fatalf("an invalid batch queued %d jobs", snap.PendingTotal)
		}
	})
}
