package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster"
)

// Commands for the leader (cluster.Backend): what only the leader's
// scheduler can do, asked by any instance through a table.

// Command inserts a command for domain's leader and wakes it.
func (s clusterBackend) Command(ctx context.Context, domain string, c cluster.Command) (int64, error) {
	var id int64
	err := s.pool.QueryRow(ctx, `
		WITH c AS (INSERT INTO fairsched_commands (domain, kind, args) VALUES ($1, $2, $3) RETURNING id)
		SELECT id, pg_notify('`+notifyChannel+`', '') FROM c`, domain, c.Kind, c.Args).Scan(&id, nil)
	if err != nil {
		return 0, clusterWriteError("a command for the leader", err)
	}
	return id, nil
}

// Reply returns command id's reply once the leader wrote it (ok), and
// deletes the command.
func (s clusterBackend) Reply(ctx context.Context, id int64) ([]byte, bool, error) {
	var reply []byte
	err := s.pool.QueryRow(ctx, `DELETE FROM fairsched_commands WHERE id = $1 AND reply IS NOT NULL RETURNING reply`, id).Scan(&reply)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("%w: pgstore: a command's reply: %w", fairsched.ErrStore, err)
	}
	return reply, true, nil
}

// Commands returns domain's open commands, oldest first.
func (s clusterBackend) Commands(ctx context.Context, domain string) ([]cluster.Command, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, kind, args FROM fairsched_commands WHERE domain = $1 AND reply IS NULL ORDER BY id`, domain)
	if err != nil {
		return nil, fmt.Errorf("%w: pgstore: reading commands: %w", fairsched.ErrStore, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (cluster.Command, error) {
		var c cluster.Command
		err := r.Scan(&c.ID, &c.Kind, &c.Args)
		return c, err
	})
}

// Answer writes command id's reply under epoch's lease, with the settings
// it changed (a nil value deletes one; reset deletes every setting whose
// name starts with it first), in one transaction.
func (s clusterBackend) Answer(ctx context.Context, domain string, epoch, id int64, reply []byte, reset string, settings map[string][]byte) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := fence(ctx, tx, domain, epoch); err != nil {
			return err
		}
		if reset != "" {
			if _, err := tx.Exec(ctx, `DELETE FROM fairsched_settings WHERE domain = $1 AND starts_with(name, $2)`, domain, reset); err != nil {
				return err
			}
		}
		for name, v := range settings {
			var err error
			if v == nil {
				_, err = tx.Exec(ctx, `DELETE FROM fairsched_settings WHERE domain = $1 AND name = $2`, domain, name)
			} else {
				_, err = tx.Exec(ctx, `INSERT INTO fairsched_settings (domain, name, value) VALUES ($1, $2, $3)
					ON CONFLICT (domain, name) DO UPDATE SET value = excluded.value`, domain, name, v)
			}
			if err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `UPDATE fairsched_commands SET reply = $2 WHERE id = $1`, id, reply)
		return err
	})
	if err != nil && !errors.Is(err, cluster.ErrFenced) {
		return clusterWriteError("answering a command", err)
	}
	return err
}

// Settings returns domain's settings by name.
func (s clusterBackend) Settings(ctx context.Context, domain string) (map[string][]byte, error) {
	rows, err := s.pool.Query(ctx, `SELECT name, value FROM fairsched_settings WHERE domain = $1`, domain)
	if err != nil {
		return nil, fmt.Errorf("%w: pgstore: reading settings: %w", fairsched.ErrStore, err)
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var name string
		var v json.RawMessage
		if err := rows.Scan(&name, &v); err != nil {
			return nil, fmt.Errorf("%w: pgstore: reading settings: %w", fairsched.ErrStore, err)
		}
		out[name] = v
	}
	return out, rows.Err()
}

// RevokeJob asks, under epoch's lease, the executor of running job seq to
// stop it (a Cancel): the grant stays until the executor reports the end,
// so the job counts against the caps until it has stopped.
//
// A row keeps the cause of its first revoke (preempt_requested is read
// only beside cancel_requested, so no other write needs to clear it).
func (s clusterBackend) RevokeJob(ctx context.Context, domain string, epoch int64, seq uint64, why cluster.RevokeCause) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := fence(ctx, tx, domain, epoch); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE fairsched_jobs SET preempt_requested = CASE WHEN cancel_requested THEN preempt_requested ELSE $2 END,
			cancel_requested = true, grant_xid = pg_current_xact_id() WHERE seq = $1 AND running`, int64(seq), why == cluster.RevokePreempt)
		if err == nil {
			_, err = tx.Exec(ctx, `SELECT pg_notify('`+grantsChannel+`', '')`)
		}
		return err
	})
	if err != nil && !errors.Is(err, cluster.ErrFenced) {
		return fmt.Errorf("%w: pgstore: revoking job %d: %w", fairsched.ErrStore, seq, err)
	}
	return err
}

// ForgetOrphans deletes, under epoch's lease, the RunSync and Submit jobs
// finished longer than after ago whose instance is not in live: nobody is
// left to read how they ended. (An instance declared lost may come back;
// one that does reads its jobs' ends within a poll, long before after.)
// The jobs table holds one domain.
func (s clusterBackend) ForgetOrphans(ctx context.Context, domain string, epoch int64, live []string, after time.Duration) (int, error) {
	var n int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := fence(ctx, tx, domain, epoch); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM fairsched_jobs WHERE state <> 0 AND record ? 'owner' AND NOT (record->>'owner' = ANY($1))
			AND (record->>'finished_at')::timestamptz < now() - $2::interval`, live, after)
		n = int(tag.RowsAffected())
		return err
	})
	if err != nil && !errors.Is(err, cluster.ErrFenced) {
		return 0, fmt.Errorf("%w: pgstore: forgetting the jobs of gone instances: %w", fairsched.ErrStore, err)
	}
	return n, err
}

// ClaimSlot claims occurrence slot (a time as Unix nanoseconds) of the
// periodic schedule name for whoever calls first: true for the one
// instance whose claim took, false for every other and for an older slot.
// Each instance that registered the schedule fires at the same slots; the
// claim makes one occurrence of each.
func (s clusterBackend) ClaimSlot(ctx context.Context, domain, name string, slot int64) (bool, error) {
	tag, err := s.pool.Exec(ctx, `
		INSERT INTO fairsched_settings AS s (domain, name, value) VALUES ($1, $2, to_jsonb($3::bigint))
		ON CONFLICT (domain, name) DO UPDATE SET value = excluded.value WHERE (s.value)::bigint < $3::bigint`,
		domain, "periodic/"+name, slot)
	if err != nil {
		return false, fmt.Errorf("%w: pgstore: claiming an occurrence of %q: %w", fairsched.ErrStore, name, err)
	}
	return tag.RowsAffected() == 1, nil
}

// DefineTypes writes settings — the domain's type configurations, from
// any instance: unfenced — in one statement, each replacing its name's.
func (s clusterBackend) DefineTypes(ctx context.Context, domain string, settings map[string][]byte) error {
	names := make([]string, 0, len(settings))
	values := make([]string, 0, len(settings))
	for name, v := range settings {
		names, values = append(names, name), append(values, string(v))
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO fairsched_settings (domain, name, value)
		SELECT $1, n, v::jsonb FROM unnest($2::text[], $3::text[]) AS s(n, v)
		ON CONFLICT (domain, name) DO UPDATE SET value = excluded.value`, domain, names, values)
	if err != nil {
		return clusterWriteError("writing the domain's types", err)
	}
	return nil
}
