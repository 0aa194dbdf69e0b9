package cluster_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// TestKilledInstanceJobsRunAgainWithoutRetries: with its types' default
// retry policy (no retries), a durable job whose instance is killed
// (SIGKILL) while it runs was interrupted, not failed: once the leader
// declares the instance lost, the job runs again on a live instance with
// a larger Attempt and succeeds; no job is dead. Two processes: the
// leader, and an executor that is killed once every job has started.
func TestKilledInstanceJobsRunAgainWithoutRetries(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process, a few seconds")
	}
	url := pgtest.URL(t)
	ctx := context.Background()
	st, err := pgstore.Open(ctx, url) // applies the schema before the children race to
	if err != nil {
		t.Fatal(err)
	}
	pgtest.CloseAtEnd(t, st)
	const (
		slots = 4
		jobs  = 2 * slots // every slot of both instances busy
		work  = 2 * time.Second
	)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "jobs.log")
	children := map[string]*child{}
	t.Cleanup(func() {
		if t.Failed() {
			for _, name := range sortedNames(children) {
				children[name].dumpStderr(t)
			}
		}
	})
	children["c1"] = startChild(t, dir, url, logPath, "c1", slots, 2*jobs, work, childRetryEnv+"=none")
	leader := waitLeader(t, st, children, "")
	children["c2"] = startChild(t, dir, url, logPath, "c2", slots, 2*jobs, work, childRetryEnv+"=none")
	waitInstances(t, st, 2)
	for i := range jobs {
		rec := &fairsched.JobRecord{Type: "build", ID: fmt.Sprint("j", i), EnqueuedAt: time.Now().UTC()}
		if err := st.ClusterBackend().Insert(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	victim := "c1"
	if leader == "c1" {
		victim = "c2"
	}
	lg := &jobLog{path: logPath}
	lg.waitFor(t, "every job started, some on "+victim, func(s logState) bool {
		return s.open[leader]+s.open[victim] == jobs && s.open[victim] > 0
	})
	children[victim].kill(t, st)

	// Wait for the table to empty: every job succeeded and was deleted.
	deadline := time.Now().Add(time.Minute) // a failure guard only
	for {
		n, dead := 0, []string(nil)
		if err := st.LoadJobs(func(r fairsched.JobRecord) error {
			n++
			if r.State != core.RecordPending {
				dead = append(dead, fmt.Sprintf("%s/%s attempt %d: %s", r.Type, r.ID, r.Attempt, r.LastError))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(dead) > 0 {
			t.Fatalf("jobs are dead: %q", dead)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs still in the table after a minute", n)
		}
		time.Sleep(20 * time.Millisecond) // polling the table, not a timing assertion
	}
	children[leader].stop(t)

	// The killed instance's jobs ran again on the leader, each with a
	// larger attempt; the leader's own ran once.
	var want, got []string
	last := map[string]event{}
	for _, e := range lg.events(t) {
		if !e.start {
			continue
		}
		if prev, ok := last[e.id]; ok {
			got = append(got, fmt.Sprintf("%s: %d on %s → %d on %s", e.id, prev.attempt, prev.inst, e.attempt, e.inst))
		}
		last[e.id] = e
	}
	for id, e := range last {
		if e.inst == victim {
			t.Errorf("%s last ran on the killed %s", id, victim)
		}
	}
	for _, e := range lg.events(t) {
		if e.start && e.inst == victim {
			want = append(want, fmt.Sprintf("%s: 1 on %s → 2 on %s", e.id, victim, leader))
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("re-runs (-want +got):\n%s", diff)
	}
}

// waitInstances waits until n instances of the children's domain are
// registered.
func waitInstances(t *testing.T, st *pgstore.Store, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ins, err := st.ClusterBackend().Instances(context.Background(), childDomain)
		if err != nil {
			t.Fatal(err)
		}
		if len(ins) >= n {
			return
		}
		time.Sleep(5 * time.Millisecond) // polling the instances, not a timing assertion
	}
	t.Fatalf("fewer than %d instances in 30 s", n)
}

// TestLostWorkerInterruptionsBounded: in cluster mode a durable job whose
// worker is unregistered while it runs was interrupted: with its type's
// default retry policy it runs again, with a larger Attempt, each time the
// worker comes back — until it has been interrupted more than
// DefaultMaxInterruptions times: then it is dead, with an error matching
// ErrWorkerLost that counts the interruptions.
func TestLostWorkerInterruptionsBounded(t *testing.T) {
	url := pgtest.URL(t)
	lead := joinLeader(t, url, fast("d", "lead", 2))
	host := join(t, url, fast("d", "host", 2))
	cfg := fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond, RequiresWorker: true}
	for _, m := range []*member{lead, host} {
		if err := m.s.RegisterType("compile", cfg); err != nil {
			t.Fatal(err)
		}
	}
	started := make(chan int, 8)
	if err := host.s.RegisterHandler("compile", func(ctx context.Context, j fairsched.Job) error {
		started <- j.Attempt
		<-ctx.Done() // until its worker goes
		return context.Cause(ctx)
	}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	noWorkers := func() bool {
		snap, err := lead.s.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range snap.Pending {
			if p.ID == "c1" && p.Reason == fairsched.ReasonNoWorkers {
				return true
			}
		}
		return false
	}
	if err := lead.s.Enqueue(ctx, "compile", "c1", nil); err != nil {
		t.Fatal(err)
	}
	var dead []fairsched.DeadJob
	isDead := func() bool {
		var err error
		dead, err = lead.s.DeadJobs(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(dead) > 0
	}
	// The worker comes back whenever the leader has seen it go, and goes
	// once the job runs on it, until the job is dead. (The leader may see
	// a worker go after the job was granted to it again: that attempt is
	// interrupted too, sometimes before its handler starts.)
	var attempts []int
	for !isDead() {
		waitFor(t, func() bool { return noWorkers() || isDead() })
		if len(dead) > 0 {
			break
		}
		if err := host.s.RegisterWorker(fairsched.WorkerSpec{ID: "gpu", Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{"compile"}}}}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool { return len(started) > 0 || isDead() })
		for len(started) > 0 {
			attempts = append(attempts, <-started)
		}
		if err := host.s.UnregisterWorker("gpu"); err != nil {
			t.Fatal(err)
		}
	}
	if len(attempts) == 0 || !slices.IsSorted(attempts) || len(slices.Compact(slices.Clone(attempts))) != len(attempts) ||
		attempts[len(attempts)-1] > 4 {
		t.Errorf("the handler saw attempts %v; want each larger than the last, up to 4", attempts)
	}
	var got []string
	for _, d := range dead {
		got = append(got, fmt.Sprintf("%s attempt %d, worker lost %v, interrupted 4 times %v", d.ID, d.Attempt,
			strings.HasPrefix(d.LastError, fairsched.ErrWorkerLost.Error()), strings.Contains(d.LastError, "interrupted 4 times")))
	}
	if diff := cmp.Diff([]string{"c1 attempt 4, worker lost true, interrupted 4 times true"}, got); diff != "" {
		t.Errorf("dead jobs (-want +got):\n%s\n%+v", diff, dead)
	}
}

// TestHandlerReturningCtxErrIsInterrupted: a handler that returns its
// context's plain error (context.Canceled) once its executor stops the
// attempt — its worker unregistered — was interrupted, not failed: with
// the default retry policy (no retries) the job runs again when a worker
// is back, with a larger Attempt, and is not dead.
func TestHandlerReturningCtxErrIsInterrupted(t *testing.T) {
	url := pgtest.URL(t)
	lead := joinLeader(t, url, fast("d", "lead", 2))
	host := join(t, url, fast("d", "host", 2))
	cfg := fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond, RequiresWorker: true}
	for _, m := range []*member{lead, host} {
		if err := m.s.RegisterType("compile", cfg); err != nil {
			t.Fatal(err)
		}
	}
	started, done := make(chan int, 8), make(chan int, 8)
	if err := host.s.RegisterHandler("compile", func(ctx context.Context, j fairsched.Job) error {
		started <- j.Attempt
		if j.Attempt > 1 {
			done <- j.Attempt
			return nil
		}
		<-ctx.Done() // until its worker goes
		return ctx.Err()
	}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	worker := fairsched.WorkerSpec{ID: "gpu", Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{"compile"}}}}
	if err := host.s.RegisterWorker(worker); err != nil {
		t.Fatal(err)
	}
	if err := lead.s.Enqueue(ctx, "compile", "c1", nil); err != nil {
		t.Fatal(err)
	}
	attempts := []int{<-started}
	if err := host.s.UnregisterWorker("gpu"); err != nil {
		t.Fatal(err)
	}
	// The job runs again once a worker is back (or at once, should the
	// leader not have seen the worker go yet).
	if err := host.s.RegisterWorker(worker); err != nil {
		t.Fatal(err)
	}
	isDead := func() bool {
		dead, err := lead.s.DeadJobs(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(dead) > 0
	}
	waitFor(t, func() bool { return len(done) > 0 || isDead() })
	for len(started) > 0 {
		attempts = append(attempts, <-started)
	}
	if diff := cmp.Diff([]int{1, 2}, attempts); diff != "" {
		t.Errorf("attempts the handler saw (-want +got):\n%s", diff)
	}
	dead, err := lead.s.DeadJobs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(dead) != 0 {
		t.Errorf("dead jobs %+v; want none: the attempt was interrupted", dead)
	}
}
