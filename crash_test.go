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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/boltstore"
	"github.com/fairsched/fairsched/fairschedtest"
)

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
