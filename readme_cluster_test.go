package fairsched_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// README:begin cluster

// JoinCluster makes this replica of the proxy one instance of a cluster:
// every replica shares one scheduler, its jobs and decisions kept in
// PostgreSQL. Give every replica the same options and types.
func JoinCluster(ctx context.Context, databaseURL, replica string, opts ...fairsched.Option) (*fairsched.Scheduler, func(), error) {
	st, err := pgstore.Open(ctx, databaseURL) // applies the schema's migrations
	if err != nil {
		return nil, nil, err
	}
	s, err := fairsched.New(append(opts, fairsched.WithCluster(st, fairsched.ClusterConfig{
		Domain: "git-proxy", Instance: replica, Slots: 8}))...)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return s, func() { s.Close(context.Background()); st.Close() }, nil
}

// README:end

// ReplicaName names this replica in the cluster: its pod's name — stable
// across restarts in a StatefulSet, and safe so: each process joins as an
// incarnation of its own, so a restarted one inherits nothing of the one
// before it — else its host's. main calls
// JoinCluster(ctx, os.Getenv("DATABASE_URL"), ReplicaName()).
func ReplicaName() string {
	if name := os.Getenv("POD_NAME"); name != "" { // set from metadata.name in the pod's spec
		return name
	}
	name, _ := os.Hostname()
	return name
}

// TestJoinCluster: two replicas joined as the README shows share one cap
// of one: a clone asked on each runs once, one after the other, and the
// mirror enqueued on one runs once, on either.
func TestJoinCluster(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	ctx := context.Background()
	var replicas []*fairsched.Scheduler
	fetched := make(chan string, 2)
	for _, name := range []string{"proxy-a", "proxy-b"} {
		s, leave, err := JoinCluster(ctx, url, name, fairsched.WithMaxConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(leave)
		if err := s.RegisterType("clone", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Second}); err != nil {
			t.Fatal(err)
		}
		if err := RegisterMirrors(s, func(ctx context.Context, url string) error { fetched <- url; return nil }); err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, s)
	}
	if err := ScheduleMirror(ctx, replicas[0], "linux", "https://git.kernel.org/linux.git"); err != nil {
		t.Fatal(err)
	}
	running := make(chan int, 4)
	errs := make(chan error, 2)
	for i, s := range replicas {
		go func() {
			errs <- s.RunSync(ctx, "clone", fmt.Sprint("repo-", i), "alice", func(ctx context.Context) error {
				running <- 1
				defer func() { running <- -1 }()
				return nil
			})
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if c, err := replicas[0].Cancel(ctx, "clone", "repo-0"); err != nil || !c.None() {
		t.Errorf("Cancel of a clone that ran: %+v, %v", c, err)
	}
	close(running)
	level := 0
	for d := range running {
		if level += d; level > 1 {
			t.Fatal("two clones ran at once under a cap of one")
		}
	}
	if got := <-fetched; got != "https://git.kernel.org/linux.git" {
		t.Fatalf("fetched %q", got)
	}
	for _, s := range replicas { // the mirror's row is deleted once it succeeded: Close leaves nothing to run
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if len(fetched) != 0 {
		t.Errorf("the mirror ran %d more times", len(fetched))
	}
}

// The replica processes of TestJoinClusterRestartUnderPodName:
// TestJoinClusterChild runs as one when readmeChildEnv is set ("hang": its
// mirror's fetch waits for its context; "finish": it returns at once).
const (
	readmeChildEnv = "FAIRSCHED_README_CHILD"
	readmeURLEnv   = "FAIRSCHED_README_URL"
	readmeLogEnv   = "FAIRSCHED_README_LOG"
)

// TestJoinClusterRestartUnderPodName: the README's replica, named by its
// pod (POD_NAME, ReplicaName), is killed with SIGKILL while it runs the
// mirror and started again at once under the same name, as a StatefulSet
// restarts its pod. The mirror runs once in each process — two
// incarnations of the one name — and succeeds in the second; the second
// took the domain's lease only after the first one's lease had expired,
// as the lease row records them. It waits out a real lease (about 20 s),
// so -short (make test) skips it and make check runs it.
func TestJoinClusterRestartUnderPodName(t *testing.T) {
	t.Parallel()
	if os.Getenv(readmeChildEnv) != "" {
		t.Skip("a child of this test")
	}
	if testing.Short() {
		t.Skip("waits out a real lease expiry (about 20 s); make check runs it")
	}
	url := pgtest.URL(t)
	ctx := context.Background()
	st, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dir := t.TempDir()
	logPath := filepath.Join(dir, "replica.log")
	start := func(mode string) (*exec.Cmd, io.WriteCloser) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestJoinClusterChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "POD_NAME=proxy-0", readmeChildEnv+"="+mode, readmeURLEnv+"="+url, readmeLogEnv+"="+logPath)
		out, err := os.Create(filepath.Join(dir, mode+".out"))
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		cmd.Stdout, cmd.Stderr = out, out
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd, stdin
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, mode := range []string{"hang", "finish"} {
				b, _ := os.ReadFile(filepath.Join(dir, mode+".out"))
				t.Logf("output of the %s replica:\n%s", mode, b)
			}
		}
	})
	lines := func(prefix string) [][]string {
		b, err := os.ReadFile(logPath)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		var out [][]string
		for l := range strings.Lines(string(b)) {
			if f := strings.Fields(l); len(f) > 1 && f[0] == prefix {
				out = append(out, f[1:])
			}
		}
		return out
	}
	lease := func() (holder string, epoch int64, expires, acquired time.Time) {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if err := conn.QueryRow(ctx, `SELECT holder, epoch, expires_at, acquired_at FROM fairsched_leader WHERE domain = 'git-proxy'`).
			Scan(&holder, &epoch, &expires, &acquired); err != nil {
			t.Fatal(err)
		}
		return
	}

	first, _ := start("hang")
	pgtest.Eventually(t, "the mirror running on the first proxy-0", func() bool { return len(lines("start")) == 1 })
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	oldHolder, oldEpoch, oldExpires, _ := lease()

	_, stdin := start("finish")
	// The mirror runs again once the new process leads (after the old
	// lease's expiry) and has declared the old incarnation lost (after
	// LostAfter of silence): about 20 s with the README's defaults.
	deadline := time.Now().Add(2 * time.Minute) // a failure guard only
	for n := -1; n != 0; {
		n = 0
		if err := st.LoadJobs(func(fairsched.JobRecord) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the mirror did not succeed in two minutes")
		}
		time.Sleep(50 * time.Millisecond) // polling the table, not a timing assertion
	}
	_ = stdin.Close() // the second proxy-0 leaves

	holder, epoch, _, acquired := lease()
	if epoch <= oldEpoch || holder == oldHolder || !strings.HasPrefix(holder, "proxy-0#") {
		t.Errorf("the lease: epoch %d held by %s after epoch %d held by %s", epoch, holder, oldEpoch, oldHolder)
	}
	if acquired.Before(oldExpires) {
		t.Errorf("epoch %d was taken at %v, before the killed proxy-0's lease expired at %v (database clock)",
			epoch, acquired.Format(time.RFC3339Nano), oldExpires.Format(time.RFC3339Nano))
	}
	joined, starts := lines("joined"), lines("start")
	if len(joined) != 2 || len(starts) != 2 || joined[0][0] == joined[1][0] ||
		starts[0][0] != joined[0][0] || starts[1][0] != joined[1][0] {
		t.Fatalf("joined %v, mirror started %v: want one start in each of two incarnations", joined, starts)
	}
	t.Logf("proxy-0 ran as %s, then %s; the lease's epoch %d was taken %v after epoch %d expired (database clock)",
		joined[0][0], joined[1][0], epoch, acquired.Sub(oldExpires).Round(time.Millisecond), oldEpoch)
}

// TestJoinClusterChild is a replica of TestJoinClusterRestartUnderPodName;
// it skips unless run as one. It joins as the README shows, logs
// "joined <incarnation>" and "start <incarnation> <url>" at each run of
// the mirror, and leaves when its stdin closes.
func TestJoinClusterChild(t *testing.T) {
	mode := os.Getenv(readmeChildEnv)
	if mode == "" {
		t.Skip("run by TestJoinClusterRestartUnderPodName as its child process")
	}
	ctx := context.Background()
	s, leave, err := JoinCluster(ctx, os.Getenv(readmeURLEnv), ReplicaName())
	if err != nil {
		t.Fatal(err)
	}
	defer leave()
	snap, err := s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	inc := snap.Cluster.Incarnation
	logf, err := os.OpenFile(os.Getenv(readmeLogEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	line := func(s string) { // one write a line: appended whole
		if _, err := logf.WriteString(s + "\n"); err != nil {
			t.Error(err)
		}
	}
	line("joined " + inc)
	if err := RegisterMirrors(s, func(ctx context.Context, url string) error {
		line("start " + inc + " " + url)
		if mode == "hang" {
			<-ctx.Done() // until the process is killed
			return ctx.Err()
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if mode == "hang" {
		if err := ScheduleMirror(ctx, s, "linux", "https://git.kernel.org/linux.git"); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes stdin (or dies)
}
