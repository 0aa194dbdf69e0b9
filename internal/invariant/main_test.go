package invariant_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The simulation starts the scheduler's goroutines, its callers' and an
// event drain for every seed: none may outlive its run.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
