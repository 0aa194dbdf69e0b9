package pgtest

import (
	"context"
	"errors"
	neturl "net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(watchedChild())
	}
	code := m.Run()
	Stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			code = 1
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
		}
	}
	os.Exit(code)
}

// TestDatabasesAreIsolated: each call gives an empty database of its own
// that takes writes.
func TestDatabasesAreIsolated(t *testing.T) {
	ctx := context.Background()
	for range 2 {
		conn, err := pgx.Connect(ctx, URL(t))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, "CREATE TABLE t (x int)"); err != nil { // fails if the table exists
			t.Fatal(err)
		}
		var n int
		if err := conn.QueryRow(ctx, "INSERT INTO t VALUES (1), (2) RETURNING (SELECT count(*) FROM t)").Scan(&n); err != nil {
			t.Fatal(err)
		}
		conn.Close(ctx)
	}
}

// TestStart: a program's database takes writes and is gone after stop,
// with the throwaway cluster when this binary started one.
func TestStart(t *testing.T) {
	url, stop, err := Start()
	if errors.Is(err, ErrUnavailable) {
		if os.Getenv("FAIRSCHED_REQUIRE_PG") == "1" {
			t.Fatalf("PostgreSQL is required (FAIRSCHED_REQUIRE_PG=1): %v", err)
		}
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Stop ends the shared server: the next test starts another.
	t.Cleanup(func() { once, srv, startErr = sync.Once{}, nil, nil })
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE t (x int); INSERT INTO t VALUES (1)"); err != nil {
		t.Error(err)
	}
	conn.Close(ctx)
	external, dir := srv.dir == "", srv.dir
	stop()
	if external {
		conn, err := pgx.Connect(ctx, srv.url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1",
			strings.TrimPrefix(mustParse(t, url).Path, "/")).Scan(&n); err != nil || n != 0 {
			t.Errorf("the database is still there after stop (%d, %v)", n, err)
		}
		return
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the throwaway cluster's directory %s is still there after stop: %v", dir, err)
	}
	if conn, err := pgx.Connect(ctx, url); err == nil {
		conn.Close(ctx)
		t.Error("the throwaway cluster still answers after stop")
	}
}

func mustParse(t *testing.T, u string) *neturl.URL {
	t.Helper()
	p, err := neturl.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
