package pgstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster"
)

// Grants: the leader's admissions in cluster mode, written in batches
// under its lease (fenced), and the executors' reports of their ends,
// guarded by (instance, attempt) so that a zombie's late report — an
// instance declared lost, whose job was granted again — matches nothing.

// Grant is the leader's write of one turn (cluster.Backend), one
// transaction under epoch's lease of domain: first the records of ops (its
// scheduler's: a retry, a dead job) are written as ApplyJobs writes them,
// then the rows of the successes of
// succeeded that still match their attempt — running on that instance for
// that attempt, or ended by that attempt's reported success — are deleted
// (their sequences returned as gone), then grants are written: each
// pending, not running job becomes running on its instance, its attempt
// column counting the attempt (its record is left as the scheduler wrote
// it: readers take the larger count, attemptColumn), and the sequences
// that took are returned (a job already running, or gone, is skipped).
// Deletes and grants commit together: a reader never sees the slots a
// batch frees taken before they are free. A deposed leader's turn changes
// nothing (cluster.ErrFenced); a turn that would run two jobs on one
// exclusive conflict key changes nothing (cluster.ErrDoubleAdmission).
func (s clusterBackend) Grant(ctx context.Context, domain string, epoch int64, ops []fairsched.JobOp, succeeded []cluster.End, grants []cluster.Grant) (gone, took []uint64, err error) {
	if len(ops)+len(succeeded)+len(grants) == 0 {
		return nil, nil, nil
	}
	cols, err := columns(ops)
	if err != nil {
		return nil, nil, err // a record it cannot encode: refused
	}
	// The rows in sequence order: each statement finds them by key in
	// the order given (TestWritesFindRowsByKey checks the plans). The
	// successes' delete also locks its rows in that order before it
	// changes any (lockedRows: a small table's plan meets them in the
	// table's order), as every other writer of several rows does; the
	// grants need not (grantSQL). The caller's slices keep their order.
	ends := slices.Clone(succeeded)
	slices.SortFunc(ends, func(a, b cluster.End) int { return cmp.Compare(a.Seq, b.Seq) })
	endSeqs, endInstances, endAttempts := make([]int64, len(ends)), make([]string, len(ends)), make([]int32, len(ends))
	for i, e := range ends {
		endSeqs[i], endInstances[i], endAttempts[i] = int64(e.Seq), e.Instance, int32(e.Attempt)
	}
	grants = slices.Clone(grants)
	slices.SortFunc(grants, func(a, b cluster.Grant) int { return cmp.Compare(a.Seq, b.Seq) })
	seqs := make([]int64, len(grants))
	instances := make([]string, len(grants))
	attempts := make([]int32, len(grants))
	keys := make([]*string, len(grants))
	workers := make([]*string, len(grants))
	slots := make([]int32, len(grants))
	handed := make([]bool, len(grants))
	var woken []string // the instances that read some grant from here
	for i, g := range grants {
		handed[i] = g.Handed
		if !g.Handed {
			woken = append(woken, g.Instance)
		}
		seqs[i], instances[i], attempts[i], slots[i] = int64(g.Seq), g.Instance, int32(g.Attempt), int32(g.Slot)
		if g.Worker != "" {
			w := g.Worker
			workers[i] = &w
		}
		if g.ConflictKey != "" {
			k := g.ConflictKey
			keys[i] = &k
		}
	}
	// One pipeline: the lease check, the deletes, the grants, the wake-up
	// (with the first grant that took) unless every grant is handed over
	// in process.
	b := &pgx.Batch{}
	var also []int64 // the successes' rows, locked with the records' in one order
	if len(ops) > 0 {
		also = endSeqs
	}
	cols.queue(b, finalsChannel, also...)
	written := len(b.QueuedQueries) // the records' statements: no rows to read
	if len(succeeded) > 0 {
		b.Queue(deleteSucceededSQL, endSeqs, endInstances, endAttempts)
	}
	if len(grants) > 0 {
		b.Queue(grantSQL(len(woken) > 0), seqs, instances, attempts, keys, workers, slots, grantsPayload(woken), handed)
	}
	err = s.pipeline(ctx, true, domain, epoch, b, func(br pgx.BatchResults) error {
		for range written {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		if len(succeeded) > 0 {
			rows, err := br.Query()
			if err != nil {
				return err
			}
			if gone, err = collectFirstSeqs(rows); err != nil {
				return err
			}
		}
		if len(grants) == 0 {
			return nil
		}
		rows, err := br.Query()
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var seq int64
			if err := rows.Scan(&seq, nil); err != nil {
				return err
			}
			took = append(took, uint64(seq))
		}
		return rows.Err()
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" { // unique_violation
		err = cluster.ErrDoubleAdmission
	}
	if err != nil && !errors.Is(err, cluster.ErrFenced) && !errors.Is(err, cluster.ErrDoubleAdmission) {
		return nil, nil, clusterWriteError("granting jobs", err)
	}
	if err != nil {
		return nil, nil, err
	}
	return gone, took, nil
}

// grantSQL writes grants (the columns $1–$6), each only to a job pending,
// not running and not granted that attempt (or a later one) before, and
// returns the sequences that took — a turn written again because its
// commit's reply was lost must not grant again an attempt that ran
// meanwhile and ended; notify: wake the executors that $7 names. A grant
// handed to its executor in process ($8) is not stamped with the
// transaction (grant_xid): that executor's incremental reads
// (GrantsSince) have nothing to learn from it — it runs already — and
// its full reads (Granted) see it all the same. It takes its rows as its plan meets them, with
// no lockedRows first (row locks first cost the burn-down about a third of
// its throughput): no other writer locks several of them at once — an end
// report locks running rows only, and the leader's scheduler writes the
// record of a job in a turn only once the turn has settled (the leader's
// loop writes one turn at a time and takes a cancelled job's grant back
// between turns).
func grantSQL(notify bool) string {
	wake := `$7::text`
	if notify {
		wake = `(SELECT pg_notify('` + grantsChannel + `', $7))::text`
	}
	return `
		WITH u AS (
			UPDATE fairsched_jobs j SET running = true, instance = g.instance, attempt = g.attempt, conflict_key = g.key,
				worker = g.worker, slot = g.slot, cancel_requested = false,
				grant_xid = CASE WHEN g.handed THEN NULL ELSE pg_current_xact_id() END
			FROM unnest($1::bigint[], $2::text[], $3::int[], $4::text[], $5::text[], $6::int[], $8::bool[])
				AS g(seq, instance, attempt, key, worker, slot, handed)
			WHERE j.seq = g.seq AND NOT j.running AND j.state = 0 AND j.attempt < g.attempt
			RETURNING j.seq)
		SELECT u.seq, ` + wake + ` FROM u`
}

// lockedRows locks the rows $1 names in the order of their keys, as every
// writer of several rows does, before the statement that names it changes
// any (lockedRunning: only those running, the only ones an end report
// changes): lockedFirst, a condition of no row's values, is the plan's
// one-time filter, evaluated — every row locked — before the plan starts.
// A statement's own plan takes its rows in whatever order it meets them
// (a small table's hash join: in the table's order), and two writers of
// the same rows in different orders deadlock. In the statement, not one
// of its own: no round trip more, and the plan that finds the rows is the
// one it would be without.
const (
	lockedNamed   = `locked AS MATERIALIZED (SELECT seq FROM fairsched_jobs WHERE seq = ANY($1::bigint[])`
	lockedRows    = lockedNamed + ` ORDER BY seq FOR UPDATE)`
	lockedRunning = lockedNamed + ` AND running IS TRUE ORDER BY seq FOR UPDATE)`
	lockedFirst   = `(SELECT count(*) FROM locked) >= 0`
)

// The writes of ends find each job's row by its key: "running IS TRUE",
// not "running", which the partial index of the running rows
// (fairsched_jobs_granted) would serve. Statistics taken before a burst of
// grants call that index tiny, and a generic plan then scans it — every
// running row, and the entries of those deleted since the last vacuum —
// for each statement: milliseconds a write instead of a tenth of one.
const (
	// A success's row is deleted while its grant still runs (handed back
	// in process) or once its executor reported it (its end is that
	// attempt's success) — unless the leader's scheduler wrote the record
	// since (a success kept WithRetention, a cancelled RunSync's end: no
	// longer pending), which the leader's answer may precede: then it only
	// stops running.
	deleteSucceededSQL = `
		WITH ` + lockedRows + `,
		e AS (SELECT * FROM unnest($1::bigint[], $2::text[], $3::int[]) AS e(seq, instance, attempt) WHERE ` + lockedFirst + `),
		deleted AS (
			DELETE FROM fairsched_jobs j USING e
			WHERE j.seq = e.seq AND j.state = 0 AND (j.running IS TRUE AND j.instance = e.instance AND j.attempt = e.attempt
				OR j.running IS FALSE AND j.end_instance = e.instance AND j.end_attempt = e.attempt AND j.end_kind = 0)
			RETURNING j.seq, j.record->>'owner' AS owner),
		kept AS (
			UPDATE fairsched_jobs j SET running = false, conflict_key = NULL, cancel_requested = false FROM e
			WHERE j.seq = e.seq AND j.state <> 0 AND j.running IS TRUE AND j.instance = e.instance AND j.attempt = e.attempt
			RETURNING j.seq),
		owners AS (SELECT string_agg(DISTINCT owner, E'\n') AS p, bool_or(owner LIKE E'%\n%') AS multiline
			FROM deleted WHERE owner IS NOT NULL)
		SELECT seq, (SELECT pg_notify('` + finalsChannel + `', CASE WHEN multiline OR length(p) > ` + maxPayloadSQL + ` THEN '' ELSE p END)
			FROM owners WHERE p IS NOT NULL)::text FROM deleted
		UNION ALL SELECT seq, NULL FROM kept`
	reportEndsSQL = `
		WITH ` + lockedRunning + `,
		ended AS (
			UPDATE fairsched_jobs j SET running = false, conflict_key = NULL, cancel_requested = false,
				end_instance = e.instance, end_attempt = e.attempt, end_kind = e.kind, end_error = e.err, end_xid = pg_current_xact_id()
			FROM unnest($1::bigint[], $2::text[], $3::int[], $4::smallint[], $5::text[]) AS e(seq, instance, attempt, kind, err)
			WHERE ` + lockedFirst + ` AND j.seq = e.seq AND j.running IS TRUE AND j.instance = e.instance AND j.attempt = e.attempt
			RETURNING 1)
		SELECT count(*), pg_notify('` + endsChannel + `', '') FROM ended`
)

// Granted returns the jobs running on instance and the attempt each was
// granted for: what an executor runs.
func (s clusterBackend) Granted(ctx context.Context, instance string) ([]cluster.Grant, error) {
	rows, err := s.pool.Query(ctx, `SELECT seq, attempt, coalesce(conflict_key, ''), record, coalesce(worker, ''), slot, cancel_requested,
		cancel_requested AND preempt_requested FROM fairsched_jobs WHERE running AND instance = $1 ORDER BY seq`, instance)
	if err != nil {
		return nil, fmt.Errorf("%w: pgstore: reading grants: %w", fairsched.ErrStore, err)
	}
	defer rows.Close()
	var out []cluster.Grant
	for rows.Next() {
		g := cluster.Grant{Instance: instance}
		var seq int64
		var data []byte
		if err := rows.Scan(&seq, &g.Attempt, &g.ConflictKey, &data, &g.Worker, &g.Slot, &g.Cancelled, &g.Preempted); err != nil {
			return nil, fmt.Errorf("%w: pgstore: reading grants: %w", fairsched.ErrStore, err)
		}
		g.Seq = uint64(seq)
		g.Record = new(fairsched.JobRecord)
		if err := json.Unmarshal(data, g.Record); err != nil || !g.Record.Valid() {
			return nil, fmt.Errorf("%w: pgstore: job record %d does not decode", fairsched.ErrStore, seq)
		}
		g.Record.Attempt = max(g.Record.Attempt, g.Attempt) // attemptColumn
		out = append(out, g)
	}
	return out, rows.Err()
}

// ReportEnds ends the grants reported, in one statement: each that still
// matches — running, on that instance, for that attempt — stops running
// (the leader then reads the outcome from the record). A late report of a
// grant that was taken back matches nothing. It returns how many matched.
func (s clusterBackend) ReportEnds(ctx context.Context, ends []cluster.End) (int, error) {
	// In sequence order, as Grant: found by key in that order, and
	// locked in it first (lockedRows), as every other writer of several
	// rows does.
	ends = slices.Clone(ends)
	slices.SortFunc(ends, func(a, b cluster.End) int { return cmp.Compare(a.Seq, b.Seq) })
	seqs := make([]int64, len(ends))
	instances := make([]string, len(ends))
	attempts := make([]int32, len(ends))
	kinds := make([]int16, len(ends))
	errs := make([]string, len(ends))
	for i, e := range ends {
		seqs[i], instances[i], attempts[i] = int64(e.Seq), e.Instance, int32(e.Attempt)
		kinds[i], errs[i] = int16(e.Kind), e.Error
	}
	// The notification is in the statement's own transaction: the leader
	// is woken once the ends are committed.
	var n int
	b := &pgx.Batch{}
	b.Queue(reportEndsSQL, seqs, instances, attempts, kinds, errs)
	err := s.pipeline(ctx, false, "", 0, b, func(br pgx.BatchResults) error {
		return br.QueryRow().Scan(&n, nil)
	})
	if err != nil {
		return 0, clusterWriteError("reporting ends", err)
	}
	return n, nil
}

// Revoke takes back the grants of instance (declared lost) under epoch's
// lease: its jobs stop running, to be granted again; its late reports will
// match nothing. It returns the sequences taken back.
func (s clusterBackend) Revoke(ctx context.Context, domain string, epoch int64, instance string) ([]uint64, error) {
	var out []uint64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := fence(ctx, tx, domain, epoch); err != nil {
			return err
		}
		// Locked in sequence order first, as every writer of several rows.
		if _, err := tx.Exec(ctx, `SELECT 1 FROM fairsched_jobs WHERE running AND instance = $1 ORDER BY seq FOR UPDATE`, instance); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `UPDATE fairsched_jobs SET running = false, conflict_key = NULL, instance = NULL, cancel_requested = false
			WHERE running AND instance = $1 RETURNING seq`, instance)
		if err != nil {
			return err
		}
		out, err = collectSeqs(rows)
		return err
	})
	if err != nil && !errors.Is(err, cluster.ErrFenced) {
		return nil, fmt.Errorf("%w: pgstore: revoking the grants of %q: %w", fairsched.ErrStore, instance, err)
	}
	return out, err
}

// collectFirstSeqs returns the sequences in the first column of rows of
// two (the second: a wake-up's value, ignored), and closes rows.
func collectFirstSeqs(rows pgx.Rows) ([]uint64, error) {
	defer rows.Close()
	var out []uint64
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq, nil); err != nil {
			return nil, err
		}
		out = append(out, uint64(seq))
	}
	return out, rows.Err()
}

// collectSeqs returns the sequences rows hold, one a row, and closes rows.
func collectSeqs(rows pgx.Rows) ([]uint64, error) {
	defer rows.Close()
	var out []uint64
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return nil, err
		}
		out = append(out, uint64(seq))
	}
	return out, rows.Err()
}
