package fairsched_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/boltstore"
	"github.com/fairsched/fairsched/fairschedtest"
)

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
