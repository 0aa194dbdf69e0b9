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
