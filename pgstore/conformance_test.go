package pgstore_test

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

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
		dropListeners(t, url.(string))
	}))
}

// dropListeners ends, from another connection, every connection of url's
// database whose last statement was a LISTEN: its listeners stop as on a
// lost connection.
func dropListeners(t *testing.T, url string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN %'`).Scan(&n)
	if err != nil || n == 0 {
		t.Fatalf("ending the listening connections: %d ended, %v", n, err)
	}
}
