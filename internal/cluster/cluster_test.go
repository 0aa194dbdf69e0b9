package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
)

// TestEveryJobRunsOnceWithinTheCap: three instances, one global cap of 3
// and two types in one exclusive conflict group over 5 repositories (the
// job's id); 60 durable jobs enqueued from all three run once each, never
// more than 3 at once cluster-wide and never two on one repository,
// spread over the instances.
func TestEveryJobRunsOnceWithinTheCap(t *testing.T) {
	url := pgtest.URL(t)
	rec := newRecorder()
	var ms []*member
	where := map[string]string{}
	whereC := make(chan [2]string, 100)
	for i := range 3 {
		id := fmt.Sprint("i", i+1)
		m := join(t, url, fast("d", id, 2), fairsched.WithMaxConcurrency(3))
		for _, typ := range []fairsched.JobType{"build", "gc"} {
			if err := m.s.RegisterType(typ, fairsched.JobTypeConfig{ConflictGroup: "repo", Priority: 8, DefaultCost: time.Millisecond}); err != nil {
				t.Fatal(err)
			}
			if err := m.s.RegisterHandler(typ, func(ctx context.Context, j fairsched.Job) error {
				token := string(j.Payload)
				rec.start(token, j.ID)
				defer rec.end(j.ID)
				whereC <- [2]string{token, id}
				time.Sleep(5 * time.Millisecond) // the job's work
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		ms = append(ms, m)
	}
	ctx := context.Background()
	// The id is the repository, the conflict key: a build and a gc of one
	// repository never run at once. The payload names the enqueue.
	enqueued := 0
	for i := 0; enqueued < 60; i++ {
		err := ms[i%3].s.Enqueue(ctx, []fairsched.JobType{"build", "gc"}[i%2], fmt.Sprint("r", i%5), []byte(fmt.Sprint("job-", i)))
		switch {
		case err == nil:
			enqueued++
		case errors.Is(err, fairsched.ErrDuplicateJob): // pending already
			time.Sleep(time.Millisecond)
		default:
			t.Fatal(err)
		}
	}
	rec.waitEnds(t, 60)
	close(whereC)
	for w := range whereC {
		where[w[0]] = w[1]
	}
	for id, n := range rec.starts {
		if n != 1 {
			t.Errorf("%s ran %d times", id, n)
		}
	}
	if len(rec.overlap) > 0 {
		t.Errorf("two jobs ran at once on %v", rec.overlap)
	}
	if len(rec.starts) != 60 {
		t.Errorf("%d distinct jobs ran, want 60", len(rec.starts))
	}
	if rec.peak > 3 {
		t.Errorf("%d jobs ran at once; the cap is 3", rec.peak)
	}
	per := map[string]int{}
	for _, in := range where {
		per[in]++
	}
	if len(per) < 2 {
		t.Errorf("jobs ran on %v: want them spread", per)
	}
	t.Logf("peak %d, per instance %v", rec.peak, per)
}

// TestRunSyncRunsOnItsOwnInstance: a RunSync on a follower runs its
// function there, under the leader's cap, and returns its error (the
// function's own value); a panic is an error too.
func TestRunSyncRunsOnItsOwnInstance(t *testing.T) {
	url := pgtest.URL(t)
	a := join(t, url, fast("d", "a", 2), fairsched.WithMaxConcurrency(1))
	b := join(t, url, fast("d", "b", 2), fairsched.WithMaxConcurrency(1))
	for _, m := range []*member{a, b} {
		if err := m.s.RegisterType("clone", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	}
	l := leaderOf(t, a, b)
	f := a
	if l == a {
		f = b
	}
	ctx := context.Background()
	ran := false
	if err := f.s.RunSync(ctx, "clone", "linux", "alice", func(ctx context.Context) error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("RunSync: %v, ran %v", err, ran)
	}
	mine := errors.New("mine")
	if err := f.s.RunSync(ctx, "clone", "git", "bob", func(ctx context.Context) error { return mine }); !errors.Is(err, mine) {
		t.Fatalf("RunSync returned %v, want the function's own error", err)
	}
	if err := f.s.RunSync(ctx, "clone", "go", "carol", func(ctx context.Context) error { panic("boom") }); err == nil {
		t.Fatal("a panic returned nil")
	}
	snap, err := l.s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Cluster == nil || !snap.Cluster.Leading || len(snap.Cluster.Instances) != 2 {
		t.Fatalf("leader's cluster snapshot: %+v", snap.Cluster)
	}
}

// TestMostSpecialisedInstance: a job goes to the instance with a free
// slot that handles the fewest types, keeping the one that handles more
// free for the type only it takes: "clone" runs on "narrow" (clone only),
// not on "wide" (clone and repack), and a repack then finds "wide" free.
func TestMostSpecialisedInstance(t *testing.T) {
	url := pgtest.URL(t)
	// Named so that the order of names would pick the wrong one.
	narrow := join(t, url, fast("d", "z-narrow", 1))
	wide := join(t, url, fast("d", "a-wide", 1))
	ran := make(chan string, 4)
	release := make(chan struct{})
	defer close(release)
	cfg := fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}
	for _, m := range []*member{narrow, wide} {
		for _, typ := range []fairsched.JobType{"clone", "repack"} {
			if err := m.s.RegisterType(typ, cfg); err != nil {
				t.Fatal(err)
			}
		}
	}
	handler := func(name string) fairsched.Handler {
		return func(ctx context.Context, j fairsched.Job) error {
			ran <- string(j.Type) + " on " + name
			<-release
			return nil
		}
	}
	for _, r := range []struct {
		m     *member
		name  string
		types []fairsched.JobType
	}{{narrow, "narrow", []fairsched.JobType{"clone"}}, {wide, "wide", []fairsched.JobType{"clone", "repack"}}} {
		for _, typ := range r.types {
			if err := r.m.s.RegisterHandler(typ, handler(r.name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Wait until the leader counts both instances with their types.
	waitTypes(t, leaderOf(t, narrow, wide), 3)
	ctx := context.Background()
	if err := narrow.s.Enqueue(ctx, "clone", "linux", nil); err != nil {
		t.Fatal(err)
	}
	if got := <-ran; got != "clone on narrow" {
		t.Fatalf("the clone ran as %q, want on narrow", got) // the repack would find no free instance
	}
	if err := narrow.s.Enqueue(ctx, "repack", "linux", nil); err != nil {
		t.Fatal(err)
	}
	if got := <-ran; got != "repack on wide" {
		t.Errorf("the repack ran as %q, want on wide", got)
	}
}

// TestCoalescingEnqueueAcrossInstances: a durable job of a coalescing
// type enqueued again from another instance while it is pending is one
// run for both (nil, as in one process); of another type it is
// ErrDuplicateJob.
func TestCoalescingEnqueueAcrossInstances(t *testing.T) {
	url := pgtest.URL(t)
	a := join(t, url, fast("d", "a", 2))
	b := join(t, url, fast("d", "b", 2))
	for _, m := range []*member{a, b} {
		if err := m.s.RegisterType("fetch", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond, Coalesce: true}); err != nil {
			t.Fatal(err)
		}
		if err := m.s.RegisterType("mail", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	// No handler anywhere yet: both stay pending.
	if err := a.s.Enqueue(ctx, "fetch", "linux", nil); err != nil {
		t.Fatal(err)
	}
	if err := b.s.Enqueue(ctx, "fetch", "linux", nil); err != nil {
		t.Errorf("a second enqueue of a coalescing type: %v, want nil", err)
	}
	if err := a.s.Enqueue(ctx, "mail", "m1", nil); err != nil {
		t.Fatal(err)
	}
	if err := b.s.Enqueue(ctx, "mail", "m1", nil); !errors.Is(err, fairsched.ErrDuplicateJob) {
		t.Errorf("a second enqueue of another type: %v, want ErrDuplicateJob", err)
	}
	if n, err := a.st.CountJobs(ctx); err != nil || n != 2 {
		t.Errorf("%d rows, %v; want one per (type, id)", n, err)
	}
}

// TestSupersedeAcrossInstances: Enqueue with Supersede on another
// instance replaces a pending durable job — its payload, one run — and is
// ErrDuplicateJob while the job runs, as in one process.
func TestSupersedeAcrossInstances(t *testing.T) {
	url := pgtest.URL(t)
	a := join(t, url, fast("d", "a", 2), fairsched.WithMaxConcurrency(1))
	b := join(t, url, fast("d", "b", 2), fairsched.WithMaxConcurrency(1))
	runs := make(chan string, 4)
	release := make(chan struct{}, 4)
	t.Cleanup(func() { close(release) }) // before the members close: a handler still held returns
	for _, m := range []*member{a, b} {
		if err := m.s.RegisterType("index", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		if err := m.s.RegisterHandler("index", func(ctx context.Context, j fairsched.Job) error {
			runs <- j.ID + " " + string(j.Payload)
			<-release
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if err := a.s.Enqueue(ctx, "index", "git", []byte("v1")); err != nil { // takes the one slot
		t.Fatal(err)
	}
	select {
	case got := <-runs:
		if got != "git v1" {
			t.Fatalf("ran %q", got)
		}
	case <-time.After(60 * time.Second): // a liveness bound: fail, not hang
		t.Fatal("the first job has not run after 60 s")
	}
	if err := a.s.Enqueue(ctx, "index", "linux", []byte("v1")); err != nil { // waits for the slot
		t.Fatal(err)
	}
	waitFor(t, func() bool { snap, _ := leaderOf(t, a, b).s.Snapshot(ctx); return len(snap.Pending) == 1 })
	if err := b.s.Enqueue(ctx, "index", "linux", []byte("v2"), fairsched.Supersede()); err != nil {
		t.Fatalf("supersede of a pending job: %v", err)
	}
	if err := b.s.Enqueue(ctx, "index", "git", []byte("v2"), fairsched.Supersede()); !errors.Is(err, fairsched.ErrDuplicateJob) {
		t.Errorf("supersede of a running job: %v, want ErrDuplicateJob", err)
	}
	release <- struct{}{}
	select {
	case got := <-runs:
		if got != "linux v2" {
			t.Errorf("ran %q, want the superseding linux v2", got)
		}
	case <-time.After(60 * time.Second): // a liveness bound, not a timed assertion: fail, not hang
		t.Fatal("the superseding job has not run after 60 s")
	}
	release <- struct{}{}
	waitFor(t, func() bool { n, _ := a.st.CountJobs(ctx); return n == 0 })
	if len(runs) != 0 {
		t.Errorf("ran again: %q", <-runs)
	}
}
