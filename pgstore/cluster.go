package pgstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/internal/cluster"
)

// clusterBackend is a Store seen as cluster mode's backend: the protocol
// the leader and the executors speak through the database. It is a type of
// its own so that a Store's methods are those a user calls; the scheduler
// reaches it through ClusterBackend.
type clusterBackend struct{ *Store }

var _ cluster.Backend = clusterBackend{}

// ClusterBackend returns the protocol cluster mode speaks through this
// database — the leader's lease, the change feed, instance heartbeats and
// grants. fairsched.WithCluster calls it; a program has no need to.
func (s *Store) ClusterBackend() cluster.Backend { return clusterBackend{s} }

// Domain opens the leader's view of domain under epoch: a JobStore whose
// writes (state and job records) are fenced by the lease; every job record
// that is not plainly pending — a running one with Granted set to its
// instance, the dead, the succeeded kept — with the first page of the
// pending ones; and the feed, whose Backlog returns the other pending
// records of that one snapshot page by page and whose Next returns the
// jobs inserted after it, each once (its cursor starts at the snapshot,
// every row of it seen).
//
// A leader thus decides over its first page while it loads the rest: with
// a million jobs waiting, the first grant does not wait for all of them to
// be read and decoded (the snapshot's transaction stays open meanwhile).
func (s clusterBackend) Domain(ctx context.Context, domain string, epoch int64) (fairsched.JobStore, []fairsched.JobRecord, cluster.Feed, error) {
	fail := func(err error) (fairsched.JobStore, []fairsched.JobRecord, cluster.Feed, error) {
		return nil, nil, nil, fmt.Errorf("%w: pgstore: reading the domain: %w", fairsched.ErrStore, err)
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fail(err)
	}
	keep := false
	defer func() {
		if !keep {
			_ = tx.Rollback(context.Background())
		}
	}()
	if _, err := tx.Exec(ctx, rangeReadSettings); err != nil { // for the reads of the rows since its xmin
		return fail(err)
	}
	var xminText string
	if err := tx.QueryRow(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot())::text`).Scan(&xminText); err != nil {
		return fail(err)
	}
	xmin, err := strconv.ParseUint(xminText, 10, 64)
	if err != nil {
		return fail(fmt.Errorf("xmin %q: %w", xminText, err))
	}
	// The rows of the snapshot the feed would read again (written at or
	// after its xmin) are seen already, whichever page holds them.
	cur := cursor{Pos: xmin, Seen: map[cluster.RowVersion]bool{}}
	rows, err := tx.Query(ctx, `SELECT seq, xid::text FROM fairsched_jobs WHERE xid >= $1::text::xid8`, xminText)
	if err != nil {
		return fail(err)
	}
	for rows.Next() {
		var seq int64
		var xidText string
		if err := rows.Scan(&seq, &xidText); err != nil {
			rows.Close()
			return fail(err)
		}
		xid, _ := strconv.ParseUint(xidText, 10, 64)
		cur.Seen[cluster.RowVersion{Seq: uint64(seq), Xid: xid}] = true
	}
	if rows.Close(); rows.Err() != nil {
		return fail(rows.Err())
	}
	// A running job is resumed on its instance; so is one whose end was
	// reported for an attempt later than the last its record says was
	// applied (the last leader died in between): its new leader reads the
	// report back — a success, or a failure its retry policy then weighs —
	// instead of running the job again at once. Those, and the finished,
	// are all read now: no grant may start before every running one is
	// counted.
	rows, err = tx.Query(ctx, `SELECT seq, record, attempt,
			CASE WHEN running THEN instance
				WHEN state = 0 AND end_attempt > coalesce((record->>'ended_attempt')::int, 0) THEN coalesce(end_instance, '')
				ELSE '' END
		FROM fairsched_jobs WHERE (`+plainPending+`) IS NOT TRUE ORDER BY seq`)
	recs, err := scanRecords(0, rows, err)
	if err != nil {
		return fail(err)
	}
	b := &backlog{tx: tx, page: s.loadPage}
	first, err := b.read(ctx, min(s.loadPage, firstPage))
	if err != nil {
		return fail(err)
	}
	recs = append(recs, first...)
	slices.SortFunc(recs, func(x, y fairsched.JobRecord) int { return cmp.Compare(x.Seq, y.Seq) })
	keep = b.tx != nil // more pages: the feed's backlog holds the snapshot
	return &fenced{s: s, domain: domain, epoch: epoch}, recs, &feed{s: s, cur: cur, backlog: b}, nil
}

// plainPending is the condition of a pending job no instance runs and no
// reported end waits on: the rows a leader may load after its first
// decisions. It is never NULL.
const plainPending = `state = 0 AND NOT running AND (end_attempt IS NULL OR end_attempt <= coalesce((record->>'ended_attempt')::int, 0))`

// firstPage bounds the page of pending jobs Domain returns: the leader's
// first decisions wait for it to be read and decoded (about 8 µs a
// record), its other instances' first grants with them — 5 000 records
// held the first start of a burn-down back by 40 ms. The loader reads
// the others in full pages while the leader decides.
const firstPage = 500

// backlog reads the plainly pending rows of Domain's snapshot in sequence
// order, a page at a time, in the transaction that took the snapshot; it
// ends that transaction after the last page, or at Close.
type backlog struct {
	tx   pgx.Tx // nil once every page is read (or on the first error)
	page int
	last int64 // the last sequence read
}

// read reads the next limit records.
func (b *backlog) read(ctx context.Context, limit int) ([]fairsched.JobRecord, error) {
	if b.tx == nil {
		return nil, nil
	}
	rows, err := b.tx.Query(ctx, `SELECT seq, record, attempt, '' FROM fairsched_jobs
		WHERE `+plainPending+` AND seq > $1 ORDER BY seq LIMIT $2`, b.last, limit)
	recs, err := scanRecords(limit, rows, err)
	if err != nil || len(recs) < limit {
		b.close()
	}
	if err != nil {
		return nil, err
	}
	if len(recs) > 0 {
		b.last = int64(recs[len(recs)-1].Seq)
	}
	return recs, nil
}

func (b *backlog) close() {
	if b.tx != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = b.tx.Rollback(ctx) // read-only: nothing to keep
		cancel()
		b.tx = nil
	}
}

// attemptColumn: a grant counts its attempt in the row's attempt column,
// not in the record's JSON (rewriting the JSON was a sixth of the grant's
// time); the scheduler's next write of the record carries the count. A
// record read back takes the larger of the two: the attempts started
// count against the retry policy's limit after a new leader takes over.

// scanRecords decodes the rows of (seq, record, attempt, granted), room made for
// capacity of them at once: each record is decoded in its place, not
// copied there (a million records are a gigabyte of copies and slices
// grown).
func scanRecords(capacity int, rows pgx.Rows, err error) ([]fairsched.JobRecord, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	recs := make([]fairsched.JobRecord, 0, capacity)
	var data []byte // pgx reads each row's bytes into it: reused
	for rows.Next() {
		var seq int64
		var attempt int32
		var granted string
		if err := rows.Scan(&seq, &data, &attempt, &granted); err != nil {
			return nil, err
		}
		recs = append(recs, fairsched.JobRecord{})
		rec := &recs[len(recs)-1]
		if err := json.Unmarshal(data, rec); err != nil || uint64(seq) != rec.Seq || !rec.Valid() || attempt < 0 {
			return nil, fmt.Errorf("job record %d does not decode", seq)
		}
		rec.Attempt = max(rec.Attempt, int(attempt)) // attemptColumn
		rec.Granted = granted
	}
	return recs, rows.Err()
}

// feed is the leader's feed (cluster.Feed): the snapshot's backlog, then
// the change feed from a cursor. Backlog and Next touch apart fields: one
// goroutine may call each.
type feed struct {
	s       clusterBackend
	cur     cursor
	backlog *backlog
}

func (f *feed) Backlog(ctx context.Context) ([]fairsched.JobRecord, bool, error) {
	recs, err := f.backlog.read(ctx, f.backlog.page)
	if err != nil {
		return nil, false, fmt.Errorf("%w: pgstore: reading the backlog: %w", fairsched.ErrStore, err)
	}
	return recs, f.backlog.tx != nil, nil
}

func (f *feed) Close() { f.backlog.close() }

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
	s      clusterBackend
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
func (s clusterBackend) Rows(ctx context.Context, seqs []uint64) ([]cluster.Row, error) {
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
func (s clusterBackend) Finals(ctx context.Context, seqs []uint64) ([]cluster.Final, error) {
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
func (s clusterBackend) Forget(ctx context.Context, seqs []uint64) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM fairsched_jobs WHERE seq = ANY($1) AND state <> 0`, int64s(seqs)); err != nil {
		return fmt.Errorf("%w: pgstore: deleting finished jobs: %w", fairsched.ErrStore, err)
	}
	return nil
}

// Wake listens for the commits r reads (cluster.Backend), until the
// function it returns is called (any number of times); nil when it cannot
// (the caller polls).
func (s clusterBackend) Wake(ctx context.Context, r cluster.Reader, instance string) (<-chan struct{}, func()) {
	channel, wanted := notifyChannel, func(string) bool { return true }
	switch r {
	case cluster.ExecutorReads:
		channel, wanted = grantsChannel, func(payload string) bool { return grantsFor(payload, instance) }
	case cluster.OwnerReads:
		channel, wanted = finalsChannel, func(payload string) bool { return grantsFor(payload, instance) }
	case cluster.EndReads:
		channel = endsChannel
	case cluster.InstanceReads:
		channel = instancesChannel
	}
	l, err := s.listenFor(ctx, channel, wanted)
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
