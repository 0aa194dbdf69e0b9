package pgstore

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
