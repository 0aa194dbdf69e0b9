// Package pgstore keeps a fairsched scheduler's state and its durable jobs
// (fairsched.JobStore) in PostgreSQL, through github.com/jackc/pgx/v5. It is
// the second implementation of the store durable jobs use (boltstore is the
// embedded one), and the ground cluster mode stands on. It lives in its own
// package so that programs without PostgreSQL do not build pgx.
//
// Open applies the schema's migrations, versioned and embedded (Migrations
// gives their SQL for those who migrate by hand): a table of the state
// document, a table of job records (one row per job under its sequence
// number), and the tables cluster mode uses — the leader's lease, the
// instances, the commands between instances and the domain's settings;
// fairsched_migrations records the versions applied, and every object the
// schema makes is named fairsched_*. A commit (ApplyJobs) is one transaction that writes only the
// rows that changed — the last write of each sequence in the batch, puts
// as one multi-row upsert, deletes as one statement — and returns once
// PostgreSQL has committed it (with synchronous_commit on, durably). A
// database whose schema is newer than this package's is refused, never
// misread.
//
// Errors of writes are classified, so that a caller knows whether to
// retry, and a scheduler whether to split a batch. A write is one
// transaction: PostgreSQL's error (a *pgconn.PgError) means nothing was
// written, and its SQLSTATE class says why — 22 (data exception), 23
// (integrity constraint) and 54 (program limit, such as an index row too
// large) are the data's fault and wrap fairsched.ErrRecordRefused, as does
// a record that does not encode; the unique index of unfinished jobs by
// (type, id) is fairsched.ErrDuplicateJob; any other class (serialization
// failures, deadlocks, resources) is transient, except an error that ends
// the session (severity FATAL, such as a shutdown), which may come after
// a commit and wraps fairsched.ErrOutcomeUnknown. An error of the
// connection means nothing was written if pgx had not sent the request
// (pgconn.SafeToRetry, or no connection made), and otherwise wraps
// fairsched.ErrOutcomeUnknown: the commit may have happened. The
// scheduler wraps the errors of ApplyJobs in fairsched.ErrStore.
//
// A Store is also cluster mode's backend: pass it to fairsched.WithCluster
// and every replica of a service shares one scheduler through this
// database — the leader's lease with its epoch fencing, the change feed
// and its LISTEN/NOTIFY wake-ups, instance heartbeats, and fenced grants
// of jobs to instances. That protocol is reached through ClusterBackend,
// which WithCluster calls: a program opens a Store, hands it to the
// scheduler (WithStore or WithCluster), may count its rows (CountJobs), and
// closes it once the scheduler is closed.
package pgstore

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fairsched/fairsched"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is a fairsched.JobStore in PostgreSQL. Close it after the
// scheduler.
type Store struct {
	pool *pgxpool.Pool
	// timeout bounds each call: a stalled database makes the call fail
	// (ErrStore) instead of holding the scheduler's writer for ever.
	timeout time.Duration
	// loadPage: how many pending jobs a new leader reads at a time
	// (WithBacklogPage).
	loadPage int
}

// Option configures Open.
type Option func(*Store) error

// DefaultBacklogPage is how many pending jobs a new leader of cluster mode
// reads at a time unless WithBacklogPage says otherwise.
const DefaultBacklogPage = 5000

// WithBacklogPage sets how many pending jobs a new leader of cluster mode
// reads, decodes and hands its scheduler at a time (n ≥ 1). It decides
// over the first page while it reads the next: smaller pages start the
// first grant sooner and hold the scheduler for less at each hand-over;
// larger ones take fewer queries to load a large backlog.
func WithBacklogPage(n int) Option {
	return func(s *Store) error {
		if n < 1 {
			return fmt.Errorf("%w: pgstore: WithBacklogPage(%d): want at least 1", fairsched.ErrInvalidConfig, n)
		}
		s.loadPage = n
		return nil
	}
}

var _ fairsched.JobStore = (*Store)(nil)

// Migration is one step of the schema: its version and SQL.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the schema's migrations in order.
func Migrations() []Migration {
	entries, _ := fs.ReadDir(migrations, "migrations")
	var out []Migration
	for _, e := range entries {
		v, err := strconv.Atoi(strings.SplitN(e.Name(), "_", 2)[0])
		if err != nil {
			continue
		}
		sql, _ := migrations.ReadFile("migrations/" + e.Name())
		out = append(out, Migration{Version: v, Name: e.Name(), SQL: string(sql)})
	}
	slices.SortFunc(out, func(a, b Migration) int { return a.Version - b.Version })
	return out
}

// Layout is the newest schema version this package knows.
func Layout() int { m := Migrations(); return m[len(m)-1].Version }

// Open connects to the database connString names (a pgx connection
// string or URL), applies the migrations it lacks and returns the store.
// A schema newer than this package's is an error wrapping
// fairsched.ErrStore; an invalid option is fairsched.ErrInvalidConfig.
func Open(ctx context.Context, connString string, opts ...Option) (*Store, error) {
	s := &Store{timeout: 30 * time.Second, loadPage: DefaultBacklogPage}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: pgstore: Open: option %d is nil", fairsched.ErrInvalidConfig, i+1)
		}
		if err := o(s); err != nil {
			return nil, err
		}
	}
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, fmt.Errorf("%w: pgstore: %w", fairsched.ErrStore, err)
	}
	if !strings.Contains(connString, "pool_max_conns") {
		// pgxpool's default (4 on a small machine) is too few for cluster
		// mode: two connections wait on LISTEN for good, and the lease,
		// leader, executor and record writer each hold one at times.
		cfg.MaxConns = max(cfg.MaxConns, 16)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: pgstore: %w", fairsched.ErrStore, err)
	}
	s.pool = pool
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("%w: pgstore: %w", fairsched.ErrStore, err)
	}
	return s, nil
}

// migrate applies the missing migrations in one transaction, holding an
// advisory lock so that instances opening together apply them once.
func (s *Store) migrate(ctx context.Context) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7265640123)`); err != nil { // "fairsched" as a number
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS fairsched_migrations (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		var have int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM fairsched_migrations`).Scan(&have); err != nil {
			return err
		}
		if have > Layout() {
			return fmt.Errorf("the database's schema is version %d, newer than this version's %d: upgrade fairsched to use it", have, Layout())
		}
		for _, m := range Migrations() {
			if m.Version <= have {
				continue
			}
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO fairsched_migrations (version) VALUES ($1)`, m.Version); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Store) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.timeout)
}

// Load returns the saved state; none before the first Save.
func (s *Store) Load() (fairsched.StoreState, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	var st fairsched.StoreState
	var doc []byte
	err := s.pool.QueryRow(ctx, `SELECT doc FROM fairsched_state WHERE id = 1`).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("pgstore: loading the state: %w", err)
	}
	if err := json.Unmarshal(doc, &st); err != nil {
		return st, fmt.Errorf("pgstore: the saved state does not decode: %w", err)
	}
	return st, nil
}

// Save replaces the saved state.
func (s *Store) Save(st fairsched.StoreState) error {
	doc, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("pgstore: %w", err)
	}
	ctx, cancel := s.ctx()
	defer cancel()
	_, err = s.pool.Exec(ctx, `INSERT INTO fairsched_state (id, doc) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`, doc)
	if err != nil {
		return fmt.Errorf("pgstore: saving the state: %w", err)
	}
	return nil
}

// LoadJobs calls fn with every job record, in sequence order. A record
// that does not decode, or that no scheduler could have written, is an
// error.
func (s *Store) LoadJobs(fn func(fairsched.JobRecord) error) error {
	ctx, cancel := context.WithCancel(context.Background()) // a million rows may take longer than one call's bound
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT seq, record, attempt FROM fairsched_jobs ORDER BY seq`)
	if err != nil {
		return fmt.Errorf("pgstore: loading jobs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var data []byte
		var attempt int32
		if err := rows.Scan(&seq, &data, &attempt); err != nil {
			return fmt.Errorf("pgstore: loading jobs: %w", err)
		}
		var rec fairsched.JobRecord
		if err := json.Unmarshal(data, &rec); err != nil {
			return fmt.Errorf("pgstore: job record %d does not decode: %w", seq, err)
		}
		if uint64(seq) != rec.Seq || !rec.Valid() || attempt < 0 {
			return fmt.Errorf("pgstore: job record %d holds values no scheduler writes", seq)
		}
		rec.Attempt = max(rec.Attempt, int(attempt)) // a grant's count (attemptColumn)
		if err := fn(rec); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("pgstore: loading jobs: %w", err)
	}
	return nil
}

// ApplyJobs commits ops in one transaction. Of several writes of one
// sequence in ops the last counts, as if they were applied in order. Its
// error is classified (see the package doc): fairsched.ErrRecordRefused
// when a record is at fault, fairsched.ErrDuplicateJob when an unfinished
// job of a record's (type, id) is stored, fairsched.ErrOutcomeUnknown
// when the commit's reply was lost.
func (s *Store) ApplyJobs(ops []fairsched.JobOp) error {
	cols, err := columns(ops)
	if err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	return s.apply(ctx, false, "", 0, cols)
}

// jobColumns are a batch as one delete and one multi-row upsert: the last
// write of each sequence, column by column.
type jobColumns struct {
	seqs, dels []int64
	types, ids []string
	states     []int16
	records    [][]byte
}

func columns(ops []fairsched.JobOp) (*jobColumns, error) {
	final := map[uint64]*fairsched.JobRecord{} // nil: deleted
	order := make([]uint64, 0, len(ops))
	for _, op := range ops {
		seq := op.Delete
		if op.Put != nil {
			seq = op.Put.Seq
		}
		if _, seen := final[seq]; !seen {
			order = append(order, seq)
		}
		final[seq] = op.Put
	}
	c := &jobColumns{}
	for _, seq := range order {
		rec := final[seq]
		if rec == nil {
			c.dels = append(c.dels, int64(seq))
			continue
		}
		data, err := json.Marshal(rec)
		if err != nil {
			return nil, fmt.Errorf("%w: pgstore: encoding job %s/%s: %w", fairsched.ErrRecordRefused, rec.Type, rec.ID, err)
		}
		c.seqs, c.types, c.ids = append(c.seqs, int64(seq)), append(c.types, string(rec.Type)), append(c.ids, rec.ID)
		c.states, c.records = append(c.states, int16(rec.State)), append(c.records, data)
	}
	return c, nil
}

// lockRowsSQL locks the job rows of a batch in sequence order before the
// batch writes them: two writes locking in different orders would
// deadlock (PostgreSQL breaks the cycle after a second by failing one of
// them). The leader's turn (Grant) and the end reports (ReportEnds) sort
// their rows instead, and each of their statements takes them in that
// order.
const lockRowsSQL = `SELECT 1 FROM fairsched_jobs WHERE seq = ANY($1) ORDER BY seq FOR UPDATE`

// Close closes the connection pool, waiting for the connections in use to
// be returned to it. pgx reports no failure of a pool's close, so the
// error is nil; it is there so that both stores close alike.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}
