package pgstore

import (
	"fmt"

	"github.com/fairsched/fairsched"
)

// Refusals of the cluster's writes (grants, end reports, events,
// commands): a statement PostgreSQL refuses for the values it carries
// fails the same way however often it is sent, so the cluster's loops must
// not retry it as they retry a lost connection. These writes return such
// an error wrapping fairsched.ErrRecordRefused (and ErrStore), and the
// loop splits its batch until the one record at fault is alone.

// isRefused reports whether err is PostgreSQL's refusal of a statement for
// its data: SQLSTATE class 22 (data exception: invalid bytes, a NUL, a
// value out of range, a notification's payload too long), 23 (integrity
// constraint — a caller that expects one, such as the unique violation
// of a double admission, tests for it first) or 54 (program limit
// exceeded: an index row too large). It is classifyWriteError's rule
// (errclass.go), which the single-process store's writes follow too.
func isRefused(err error) bool {
	switch classifyWriteError(err) {
	case failRefused, failDuplicate:
		return true
	}
	return false
}

// clusterWriteError wraps err, the failure of what, in ErrStore — and in
// ErrRecordRefused too when the database refused the statement's data.
func clusterWriteError(what string, err error) error {
	if isRefused(err) {
		return fmt.Errorf("%w: %w: pgstore: %s: %w", fairsched.ErrStore, fairsched.ErrRecordRefused, what, err)
	}
	return fmt.Errorf("%w: pgstore: %s: %w", fairsched.ErrStore, what, err)
}
