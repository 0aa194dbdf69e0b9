package debugpage_test

import (
	"os"
	"testing"

	"github.com/fairsched/fairsched/internal/pgtest"
)

// TestMain checks that no test leaves a goroutine behind: the schedulers
// are closed, the servers closed and the browsers' contexts cancelled (the
// allocator's cancel waits for Chromium and its children to exit). chromedp
// ends its own goroutines before those cancels return, so nothing of it is
// ignored. The throwaway PostgreSQL of the cluster test, if it started
// one, is stopped first.
func TestMain(m *testing.M) {
	os.Exit(pgtest.Run(m)) // tests, the throwaway PostgreSQL stopped, then a leak check
}
