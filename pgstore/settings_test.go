package pgstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// TestConnectionsRunWithoutJITOrParallelWorkers: the store's connections
// turn off JIT compilation and parallel workers (each costs the store's
// short statements milliseconds on a large table), and a setting the
// connection string names is left as it says.
func TestConnectionsRunWithoutJITOrParallelWorkers(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	ctx := context.Background()
	check := func(url string, want map[string]string) {
		t.Helper()
		st, err := pgstore.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for name, v := range want {
			got, err := pgstore.Setting(ctx, st, name)
			if err != nil || got != v {
				t.Errorf("%s on %s: %q %v, want %q", name, url, got, err, v)
			}
		}
	}
	check(url, map[string]string{"jit": "off", "max_parallel_workers_per_gather": "0"})
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	check(url+sep+"jit=on&max_parallel_workers_per_gather=3", map[string]string{"jit": "on", "max_parallel_workers_per_gather": "3"})
}
