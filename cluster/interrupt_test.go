package cluster_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
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
	t.Cleanup(st.Close)
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
		if err := st.Insert(ctx, rec); err != nil {
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
		ins, err := st.Instances(context.Background(), childDomain)
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
