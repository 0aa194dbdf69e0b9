package fairsched_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/boltstore"
	"github.com/fairsched/fairsched/fairschedtest"
	"github.com/google/go-cmp/cmp"
)

// durableStore opens a bbolt store in t's temp dir (path reused across
// restarts).
func durableStore(t *testing.T, path string) *boltstore.Store {
	t.Helper()
	st, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() }) // after the scheduler's, registered later
	return st
}

// ranLog records handler runs, safe for concurrent handlers.
type ranLog struct {
	mu   sync.Mutex
	runs []string
}

func (l *ranLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs = append(l.runs, s)
}

func (l *ranLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.runs...)
}

// TestDurableJobsSurviveARestart: jobs enqueued before a Close that gives
// up (one of them running, interrupted) come back after a restart with
// their arrival time, options and attempts; they wait (no_handler) until
// RegisterHandler, then run, and each success deletes its record.
func TestDurableJobsSurviveARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	ctx := context.Background()
	var enqueuedAt time.Time
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		st := durableStore(t, path)
		s, err := fairsched.New(fairsched.WithClock(env.Clock), fairsched.WithStore(st), fairsched.WithMaxConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType("mail", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		block := fairschedtest.NewBlocker()
		if err := s.RegisterHandler("mail", func(ctx context.Context, j fairsched.Job) error { return block.Run(ctx) }); err != nil {
			t.Fatal(err)
		}
		enqueuedAt = env.Clock.Now()
		for i, key := range []string{"alice", "bob", "carol"} {
			if err := s.Enqueue(ctx, "mail", fmt.Sprint("m", i), []byte("to "+key), fairsched.WithFairnessKey(key), fairsched.InGroup("mailers")); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Enqueue(ctx, "mail", "m0", nil); !errors.Is(err, fairsched.ErrDuplicateJob) {
			t.Errorf("a second m0: %v; want ErrDuplicateJob", err)
		}
		block.WaitStarted(t) // m0 runs: attempt 1
		env.Advance(time.Minute)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := s.Close(cctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Close: %v", err)
		}
		_ = s.Close(ctx) // waits for the owner and its last writes
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	})
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		env.Clock.Add(time.Hour) // the restart comes later
		st := durableStore(t, path)
		defer st.Close()
		s, err := fairsched.New(fairsched.WithClock(env.Clock), fairsched.WithStore(st), fairsched.WithMaxConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(ctx)
		if err := s.RegisterType("mail", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		snap, err := s.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var waiting []string
		for _, p := range snap.Pending {
			waiting = append(waiting, fmt.Sprintf("%s %s %s %v %s", p.ID, p.FairnessKey, p.Group, p.Submitted.Equal(enqueuedAt), p.Reason))
		}
		want := []string{"m0 alice mailers true no_handler", "m1 bob mailers true no_handler", "m2 carol mailers true no_handler"}
		if diff := cmp.Diff(want, waiting); diff != "" {
			t.Errorf("restored jobs (-want +got):\n%s", diff)
		}
		var log ranLog
		if err := s.RegisterHandler("mail", func(ctx context.Context, j fairsched.Job) error {
			log.add(fmt.Sprintf("%s attempt %d %q key %s group %s since %v", j.ID, j.Attempt, j.Payload, j.FairnessKey, j.Group, env.Clock.Now().Sub(j.EnqueuedAt)))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		fairschedtest.WaitIdle(t, s)
		wantRuns := []string{
			`m0 attempt 2 "to alice" key alice group mailers since 1h0m0s`,
			`m1 attempt 1 "to bob" key bob group mailers since 1h0m0s`,
			`m2 attempt 1 "to carol" key carol group mailers since 1h0m0s`,
		}
		if diff := cmp.Diff(wantRuns, log.get()); diff != "" {
			t.Errorf("runs after the restart (-want +got):\n%s", diff)
		}
	})
	// Every success deleted its record.
	st := durableStore(t, path)
	defer st.Close()
	n := 0
	if err := st.LoadJobs(func(fairsched.JobRecord) error { n++; return nil }); err != nil || n != 0 {
		t.Errorf("%d records left (%v); want none", n, err)
	}
}

// durableEnv is a scheduler on env's mock clock over a bbolt store at
// path, with type "mail" (one slot) registered; closed at the end of the
// bubble, the store after it.
func durableEnv(t *testing.T, env *fairschedtest.Env, path string, opts ...fairsched.Option) *fairsched.Scheduler {
	t.Helper()
	st := durableStore(t, path)
	s, err := fairsched.New(append([]fairsched.Option{fairsched.WithClock(env.Clock), fairsched.WithStore(st), fairsched.WithMaxConcurrency(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = s.Close(ctx)
		_ = s.Close(context.Background())
		st.Close()
	})
	for name, cfg := range map[fairsched.JobType]fairsched.JobTypeConfig{
		"mail":  {DefaultCost: time.Second, Priority: 2},
		"index": {DefaultCost: time.Second, Priority: 2, Coalesce: true},
	} {
		if err := s.RegisterType(name, cfg); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestDurableOptionsSurviveARestart: every option a durable job carries is
// in its record and holds after a restart: its key and group, stated
// tokens (charged), its own queue timeout (from its first arrival: one
// expires during the downtime and becomes a dead job), its retry policy
// (attempts count across the restart), an inherited priority, RunAt and
// Delay (reason scheduled until due).
func TestDurableOptionsSurviveARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	ctx := context.Background()
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		s := durableEnv(t, env, path)
		hold := fairschedtest.NewBlocker()
		if err := s.Submit("mail", "hold", hold.Run); err != nil { // holds the slot: nothing durable runs
			t.Fatal(err)
		}
		for _, e := range []struct {
			id   string
			opts []fairsched.JobOption
		}{
			{"tokens", []fairsched.JobOption{fairsched.WithFairnessKey("acme"), fairsched.InGroup("bulk"), fairsched.WithTokens(30 * time.Second)}},
			{"short-ttl", []fairsched.JobOption{fairsched.WithQueueTimeout(30 * time.Minute)}},
			{"long-ttl", []fairsched.JobOption{fairsched.WithQueueTimeout(3 * time.Hour)}},
			{"retry", []fairsched.JobOption{fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 2, MinBackoff: time.Second, MaxBackoff: time.Second})}},
			{"at", []fairsched.JobOption{fairsched.RunAt(fairschedtest.Epoch.Add(2 * time.Hour))}},
			{"delay", []fairsched.JobOption{fairsched.Delay(90 * time.Minute)}},
		} {
			if err := s.Enqueue(ctx, "mail", e.id, []byte(e.id), e.opts...); err != nil {
				t.Fatal(err)
			}
		}
		fairschedtest.WaitPending(t, s, 6)
	})
	var log ranLog
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		env.Clock.Add(time.Hour) // down for an hour: short-ttl's 30 minutes ran out
		s := durableEnv(t, env, path)
		fail := true
		if err := s.RegisterHandler("mail", func(ctx context.Context, j fairsched.Job) error {
			log.add(fmt.Sprintf("%v %s attempt %d key=%q group=%q", env.Clock.Now().Sub(fairschedtest.Epoch), j.ID, j.Attempt, j.FairnessKey, j.Group))
			if j.ID == "retry" && fail {
				fail = false
				return errors.New("smtp 451")
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		env.Settle()
		snap, err := s.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		reasons := map[string]fairsched.Reason{}
		for _, p := range snap.Pending {
			reasons[p.ID] = p.Reason
		}
		if diff := cmp.Diff(map[string]fairsched.Reason{"at": fairsched.ReasonScheduled, "delay": fairsched.ReasonScheduled, "retry": fairsched.ReasonBackoff}, reasons); diff != "" {
			t.Errorf("pending after the restart (-want +got):\n%s", diff)
		}
		if c := snap.AccumulatedCost["acme"]; c < 30*time.Second {
			t.Errorf("acme was charged %v; want its 30s of tokens", c)
		}
		env.Advance(time.Hour) // to 2h: "delay" is due at 1h30, "at" at 2h
		fairschedtest.WaitIdle(t, s)
		dead, err := s.DeadJobs(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(dead) != 1 || dead[0].ID != "short-ttl" || !strings.Contains(dead[0].LastError, "expired") {
			t.Errorf("dead jobs %+v; want short-ttl, expired", dead)
		}
	})
	want := []string{
		`1h0m0s tokens attempt 1 key="acme" group="bulk"`,
		`1h0m0s long-ttl attempt 1 key="" group=""`,
		`1h0m0s retry attempt 1 key="" group=""`,
		`1h0m1s retry attempt 2 key="" group=""`,
		`1h30m0s delay attempt 1 key="" group=""`,
		`2h0m0s at attempt 1 key="" group=""`,
	}
	if diff := cmp.Diff(want, log.get()); diff != "" {
		t.Errorf("runs after the restart (-want +got):\n%s", diff)
	}
}

// TestDeadJobs: a job that fails for good (retries used up, Permanent, a
// panic) is kept as a dead job with its last error and attempts; it
// survives a restart; RequeueDead runs it again from attempt 1, and
// DeleteDead removes it.
func TestDeadJobs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	ctx := context.Background()
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		s := durableEnv(t, env, path)
		if err := s.RegisterHandler("mail", func(ctx context.Context, j fairsched.Job) error {
			switch j.ID {
			case "permanent":
				return fairsched.Permanent(errors.New("no such mailbox"))
			case "panics":
				panic("boom")
			}
			return errors.New("smtp 451")
		}); err != nil {
			t.Fatal(err)
		}
		two := fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 2, MinBackoff: time.Second, MaxBackoff: time.Second})
		for _, id := range []string{"flaky", "permanent", "panics"} {
			if err := s.Enqueue(ctx, "mail", id, nil, two); err != nil {
				t.Fatal(err)
			}
		}
		env.Advance(time.Second) // settles first: every first attempt has ended at 0s
		fairschedtest.WaitIdle(t, s)
	})
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		s := durableEnv(t, env, path)
		dead, err := s.DeadJobs(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range dead {
			got = append(got, fmt.Sprintf("%s attempts=%d %s", d.ID, d.Attempt, strings.SplitN(d.LastError, "\n", 2)[0]))
		}
		want := []string{
			"flaky attempts=2 fairsched: mail/flaky failed after 2 attempt(s): smtp 451",
			"permanent attempts=1 fairsched: mail/permanent failed after 1 attempt(s): no such mailbox",
			"panics attempts=1 fairsched: mail/panics failed after 1 attempt(s): fairsched: job panicked: boom",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("dead jobs after a restart (-want +got):\n%s", diff)
		}
		var ran []string
		if err := s.RegisterHandler("mail", func(ctx context.Context, j fairsched.Job) error {
			ran = append(ran, fmt.Sprintf("%s attempt %d", j.ID, j.Attempt))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if n, err := s.RequeueDead(ctx, "mail", "flaky"); n != 1 || err != nil {
			t.Errorf("RequeueDead flaky: %d, %v", n, err)
		}
		if n, err := s.DeleteDead(ctx, "mail", ""); n != 2 || err != nil {
			t.Errorf("DeleteDead mail: %d, %v", n, err)
		}
		fairschedtest.WaitIdle(t, s)
		if diff := cmp.Diff([]string{"flaky attempt 1"}, ran); diff != "" {
			t.Errorf("after RequeueDead (-want +got):\n%s", diff)
		}
		if dead, _ := s.DeadJobs(ctx, 0); len(dead) != 0 {
			t.Errorf("dead jobs left: %+v", dead)
		}
		if _, err := s.RequeueDead(ctx, "", "flaky"); !errors.Is(err, fairsched.ErrInvalidJob) {
			t.Errorf("an id without a type: %v", err)
		}
	})
}

// TestDurableDuplicatesSupersedeCoalesce: a second Enqueue of a pending
// (type, id) is ErrDuplicateJob; with Supersede it replaces the pending
// job's payload (the first never runs); on a coalescing type it joins: one
// run. Payloads over WithMaxPayload are ErrInvalidJob; without a JobStore
// Enqueue and RegisterHandler are ErrNoJobStore.
func TestDurableDuplicatesSupersedeCoalesce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	ctx := context.Background()
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		s := durableEnv(t, env, path, fairsched.WithMaxPayload(8))
		var ran []string
		h := func(ctx context.Context, j fairsched.Job) error {
			ran = append(ran, fmt.Sprintf("%s/%s %s", j.Type, j.ID, j.Payload))
			return nil
		}
		hold := fairschedtest.NewBlocker()
		if err := s.Submit("mail", "hold", hold.Run); err != nil {
			t.Fatal(err)
		}
		for _, ty := range []fairsched.JobType{"mail", "index"} {
			if err := s.RegisterHandler(ty, h); err != nil {
				t.Fatal(err)
			}
		}
		check := func(err, want error) {
			t.Helper()
			if !errors.Is(err, want) {
				t.Errorf("%v; want %v", err, want)
			}
		}
		check(s.Enqueue(ctx, "mail", "a", []byte("v1")), nil)
		check(s.Enqueue(ctx, "mail", "a", []byte("v2")), fairsched.ErrDuplicateJob)
		check(s.Enqueue(ctx, "mail", "a", []byte("v3"), fairsched.Supersede()), nil)
		check(s.Enqueue(ctx, "index", "linux", []byte("i1")), nil)
		check(s.Enqueue(ctx, "index", "linux", []byte("i2")), nil)
		check(s.Enqueue(ctx, "mail", "big", []byte("123456789")), fairsched.ErrInvalidJob)
		check(s.Enqueue(ctx, "mail", "", nil), fairsched.ErrInvalidJob)
		check(s.Enqueue(ctx, "nope", "x", nil), fairsched.ErrUnknownJobType)
		check(s.RegisterHandler("nope", h), fairsched.ErrUnknownJobType)
		hold.Release(nil)
		fairschedtest.WaitIdle(t, s)
		if diff := cmp.Diff([]string{"mail/a v3", "index/linux i1"}, ran); diff != "" {
			t.Errorf("runs (-want +got):\n%s", diff)
		}
		check(s.Enqueue(ctx, "mail", "a", []byte("v4")), nil) // finished: the id is free again
		plain := fairschedtest.New(t)
		if err := plain.RegisterType("mail", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		check(plain.Enqueue(ctx, "mail", "a", nil), fairsched.ErrNoJobStore)
		check(plain.RegisterHandler("mail", h), fairsched.ErrNoJobStore) // no job of it could ever come
	})
}

// TestKeyCostsSurviveARestart: accumulated costs are saved with the
// estimates, so a restart does not hand every key a clean slate: the key
// that consumed most is still behind the others after it, and a new key
// joins level with the least served one, not at zero.
func TestKeyCostsSurviveARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	ctx := context.Background()
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		s := durableEnv(t, env, path)
		for _, c := range []struct {
			key    string
			tokens time.Duration
		}{{"heavy", time.Hour}, {"light", time.Minute}} {
			if err := s.RunSync(ctx, "mail", "x-"+c.key, c.key, func(context.Context) error { return nil }, fairsched.WithTokens(c.tokens)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(ctx); err != nil { // the final save
			t.Fatal(err)
		}
	})
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		s := durableEnv(t, env, path)
		snap, err := s.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]time.Duration{"heavy": snap.AccumulatedCost["heavy"], "light": snap.AccumulatedCost["light"]}
		// light joined at heavy's hour: 1h + 1m.
		if diff := cmp.Diff(map[string]time.Duration{"heavy": time.Hour, "light": time.Hour + time.Minute}, got); diff != "" {
			t.Errorf("restored costs (-want +got):\n%s", diff)
		}
		if err := s.RunSync(ctx, "mail", "y", "newcomer", func(context.Context) error { return nil }, fairsched.WithTokens(time.Second)); err != nil {
			t.Fatal(err)
		}
		snap, _ = s.Snapshot(ctx)
		if c := snap.AccumulatedCost["newcomer"]; c != time.Hour+time.Second {
			t.Errorf("a new key after the restart: %v; want level with the least served (1h) plus its 1s", c)
		}
	})
}

// failingStore fails its commits while failing is set.
type failingStore struct {
	*boltstore.Store
	failing bool
}

func (f *failingStore) ApplyJobs(ops []fairsched.JobOp) error {
	if f.failing {
		return errors.New("disk full")
	}
	return f.Store.ApplyJobs(ops)
}

// TestEnqueueStoreFailure: a commit that fails is Enqueue's ErrStore; the
// job was not queued, did not run, and its id is free; once the store
// works again the same Enqueue succeeds and runs.
func TestEnqueueStoreFailure(t *testing.T) {
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		st := durableStore(t, filepath.Join(t.TempDir(), "jobs.db"))
		fs := &failingStore{Store: st, failing: true}
		s := fairschedtest.New(t, fairsched.WithClock(env.Clock), fairsched.WithStore(fs))
		if err := s.RegisterType("mail", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		ran := 0
		if err := s.RegisterHandler("mail", func(context.Context, fairsched.Job) error { ran++; return nil }); err != nil {
			t.Fatal(err)
		}
		if err := s.Enqueue(context.Background(), "mail", "a", nil); !errors.Is(err, fairsched.ErrStore) {
			t.Fatalf("Enqueue on a failing store: %v; want ErrStore", err)
		}
		fairschedtest.WaitIdle(t, s)
		if ran != 0 {
			t.Fatalf("the job ran %d times; its Enqueue failed", ran)
		}
		fs.failing = false // the owner reads it only through the writer, after this
		if err := s.Enqueue(context.Background(), "mail", "a", nil); err != nil {
			t.Fatalf("Enqueue once the store works: %v", err)
		}
		fairschedtest.WaitIdle(t, s)
		if ran != 1 {
			t.Errorf("the job ran %d times; want 1", ran)
		}
	})
}

// TestRetention: with WithRetention a success keeps its record (state
// succeeded) until the retention has passed, then the eviction tick
// deletes it.
func TestRetention(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		st := durableStore(t, path)
		s := fairschedtest.New(t, fairsched.WithClock(env.Clock), fairsched.WithStore(st), fairsched.WithRetention(time.Hour))
		if err := s.RegisterType("mail", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterHandler("mail", func(context.Context, fairsched.Job) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if err := s.Enqueue(context.Background(), "mail", "a", []byte("kept")); err != nil {
			t.Fatal(err)
		}
		fairschedtest.WaitIdle(t, s)
		records := func() []string {
			var out []string
			s.Snapshot(context.Background()) // a round trip: the writer has committed what came before
			env.Settle()
			if err := st.LoadJobs(func(r fairsched.JobRecord) error {
				out = append(out, fmt.Sprintf("%s %d %s", r.ID, r.State, r.Payload))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			return out
		}
		if diff := cmp.Diff([]string{"a 2 kept"}, records()); diff != "" {
			t.Errorf("after the success (-want +got):\n%s", diff)
		}
		env.Advance(50 * time.Minute)
		if n := len(records()); n != 1 {
			t.Errorf("%d records after 50 minutes; want the kept one", n)
		}
		env.Advance(20 * time.Minute)
		if diff := cmp.Diff([]string(nil), records()); diff != "" {
			t.Errorf("after the retention (-want +got):\n%s", diff)
		}
	})
}

// TestInheritedPrioritySurvivesARestart: a durable job enqueued from a
// running job with InheritPriority keeps the inherited floor in its
// record: after a restart it still competes at the parent's priority.
func TestInheritedPrioritySurvivesARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	ctx := context.Background()
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		s := durableEnv(t, env, path, fairsched.WithMaxConcurrency(2))
		if err := s.RegisterType("urgent", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8}); err != nil {
			t.Fatal(err)
		}
		if err := s.RunSync(ctx, "urgent", "parent", "k", func(jctx context.Context) error {
			return s.Enqueue(jctx, "mail", "child", nil, fairsched.InheritPriority(jctx))
		}); err != nil {
			t.Fatal(err)
		}
	})
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		s := durableEnv(t, env, path)
		snap, err := s.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Pending) != 1 {
			t.Fatalf("pending %+v; want the child", snap.Pending)
		}
		hold := fairschedtest.NewBlocker()
		if err := s.Submit("mail", "hold", hold.Run); err != nil { // one slot: the child waits, ranked
			t.Fatal(err)
		}
		if err := s.RegisterHandler("mail", func(context.Context, fairsched.Job) error { return nil }); err != nil {
			t.Fatal(err)
		}
		fairschedtest.WaitPending(t, s, 1)
		snap, err = s.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p := snap.Pending[0]
		if p.ID != "child" || p.InheritedPriority == nil || *p.InheritedPriority != 8 || p.EffectivePriority != 8 {
			t.Errorf("the child after the restart: %+v; want it at the parent's priority 8", p)
		}
		hold.Release(nil)
	})
}

// TestInterruptionsAreNotFailures: a durable job that a Close whose
// context ended interrupts runs again after the restart whatever its
// retry policy — the default one, with no retries, included — with a
// larger Attempt, and its interruptions do not count against
// MaxAttempts. MaxInterruptions bounds them: a job interrupted every time
// is dead at the start after its limit was passed (the default, 3:
// interrupted four times; MaxInterruptions 1: twice), with an error
// matching ErrWorkerLost that counts the interruptions.
func TestInterruptionsAreNotFailures(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	ctx := context.Background()
	policies := map[string]fairsched.RetryPolicy{
		"one": {MaxAttempts: 1, MaxInterruptions: 1},
		// Three interruptions, then a failure, then a success: with
		// MaxAttempts 2 the failure is retried.
		"flaky": {MaxAttempts: 2, MinBackoff: time.Second, MaxBackoff: time.Second, MaxInterruptions: 5},
	}
	var rounds [][]string
	for round := 1; round <= 5; round++ {
		fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
			s := durableEnv(t, env, path, fairsched.WithMaxConcurrency(4))
			if err := s.RegisterType("job", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8}); err != nil {
				t.Fatal(err)
			}
			started := make(chan string, 16)
			if err := s.RegisterHandler("job", func(ctx context.Context, j fairsched.Job) error {
				started <- fmt.Sprintf("%s %d", j.ID, j.Attempt)
				switch {
				case j.ID == "flaky" && j.Attempt == 4:
					return errors.New("smtp 451")
				case j.ID == "flaky" && j.Attempt == 5:
					return nil
				}
				<-ctx.Done() // interrupted by the Close below
				return ctx.Err()
			}); err != nil {
				t.Fatal(err)
			}
			if round == 1 {
				for _, id := range []string{"loop", "one", "flaky"} {
					var opts []fairsched.JobOption
					if p, ok := policies[id]; ok {
						opts = append(opts, fairsched.WithRetry(p))
					}
					if err := s.Enqueue(ctx, "job", id, nil, opts...); err != nil {
						t.Fatal(err)
					}
				}
			}
			env.Settle()
			if round == 4 {
				env.Advance(time.Second) // flaky's retry
				env.Settle()
			}
			var ran []string
			for len(started) > 0 {
				ran = append(ran, <-started)
			}
			slices.Sort(ran)
			rounds = append(rounds, ran)
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			_ = s.Close(cctx)
			_ = s.Close(ctx)
		})
	}
	want := [][]string{
		{"flaky 1", "loop 1", "one 1"},
		{"flaky 2", "loop 2", "one 2"},
		{"flaky 3", "loop 3"},            // one: interrupted twice, past its 1
		{"flaky 4", "flaky 5", "loop 4"}, // flaky's failure retried, then a success
		nil,                              // loop: interrupted four times, past the default 3
	}
	if diff := cmp.Diff(want, rounds); diff != "" {
		t.Errorf("runs in each round (-want +got):\n%s", diff)
	}
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		s := durableEnv(t, env, path)
		if err := s.RegisterType("job", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8}); err != nil {
			t.Fatal(err)
		}
		dead, err := s.DeadJobs(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range dead {
			got = append(got, fmt.Sprintf("%s attempts=%d worker lost=%v %s", d.ID, d.Attempt,
				strings.HasPrefix(d.LastError, fairsched.ErrWorkerLost.Error()),
				d.LastError[strings.Index(d.LastError, "interrupted"):strings.Index(d.LastError, ",")]))
		}
		want := []string{"loop attempts=4 worker lost=true interrupted 4 times", "one attempts=2 worker lost=true interrupted 2 times"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("dead jobs (-want +got):\n%s", diff)
		}
	})
}

// TestDurableJobOnALostWorkerRunsAgain: a durable job whose worker is
// unregistered while it runs was interrupted, not failed: with its type's
// default retry policy (no retries) it waits for a slot and runs again,
// with a larger Attempt, and succeeds; it is not dead.
func TestDurableJobOnALostWorkerRunsAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	ctx := context.Background()
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		s := durableEnv(t, env, path, fairsched.WithMaxConcurrency(4))
		if err := s.RegisterType("render", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8, RequiresWorker: true}); err != nil {
			t.Fatal(err)
		}
		var ran []string
		if err := s.RegisterHandler("render", func(ctx context.Context, j fairsched.Job) error {
			worker, _, _ := fairsched.SlotFromContext(ctx)
			ran = append(ran, fmt.Sprintf("%s attempt %d on %s", j.ID, j.Attempt, worker))
			if worker == "w1" {
				<-ctx.Done() // until w1 goes
				return context.Cause(ctx)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterWorker(fairsched.WorkerSpec{ID: "w1", Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{"render"}}}}); err != nil {
			t.Fatal(err)
		}
		if err := s.Enqueue(ctx, "render", "r1", nil); err != nil {
			t.Fatal(err)
		}
		env.Settle()
		if err := s.UnregisterWorker("w1"); err != nil {
			t.Fatal(err)
		}
		env.Settle()
		if err := s.RegisterWorker(fairsched.WorkerSpec{ID: "w2", Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{"render"}}}}); err != nil {
			t.Fatal(err)
		}
		fairschedtest.WaitIdle(t, s)
		if diff := cmp.Diff([]string{"r1 attempt 1 on w1", "r1 attempt 2 on w2"}, ran); diff != "" {
			t.Errorf("runs (-want +got):\n%s", diff)
		}
		if dead, err := s.DeadJobs(ctx, 0); len(dead) != 0 || err != nil {
			t.Errorf("dead jobs: %+v (%v); want none", dead, err)
		}
	})
}

// startFailingStore refuses the next fails commits that carry an
// attempt's start, as a disk that fails for a moment would.
type startFailingStore struct {
	fairsched.JobStore
	fails  atomic.Int32
	starts atomic.Int32 // commits that carried a start
}

func (f *startFailingStore) ApplyJobs(ops []fairsched.JobOp) error {
	for _, op := range ops {
		if op.Put != nil && op.Put.Attempt > 0 {
			f.starts.Add(1)
			if f.fails.Add(-1) >= 0 {
				return errors.New("disk failed for a moment")
			}
			break
		}
	}
	return f.JobStore.ApplyJobs(ops)
}

// TestUnwrittenStartIsNotRun: a durable job's handler runs only once its
// start is committed. A start the store fails to write is not run: the
// job is admitted again after core.UnwrittenStartDelay (100 ms), nothing
// counted — its handler then sees Attempt 1, it is not dead, and it ran
// once.
func TestUnwrittenStartIsNotRun(t *testing.T) {
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		fs := &startFailingStore{JobStore: durableStore(t, filepath.Join(t.TempDir(), "jobs.db"))}
		fs.fails.Store(2)
		s := fairschedtest.New(t, fairsched.WithClock(env.Clock), fairsched.WithStore(fs))
		if err := s.RegisterType("mail", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		var ran []string
		if err := s.RegisterHandler("mail", func(_ context.Context, j fairsched.Job) error {
			ran = append(ran, fmt.Sprintf("%s attempt %d at %v", j.ID, j.Attempt, env.Now()))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.Enqueue(context.Background(), "mail", "a", nil); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			env.Settle()
			env.Advance(100 * time.Millisecond)
		}
		fairschedtest.WaitIdle(t, s)
		if diff := cmp.Diff([]string{"a attempt 1 at 200ms"}, ran); diff != "" {
			t.Errorf("runs (-want +got):\n%s", diff)
		}
		if n := fs.starts.Load(); n != 3 {
			t.Errorf("%d commits carried a start; want 3 (two failed)", n)
		}
		if dead, err := s.DeadJobs(context.Background(), 0); len(dead) != 0 || err != nil {
			t.Errorf("dead jobs: %+v (%v)", dead, err)
		}
	})
}

// The crash test: a child process — this test binary, run again — keeps a
// scheduler on a bbolt file with durable jobs whose handler appends
// "id attempt" to a log; it enqueues the jobs it has no acknowledgement for
// and writes each acknowledgement (Enqueue returned nil, or the job was
// already durable) to another file. The parent kills it with SIGKILL at
// random points, starts it again each time, and lets the last run finish.

const (
	crashEnv  = "FAIRSCHED_CRASH_CHILD"
	crashJobs = 10_000
	crashKill = 5
)

func TestCrashRecovery(t *testing.T) {
	t.Parallel()
	if os.Getenv(crashEnv) != "" {
		t.Skip("the child of TestCrashRecovery")
	}
	dir := t.TempDir()
	db, runs, acks := filepath.Join(dir, "jobs.db"), filepath.Join(dir, "runs.log"), filepath.Join(dir, "acks.log")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	start := func() (*exec.Cmd, *bufio.Scanner) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+strings.Join([]string{db, runs, acks}, string(os.PathListSeparator)))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, bufio.NewScanner(out)
	}
	var killedAt []int
	for range crashKill {
		cmd, out := start()
		// Kill after a random number of attempts started, read from the
		// child's progress lines: a point in the run, not a time.
		at := 1 + rng.IntN(crashJobs/crashKill)
		n := 0
		for n < at && out.Scan() {
			if strings.HasPrefix(out.Text(), "started ") {
				n++
			}
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		killedAt = append(killedAt, n)
	}
	cmd, out := start()
	for out.Scan() {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the last run: %v", err)
	}

	acked := readLines(t, acks)
	ran := map[int]int{}
	for _, line := range readLines(t, runs) {
		f := strings.Split(line, "_") // readLines joins a line's fields with _
		if len(f) != 2 {
			continue // a line torn by the kill: its job ran again after
		}
		id, err := strconv.Atoi(f[0])
		if err != nil || id < 0 || id >= crashJobs {
			t.Errorf("a job that was never enqueued ran: %q", line)
			continue
		}
		ran[id]++
	}
	missing, twice := 0, 0
	for _, line := range acked {
		id, _ := strconv.Atoi(line)
		if ran[id] == 0 {
			missing++
		}
	}
	for _, n := range ran {
		if n > 1 {
			twice += n - 1
		}
	}
	t.Logf("%d acknowledged jobs, %d ran, killed after %v attempts started; %d runs more than once", len(uniq(acked)), len(ran), killedAt, twice)
	if missing > 0 {
		t.Errorf("%d acknowledged jobs never ran", missing)
	}
	if len(uniq(acked)) != crashJobs {
		t.Errorf("%d jobs acknowledged; want all %d", len(uniq(acked)), crashJobs)
	}
	// A job runs again only if a kill interrupted it, or came before its
	// success was committed: at most the slots plus one batch per kill.
	if limit := crashKill * 2 * 64; twice > limit {
		t.Errorf("%d repeated runs; want at most %d for %d kills", twice, limit, crashKill)
	}
	st, err := boltstore.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	left := 0
	if err := st.LoadJobs(func(fairsched.JobRecord) error { left++; return nil }); err != nil || left != 0 {
		t.Errorf("%d records left after every job succeeded (%v)", left, err)
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return strings.Fields(strings.ReplaceAll(string(data), " ", "_"))
}

func uniq(lines []string) map[string]bool {
	m := map[string]bool{}
	for _, l := range lines {
		m[l] = true
	}
	return m
}

// TestCrashChild is the child of TestCrashRecovery; it skips unless run
// as one.
func TestCrashChild(t *testing.T) {
	env := os.Getenv(crashEnv)
	if env == "" {
		t.Skip("run by TestCrashRecovery as its child process")
	}
	paths := strings.Split(env, string(os.PathListSeparator))
	db, runsPath, acksPath := paths[0], paths[1], paths[2]
	st, err := boltstore.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := fairsched.New(fairsched.WithStore(st), fairsched.WithMaxConcurrency(8))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if err := s.RegisterType("work", fairsched.JobTypeConfig{DefaultCost: time.Millisecond, Priority: 8}); err != nil {
		t.Fatal(err)
	}
	runs, err := os.OpenFile(runsPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer runs.Close()
	var stdout sync.Mutex
	if err := s.RegisterHandler("work", func(ctx context.Context, j fairsched.Job) error {
		stdout.Lock()
		fmt.Println("started", j.ID)
		stdout.Unlock()
		_, err := fmt.Fprintf(runs, "%s %d\n", j.ID, j.Attempt) // one write: appended whole
		return err
	}); err != nil {
		t.Fatal(err)
	}
	acked := uniq(readLines(t, acksPath))
	acks, err := os.OpenFile(acksPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer acks.Close()
	// Eight producers enqueue what is not acknowledged yet.
	var wg sync.WaitGroup
	ids := make(chan int)
	for range 8 {
		wg.Go(func() {
			for id := range ids {
				err := s.Enqueue(context.Background(), "work", strconv.Itoa(id), nil)
				if err != nil && !errors.Is(err, fairsched.ErrDuplicateJob) {
					t.Errorf("Enqueue %d: %v", id, err)
					continue
				}
				fmt.Fprintf(acks, "%d\n", id)
			}
		})
	}
	for id := range crashJobs {
		if !acked[strconv.Itoa(id)] {
			ids <- id
		}
	}
	close(ids)
	wg.Wait()
	fairschedtest.WaitIdle(t, s)
}

// The attempt kill test: a child process — this test binary, run again —
// runs durable jobs on a bbolt file whose handlers append "type id
// attempt" to a log, synced, and then block; the parent kills the child
// with SIGKILL once every job has started, starts it again, and lets the
// re-runs finish. Every interrupted job must run again with a larger
// Attempt than its interrupted run: each start is committed before its
// handler runs. The child's store commits a batch that carries a start
// slowly (a slow disk), which leaves a scheduler that started handlers
// before their starts were written no chance to hide it.

const (
	attemptEnv  = "FAIRSCHED_ATTEMPT_CHILD"
	attemptJobs = 8 // of each of two types
)

func TestKilledJobsRunAgainWithALargerAttempt(t *testing.T) {
	if os.Getenv(attemptEnv) != "" {
		t.Skip("the child of TestKilledJobsRunAgainWithALargerAttempt")
	}
	if testing.Short() {
		t.Skip("runs the test binary twice")
	}
	dir := t.TempDir()
	db, runs := filepath.Join(dir, "jobs.db"), filepath.Join(dir, "runs.log")
	child := func(mode string) (*exec.Cmd, *bufio.Scanner) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAttemptChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), attemptEnv+"="+strings.Join([]string{db, runs, mode}, string(os.PathListSeparator)))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd, bufio.NewScanner(out)
	}
	cmd, out := child("crash")
	for n := 0; n < 2*attemptJobs && out.Scan(); {
		if strings.HasPrefix(out.Text(), "started ") {
			n++
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	interrupted := readRuns(t, runs)

	cmd, out = child("finish")
	for out.Scan() {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the run after the kill: %v", err)
	}
	all := readRuns(t, runs)
	reruns := all[len(interrupted):]

	// Each job ran once before the kill, with attempt 1, and once after,
	// with a larger one: 2 (the interruption was its only attempt).
	var want []string
	for _, typ := range []string{"a", "b"} {
		for i := range attemptJobs {
			want = append(want, fmt.Sprintf("%s %d 1 → 2", typ, i))
		}
	}
	first := map[string]string{}
	for _, r := range interrupted {
		f := strings.Fields(r)
		first[f[0]+" "+f[1]] = f[2]
	}
	var got []string
	for _, r := range reruns {
		f := strings.Fields(r)
		got = append(got, fmt.Sprintf("%s %s %s → %s", f[0], f[1], first[f[0]+" "+f[1]], f[2]))
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("interrupted run → re-run attempts (-want +got):\n%s", diff)
	}
	st, err := boltstore.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	left := 0
	if err := st.LoadJobs(func(fairsched.JobRecord) error { left++; return nil }); err != nil || left != 0 {
		t.Errorf("%d records left after every job succeeded (%v)", left, err)
	}
}

// readRuns returns the complete lines of the runs log.
func readRuns(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	var out []string
	for _, l := range lines {
		if strings.HasSuffix(l, "\n") && len(strings.Fields(l)) == 3 {
			out = append(out, strings.TrimSuffix(l, "\n"))
		}
	}
	return out
}

// slowStartStore is a bbolt store whose commits that carry an attempt's
// start take a while longer: a slow disk.
type slowStartStore struct{ *boltstore.Store }

func (s slowStartStore) ApplyJobs(ops []fairsched.JobOp) error {
	for _, op := range ops {
		if op.Put != nil && op.Put.Attempt > 0 {
			time.Sleep(100 * time.Millisecond)
			break
		}
	}
	return s.Store.ApplyJobs(ops)
}

// TestAttemptChild is the child of TestKilledJobsRunAgainWithALargerAttempt;
// it skips unless run as one. "crash": it enqueues the jobs and their
// handlers block until the kill; "finish": the handlers return.
func TestAttemptChild(t *testing.T) {
	env := os.Getenv(attemptEnv)
	if env == "" {
		t.Skip("run by TestKilledJobsRunAgainWithALargerAttempt as its child process")
	}
	paths := strings.Split(env, string(os.PathListSeparator))
	db, runsPath, mode := paths[0], paths[1], paths[2]
	st, err := boltstore.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := fairsched.New(fairsched.WithStore(slowStartStore{st}), fairsched.WithMaxConcurrency(2*attemptJobs))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	runs, err := os.OpenFile(runsPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer runs.Close()
	var mu sync.Mutex // one line at a time, synced before the handler goes on
	handler := func(ctx context.Context, j fairsched.Job) error {
		mu.Lock()
		_, err := fmt.Fprintf(runs, "%s %s %d\n", j.Type, j.ID, j.Attempt)
		if err == nil {
			err = runs.Sync()
		}
		fmt.Println("started", j.Type, j.ID)
		mu.Unlock()
		if err != nil {
			return err
		}
		if mode == "crash" {
			<-ctx.Done() // until the kill
		}
		return ctx.Err()
	}
	for _, typ := range []fairsched.JobType{"a", "b"} {
		if err := s.RegisterType(typ, fairsched.JobTypeConfig{DefaultCost: time.Millisecond, Priority: 2 * attemptJobs}); err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterHandler(typ, handler); err != nil {
			t.Fatal(err)
		}
	}
	if mode != "crash" {
		fairschedtest.WaitIdle(t, s)
		return
	}
	for _, typ := range []fairsched.JobType{"a", "b"} {
		for i := range attemptJobs {
			if err := s.Enqueue(context.Background(), typ, strconv.Itoa(i), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	select {} // the parent kills it
}

// TestBoltRefusedRecordFailsOnlyItself: bbolt keeps what it is given, but
// boltstore encodes records as JSON, which cannot hold a time past year
// 9999: an Enqueue due then is refused by the store (ErrRecordRefused,
// with ErrStore) while the 31 others committed with it succeed and run.
func TestBoltRefusedRecordFailsOnlyItself(t *testing.T) {
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		st := durableStore(t, filepath.Join(t.TempDir(), "jobs.db"))
		s := fairschedtest.New(t, fairsched.WithClock(env.Clock), fairsched.WithStore(st))
		if err := s.RegisterType("mail", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		ran := map[string]int{}
		if err := s.RegisterHandler("mail", func(_ context.Context, j fairsched.Job) error { ran[j.ID]++; return nil }); err != nil {
			t.Fatal(err)
		}
		var jobs []fairsched.Enqueueing
		want, wantRan := make([]string, 32), map[string]int{}
		for i := range want {
			j := fairsched.Enqueueing{Type: "mail", ID: fmt.Sprintf("j%02d", i)}
			want[i] = "ok"
			if i == 20 {
				j.Options = []fairsched.JobOption{fairsched.RunAt(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))}
				want[i] = "refused"
			} else {
				wantRan[j.ID] = 1
			}
			jobs = append(jobs, j)
		}
		err := s.EnqueueMany(context.Background(), jobs)
		var many *fairsched.ManyError
		if !errors.As(err, &many) {
			t.Fatalf("EnqueueMany: %v; want a ManyError", err)
		}
		got := make([]string, len(many.Errs))
		for i, err := range many.Errs {
			switch {
			case err == nil:
				got[i] = "ok"
			case errors.Is(err, fairsched.ErrStore) && errors.Is(err, fairsched.ErrRecordRefused):
				got[i] = "refused"
			default:
				got[i] = err.Error()
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("answers (-want +got):\n%s", diff)
		}
		fairschedtest.WaitIdle(t, s)
		if diff := cmp.Diff(wantRan, ran); diff != "" {
			t.Errorf("runs (-want +got):\n%s", diff)
		}
	})
}
