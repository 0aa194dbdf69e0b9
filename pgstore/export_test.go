package pgstore

import "github.com/fairsched/fairsched/cluster"

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
