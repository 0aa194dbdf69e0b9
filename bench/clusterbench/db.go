package clusterbench

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
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
