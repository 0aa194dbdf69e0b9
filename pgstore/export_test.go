package pgstore

import (
	"context"

	"github.com/fairsched/fairsched/internal/cluster"
)

// For the tests of package pgstore_test.
var (
	GrantsFor     = grantsFor
	GrantsPayload = grantsPayload
)

// The statements whose plans TestWritesFindRowsByKey reads.
const (
	DeleteSucceededSQL = deleteSucceededSQL
	ReportEndsSQL      = reportEndsSQL
)

// GrantSQL is the grants' statement (with the executors' wake-up).
var GrantSQL = grantSQL(true)

// Backend is a Store with the methods of its cluster protocol, for the
// tests that drive the protocol directly.
type Backend = clusterBackend

// AsBackend returns s as the cluster's backend.
func AsBackend(s *Store) Backend { return clusterBackend{s} }

// The cluster's types under the names the tests use.
type (
	Grant    = cluster.Grant
	End      = cluster.End
	Instance = cluster.Instance
	Cursor   = cursor
	Listener = listener
)

var (
	ErrFenced          = cluster.ErrFenced
	ErrDoubleAdmission = cluster.ErrDoubleAdmission
)

// GrantJobs writes grants in one transaction under epoch's lease of
// domain: each pending, not running job becomes running on its instance,
// its attempt column counting the attempt (its record is left as the
// scheduler wrote it: readers take the larger count, attemptColumn).
// A deposed leader's batch changes nothing (ErrFenced); a batch that would
// run two jobs on one exclusive conflict key changes nothing
// (ErrDoubleAdmission). It returns how many grants took (a job already
// running, or gone, is skipped).
func (s clusterBackend) GrantJobs(ctx context.Context, domain string, epoch int64, grants []cluster.Grant) (int, error) {
	_, took, err := s.Grant(ctx, domain, epoch, nil, nil, grants)
	return len(took), err
}

// Succeeded deletes, under epoch's lease of domain, the rows of the
// successes ends reports that still match their attempt (as Grant), in one
// transaction, and returns their sequences: Grant with no grants.
func (s clusterBackend) Succeeded(ctx context.Context, domain string, epoch int64, ends []cluster.End) ([]uint64, error) {
	gone, _, err := s.Grant(ctx, domain, epoch, nil, ends, nil)
	return gone, err
}

// LostSQL is the statement that declares instances lost, for its plan.
const LostSQL = lostSQL
