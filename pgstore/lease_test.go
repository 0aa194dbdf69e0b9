package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// expire moves domain's lease into the past, as the passing of its TTL
// would: the test does not wait for the clock.
func expire(t *testing.T, url, domain string) {
	t.Helper()
	pgtest.Exec(t, url, `UPDATE fairsched_leader SET expires_at = now() - interval '1 second' WHERE domain = $1`, domain)
}

// TestLease: one holder at a time; a new holder raises the epoch once the
// lease has expired or been released; the deposed holder can neither
// renew nor write (ErrFenced), the current one can.
func TestLease(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	st := open(t, url)
	defer st.Close()
	ctx := context.Background()
	const ttl = 10 * time.Second
	var log []string
	step := func(format string, args ...any) { log = append(log, fmt.Sprintf(format, args...)) }

	e, ok, err := st.Acquire(ctx, "d", "a", ttl)
	step("a acquires: epoch %d ok %v err %v", e, ok, err)
	e2, ok, err := st.Acquire(ctx, "d", "b", ttl)
	step("b acquires while a's lease runs: epoch %d ok %v err %v", e2, ok, err)
	ok, err = st.Renew(ctx, "d", "a", 1, ttl)
	step("a renews: %v %v", ok, err)
	rec := &fairsched.JobRecord{Seq: 1, Type: "t", ID: "x", EnqueuedAt: time.Unix(0, 0).UTC()}
	step("a writes under epoch 1: %v", st.ApplyJobsFenced(ctx, "d", 1, []fairsched.JobOp{{Put: rec}}))

	expire(t, url, "d")
	e, ok, err = st.Acquire(ctx, "d", "b", ttl)
	step("b acquires after a's lease expired: epoch %d ok %v err %v", e, ok, err)
	ok, err = st.Renew(ctx, "d", "a", 1, ttl)
	step("a renews its lost lease: %v %v", ok, err)
	step("a writes under epoch 1: fenced %v", errors.Is(st.ApplyJobsFenced(ctx, "d", 1, []fairsched.JobOp{{Delete: 1}}), pgstore.ErrFenced))
	step("b writes under epoch 2: %v", st.ApplyJobsFenced(ctx, "d", 2, []fairsched.JobOp{{Put: &fairsched.JobRecord{Seq: 2, Type: "t", ID: "y", EnqueuedAt: time.Unix(0, 0).UTC()}}}))

	step("b releases: %v", st.Release(ctx, "d", "b", 2))
	holder, epoch, live, err := st.Leader(ctx, "d")
	step("leader: %s epoch %d live %v err %v", holder, epoch, live, err)
	e, ok, err = st.Acquire(ctx, "d", "a", ttl)
	step("a acquires at once: epoch %d ok %v err %v", e, ok, err)
	step("b writes under epoch 2: fenced %v", errors.Is(st.ApplyJobsFenced(ctx, "d", 2, nil), pgstore.ErrFenced))
	step("a writes for another domain: fenced %v", errors.Is(st.ApplyJobsFenced(ctx, "other", 3, nil), pgstore.ErrFenced))

	var ids []string
	if err := st.LoadJobs(func(r fairsched.JobRecord) error { ids = append(ids, r.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	step("records: %v", ids)
	want := []string{
		"a acquires: epoch 1 ok true err <nil>",
		"b acquires while a's lease runs: epoch 0 ok false err <nil>",
		"a renews: true <nil>",
		"a writes under epoch 1: <nil>",
		"b acquires after a's lease expired: epoch 2 ok true err <nil>",
		"a renews its lost lease: false <nil>",
		"a writes under epoch 1: fenced true",
		"b writes under epoch 2: <nil>",
		"b releases: <nil>",
		"leader: b epoch 2 live false err <nil>",
		"a acquires at once: epoch 3 ok true err <nil>",
		"b writes under epoch 2: fenced true",
		"a writes for another domain: fenced true",
		"records: [x y]",
	}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("lease timeline (-want +got):\n%s", diff)
	}
}

// TestLeaseRace: twenty instances race for a free lease; exactly one wins,
// under epoch 1.
func TestLeaseRace(t *testing.T) {
	t.Parallel()
	st := open(t, pgtest.URL(t))
	defer st.Close()
	var mu sync.Mutex
	var winners []string
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			e, ok, err := st.Acquire(context.Background(), "race", fmt.Sprint("i", i), 10*time.Second)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				winners = append(winners, fmt.Sprintf("epoch %d", e))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if diff := cmp.Diff([]string{"epoch 1"}, winners); diff != "" {
		t.Errorf("winners (-want +got):\n%s", diff)
	}
}
