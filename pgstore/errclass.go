package pgstore

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fairsched/fairsched"
)

// writeFailure is what a failed write says about its records and its
// outcome; classifyWriteError decides it.
type writeFailure int

const (
	// failTransient: the connection or the server's state (a connection
	// refused or closed before the request was sent, a serialization
	// failure, a deadlock, a shutdown, a timeout before sending, ...).
	// Nothing was written; the same write may succeed later.
	failTransient writeFailure = iota
	// failRefused: the data. PostgreSQL refused a value (SQLSTATE class 22,
	// data exception), a constraint (class 23) or a limit (class 54, e.g.
	// an index row too large), or the record did not encode. Nothing was
	// written, and writing the same record again fails again.
	failRefused
	// failDuplicate: the unique index of unfinished jobs by (type, id)
	// refused a record — an unfinished job of its (type, id) is stored.
	failDuplicate
	// failUnknown: the request may have reached the server and its reply
	// was lost (the connection died while waiting for it): the write may
	// or may not have been committed.
	failUnknown
)

// uniqueUnfinished is the index of one unfinished durable job per (type,
// id).
const uniqueUnfinished = "fairsched_jobs_unfinished"

// classifyWriteError says what err, the failure of one write (one
// statement, or one pipeline in one implicit transaction), means for its
// records. A *pgconn.PgError is the server's answer: the transaction
// failed, nothing was written, and its SQLSTATE class says whether the
// data is at fault — unless the server ended the session (severity FATAL
// or PANIC), which it may do after a commit and before its answer. Any
// other error is the connection's: nothing was
// written if pgx had not sent the request (pgconn.SafeToRetry, or a
// connection that was never made), otherwise the outcome is unknown.
func classifyWriteError(err error) writeFailure {
	var pgErr *pgconn.PgError
	var connErr *pgconn.ConnectError
	switch {
	case errors.Is(err, fairsched.ErrRecordRefused): // a record that did not encode, before sending
		return failRefused
	case errors.As(err, &pgErr):
		switch {
		case pgErr.Code == "23505" && pgErr.ConstraintName == uniqueUnfinished:
			return failDuplicate
		case len(pgErr.Code) == 5 && (pgErr.Code[:2] == "22" || pgErr.Code[:2] == "23" || pgErr.Code[:2] == "54"):
			return failRefused
		case pgErr.Severity == "FATAL" || pgErr.Severity == "PANIC":
			// The server ended the session (a shutdown, a terminated
			// backend): that may come after the commit was done and before
			// its answer was sent.
			return failUnknown
		}
		return failTransient
	case errors.As(err, &connErr), pgconn.SafeToRetry(err):
		return failTransient
	}
	return failUnknown
}

// classified wraps err, the failure of a write of jobs, with the sentinel
// its class calls for: fairsched.ErrRecordRefused, ErrDuplicateJob or
// ErrOutcomeUnknown; a transient failure is err as it is. what says what
// was written. The caller adds fairsched.ErrStore where it answers its
// own callers (a JobStore's error gets it from the scheduler).
func classified(what string, err error) error {
	if errors.Is(err, fairsched.ErrRecordRefused) {
		return err // said already
	}
	switch classifyWriteError(err) {
	case failRefused:
		return fmt.Errorf("%w: pgstore: %s: %w", fairsched.ErrRecordRefused, what, err)
	case failDuplicate:
		return fmt.Errorf("%w: pgstore: %s: an unfinished job of its (type, id) is stored: %w", fairsched.ErrDuplicateJob, what, err)
	case failUnknown:
		return fmt.Errorf("%w: pgstore: %s: %w", fairsched.ErrOutcomeUnknown, what, err)
	}
	return fmt.Errorf("pgstore: %s: %w", what, err)
}
