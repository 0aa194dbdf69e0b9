package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/boltstore"
	"github.com/fairsched/fairsched/fairschedtest"
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
