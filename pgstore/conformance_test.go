package pgstore_test

import (
	"sync"
	"testing"

	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/internal/cluster/backendtest"
	"github.com/fairsched/fairsched/internal/pgtest"
)

// TestConformance runs the cluster.Backend suite on PostgreSQL.
func TestConformance(t *testing.T) {
	t.Parallel()
	var urls sync.Map // cluster.Backend → its database's URL
	backendtest.Run(t, func(t *testing.T) cluster.Backend {
		t.Parallel() // open is each contract's first call; each has a database of its own
		url := pgtest.URL(t)
		st := open(t, url)
		pgtest.CloseAtEnd(t, st)
		urls.Store(st, url)
		return st
	}, backendtest.Deafen(func(t *testing.T, b cluster.Backend) {
		url, _ := urls.Load(b)
		pgtest.DropListeners(t, url.(string))
	}))
}
