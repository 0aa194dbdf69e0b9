// Package pgtest gives tests a real PostgreSQL database, without Docker
// and without downloading anything:
//
//   - FAIRSCHED_TEST_DATABASE_URL, when set, names a server to use (a
//     database is created in it per test, and dropped after);
//   - else a throwaway cluster is started from the installed binaries
//     (initdb and pg_ctl, found on PATH or under /usr/lib/postgresql),
//     run as the postgres user when the process is root, listening on a
//     Unix socket in a temporary directory only, with fsync off; one per
//     test binary, stopped by Stop (call it from TestMain);
//   - else the test is skipped, saying why — unless FAIRSCHED_REQUIRE_PG=1
//     (CI sets it), under which it fails.
//
// Each test gets a database of its own, empty (pgstore.Open migrates it),
// so tests run in parallel and in isolation.
//
// A program that is not a test (the simulator's cluster play) gets a
// database the same way from Start.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"
)

// server is the cluster of this test binary, started once.
var (
	once     sync.Once
	srv      *cluster
	startErr error
	dbSeq    atomic.Int64
)

type cluster struct {
	url     string // admin connection URL
	dir     string // data and socket directory; "" for an external server
	pgCtl   string
	asUser  *user.User
	started bool
	// watchdog stops the server and removes its files should this
	// process die without stopping it (a kill, a test binary's timeout).
	watchdog *os.Process
}

// ErrUnavailable: no PostgreSQL could be had — FAIRSCHED_TEST_DATABASE_URL
// is unset and no server binaries are installed, or the throwaway cluster
// would not start. Start's error wraps it, saying why.
var ErrUnavailable = errors.New("pgtest: no PostgreSQL")

// hint says how to make PostgreSQL available.
const hint = "set FAIRSCHED_TEST_DATABASE_URL or install PostgreSQL's server binaries (apt-get install postgresql)"

// URL returns a connection string to a new, empty database for t (dropped
// at the end of t), or skips t when no PostgreSQL is available (fails it
// under FAIRSCHED_REQUIRE_PG=1).
func URL(t testing.TB) string {
	t.Helper()
	once.Do(func() { srv, startErr = start() })
	if startErr != nil {
		if os.Getenv("FAIRSCHED_REQUIRE_PG") == "1" {
			t.Fatalf("pgtest: PostgreSQL is required (FAIRSCHED_REQUIRE_PG=1) and unavailable: %v", startErr)
		}
		t.Skipf("pgtest: no PostgreSQL (%v): %s", startErr, hint)
	}
	name, err := createDatabase()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { dropDatabase(name) })
	return withDatabase(srv.url, name)
}

// URLIfAvailable is URL for a test that also has work without PostgreSQL
// (a fuzz target that covers several stores): "" when no PostgreSQL is
// available, where URL would skip t (it fails t under
// FAIRSCHED_REQUIRE_PG=1 all the same).
func URLIfAvailable(t testing.TB) string {
	t.Helper()
	once.Do(func() { srv, startErr = start() })
	if startErr != nil && os.Getenv("FAIRSCHED_REQUIRE_PG") != "1" {
		t.Logf("pgtest: no PostgreSQL (%v): %s", startErr, hint)
		return ""
	}
	return URL(t)
}

// Start gives a program that is not a test — a command, a demo — a new,
// empty database the way URL gives one to a test: in the server
// FAIRSCHED_TEST_DATABASE_URL names, else in a throwaway cluster started
// from the installed binaries. It returns the database's connection
// string and stop, which drops the database and stops the throwaway
// cluster if this process started one (as Stop does): call it once, when
// done with every database of this package. Without PostgreSQL the error
// wraps ErrUnavailable and says why; FAIRSCHED_REQUIRE_PG plays no part
// (the caller decides what a missing database means).
func Start() (url string, stop func(), err error) {
	once.Do(func() { srv, startErr = start() })
	if startErr != nil {
		return "", nil, fmt.Errorf("%w (%v): %s", ErrUnavailable, startErr, hint)
	}
	name, err := createDatabase()
	if err != nil {
		return "", nil, fmt.Errorf("pgtest: %w", err)
	}
	return withDatabase(srv.url, name), func() { dropDatabase(name); Stop() }, nil
}

// createDatabase creates a new, empty database in the server and returns
// its name.
func createDatabase() (string, error) {
	name := fmt.Sprintf("fairsched_test_%d_%d", os.Getpid(), dbSeq.Add(1))
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, srv.url)
	if err != nil {
		return "", fmt.Errorf("connecting: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("creating a database: %w", err)
	}
	return name, nil
}

// dropDatabase drops database name, closing its connections; an error
// is ignored (a throwaway cluster goes with its files anyway).
func dropDatabase(name string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, srv.url)
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
}

// withDatabase returns connection string u naming database db.
func withDatabase(u, db string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	p.Path = "/" + db
	return p.String()
}

// Eventually waits until cond holds, reading it every 10 ms, and fails t
// (saying what it waited for) after 30 s. A cluster over a real database
// runs on the wall clock: its state — a lease taken, a row written — is
// observed by reading it again, within a bound that only a broken test
// reaches; cond reads state, it asserts nothing about time.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("pgtest: waited 30 s for %s", what)
		}
		<-tick.C
	}
}

// Exec runs sql with args on a connection of its own to url — apart from
// any store's pool, as an operator's session would — and fails t if it
// fails.
func Exec(t testing.TB, url, sql string, args ...any) {
	t.Helper()
	conn := connect(t, url)
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql, args...); err != nil {
		t.Fatal(err)
	}
}

// connect opens a connection of its own to url, or fails t.
func connect(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// DropListeners ends, from another connection, every connection of url's
// database whose last statement was a LISTEN — as a server restart ends
// them — and fails t unless it ended at least one.
func DropListeners(t testing.TB, url string) {
	t.Helper()
	ctx := context.Background()
	conn := connect(t, url)
	defer conn.Close(ctx)
	var n int
	err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN %'`).Scan(&n)
	if err != nil || n == 0 {
		t.Fatalf("ending the listening connections: %d ended, %v", n, err)
	}
}

// CloseAtEnd closes c when the test ends (after the cleanups registered
// later, such as a scheduler's Close), and fails the test if Close fails.
func CloseAtEnd(t testing.TB, c io.Closer) {
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("pgtest: close: %v", err)
		}
	})
}

// Run is a TestMain for a package whose tests use PostgreSQL: it runs the
// tests, stops the throwaway cluster, then checks that no goroutine leaked
// (goleak), and returns the exit code.
func Run(m *testing.M) int {
	code := m.Run()
	Stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	return code
}

// Stop stops the cluster this binary started, if any. Call it from
// TestMain after m.Run (Run does).
func Stop() {
	if srv != nil {
		srv.stop()
	}
}

// stop stops a throwaway cluster c started and removes its files; a
// second call does nothing.
func (c *cluster) stop() {
	if !c.started {
		return
	}
	c.started = false
	if c.watchdog != nil {
		_ = c.watchdog.Kill()
		_, _ = c.watchdog.Wait()
	}
	cmd := c.command(c.pgCtl, "stop", "-D", filepath.Join(c.dir, "data"), "-m", "immediate", "-w")
	_ = cmd.Run()
	_ = os.RemoveAll(c.dir)
}

func start() (*cluster, error) {
	if u := os.Getenv("FAIRSCHED_TEST_DATABASE_URL"); u != "" {
		return &cluster{url: u}, nil
	}
	initdb, err := find("initdb")
	if err != nil {
		return nil, err
	}
	pgCtl, err := find("pg_ctl")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "fairsched-pg")
	if err != nil {
		return nil, err
	}
	c := &cluster{dir: dir, pgCtl: pgCtl}
	if os.Geteuid() == 0 { // initdb refuses root: run it as postgres
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root and no postgres user: %w", err)
		}
		c.asUser = u
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := c.command(initdb, "-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, lastLine(out))
	}
	opts := fmt.Sprintf("-c listen_addresses='' -c unix_socket_directories=%s -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", dir)
	if out, err := c.command(pgCtl, "start", "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "-t", "60").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pg_ctl start: %v: %s %s", err, lastLine(out), lastLine(log))
	}
	c.started = true
	// A process of its own (its own group: a Ctrl-C of the tests spares
	// it) that outlives this one only to stop the server: it looks for
	// this process every second, a cleanup's pace, not a test's.
	wd := c.command("sh", "-c", fmt.Sprintf(`while [ -d /proc/%d ]; do sleep 1; done; %q stop -D %q -m immediate >/dev/null 2>&1; rm -rf %q`,
		os.Getpid(), pgCtl, data, dir))
	if wd.SysProcAttr == nil {
		wd.SysProcAttr = &syscall.SysProcAttr{}
	}
	wd.SysProcAttr.Setpgid = true
	if err := wd.Start(); err == nil {
		c.watchdog = wd.Process
	}
	c.url = (&url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/postgres",
		RawQuery: "host=" + url.QueryEscape(dir) + "&sslmode=disable"}).String()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, c.url)
		if err == nil {
			conn.Close(ctx)
			return c, nil
		}
		if ctx.Err() != nil {
			c.stop() // srv is not set yet: Stop would not see c
			return nil, fmt.Errorf("the cluster does not answer: %w", err)
		}
		time.Sleep(50 * time.Millisecond) // the server is starting up; pg_ctl -w has waited already
	}
}

// command runs name as the cluster's user.
func (c *cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if c.asUser != nil {
		uid, _ := strconv.Atoi(c.asUser.Uid)
		gid, _ := strconv.Atoi(c.asUser.Gid)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		cmd.Dir = c.dir
	}
	return cmd
}

// find looks for a PostgreSQL server binary on PATH, then in Debian's
// versioned directories.
func find(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(matches) > 0 {
		return matches[len(matches)-1], nil
	}
	return "", errors.New(name + " not found on PATH or under /usr/lib/postgresql")
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
