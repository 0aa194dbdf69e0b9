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
	if err := s.pool.QueryRow(ctx, `SELECT nextval('fairsched_jobs_seq')`).Scan(&rec.Seq); err != nil {
		return fmt.Errorf("%w: pgstore: a sequence number: %w", fairsched.ErrStore, err)
	}
	rec.State = fairsched.JobRecord{}.State // pending
	if !rec.Valid() {
		return fmt.Errorf("%w: pgstore: record %s/%s is not valid", fairsched.ErrInvalidJob, rec.Type, rec.ID)
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("pgstore: encoding job %s/%s: %w", rec.Type, rec.ID, err)
	}
	batch := `WITH ins AS (INSERT INTO fairsched_jobs (seq, type, id, state, record) VALUES ($1, $2, $3, 0, $4) RETURNING 1)
		SELECT pg_notify('` + notifyChannel + `', '') FROM ins`
	if _, err := s.pool.Exec(ctx, batch, int64(rec.Seq), string(rec.Type), rec.ID, data); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "fairsched_jobs_unfinished" {
			return fmt.Errorf("%w: %s/%s is pending or running", fairsched.ErrDuplicateJob, rec.Type, rec.ID)
		}
		return fmt.Errorf("%w: pgstore: inserting job %s/%s: %w", fairsched.ErrStore, rec.Type, rec.ID, err)
	}
	return nil
}
