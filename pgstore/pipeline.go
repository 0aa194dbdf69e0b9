package pgstore

import (
	"context"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fairsched/fairsched/internal/cluster"
)

// Pipelined writes. A write of several statements sent one at a time in
// an explicit transaction (BEGIN, the lease check, the row locks, the
// writes, COMMIT) holds its row locks and the lease row for as many round
// trips, and every writer of the same rows — or a renewal of the lease —
// waits that long. Sent as one batch with one Sync, the statements run in
// one implicit transaction: they commit together, or the first that fails
// aborts those after it and nothing is written; the locks are held for
// the time the server takes, not the round trips.

// fenceState is the SQLSTATE of fairsched_fence (layout 12).
const fenceState = "FSF01"

// pipeline sends b's statements in one implicit transaction, after the
// lease check of (domain, epoch) when fenced, and calls read with the
// results of b's statements in order (nil: each is executed and its
// error checked). A failed check is ErrFenced.
func (s *Store) pipeline(ctx context.Context, fenced bool, domain string, epoch int64, b *pgx.Batch, read func(br pgx.BatchResults) error) error {
	all := &pgx.Batch{}
	if fenced {
		all.Queue(`SELECT fairsched_fence($1, $2)`, domain, epoch)
	}
	all.QueuedQueries = append(all.QueuedQueries, b.QueuedQueries...)
	br := s.pool.SendBatch(ctx, all)
	var err error
	if fenced {
		_, err = br.Exec()
	}
	if err == nil && read != nil {
		err = read(br)
	}
	if err == nil && read == nil {
		for range b.QueuedQueries {
			if _, err = br.Exec(); err != nil {
				break
			}
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == fenceState {
		return cluster.ErrFenced
	}
	return err
}

// queue queues the deletes, then the upserts, after locking their rows in
// sequence order — with the rows of also, which the same transaction
// writes next —, and the wake-up of channel's listeners (delivered on
// commit).
func (c *jobColumns) queue(b *pgx.Batch, channel string, also ...int64) {
	if all := append(append(slices.Clip(c.dels), c.seqs...), also...); len(all) >= 2 {
		slices.Sort(all)
		b.Queue(lockRowsSQL, slices.Compact(all))
	}
	if len(c.seqs)+len(c.dels) > 0 {
		b.Queue(`SELECT pg_notify('` + channel + `', '')`)
	}
	if len(c.dels) > 0 {
		b.Queue(`DELETE FROM fairsched_jobs WHERE seq = ANY($1)`, c.dels)
	}
	if len(c.seqs) > 0 {
		// Keep the database's sequence (Insert) past the numbers a
		// scheduler allocated itself. A sequence never used (is_called
		// false) gives its last_value next.
		b.Queue(`SELECT setval('fairsched_jobs_seq', m) FROM (SELECT max(s) AS m FROM unnest($1::bigint[]) s) x
			WHERE m >= (SELECT last_value + is_called::int FROM fairsched_jobs_seq)`, c.seqs)
		b.Queue(`INSERT INTO fairsched_jobs (seq, type, id, state, record)
			SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::smallint[], $5::jsonb[])
			ON CONFLICT (seq) DO UPDATE SET type = excluded.type, id = excluded.id, state = excluded.state, record = excluded.record`,
			c.seqs, c.types, c.ids, c.states, c.records)
	}
}

// apply commits c in one pipeline, fenced by (domain, epoch) when fenced.
// A fenced write is a cluster leader's, which wakes the instances waiting
// for their RunSync and Submit jobs' ends, not itself; any other wakes the
// listeners of new jobs.
func (s *Store) apply(ctx context.Context, fenced bool, domain string, epoch int64, c *jobColumns) error {
	b := &pgx.Batch{}
	channel := notifyChannel
	if fenced {
		channel = finalsChannel
	}
	c.queue(b, channel)
	err := s.pipeline(ctx, fenced, domain, epoch, b, nil)
	if err != nil && !errors.Is(err, cluster.ErrFenced) {
		return classified("writing jobs", err)
	}
	return err
}
