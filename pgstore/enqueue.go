package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fairsched/fairsched"
)

// Insert writes rec as a new durable job from any instance of a cluster:
// its sequence comes from the database (rec.Seq is set), the unique index
// on unfinished (type, id) refuses a second one (fairsched.ErrDuplicateJob),
// and the commit wakes the listeners. It returns once committed.
func (s *Store) Insert(ctx context.Context, rec *fairsched.JobRecord) error {
	rec.State = fairsched.JobRecord{}.State // pending
	rec.Seq = 1                             // checked with a stand-in: the database numbers it
	if !rec.Valid() {
		return fmt.Errorf("%w: pgstore: record %s/%s is not valid", fairsched.ErrInvalidJob, rec.Type, rec.ID)
	}
	rec.Seq = 0
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("pgstore: encoding job %s/%s: %w", rec.Type, rec.ID, err)
	}
	// One round trip: the number, the row with the number in its record,
	// and the wake-up of the listeners on commit.
	var seq int64
	err = s.pool.QueryRow(ctx, `
		WITH n AS (SELECT nextval('fairsched_jobs_seq') AS seq),
		ins AS (INSERT INTO fairsched_jobs (seq, type, id, state, record)
			SELECT n.seq, $1, $2, 0, jsonb_set($3::jsonb, '{seq}', to_jsonb(n.seq)) FROM n RETURNING seq)
		SELECT seq, pg_notify('`+notifyChannel+`', '') FROM ins`, string(rec.Type), rec.ID, data).Scan(&seq, nil)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "fairsched_jobs_unfinished" {
			return fmt.Errorf("%w: %s/%s is pending or running", fairsched.ErrDuplicateJob, rec.Type, rec.ID)
		}
		return fmt.Errorf("%w: pgstore: inserting job %s/%s: %w", fairsched.ErrStore, rec.Type, rec.ID, err)
	}
	rec.Seq = uint64(seq)
	return nil
}
