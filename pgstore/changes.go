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

// changesSQL reads the rows written since a cursor's xmin ($1), with the
// xmin of the snapshot it reads them in.
const changesSQL = `
	WITH s AS (SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS x)
	SELECT s.x, j.seq, coalesce(j.xid::text, ''), j.record
	FROM s LEFT JOIN fairsched_jobs j ON j.xid >= $1::text::xid8
	ORDER BY j.xid, j.seq`

// Changes returns the job records written since c (by any instance), in
// the order their transactions began, and the cursor to read from next.
// A record written twice since c comes once, as last written.
func (s clusterBackend) Changes(ctx context.Context, c cursor) ([]fairsched.JobRecord, cursor, error) {
	// One statement: the xmin is taken from the snapshot the rows are
	// read in, so a transaction that commits during the read is read now
	// or next time, never missed. With no row since c, one row of NULLs
	// carries the xmin.
	rows, done, err := readRange(ctx, s.pool, changesSQL, strconv.FormatUint(c.xmin, 10))
	if err != nil {
		return nil, c, fmt.Errorf("%w: pgstore: reading changes: %w", fairsched.ErrStore, err)
	}
	defer done()
	defer rows.Close()
	next := cursor{seen: map[rowVersion]bool{}}
	var xmin uint64
	var out []fairsched.JobRecord
	for first := true; rows.Next(); first = false {
		var xminText, xidText string
		var seq *int64
		var data []byte
		if err := rows.Scan(&xminText, &seq, &xidText, &data); err != nil {
			return nil, c, fmt.Errorf("%w: pgstore: reading changes: %w", fairsched.ErrStore, err)
		}
		if first {
			if xmin, err = strconv.ParseUint(xminText, 10, 64); err != nil {
				return nil, c, fmt.Errorf("%w: pgstore: xmin %q: %w", fairsched.ErrStore, xminText, err)
			}
			next.xmin = xmin
		}
		if seq == nil {
			continue // no row since c
		}
		xid, _ := strconv.ParseUint(xidText, 10, 64)
		v := rowVersion{uint64(*seq), xid}
		if xid >= xmin {
			next.seen[v] = true // may be read again: remember it
		}
		if c.seen[v] {
			continue
		}
		var rec fairsched.JobRecord
		if err := json.Unmarshal(data, &rec); err != nil || !rec.Valid() {
			return nil, c, fmt.Errorf("%w: pgstore: job record %d does not decode", fairsched.ErrStore, *seq)
		}
		out = append(out, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, c, fmt.Errorf("%w: pgstore: reading changes: %w", fairsched.ErrStore, err)
	}
	return out, next, nil
}
