package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// rangeReadSettings turn off, for the transaction they run in, what a
// read of the rows stamped since a cursor (xid >= $1: the change feed,
// the incremental reads of grants and ends) must not pay for. Such a read
// usually finds nothing, but the planner cannot tell: a prepared
// statement's generic plan, or a column without statistics yet, puts the
// range at a third of the table, and on a table of a million rows that
// estimate alone had the server compile each run to machine code (JIT) or
// start parallel workers — 3 to 10 ms of its time a read, several reads a
// Poll, on the leader's path. Local to the transaction (set_config's
// is_local), so nothing leaks into the session, even behind a pooler that
// shares it.
const rangeReadSettings = `SELECT set_config('jit', 'off', true), set_config('max_parallel_workers_per_gather', '0', true)`

// batchSender is a pool, a connection or a transaction.
type batchSender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// readRange runs sql, a read of the rows stamped since a cursor, after
// rangeReadSettings in one pipeline (one round trip, one implicit
// transaction, or on's own). The caller reads and closes rows, then
// calls done.
func readRange(ctx context.Context, on batchSender, sql string, args ...any) (rows pgx.Rows, done func() error, err error) {
	b := &pgx.Batch{}
	b.Queue(rangeReadSettings)
	b.Queue(sql, args...)
	br := on.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		br.Close()
		return nil, nil, err
	}
	if rows, err = br.Query(); err != nil {
		br.Close()
		return nil, nil, err
	}
	return rows, br.Close, nil
}
