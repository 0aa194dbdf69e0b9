package pgstore

// For the tests of package pgstore_test.
var (
	GrantsFor     = grantsFor
	GrantsPayload = grantsPayload
)

// The statements whose plans TestEndsFindRowsByKey reads.
const (
	DeleteSucceededSQL = deleteSucceededSQL
	ReportEndsSQL      = reportEndsSQL
)
