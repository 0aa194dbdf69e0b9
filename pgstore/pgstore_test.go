package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/fairschedtest"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Run(m)) // tests, the throwaway PostgreSQL stopped, then a leak check
}

func open(t *testing.T, url string, opts ...pgstore.Option) pgstore.Backend {
	t.Helper()
	st, err := pgstore.Open(context.Background(), url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return pgstore.AsBackend(st)
}

// lead takes domain "d"'s lease for "leader" and returns its epoch.
func lead(t *testing.T, st pgstore.Backend) int64 {
	t.Helper()
	epoch, ok, err := st.Acquire(context.Background(), "d", "leader", 10*time.Second)
	if err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	return epoch
}

// openTx begins a transaction on a connection of its own to url, apart
// from any store: one left open holds the snapshots' xmin back, one that
// commits late commits after others began. Rolled back (if still open)
// and closed at the test's end.
func openTx(t *testing.T, url string) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		conn.Close(ctx)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = tx.Rollback(ctx)
		conn.Close(ctx)
	})
	return tx
}

// TestJobsAndState: records written in one commit read back in sequence
// order; several writes of one sequence in a batch leave the last; the
// state document round-trips; Open on a migrated database is a no-op.
func TestJobsAndState(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	st := open(t, url)
	at := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	rec := func(seq uint64, id string, attempt int) *fairsched.JobRecord {
		return &fairsched.JobRecord{Seq: seq, Type: "mail", ID: id, Payload: []byte("p-" + id), Key: "k", EnqueuedAt: at, Attempt: attempt}
	}
	if err := st.ApplyJobs([]fairsched.JobOp{{Put: rec(3, "c", 0)}, {Put: rec(1, "a", 0)}, {Put: rec(2, "b", 0)},
		{Put: rec(1, "a", 1)}, {Delete: 2}, {Put: rec(4, "d", 0)}, {Delete: 4}}); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := st.LoadJobs(func(r fairsched.JobRecord) error {
		got = append(got, fmt.Sprintf("%d %s attempt %d %s", r.Seq, r.ID, r.Attempt, r.Payload))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"1 a attempt 1 p-a", "3 c attempt 0 p-c"}, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	state := fairsched.StoreState{KeyCosts: map[string]time.Duration{"k": time.Minute}, LastRuns: map[string]time.Time{"t/x": at}}
	if err := st.Save(state); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st = open(t, url) // migrated already
	defer st.Close()
	back, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(state, back); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
}

// TestNewerSchemaIsRefused: a database migrated by a newer version is
// refused with ErrStore, and left as it was.
func TestNewerSchemaIsRefused(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	st := open(t, url)
	st.Close()
	ctx := context.Background()
	pgtest.Exec(t, url, `INSERT INTO fairsched_migrations (version) VALUES (99)`)
	if _, err := pgstore.Open(ctx, url); !errors.Is(err, fairsched.ErrStore) || !strings.Contains(err.Error(), "newer") {
		t.Errorf("Open over a newer schema: %v; want ErrStore saying newer", err)
	}
}

// TestDurableJobsOnPostgres: the durable-job life on PostgreSQL — enqueued,
// one running when a Close gives up, restored by a new scheduler with its
// attempt counted, run, and deleted — and concurrent producers sharing
// commits.
func TestDurableJobsOnPostgres(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	ctx := context.Background()
	start := func() (*fairsched.Scheduler, pgstore.Backend) {
		st := open(t, url)
		s, err := fairsched.New(fairsched.WithStore(st), fairsched.WithMaxConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType("mail", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		return s, st
	}
	s, st := start()
	block := fairschedtest.NewBlocker()
	if err := s.RegisterHandler("mail", func(ctx context.Context, j fairsched.Job) error { return block.Run(ctx) }); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for p := range 16 {
		wg.Go(func() {
			for i := range 10 {
				if err := s.Enqueue(ctx, "mail", fmt.Sprintf("m%02d-%d", p, i), nil); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := s.Enqueue(ctx, "mail", "m00-0", nil); !errors.Is(err, fairsched.ErrDuplicateJob) {
		t.Errorf("a duplicate: %v", err)
	}
	block.WaitStarted(t)
	stop, cancel := context.WithCancel(ctx)
	cancel()
	_ = s.Close(stop)
	_ = s.Close(ctx)
	st.Close()

	s, st = start()
	defer st.Close()
	defer s.Close(ctx)
	var mu sync.Mutex
	attempts := map[int]int{}
	if err := s.RegisterHandler("mail", func(ctx context.Context, j fairsched.Job) error {
		mu.Lock()
		attempts[j.Attempt]++
		mu.Unlock()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	fairschedtest.WaitIdle(t, s)
	if diff := cmp.Diff(map[int]int{1: 159, 2: 1}, attempts); diff != "" {
		t.Errorf("attempts after the restart (-want +got):\n%s", diff)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	left := 0
	if err := st.LoadJobs(func(fairsched.JobRecord) error { left++; return nil }); err != nil || left != 0 {
		t.Errorf("%d records left (%v)", left, err)
	}
}
