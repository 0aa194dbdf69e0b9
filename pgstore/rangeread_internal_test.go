package pgstore

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/fairsched/fairsched/internal/pgtest"
)

// TestRangeReadsRunWithoutJITOrParallelWorkers: each read of the rows
// stamped since a cursor runs, in its own pipeline, with JIT and parallel
// workers off — on a session whose settings would use both for any
// statement — and leaves the session's settings as they were.
func TestRangeReadsRunWithoutJITOrParallelWorkers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// One connection, so that the settings read after are the reads'
	// session's; every cost threshold at zero, so that the server would
	// compile and parallelise any plan.
	st, err := Open(ctx, pgtest.URL(t)+"&pool_max_conns=1&jit=on&jit_above_cost=0&parallel_setup_cost=0&parallel_tuple_cost=0&min_parallel_table_scan_size=0&min_parallel_index_scan_size=0")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.pool.Exec(ctx, `INSERT INTO fairsched_jobs (seq, type, id, state, record)
		SELECT g, 't', 'j' || g, 0, jsonb_build_object('seq', g, 'type', 't', 'id', 'j' || g) FROM generate_series(1, 2000) g`); err != nil {
		t.Fatal(err)
	}
	var jit bool
	if err := st.pool.QueryRow(ctx, `SELECT pg_jit_available()`).Scan(&jit); err != nil {
		t.Fatal(err)
	}
	plan := func(rows pgx.Rows, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(lines, "\n")
	}
	for name, read := range map[string]struct {
		sql  string
		args []any
	}{
		"the change feed":   {changesSQL, []any{"1"}},
		"grants since":      {grantsSinceSQL, []any{"i1", "1"}},
		"ends since":        {endsSinceSQL, []any{"1"}},
		"the domain's rows": {`SELECT seq, xid::text FROM fairsched_jobs WHERE xid >= $1::text::xid8`, []any{"1"}},
	} {
		// Run as it is, the session compiles it (a server built with
		// JIT) or plans parallel workers: the settings keep them off.
		bare := plan(st.pool.Query(ctx, "EXPLAIN "+read.sql, read.args...))
		if !strings.Contains(bare, "JIT:") && !strings.Contains(bare, "Parallel") {
			if !jit {
				t.Logf("%s: the server has no JIT and plans no parallel workers for it: not checked", name)
				continue
			}
			t.Fatalf("%s: the session does not compile or parallelise it; the test proves nothing:\n%s", name, bare)
		}
		rows, done, err := readRange(ctx, st.pool, "EXPLAIN "+read.sql, read.args...)
		p := plan(rows, err)
		if err := done(); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(p, "JIT:") || strings.Contains(p, "Parallel") || strings.Contains(p, "Gather") {
			t.Errorf("%s read with JIT or parallel workers:\n%s", name, p)
		}
	}
	var after string
	if err := st.pool.QueryRow(ctx, `SELECT current_setting('jit') || ' ' || current_setting('max_parallel_workers_per_gather')`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != "on 2" {
		t.Errorf("the session's settings after the reads: %q, want %q", after, "on 2")
	}
}
