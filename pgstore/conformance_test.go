package pgstore_test

import (
	"testing"

	"github.com/fairsched/fairsched/cluster"
	"github.com/fairsched/fairsched/cluster/backendtest"
	"github.com/fairsched/fairsched/internal/pgtest"
)

// TestConformance runs the cluster.Backend suite on PostgreSQL.
func TestConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) cluster.Backend {
		st := open(t, pgtest.URL(t))
		t.Cleanup(st.Close)
		return st
	})
}
