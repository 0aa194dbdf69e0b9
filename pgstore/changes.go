package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/fairsched/fairsched"
)

// The change feed. Reading new rows by "sequence greater than the last
// seen" misses rows: two writers take sequences 7 and 8, 8 commits first,
// the reader sees 8 and moves its cursor past 7, which commits a moment
// later. Instead each row carries the transaction that wrote it (xid8),
// and a cursor is the oldest transaction still running when the last read
// began (pg_snapshot_xmin): every transaction before it had ended, so
// every row it wrote was seen; rows of the transactions at or after it
// are read again next time, and a seen set drops the repeats.

// cursor is a position in the change feed; the zero cursor is the start.
type cursor struct {
	xmin uint64
	seen map[rowVersion]bool // rows read at or after xmin
}

type rowVersion struct {
	seq uint64
	xid uint64
}

// Changes returns the job records written since c (by any instance), in
// the order their transactions began, and the cursor to read from next.
// A record written twice since c comes once, as last written.
func (s clusterBackend) Changes(ctx context.Context, c cursor) ([]fairsched.JobRecord, cursor, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, c, fmt.Errorf("%w: pgstore: reading changes: %w", fairsched.ErrStore, err)
	}
	defer tx.Rollback(ctx) // read-only: nothing to keep
	var xminText string
	// One snapshot for both statements (repeatable read would do too):
	// the xmin is taken before the rows are read, so a transaction that
	// commits between them is read now or next time, never missed.
	if _, err := tx.Exec(ctx, `SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`); err != nil {
		return nil, c, fmt.Errorf("%w: pgstore: reading changes: %w", fairsched.ErrStore, err)
	}
	if err := tx.QueryRow(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot())::text`).Scan(&xminText); err != nil {
		return nil, c, fmt.Errorf("%w: pgstore: reading changes: %w", fairsched.ErrStore, err)
	}
	xmin, err := strconv.ParseUint(xminText, 10, 64)
	if err != nil {
		return nil, c, fmt.Errorf("%w: pgstore: xmin %q: %w", fairsched.ErrStore, xminText, err)
	}
	rows, err := tx.Query(ctx, `SELECT seq, xid::text, record FROM fairsched_jobs WHERE xid >= $1::text::xid8 ORDER BY xid, seq`, strconv.FormatUint(c.xmin, 10))
	if err != nil {
		return nil, c, fmt.Errorf("%w: pgstore: reading changes: %w", fairsched.ErrStore, err)
	}
	defer rows.Close()
	next := cursor{xmin: xmin, seen: map[rowVersion]bool{}}
	var out []fairsched.JobRecord
	for rows.Next() {
		var seq int64
		var xidText string
		var data []byte
		if err := rows.Scan(&seq, &xidText, &data); err != nil {
			return nil, c, fmt.Errorf("%w: pgstore: reading changes: %w", fairsched.ErrStore, err)
		}
		xid, _ := strconv.ParseUint(xidText, 10, 64)
		v := rowVersion{uint64(seq), xid}
		if xid >= xmin {
			next.seen[v] = true // may be read again: remember it
		}
		if c.seen[v] {
			continue
		}
		var rec fairsched.JobRecord
		if err := json.Unmarshal(data, &rec); err != nil || !rec.Valid() {
			return nil, c, fmt.Errorf("%w: pgstore: job record %d does not decode", fairsched.ErrStore, seq)
		}
		out = append(out, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, c, fmt.Errorf("%w: pgstore: reading changes: %w", fairsched.ErrStore, err)
	}
	return out, next, nil
}
