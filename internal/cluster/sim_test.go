package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// TestClusterInvariants is the invariant simulation on N = 1, 2, 3
// instances of one database, on the wall clock, with faults injected: the
// leader cut off from the database (a partition) and healed, an instance
// whose heartbeats stall (it is declared lost while it still runs), and a
// graceful handover (the leader closes, a new instance joins). Throughout:
// never more jobs running cluster-wide than the cap, never two on one
// conflict id; every enqueued durable job succeeds at least once, and
// more than once only if one of its attempts was interrupted by a fault;
// every RunSync returns, its function having run when it returns nil; and
// nothing is left in the database once all is done.
func TestClusterInvariants(t *testing.T) {
	for _, n := range []int{1, 2, 3} {
		t.Run(fmt.Sprint("instances=", n), func(t *testing.T) {
			if testing.Short() && n < 3 {
				t.Skip("one and two instances run in make check; TestMemSim covers them over seeds in virtual time")
			}
			simulate(t, n, uint64(n))
		})
	}
}

type simMember struct {
	name string
	f    *faulty
	m    *member
}

func simulate(t *testing.T, n int, seed uint64) {
	url := pgtest.URL(t)
	rng := rand.New(rand.NewPCG(seed, 17))
	const jobs, syncs, capN = 60, 15, 3
	rec := newRecorder()
	var mu sync.Mutex
	succeeded := map[string]int{}
	interrupted := map[string]int{}
	retry := fairsched.RetryPolicy{MaxAttempts: 50, MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
	// The successful runs, when each instance was faulted and when each
	// success's row was deleted: a job may succeed twice only if a success
	// ran on an instance faulted before that success was written, so that
	// the fault could have kept its report from the database.
	type run struct {
		inst string
		seq  uint64
		at   time.Time
	}
	runs := map[string][]run{}
	deleted := map[uint64]time.Time{}
	type window struct{ from, to time.Time }
	faulted := map[string][]window{}
	fault := func(inst string, d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		faulted[inst] = append(faulted[inst], window{now, now.Add(d)})
	}
	work := func(ctx context.Context, id, conflict, inst string, seq uint64, d time.Duration) error {
		rec.start(id+" on "+inst, conflict)
		defer rec.end(conflict)
		defer rec.left(id + " on " + inst)
		select {
		case <-time.After(d): // the job's work
			mu.Lock()
			succeeded[id]++
			runs[id] = append(runs[id], run{inst, seq, time.Now()})
			mu.Unlock()
			return nil
		case <-ctx.Done():
			mu.Lock()
			interrupted[id]++
			mu.Unlock()
			return context.Cause(ctx)
		}
	}
	gen := 0
	var all []*simMember
	start := func() *simMember {
		gen++
		st, err := pgstore.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		f := &faulty{b: st.ClusterBackend(), deleted: func(seqs []uint64) {
			now := time.Now()
			mu.Lock()
			defer mu.Unlock()
			for _, s := range seqs {
				deleted[s] = now
			}
		}}
		name := fmt.Sprint("n", gen)
		s, err := fairsched.New(fairsched.WithCluster(link{f}, fast("sim", name, 3)), fairsched.WithMaxConcurrency(capN))
		if err != nil {
			t.Fatal(err)
		}
		m := &member{s: s, st: st}
		t.Cleanup(m.close)
		for _, typ := range []fairsched.JobType{"build", "gc", "index", "clone"} {
			cfg := fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}
			if typ != "clone" {
				cfg.ConflictGroup = "repo" // one job at a time on a repository
			}
			if err := s.RegisterType(typ, cfg); err != nil {
				t.Fatal(err)
			}
		}
		for _, typ := range []fairsched.JobType{"build", "gc", "index"} {
			if err := s.RegisterHandler(typ, func(ctx context.Context, j fairsched.Job) error {
				// The payload names the enqueue; the id is the repository.
				return work(ctx, string(j.Payload), j.ID, name, j.Seq, time.Duration(20+j.Seq*37%100)*time.Millisecond)
			}); err != nil {
				t.Fatal(err)
			}
		}
		sm := &simMember{name: name, f: f, m: m}
		all = append(all, sm)
		return sm
	}
	live := func() []*simMember {
		var out []*simMember
		for _, sm := range all {
			if sm.m.s != nil && !sm.f.cut.Load() {
				out = append(out, sm)
			}
		}
		return out
	}
	open := func() []*simMember { // cut ones included: their calls fail
		var out []*simMember
		for _, sm := range all {
			if sm.m.s != nil {
				out = append(out, sm)
			}
		}
		return out
	}
	for range n {
		start()
	}
	leader := func() *simMember {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			for _, sm := range live() {
				snap, err := sm.m.s.Snapshot(context.Background())
				if err == nil && snap.Cluster != nil && snap.Cluster.Leading {
					return sm
				}
			}
			time.Sleep(20 * time.Millisecond) // polling the cluster's own state for a condition
		}
		t.Fatal("no leader in 30 s")
		return nil
	}

	// The workload: durable jobs from random instances, RunSync callers.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var callers sync.WaitGroup
	syncErrs := make(chan error, syncs)
	enqueued := map[string]bool{}
	faults := map[int]func(){}
	faults[jobs/4] = func() { // the leader is cut off past its lease, then healed
		l := leader()
		t.Logf("cut %s (leader) for 2.5 s", l.name)
		fault(l.name, 2500*time.Millisecond)
		l.f.cut.Store(true)
		go func() {
			time.Sleep(2500 * time.Millisecond) // the partition's length: a fault's shape, not a synchronisation
			l.f.cut.Store(false)
		}()
	}
	faults[jobs/2] = func() { // an instance's heartbeats stall
		ls := live()
		sm := ls[rng.IntN(len(ls))]
		t.Logf("stall %s's heartbeats for 1.5 s", sm.name)
		fault(sm.name, 1500*time.Millisecond)
		sm.f.slow.Store(true)
		go func() {
			time.Sleep(1500 * time.Millisecond)
			sm.f.slow.Store(false)
		}()
	}
	faults[3*jobs/4] = func() { // a graceful handover
		l := leader()
		t.Logf("close %s (leader); a new instance joins", l.name)
		fault(l.name, time.Hour)
		l.m.close()
		start()
	}
	for i := range jobs {
		if f := faults[i]; f != nil {
			f()
		}
		if i%4 == 0 && i/4 < syncs {
			ls := open()
			sm := ls[rng.IntN(len(ls))]
			id := fmt.Sprint("sync-", i)
			callers.Add(1)
			go func() {
				defer callers.Done()
				ran := false
				err := sm.m.s.RunSync(ctx, "clone", id, fmt.Sprint("tenant-", i%3), func(ctx context.Context) error {
					ran = true
					return work(ctx, id, "", sm.name, 0, 10*time.Millisecond)
				}, fairsched.WithRetry(retry))
				if err == nil && !ran {
					err = errors.New(id + ": nil without running")
				}
				if err != nil && !errors.Is(err, fairsched.ErrWorkerLost) && !errors.Is(err, errCut) && !errors.Is(err, fairsched.ErrClosed) {
					err = fmt.Errorf("%s on %s: %w", id, sm.name, err)
				} else {
					err = nil // a fault's error is an answer too
				}
				syncErrs <- err
			}()
		}
		for {
			ls := open()
			sm := ls[rng.IntN(len(ls))]
			token := fmt.Sprint("job-", i)
			typ := []fairsched.JobType{"build", "gc", "index"}[rng.IntN(3)]
			err := sm.m.s.Enqueue(ctx, typ, fmt.Sprint("repo-", rng.IntN(4)), []byte(token), fairsched.WithRetry(retry),
				fairsched.WithFairnessKey(fmt.Sprint("tenant-", i%3)))
			if err == nil {
				enqueued[token] = true
				break
			}
			if errors.Is(err, fairsched.ErrDuplicateJob) {
				break // that repository has that job pending already
			}
			if !errors.Is(err, errCut) {
				t.Fatalf("enqueue %s: %v", token, err)
			}
			time.Sleep(10 * time.Millisecond) // every instance is cut off: try again shortly
		}
		time.Sleep(time.Duration(rng.IntN(100)) * time.Millisecond) // arrivals spread over three seconds
	}
	callers.Wait()
	close(syncErrs)
	for err := range syncErrs {
		if err != nil {
			t.Error(err)
		}
	}
	// Every durable job succeeds.
	deadline := time.Now().Add(time.Minute)
	for {
		mu.Lock()
		missing := 0
		for id := range enqueued {
			if succeeded[id] == 0 {
				missing++
			}
		}
		mu.Unlock()
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d durable jobs never succeeded", missing)
		}
		time.Sleep(20 * time.Millisecond)
	}
	rec.mu.Lock()
	peak, overlap := rec.peak, rec.overlap
	rec.mu.Unlock()
	if peak > capN {
		rec.mu.Lock()
		t.Errorf("%d jobs ran at once cluster-wide; the cap is %d: %v", peak, capN, rec.atPeak)
		rec.mu.Unlock()
	}
	if len(overlap) > 0 {
		t.Errorf("two jobs ran at once on %v", overlap)
	}
	mu.Lock()
	dups := 0
	for id, k := range succeeded {
		if k > 1 {
			dups++
			// A success's report may have been lost if its instance was
			// faulted after it ran and before its row was deleted (if it
			// ever was) and the job ran again. The deletes are the
			// committed turns' own account, not a margin of the clock.
			lost := false
			for i, r := range runs[id][:k-1] {
				next := runs[id][i+1].at
				written, ok := deleted[r.seq]
				for _, w := range faulted[r.inst] {
					lost = lost || !w.to.Before(r.at) && w.from.Before(next) && (!ok || r.seq == 0 || w.from.Before(written))
				}
			}
			if !lost {
				t.Errorf("%s succeeded %d times (%v) with no fault to lose a report", id, k, runs[id])
			}
		}
	}
	t.Logf("peak %d of cap %d; %d jobs ran more than once after a fault; %d attempts interrupted", peak, capN, dups, len(interrupted))
	mu.Unlock()
	// Nothing is left behind: the durable jobs' rows are deleted, the
	// RunSync rows forgotten.
	for _, sm := range all {
		sm.f.cut.Store(false)
	}
	probe := all[len(all)-1].m.st
	for {
		n, err := probe.CountJobs(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d job rows left in the database", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
