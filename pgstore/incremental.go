package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster"
)

// Incremental reads of grants and ends (layout 12). Each grant and each
// end report stamps its row with the writing transaction (grant_xid,
// end_xid); a reader reads the rows stamped at or after its cursor — the
// oldest transaction still running when its last read began
// (pg_snapshot_xmin), the change feed's rule — and drops those it read
// already. One statement: the xmin is taken from the statement's own
// snapshot, the one its rows are read in, so a transaction that commits
// during the read is read now or next time, never missed.

// The incremental reads: the grants of instance $1 since the cursor $2,
// the ends reported since the cursor $1, each with the xmin of the
// snapshot it reads them in.
const (
	grantsSinceSQL = `
		WITH s AS (SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS x)
		SELECT s.x, j.seq, coalesce(j.grant_xid::text, ''), j.attempt, coalesce(j.conflict_key, ''), j.record, coalesce(j.worker, ''), j.slot, j.cancel_requested,
			j.cancel_requested AND j.preempt_requested
		FROM s LEFT JOIN fairsched_jobs j ON j.running AND j.instance = $1 AND j.grant_xid >= $2::text::xid8
		ORDER BY j.seq`
	endsSinceSQL = `
		WITH s AS (SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS x)
		SELECT s.x, j.seq, coalesce(j.end_xid::text, ''), j.running, coalesce(j.instance, ''), j.attempt,
			coalesce(j.end_instance, ''), coalesce(j.end_attempt, 0), coalesce(j.end_kind, 0), coalesce(j.end_error, '')
		FROM s LEFT JOIN fairsched_jobs j ON j.end_xid >= $1::text::xid8
		ORDER BY j.seq`
)

// GrantsSince returns the grants of instance written since c
// (cluster.IncrementalReads).
func (s clusterBackend) GrantsSince(ctx context.Context, instance string, c cluster.ReadCursor) ([]cluster.Grant, cluster.ReadCursor, error) {
	rows, done, err := readRange(ctx, s.pool, grantsSinceSQL, instance, strconv.FormatUint(c.Pos, 10))
	if err != nil {
		return nil, c, fmt.Errorf("%w: pgstore: reading grants: %w", fairsched.ErrStore, err)
	}
	defer done()
	var out []cluster.Grant
	next, err := since(rows, c, func() (string, *int64, string, func() error, error) {
		var xmin, xid string
		var seq *int64
		var attempt, slot *int32
		var key, worker string
		var data []byte
		var cancelled, preempted *bool
		if err := rows.Scan(&xmin, &seq, &xid, &attempt, &key, &data, &worker, &slot, &cancelled, &preempted); err != nil {
			return "", nil, "", nil, err
		}
		keep := func() error {
			g := cluster.Grant{Instance: instance, Seq: uint64(*seq), Attempt: int(*attempt), ConflictKey: key, Worker: worker, Slot: int(*slot), Cancelled: *cancelled, Preempted: *preempted}
			g.Record = new(fairsched.JobRecord)
			if err := json.Unmarshal(data, g.Record); err != nil || !g.Record.Valid() {
				return fmt.Errorf("job record %d does not decode", *seq)
			}
			g.Record.Attempt = max(g.Record.Attempt, g.Attempt) // attemptColumn
			out = append(out, g)
			return nil
		}
		return xmin, seq, xid, keep, nil
	})
	if err != nil {
		return nil, c, fmt.Errorf("%w: pgstore: reading grants: %w", fairsched.ErrStore, err)
	}
	return out, next, nil
}

// EndsSince returns the rows whose end was reported since c
// (cluster.IncrementalReads).
func (s clusterBackend) EndsSince(ctx context.Context, c cluster.ReadCursor) ([]cluster.Row, cluster.ReadCursor, error) {
	rows, done, err := readRange(ctx, s.pool, endsSinceSQL, strconv.FormatUint(c.Pos, 10))
	if err != nil {
		return nil, c, fmt.Errorf("%w: pgstore: reading ends: %w", fairsched.ErrStore, err)
	}
	defer done()
	var out []cluster.Row
	next, err := since(rows, c, func() (string, *int64, string, func() error, error) {
		var xmin, xid string
		var seq *int64
		var running *bool
		var attempt *int32
		var r cluster.Row
		var kind int16
		if err := rows.Scan(&xmin, &seq, &xid, &running, &r.Instance, &attempt, &r.End.Instance, &r.End.Attempt, &kind, &r.End.Error); err != nil {
			return "", nil, "", nil, err
		}
		keep := func() error {
			r.Seq, r.End.Seq, r.End.Kind, r.Ended = uint64(*seq), uint64(*seq), cluster.EndKind(kind), true
			r.Running, r.Attempt = *running, int(*attempt)
			out = append(out, r)
			return nil
		}
		return xmin, seq, xid, keep, nil
	})
	if err != nil {
		return nil, c, fmt.Errorf("%w: pgstore: reading ends: %w", fairsched.ErrStore, err)
	}
	return out, next, nil
}

// since walks rows of the form (xmin, seq, xid, …) — one row with a NULL
// seq when none matched: scan scans a row into its own variables and
// returns its xmin, sequence (nil for that row) and xid, and keep, which
// takes the row. since calls keep for each row version not in c's seen set
// and returns the next cursor: the statement's xmin, and the versions at
// or after it.
func since(rows pgx.Rows, c cluster.ReadCursor, scan func() (xmin string, seq *int64, xid string, keep func() error, err error)) (cluster.ReadCursor, error) {
	defer rows.Close()
	next := cluster.ReadCursor{Seen: map[cluster.RowVersion]bool{}}
	first := true
	for rows.Next() {
		xminText, seq, xidText, keep, err := scan()
		if err != nil {
			return c, err
		}
		if first {
			xmin, err := strconv.ParseUint(xminText, 10, 64)
			if err != nil {
				return c, fmt.Errorf("xmin %q: %w", xminText, err)
			}
			next.Pos, first = xmin, false
		}
		if seq == nil {
			continue // no row matched
		}
		xid, err := strconv.ParseUint(xidText, 10, 64)
		if err != nil {
			return c, fmt.Errorf("xid %q: %w", xidText, err)
		}
		v := cluster.RowVersion{Seq: uint64(*seq), Xid: xid}
		if xid >= next.Pos {
			next.Seen[v] = true // may be read again: remember it
		}
		if c.Seen[v] {
			continue
		}
		if err := keep(); err != nil {
			return c, err
		}
	}
	if err := rows.Err(); err != nil {
		return c, err
	}
	if first {
		return c, fmt.Errorf("no snapshot row")
	}
	return next, nil
}
