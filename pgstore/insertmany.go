package pgstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fairsched/fairsched"
)

// InsertMany writes recs as new durable jobs in one statement and one
// commit (the wake-up of the listeners with it), as Insert writes one:
// each record's sequence comes from the database (rec.Seq is set). It is
// all or nothing for the batch as a whole — an invalid record writes
// nothing (fairsched.ErrInvalidJob naming its index), and so does a failed
// statement (fairsched.ErrStore) —, and per job for duplicates: a record
// whose (type, id) is pending or running already, or repeats one earlier
// in recs, is not written, and errs[i] is fairsched.ErrDuplicateJob; the
// others are committed. errs is nil when err is not. A failed statement
// is classified as Insert's: fairsched.ErrRecordRefused (a record is at
// fault — the whole batch is refused), fairsched.ErrOutcomeUnknown (the
// reply was lost: the batch may be stored).
func (s clusterBackend) InsertMany(ctx context.Context, recs []*fairsched.JobRecord) (errs []error, err error) {
	types := make([]string, len(recs))
	ids := make([]string, len(recs))
	datas := make([][]byte, len(recs))
	for i, rec := range recs {
		rec.State = fairsched.JobRecord{}.State // pending
		rec.Seq = 1                             // checked with a stand-in: the database numbers it
		if !rec.Valid() || rec.Owner != "" {
			return nil, fmt.Errorf("%w: pgstore: record %d (%s/%s) is not a valid durable job", fairsched.ErrInvalidJob, i, rec.Type, rec.ID)
		}
		rec.Seq = 0
		data, err := json.Marshal(rec)
		if err != nil {
			return nil, fmt.Errorf("%w: %w: pgstore: encoding job %d (%s/%s): %w", fairsched.ErrStore, fairsched.ErrRecordRefused, i, rec.Type, rec.ID, err)
		}
		types[i], ids[i], datas[i] = string(rec.Type), rec.ID, data
	}
	if len(recs) == 0 {
		return nil, nil
	}
	// One statement: the numbers (input is read twice, so computed once),
	// the rows — a duplicate of a pending job skipped, not an error —, and
	// each input's number and whether it went in.
	rows, err := s.pool.Query(ctx, `
		WITH input AS (
			SELECT nextval('fairsched_jobs_seq') AS seq, t, i, r, ord
			FROM unnest($1::text[], $2::text[], $3::jsonb[]) WITH ORDINALITY AS u(t, i, r, ord)),
		ins AS (
			INSERT INTO fairsched_jobs (seq, type, id, state, record)
			SELECT seq, t, i, 0, jsonb_set(r, '{seq}', to_jsonb(seq)) FROM input ORDER BY ord
			ON CONFLICT (type, id) WHERE state = 0 AND NOT record ? 'owner' DO NOTHING
			RETURNING seq)
		SELECT input.ord, input.seq, ins.seq IS NOT NULL, (SELECT pg_notify('`+notifyChannel+`', ''))::text
		FROM input LEFT JOIN ins ON ins.seq = input.seq ORDER BY input.ord`, types, ids, datas)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", fairsched.ErrStore, classified(fmt.Sprintf("inserting %d jobs", len(recs)), err))
	}
	defer rows.Close()
	errs = make([]error, len(recs))
	n := 0
	for rows.Next() {
		var ord, seq int64
		var in bool
		if err := rows.Scan(&ord, &seq, &in, nil); err != nil {
			return nil, fmt.Errorf("%w: pgstore: inserting %d jobs: %w", fairsched.ErrStore, len(recs), err)
		}
		rec := recs[ord-1]
		n++
		if !in {
			errs[ord-1] = fmt.Errorf("%w: %s/%s is pending or running", fairsched.ErrDuplicateJob, rec.Type, rec.ID)
			continue
		}
		rec.Seq = uint64(seq)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", fairsched.ErrStore, classified(fmt.Sprintf("inserting %d jobs", len(recs)), err))
	}
	if n != len(recs) {
		return nil, fmt.Errorf("%w: pgstore: inserting %d jobs: %d rows back", fairsched.ErrStore, len(recs), n)
	}
	return errs, nil
}
