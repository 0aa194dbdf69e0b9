package clusterbench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fairsched/fairsched/bench/delayproxy"
)

var dbSeq atomic.Int64

// newDatabase creates an empty database in the server base names (a
// postgres:// URL whose user may CREATE DATABASE) and returns its URL and
// a function that drops it.
func newDatabase(ctx context.Context, base string) (string, func(), error) {
	name := fmt.Sprintf("fsbench_%d_%d", os.Getpid(), dbSeq.Add(1))
	if err := execOn(ctx, base, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", nil, fmt.Errorf("creating a database: %w", err)
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = execOn(ctx, base, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	}
	return u.String(), drop, nil
}

// settle checkpoints the server before a run, so that a run does not
// write out the dirty buffers of the one before it (a million River jobs
// leave gigabytes behind). A run right after River's million is still
// slower than one alone: docs/cluster.md.
func settle(ctx context.Context, base string) error {
	if err := execOn(ctx, base, "CHECKPOINT"); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// execOn runs stmts in order on a connection of its own to url.
func execOn(ctx context.Context, url string, stmts ...string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, q := range stmts {
		if _, err := conn.Exec(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// pgCost is what PostgreSQL counted: rows inserted, updated and deleted in
// the database's tables, and the WAL position (server-wide).
type pgCost struct {
	rows int64
	wal  int64 // bytes since 0/0
}

// readCost reads the counters of the database url names. Statistics reach
// the shared counters when a backend's transaction ends (at most once a
// second) or it exits; the caller closes every pool first, and readCost
// reads until two reads 200 ms apart agree (at most 3 s).
func readCost(ctx context.Context, url string, settle bool) (pgCost, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return pgCost{}, err
	}
	defer conn.Close(ctx)
	read := func() (pgCost, error) {
		var c pgCost
		if _, err := conn.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
			return c, err
		}
		err := conn.QueryRow(ctx, `SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::bigint,
			pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint FROM pg_stat_user_tables`).Scan(&c.rows, &c.wal)
		return c, err
	}
	c, err := read()
	if err != nil || !settle {
		return c, err
	}
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond) // statistics settle: backends flush them on exit
		again, err := read()
		if err != nil {
			return c, err
		}
		if again.rows == c.rows {
			return again, nil
		}
		c = again
	}
	return c, nil
}

// topStatements returns the n statements of database url that took the
// most time (pg_stat_statements, when the server preloads it), one line
// each.
func topStatements(ctx context.Context, url string, n int) ([]string, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT calls, round(total_exec_time)::bigint, rows, regexp_replace(left(query, 160), '\s+', ' ', 'g')
		FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		ORDER BY total_exec_time DESC LIMIT $1`, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var calls, ms, nrows int64
		var q string
		if err := rows.Scan(&calls, &ms, &nrows, &q); err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprintf("%8d ms %8d calls %8d rows  %s", ms, calls, nrows, q))
	}
	return out, rows.Err()
}

// enableStatements installs pg_stat_statements in database url and resets
// it; an error means the server does not preload it.
func enableStatements(ctx context.Context, url string) error {
	return execOn(ctx, url, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements", "SELECT pg_stat_statements_reset()")
}

// proxyTarget is where the server base names listens: a TCP host:port, or
// the Unix socket in the directory its host names (as libpq reads a host
// that starts with "/", in the URL's authority or in its host parameter).
func proxyTarget(base string) (network, target string, err error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", "", err
	}
	q := u.Query()
	host, port := u.Hostname(), u.Port()
	if h := q.Get("host"); h != "" {
		host = h
	}
	if p := q.Get("port"); p != "" {
		port = p
	}
	if port == "" {
		port = "5432"
	}
	switch {
	case strings.HasPrefix(host, "/"):
		return "unix", filepath.Join(host, ".s.PGSQL."+port), nil
	case host == "":
		return "", "", fmt.Errorf("server URL %q: %w", base, ErrNoHost)
	}
	return "tcp", net.JoinHostPort(host, port), nil
}

// ErrNoHost is a server URL that names no host (libpq's default socket
// directory differs between builds: name it).
var ErrNoHost = errors.New("no host")

// throughProxy is base with its host and port replaced by addr (the
// proxy's host:port).
func throughProxy(base, addr string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Del("host")
	q.Del("port")
	u.Host, u.RawQuery = addr, q.Encode()
	return u.String(), nil
}

// startProxy starts a delaying proxy to the server base names and returns
// it and the server's URL through it.
func startProxy(base string, roundTrip time.Duration) (*delayproxy.Proxy, string, error) {
	network, target, err := proxyTarget(base)
	if err != nil {
		return nil, "", err
	}
	p, err := delayproxy.Listen(network, target, roundTrip)
	if err != nil {
		return nil, "", err
	}
	u, err := throughProxy(base, p.Addr())
	if err != nil {
		p.Close()
		return nil, "", err
	}
	return p, u, nil
}

// pingMedian is the median time of a SELECT 1 on a connection to url
// (of 21, after one to warm up): the round trip the runs see.
func pingMedian(ctx context.Context, url string) (time.Duration, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var took []time.Duration
	for i := range 22 {
		t := time.Now()
		if _, err := conn.Exec(ctx, "SELECT 1"); err != nil {
			return 0, err
		}
		if i > 0 {
			took = append(took, time.Since(t))
		}
	}
	return percentile(took, 50), nil
}
