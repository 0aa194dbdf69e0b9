package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			code = 1
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
		}
	}
	os.Exit(code)
}

// TestDatabasesAreIsolated: each call gives an empty database of its own
// that takes writes.
func TestDatabasesAreIsolated(t *testing.T) {
	ctx := context.Background()
	for range 2 {
		conn, err := pgx.Connect(ctx, URL(t))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, "CREATE TABLE t (x int)"); err != nil { // fails if the table exists
			t.Fatal(err)
		}
		var n int
		if err := conn.QueryRow(ctx, "INSERT INTO t VALUES (1), (2) RETURNING (SELECT count(*) FROM t)").Scan(&n); err != nil {
			t.Fatal(err)
		}
		conn.Close(ctx)
	}
}
