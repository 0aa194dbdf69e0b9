package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/cluster"
	"github.com/fairsched/fairsched/core"
)

// The rest of cluster.Backend: what the leader and the executors of
// cluster mode read and write beyond the pieces above.

var _ cluster.Backend = (*Store)(nil)

// Domain opens the leader's view of domain under epoch: a JobStore whose
// writes (state and job records) are fenced by the lease, every job
// record as it stands — a running one with Granted set to its instance —
// and the feed of the jobs inserted after that read, each once (the
// cursor starts at the read's own snapshot, its rows already seen).
func (s *Store) Domain(ctx context.Context, domain string, epoch int64) (fairsched.JobStore, []fairsched.JobRecord, cluster.Feed, error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: pgstore: reading the domain: %w", fairsched.ErrStore, err)
	}
	defer tx.Rollback(ctx)
	var xminText string
	if err := tx.QueryRow(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot())::text`).Scan(&xminText); err != nil {
		return nil, nil, nil, fmt.Errorf("%w: pgstore: reading the domain: %w", fairsched.ErrStore, err)
	}
	xmin, err := strconv.ParseUint(xminText, 10, 64)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: pgstore: xmin %q: %w", fairsched.ErrStore, xminText, err)
	}
	// A running job is resumed on its instance; so is one whose end was
	// reported for an attempt later than the last its record says was
	// applied (the last leader died in between): its new leader reads the
	// report back — a success, or a failure its retry policy then weighs —
	// instead of running the job again at once.
	rows, err := tx.Query(ctx, `SELECT seq, xid::text, record,
			CASE WHEN running THEN instance
				WHEN state = 0 AND end_attempt > coalesce((record->>'ended_attempt')::int, 0) THEN coalesce(end_instance, '')
				ELSE '' END
		FROM fairsched_jobs ORDER BY seq`)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: pgstore: reading the domain: %w", fairsched.ErrStore, err)
	}
	defer rows.Close()
	cur := Cursor{xmin: xmin, seen: map[rowVersion]bool{}}
	var recs []fairsched.JobRecord
	for rows.Next() {
		var seq int64
		var xidText, granted string
		var data []byte
		if err := rows.Scan(&seq, &xidText, &data, &granted); err != nil {
			return nil, nil, nil, fmt.Errorf("%w: pgstore: reading the domain: %w", fairsched.ErrStore, err)
		}
		var rec fairsched.JobRecord
		if err := json.Unmarshal(data, &rec); err != nil || uint64(seq) != rec.Seq || !rec.Valid() {
			return nil, nil, nil, fmt.Errorf("%w: pgstore: job record %d does not decode", fairsched.ErrStore, seq)
		}
		rec.Granted = granted
		if xid, _ := strconv.ParseUint(xidText, 10, 64); xid >= xmin {
			cur.seen[rowVersion{uint64(seq), xid}] = true // read here: not again by the feed
		}
		recs = append(recs, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, nil, fmt.Errorf("%w: pgstore: reading the domain: %w", fairsched.ErrStore, err)
	}
	return &fenced{s: s, domain: domain, epoch: epoch}, recs, &feed{s: s, cur: cur}, nil
}

// feed is the change feed from a cursor (cluster.Feed).
type feed struct {
	s   *Store
	cur Cursor
}

func (f *feed) Next(ctx context.Context) ([]fairsched.JobRecord, error) {
	recs, next, err := f.s.Changes(ctx, f.cur)
	if err != nil {
		return nil, err
	}
	f.cur = next
	out := recs[:0]
	for _, r := range recs {
		if r.State == core.RecordPending {
			out = append(out, r)
		}
	}
	return out, nil
}

// fenced is the leader's JobStore: every write checks the lease first.
type fenced struct {
	s      *Store
	domain string
	epoch  int64
}

func (f *fenced) Load() (fairsched.StoreState, error) { return f.s.Load() }

func (f *fenced) Save(st fairsched.StoreState) error {
	doc, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("pgstore: %w", err)
	}
	ctx, cancel := f.s.ctx()
	defer cancel()
	return pgx.BeginFunc(ctx, f.s.pool, func(tx pgx.Tx) error {
		if err := fence(ctx, tx, f.domain, f.epoch); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO fairsched_state (id, doc) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`, doc)
		return err
	})
}

func (f *fenced) LoadJobs(fn func(fairsched.JobRecord) error) error { return f.s.LoadJobs(fn) }

func (f *fenced) ApplyJobs(ops []fairsched.JobOp) error {
	ctx, cancel := f.s.ctx()
	defer cancel()
	return f.s.ApplyJobsFenced(ctx, f.domain, f.epoch, ops)
}

// Rows returns the grant state of the jobs of seqs that exist.
func (s *Store) Rows(ctx context.Context, seqs []uint64) ([]cluster.Row, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT seq, running, coalesce(instance, ''), attempt, end_attempt IS NOT NULL,
			coalesce(end_instance, ''), coalesce(end_attempt, 0), coalesce(end_kind, 0), coalesce(end_error, '')
		FROM fairsched_jobs WHERE seq = ANY($1)`, int64s(seqs))
	if err != nil {
		return nil, fmt.Errorf("%w: pgstore: reading grants: %w", fairsched.ErrStore, err)
	}
	defer rows.Close()
	var out []cluster.Row
	for rows.Next() {
		var r cluster.Row
		var seq int64
		var kind int16
		if err := rows.Scan(&seq, &r.Running, &r.Instance, &r.Attempt, &r.Ended, &r.End.Instance, &r.End.Attempt, &kind, &r.End.Error); err != nil {
			return nil, fmt.Errorf("%w: pgstore: reading grants: %w", fairsched.ErrStore, err)
		}
		r.Seq, r.End.Seq, r.End.Kind = uint64(seq), uint64(seq), cluster.EndKind(kind)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%w: pgstore: reading grants: %w", fairsched.ErrStore, err)
	}
	return out, nil
}

// Finals returns the jobs of seqs that are finished or gone.
func (s *Store) Finals(ctx context.Context, seqs []uint64) ([]cluster.Final, error) {
	rows, err := s.pool.Query(ctx, `SELECT seq, state, coalesce(record->>'last_error', '') FROM fairsched_jobs WHERE seq = ANY($1)`, int64s(seqs))
	if err != nil {
		return nil, fmt.Errorf("%w: pgstore: reading finished jobs: %w", fairsched.ErrStore, err)
	}
	defer rows.Close()
	there := map[uint64]bool{}
	var out []cluster.Final
	for rows.Next() {
		var f cluster.Final
		var seq int64
		var state int16
		if err := rows.Scan(&seq, &state, &f.LastError); err != nil {
			return nil, fmt.Errorf("%w: pgstore: reading finished jobs: %w", fairsched.ErrStore, err)
		}
		f.Seq, f.State = uint64(seq), core.RecordState(state)
		there[f.Seq] = true
		if state != 0 {
			out = append(out, f)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%w: pgstore: reading finished jobs: %w", fairsched.ErrStore, err)
	}
	for _, seq := range seqs {
		if !there[seq] {
			out = append(out, cluster.Final{Seq: seq, Gone: true})
		}
	}
	return out, nil
}

// Forget deletes the finished jobs of seqs (those of a RunSync or Submit,
// once their instance has read how they ended).
func (s *Store) Forget(ctx context.Context, seqs []uint64) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM fairsched_jobs WHERE seq = ANY($1) AND state <> 0`, int64s(seqs)); err != nil {
		return fmt.Errorf("%w: pgstore: deleting finished jobs: %w", fairsched.ErrStore, err)
	}
	return nil
}

// Wake listens for the commits r reads (cluster.Backend); nil when it
// cannot (the caller polls).
func (s *Store) Wake(ctx context.Context, r cluster.Reader) (<-chan struct{}, func()) {
	channel := notifyChannel
	switch r {
	case cluster.ExecutorReads:
		channel = grantsChannel
	case cluster.OwnerReads:
		channel = finalsChannel
	case cluster.EndReads:
		channel = endsChannel
	}
	l, err := s.listenFor(ctx, channel)
	if err != nil {
		return nil, func() {}
	}
	return l.C, func() { _ = l.Stop() }
}

func int64s(seqs []uint64) []int64 {
	out := make([]int64, len(seqs))
	for i, s := range seqs {
		out[i] = int64(s)
	}
	return out
}

// CountJobs returns how many job rows the database holds, whatever their
// state.
func (s *Store) CountJobs(ctx context.Context) (int, error) {
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM fairsched_jobs`).Scan(&n); err != nil {
		return 0, fmt.Errorf("%w: pgstore: counting jobs: %w", fairsched.ErrStore, err)
	}
	return n, nil
}
