package fairsched_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/fairsched/fairsched/internal/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop() // the throwaway PostgreSQL of the cluster example, if one started
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
