package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster"
)

// SetOverload writes the leader's verdict on its load signal in its lease
// row, fenced by epoch: a deposed leader's write changes nothing and is
// ErrFenced.
func (s clusterBackend) SetOverload(ctx context.Context, domain string, epoch int64, v cluster.Overload) error {
	tag, err := s.pool.Exec(ctx, `
		UPDATE fairsched_leader SET overloaded = $3, overload_at = $4, overload_epoch = epoch
		WHERE domain = $1 AND epoch = $2 AND expires_at > now()`, domain, epoch, v.Overloaded, v.At)
	if err != nil {
		return fmt.Errorf("%w: pgstore: writing the overload verdict of %q: %w", fairsched.ErrStore, domain, err)
	}
	if tag.RowsAffected() != 1 {
		return cluster.ErrFenced
	}
	return nil
}

// Overload reads the verdict of domain's live lease, written under its
// current epoch; false when there is none.
func (s clusterBackend) Overload(ctx context.Context, domain string) (cluster.Overload, bool, error) {
	var (
		over bool
		at   time.Time
	)
	err := s.pool.QueryRow(ctx, `
		SELECT overloaded, overload_at FROM fairsched_leader
		WHERE domain = $1 AND expires_at > now() AND overload_epoch = epoch`, domain).Scan(&over, &at)
	if errors.Is(err, pgx.ErrNoRows) {
		return cluster.Overload{}, false, nil
	}
	if err != nil {
		return cluster.Overload{}, false, fmt.Errorf("%w: pgstore: reading the overload verdict of %q: %w", fairsched.ErrStore, domain, err)
	}
	return cluster.Overload{Overloaded: over, At: at}, true, nil
}
