package fairsched_test

import (
	"os"
	"testing"

	"github.com/fairsched/fairsched/internal/pgtest"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Run(m)) // tests, the throwaway PostgreSQL stopped, then a leak check
}
