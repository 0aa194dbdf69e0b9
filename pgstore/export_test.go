package pgstore

// For the tests of package pgstore_test.
var (
	GrantsFor     = grantsFor
	GrantsPayload = grantsPayload
)
