package pgstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fairsched/fairsched"
)

// Insert writes rec as a new durable job from any instance of a cluster:
// its sequence comes from the database (rec.Seq is set), the unique index
// on unfinished (type, id) refuses a second one (fairsched.ErrDuplicateJob),
// and the commit wakes the listeners. It returns once committed. A
// record the database refuses for its data is fairsched.ErrRecordRefused,
// a commit whose reply was lost fairsched.ErrOutcomeUnknown (then the job
// may be stored: an Insert of the same (type, id) tells), each with
// fairsched.ErrStore.
func (s clusterBackend) Insert(ctx context.Context, rec *fairsched.JobRecord) error {
	rec.State = fairsched.JobRecord{}.State // pending
	rec.Seq = 1                             // checked with a stand-in: the database numbers it
	if !rec.Valid() {
		return fmt.Errorf("%w: pgstore: record %s/%s is not valid", fairsched.ErrInvalidJob, rec.Type, rec.ID)
	}
	rec.Seq = 0
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("%w: %w: pgstore: encoding job %s/%s: %w", fairsched.ErrStore, fairsched.ErrRecordRefused, rec.Type, rec.ID, err)
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
		if classifyWriteError(err) == failDuplicate {
			return fmt.Errorf("%w: %s/%s is pending or running", fairsched.ErrDuplicateJob, rec.Type, rec.ID)
		}
		return fmt.Errorf("%w: %w", fairsched.ErrStore, classified(fmt.Sprintf("inserting job %s/%s", rec.Type, rec.ID), err))
	}
	rec.Seq = uint64(seq)
	return nil
}
