package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster"
)

// Heartbeat records that instance of domain is alive, runs slots jobs at
// once and has handlers for types; its first beat registers it.
func (s clusterBackend) Heartbeat(ctx context.Context, domain string, in cluster.Instance) (listed bool, err error) {
	types, workers := in.Types, in.Workers
	if types == nil {
		types = []string{}
	}
	if workers == nil {
		workers = map[string][][]string{}
	}
	doc, err := json.Marshal(workers)
	if err != nil {
		return false, fmt.Errorf("pgstore: heartbeat of %q: %w", in.ID, err)
	}
	// xmax is 0 in the row an INSERT wrote, the transaction's id when ON
	// CONFLICT updated the row already there. The row as it was (before,
	// read from the statement's snapshot) says whether anything but the
	// time changed: then the leader is woken to read the instances.
	err = s.pool.QueryRow(ctx, `
		WITH before AS (
			SELECT slots, types, workers, subscribed FROM fairsched_instances WHERE domain = $1 AND instance = $2),
		beat AS (
			INSERT INTO fairsched_instances (domain, instance, slots, types, workers, subscribed) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (domain, instance) DO UPDATE SET heartbeat_at = now(), slots = excluded.slots, types = excluded.types,
				workers = excluded.workers, subscribed = excluded.subscribed
			RETURNING xmax = 0 AS listed)
		SELECT listed, CASE WHEN listed OR NOT EXISTS (
				SELECT FROM before WHERE slots = $3 AND types = $4 AND workers = $5::jsonb AND subscribed = $6)
			THEN pg_notify('`+instancesChannel+`', '') END::text
		FROM beat`,
		domain, in.ID, in.Slots, types, doc, in.Subscribed).Scan(&listed, nil)
	if err != nil {
		return false, fmt.Errorf("%w: pgstore: heartbeat of %q: %w", fairsched.ErrStore, in.ID, err)
	}
	return listed, nil
}

// Instances returns domain's instances, by id.
func (s clusterBackend) Instances(ctx context.Context, domain string) ([]cluster.Instance, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT instance, slots, types, extract(epoch FROM now() - heartbeat_at), workers, subscribed
		FROM fairsched_instances WHERE domain = $1 ORDER BY instance`, domain)
	if err != nil {
		return nil, fmt.Errorf("%w: pgstore: reading instances: %w", fairsched.ErrStore, err)
	}
	defer rows.Close()
	var out []cluster.Instance
	for rows.Next() {
		var in cluster.Instance
		var silent float64
		var workers []byte
		if err := rows.Scan(&in.ID, &in.Slots, &in.Types, &silent, &workers, &in.Subscribed); err != nil {
			return nil, fmt.Errorf("%w: pgstore: reading instances: %w", fairsched.ErrStore, err)
		}
		in.Silent = time.Duration(silent * float64(time.Second))
		if err := json.Unmarshal(workers, &in.Workers); err != nil {
			return nil, fmt.Errorf("%w: pgstore: the workers of %q: %w", fairsched.ErrStore, in.ID, err)
		}
		out = append(out, in)
	}
	return out, rows.Err()
}

// lostSQL deletes the instances of domain $1 silent for longer than $2
// and returns them with every instance that holds running rows but has no
// row of its own (of no domain). The holders are found one by one, each
// the first running row's instance past the one before (a loose scan of
// the running rows' index, fairsched_jobs_granted): a scan of them all
// would also walk the entry of every row deleted since the table's last
// vacuum — a million in a busy hour, tens of milliseconds at every beat of
// the leader, on its loop's path — where a probe walks the few it meets.
const lostSQL = `
	WITH RECURSIVE gone AS (
		DELETE FROM fairsched_instances WHERE domain = $1 AND heartbeat_at < now() - $2::interval
		RETURNING instance),
	holders AS (
		(SELECT instance FROM fairsched_jobs WHERE running AND instance IS NOT NULL ORDER BY instance LIMIT 1)
		UNION ALL
		SELECT (SELECT j.instance FROM fairsched_jobs j WHERE j.running AND j.instance > h.instance ORDER BY j.instance LIMIT 1)
		FROM holders h WHERE h.instance IS NOT NULL)
	SELECT instance FROM gone
	UNION
	SELECT h.instance FROM holders h
	WHERE h.instance IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM fairsched_instances i WHERE i.instance = h.instance)
	ORDER BY 1`

// Lost removes and returns the instances of domain silent for longer than
// deadline: the leader then ends their running jobs as lost. With them it
// returns every instance that still holds running grants but has no row —
// declared lost before, its grants not taken back yet (a Revoke that
// failed, or a leader that stopped between the two) —, so that a failed
// Revoke is tried again at the next call, by whichever leader, instead of
// leaving the jobs granted to a process that is gone. Written under
// epoch's lease (ErrFenced otherwise), so a deposed leader declares nobody
// lost.
func (s clusterBackend) Lost(ctx context.Context, domain string, epoch int64, deadline time.Duration) ([]string, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: pgstore: %w", fairsched.ErrStore, err)
	}
	defer tx.Rollback(ctx)
	if err := fence(ctx, tx, domain, epoch); err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, lostSQL, domain, deadline)
	if err != nil {
		return nil, fmt.Errorf("%w: pgstore: declaring instances lost: %w", fairsched.ErrStore, err)
	}
	var lost []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("%w: pgstore: %w", fairsched.ErrStore, err)
		}
		lost = append(lost, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%w: pgstore: %w", fairsched.ErrStore, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("%w: pgstore: %w", fairsched.ErrStore, err)
	}
	return lost, nil
}
