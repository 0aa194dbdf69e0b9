package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/internal/pgtest"
)

// writeLog is a Backend that records the leader's deletes of successes:
// those of its turns (Grant's gone) and those its scheduler writes itself
// (a delete among a turn's record ops, or in ApplyJobs).
type writeLog struct {
	cluster.Backend
	mu        sync.Mutex
	turn      []uint64 // deleted by Grant
	scheduler []uint64 // deleted by the scheduler's own writes
}

func (w *writeLog) Grant(ctx context.Context, domain string, epoch int64, ops []machine.JobOp, succeeded []cluster.End, grants []cluster.Grant) ([]uint64, []uint64, error) {
	gone, took, err := w.Backend.Grant(ctx, domain, epoch, ops, succeeded, grants)
	w.mu.Lock()
	w.turn = append(w.turn, gone...)
	if err == nil {
		for _, op := range ops {
			if op.Put == nil {
				w.scheduler = append(w.scheduler, op.Delete)
			}
		}
	}
	w.mu.Unlock()
	return gone, took, err
}

func (w *writeLog) Domain(ctx context.Context, domain string, epoch int64) (machine.JobStore, []core.JobRecord, cluster.Feed, error) {
	st, recs, feed, err := w.Backend.Domain(ctx, domain, epoch)
	if err != nil {
		return nil, nil, nil, err
	}
	return &loggedStore{JobStore: st, w: w}, recs, feed, nil
}

func (w *writeLog) deletes() (turn, scheduler []uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	turn, scheduler = slices.Clone(w.turn), slices.Clone(w.scheduler)
	slices.Sort(turn)
	slices.Sort(scheduler)
	return turn, scheduler
}

type loggedStore struct {
	machine.JobStore
	w *writeLog
}

func (s *loggedStore) ApplyJobs(ops []machine.JobOp) error {
	err := s.JobStore.ApplyJobs(ops)
	s.w.mu.Lock()
	for _, op := range ops {
		if op.Put == nil && err == nil {
			s.w.scheduler = append(s.w.scheduler, op.Delete)
		}
	}
	s.w.mu.Unlock()
	return err
}

// TestReportedSuccessesGoInTheLeadersTurn: a job that succeeds on another
// instance than the leader's is reported through its row; the leader
// deletes that row in its next turn's write, with the grants of that turn,
// and its scheduler writes nothing more of the job — no transaction of its
// own a batch of successes. Every job's row is gone at the end, each
// deleted once, by a turn.
func TestReportedSuccessesGoInTheLeadersTurn(t *testing.T) {
	url := pgtest.URL(t)
	log := &writeLog{}
	// The leader has no handler: every job runs on the other instance.
	lead := joinVia(t, url, func(b cluster.Backend) cluster.Backend { log.Backend = b; return log }, fast("d", "a-leader", 4))
	if leaderOf(t, lead) != lead {
		t.Fatal("the first instance does not lead")
	}
	exec := join(t, url, fast("d", "b-executor", 4))
	if err := lead.s.RegisterType("work", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var ran []uint64
	rec := newRecorder()
	serve(t, exec, "work", func(ctx context.Context, j fairsched.Job) error {
		mu.Lock()
		ran = append(ran, j.Seq)
		mu.Unlock()
		rec.end("")
		return nil
	})
	const n = 30
	ctx := context.Background()
	for i := range n {
		if err := lead.s.Enqueue(ctx, "work", fmt.Sprint("j", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	rec.waitEnds(t, n)
	pgtest.Eventually(t, "every row deleted", func() bool {
		c, err := lead.st.CountJobs(ctx)
		return err == nil && c == 0
	})
	// The wrapper logs a turn's deletes once its write has returned,
	// which may be after the rows are seen gone.
	pgtest.Eventually(t, "every delete logged", func() bool {
		turn, scheduler := log.deletes()
		return len(turn)+len(scheduler) >= n
	})
	mu.Lock()
	want := slices.Sorted(slices.Values(ran))
	mu.Unlock()
	turn, scheduler := log.deletes()
	if diff := cmp.Diff(want, turn); diff != "" {
		t.Errorf("rows deleted by the leader's turns (-ran +deleted):\n%s", diff)
	}
	if len(scheduler) > 0 {
		t.Errorf("the scheduler deleted %v itself as well", scheduler)
	}
}

// TestRetainedSuccessesStay: with WithRetention, a success's record is
// kept (state succeeded, not running) whether the job ran on the leader's
// instance — its success handed back in process — or on another, and
// whichever comes first: the leader's delete of the success's row or its
// scheduler's write of the kept record.
func TestRetainedSuccessesStay(t *testing.T) {
	url := pgtest.URL(t)
	keep := fairsched.WithRetention(time.Hour)
	lead := joinLeader(t, url, fast("d", "a-leader", 2), keep)
	other := join(t, url, fast("d", "b-other", 2), keep)
	var mu sync.Mutex
	where := map[string]int{}
	var seqs []uint64
	rec := newRecorder()
	for _, m := range []struct {
		m    *member
		name string
	}{{lead, "a-leader"}, {other, "b-other"}} {
		serve(t, m.m, "work", func(ctx context.Context, j fairsched.Job) error {
			mu.Lock()
			where[m.name]++
			seqs = append(seqs, j.Seq)
			mu.Unlock()
			rec.end("")
			return nil
		})
	}
	waitTypes(t, lead, 2)
	const n = 40
	ctx := context.Background()
	for i := range n {
		if err := lead.s.Enqueue(ctx, "work", fmt.Sprint("j", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	rec.waitEnds(t, n)
	mu.Lock()
	if where["a-leader"] == 0 || where["b-other"] == 0 {
		t.Errorf("jobs ran %v: want some on each instance", where)
	}
	all := slices.Clone(seqs)
	mu.Unlock()
	state := func() []string {
		finals, err := lead.st.ClusterBackend().Finals(ctx, all)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := lead.st.ClusterBackend().Rows(ctx, all)
		if err != nil {
			t.Fatal(err)
		}
		running := map[uint64]bool{}
		for _, r := range rows {
			running[r.Seq] = r.Running
		}
		final := map[uint64]cluster.Final{}
		for _, f := range finals {
			final[f.Seq] = f
		}
		var out []string
		for _, seq := range all {
			f, ok := final[seq]
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("%d pending", seq))
			case f.Gone || f.State != core.RecordSucceeded || running[seq]:
				out = append(out, fmt.Sprintf("%d gone %v state %d running %v", seq, f.Gone, f.State, running[seq]))
			}
		}
		slices.Sort(out)
		return out
	}
	var got []string
	pgtest.Eventually(t, "every success kept, none running", func() bool {
		got = state()
		return len(got) == 0
	})
	if len(got) > 0 {
		t.Errorf("records not kept as succeeded: %v", got)
	}
}
