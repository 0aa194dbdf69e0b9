package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster"
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
// The feed reads by the incremental reads' rule (since), so it is theirs.
type cursor = cluster.ReadCursor

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
	// or next time, never missed.
	rows, done, err := readRange(ctx, s.pool, changesSQL, strconv.FormatUint(c.Pos, 10))
	if err != nil {
		return nil, c, fmt.Errorf("%w: pgstore: reading changes: %w", fairsched.ErrStore, err)
	}
	defer done()
	var out []fairsched.JobRecord
	next, err := since(rows, c, func() (string, *int64, string, func() error, error) {
		var xmin, xid string
		var seq *int64
		var data []byte
		if err := rows.Scan(&xmin, &seq, &xid, &data); err != nil {
			return "", nil, "", nil, err
		}
		keep := func() error {
			var rec fairsched.JobRecord
			if err := json.Unmarshal(data, &rec); err != nil || !rec.Valid() {
				return fmt.Errorf("job record %d does not decode", *seq)
			}
			out = append(out, rec)
			return nil
		}
		return xmin, seq, xid, keep, nil
	})
	if err != nil {
		return nil, c, fmt.Errorf("%w: pgstore: reading changes: %w", fairsched.ErrStore, err)
	}
	return out, next, nil
}
