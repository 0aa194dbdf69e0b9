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

// The leader lease. In cluster mode one instance per domain decides: the
// one that holds the domain's lease. A lease is a row, taken and renewed
// in SQL by the database's clock; each new holder raises the epoch, and
// every write a leader makes on the domain's behalf checks, in its own
// transaction, that its epoch is still the current one and its lease
// unexpired (ApplyJobsFenced). A deposed leader — paused, partitioned,
// slow — can therefore change nothing: PostgreSQL fences it, and no
// consensus code of our own is needed.

// Acquire takes the lease of domain for holder, for ttl, if nobody holds it
// or its holder's lease has expired (or holder held it: the same process
// takes it back, under a new epoch all the same). It returns the new epoch
// and true, or 0 and false while another holder's lease runs. Holders are
// process incarnations (cluster.Node makes them so): a process restarted
// under the same instance name is another holder and waits. The epoch's
// start is recorded beside its expiry (acquired_at).
func (s clusterBackend) Acquire(ctx context.Context, domain, holder string, ttl time.Duration) (int64, bool, error) {
	var epoch int64
	err := s.pool.QueryRow(ctx, `
		INSERT INTO fairsched_leader AS l (domain, holder, epoch, expires_at, acquired_at)
		VALUES ($1, $2, 1, now() + $3::interval, now())
		ON CONFLICT (domain) DO UPDATE
			SET holder = excluded.holder, epoch = l.epoch + 1, expires_at = excluded.expires_at, acquired_at = excluded.acquired_at
			WHERE l.expires_at <= now() OR l.holder = excluded.holder
		RETURNING epoch`, domain, holder, ttl).Scan(&epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil // the row exists, held by another unexpired lease
	}
	if err != nil {
		return 0, false, fmt.Errorf("%w: pgstore: acquiring the lease of %q: %w", fairsched.ErrStore, domain, err)
	}
	return epoch, true, nil
}

// Renew extends holder's lease of domain under epoch by ttl from now. It
// reports false when the lease is lost — expired, or taken under a newer
// epoch: the caller must stop leading at once.
func (s clusterBackend) Renew(ctx context.Context, domain, holder string, epoch int64, ttl time.Duration) (bool, error) {
	tag, err := s.pool.Exec(ctx, `
		UPDATE fairsched_leader SET expires_at = now() + $4::interval
		WHERE domain = $1 AND holder = $2 AND epoch = $3 AND expires_at > now()`, domain, holder, epoch, ttl)
	if err != nil {
		return false, fmt.Errorf("%w: pgstore: renewing the lease of %q: %w", fairsched.ErrStore, domain, err)
	}
	return tag.RowsAffected() == 1, nil
}

// Release ends holder's lease of domain under epoch at once, so that
// another instance takes over without waiting for it to expire (a
// graceful Close). Releasing a lease already lost does nothing.
func (s clusterBackend) Release(ctx context.Context, domain, holder string, epoch int64) error {
	_, err := s.pool.Exec(ctx, `
		UPDATE fairsched_leader SET expires_at = now()
		WHERE domain = $1 AND holder = $2 AND epoch = $3 AND expires_at > now()`, domain, holder, epoch)
	if err != nil {
		return fmt.Errorf("%w: pgstore: releasing the lease of %q: %w", fairsched.ErrStore, domain, err)
	}
	return nil
}

// Leader returns domain's current holder and epoch, and whether its lease
// is unexpired; "" when nobody ever held it.
func (s clusterBackend) Leader(ctx context.Context, domain string) (holder string, epoch int64, live bool, err error) {
	err = s.pool.QueryRow(ctx, `SELECT holder, epoch, expires_at > now() FROM fairsched_leader WHERE domain = $1`, domain).
		Scan(&holder, &epoch, &live)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, false, fmt.Errorf("%w: pgstore: reading the lease of %q: %w", fairsched.ErrStore, domain, err)
	}
	return holder, epoch, live, nil
}

// fence checks, in tx, that epoch is domain's current, unexpired lease,
// holding the lease row against a concurrent take-over until tx ends:
// ErrFenced otherwise.
func fence(ctx context.Context, tx pgx.Tx, domain string, epoch int64) error {
	var ok bool
	err := tx.QueryRow(ctx, `SELECT epoch = $2 AND expires_at > now() FROM fairsched_leader WHERE domain = $1 FOR SHARE`,
		domain, epoch).Scan(&ok)
	switch {
	case errors.Is(err, pgx.ErrNoRows) || err == nil && !ok:
		return cluster.ErrFenced
	case err != nil:
		return fmt.Errorf("%w: pgstore: checking the lease of %q: %w", fairsched.ErrStore, domain, err)
	}
	return nil
}

// ApplyJobsFenced commits ops as ApplyJobs does, in a transaction that
// first checks, holding the lease row against a concurrent take-over,
// that epoch is domain's current epoch and its lease unexpired; otherwise
// it writes nothing and returns ErrFenced.
func (s clusterBackend) ApplyJobsFenced(ctx context.Context, domain string, epoch int64, ops []fairsched.JobOp) error {
	cols, err := columns(ops)
	if err != nil {
		return err
	}
	return s.apply(ctx, true, domain, epoch, cols)
}
