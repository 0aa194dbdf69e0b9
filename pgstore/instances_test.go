package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// TestHeartbeatsAndLostInstances: instances register by beating; one
// silent past the deadline is declared lost by the leader, once; a
// deposed leader declares nobody lost.
func TestHeartbeatsAndLostInstances(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	st := open(t, url)
	defer st.Close()
	ctx := context.Background()
	for _, id := range []string{"i1", "i2", "i3"} {
		if _, err := st.Heartbeat(ctx, "d", pgstore.Instance{ID: id, Slots: 4, Types: []string{"mail", "index"}}); err != nil {
			t.Fatal(err)
		}
	}
	// i2 went silent a minute ago: the test moves its last beat back.
	pgtest.Exec(t, url, `UPDATE fairsched_instances SET heartbeat_at = now() - interval '1 minute' WHERE instance = 'i2'`)
	epoch, ok, err := st.Acquire(ctx, "d", "i1", 10*time.Second)
	if err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	if _, err := st.Lost(ctx, "d", epoch+1, 30*time.Second); !errors.Is(err, pgstore.ErrFenced) {
		t.Errorf("Lost under a wrong epoch: %v; want ErrFenced", err)
	}
	var got []string
	for range 2 {
		lost, err := st.Lost(ctx, "d", epoch, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprint(lost))
	}
	if diff := cmp.Diff([]string{"[i2]", "[]"}, got); diff != "" {
		t.Errorf("lost (-want +got):\n%s", diff)
	}
	ins, err := st.Instances(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range ins {
		ids = append(ids, in.ID)
		if in.Slots != 4 || !slices.Equal(in.Types, []string{"mail", "index"}) || in.Silent > 30*time.Second {
			t.Errorf("instance %+v", in)
		}
	}
	if diff := cmp.Diff([]string{"i1", "i3"}, ids); diff != "" {
		t.Errorf("instances (-want +got):\n%s", diff)
	}
}

// TestLostUntilRevoked: an instance declared lost whose grants were not
// taken back — its Revoke failed, or its leader stopped in between — is
// returned by every later Lost until they are, so that its jobs never stay
// granted to a process that is gone; an instance's grants that still
// beats are not. (A leader that lost one Revoke to a timeout left the
// jobs granted for ever.)
func TestLostUntilRevoked(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	st := open(t, url)
	defer st.Close()
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		if err := st.Insert(ctx, &fairsched.JobRecord{Type: "t", ID: id, EnqueuedAt: time.Unix(0, 0).UTC()}); err != nil {
			t.Fatal(err)
		}
	}
	epoch := lead(t, st)
	for _, id := range []string{"gone#1", "alive#2"} {
		if _, err := st.Heartbeat(ctx, "d", pgstore.Instance{ID: id, Slots: 4}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.GrantJobs(ctx, "d", epoch, []pgstore.Grant{{Seq: 1, Instance: "gone#1", Attempt: 1}, {Seq: 2, Instance: "alive#2", Attempt: 1}}); err != nil {
		t.Fatal(err)
	}
	pgtest.Exec(t, url, `UPDATE fairsched_instances SET heartbeat_at = now() - interval '1 minute' WHERE instance = 'gone#1'`)
	var got []string
	step := func() {
		lost, err := st.Lost(ctx, "d", epoch, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprint(lost))
	}
	step() // declared lost: its row goes
	step() // its Revoke never came: still holding a grant
	if _, err := st.Revoke(ctx, "d", epoch, "gone#1"); err != nil {
		t.Fatal(err)
	}
	step()
	if diff := cmp.Diff([]string{"[gone#1]", "[gone#1]", "[]"}, got); diff != "" {
		t.Errorf("lost (-want +got):\n%s", diff)
	}
}

// TestLostFindsEveryHolderByProbes: every instance holding running rows
// without a row of its own is found, however many instances hold them,
// and found by probes of the running rows' index — never by a scan of
// all of it, which would walk the entry of every row deleted since the
// last vacuum.
func TestLostFindsEveryHolderByProbes(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	st := open(t, url)
	defer st.Close()
	ctx := context.Background()
	holders := []string{"a#1", "b#2", "c#3", "d#4", "e#5"}
	var grants []pgstore.Grant
	for i := range 3 * len(holders) {
		if err := st.Insert(ctx, &fairsched.JobRecord{Type: "t", ID: fmt.Sprint("j", i), EnqueuedAt: time.Unix(0, 0).UTC()}); err != nil {
			t.Fatal(err)
		}
		grants = append(grants, pgstore.Grant{Seq: uint64(i + 1), Instance: holders[i%len(holders)], Attempt: 1})
	}
	epoch := lead(t, st)
	for _, id := range []string{"b#2", "d#4"} { // alive; the others have no row
		if _, err := st.Heartbeat(ctx, "d", pgstore.Instance{ID: id, Slots: 4}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.GrantJobs(ctx, "d", epoch, grants); err != nil {
		t.Fatal(err)
	}
	lost, err := st.Lost(ctx, "d", epoch, time.Hour)
	if diff := cmp.Diff([]string{"a#1", "c#3", "e#5"}, lost); err != nil || diff != "" {
		t.Errorf("lost %v (-want +got):\n%s", err, diff)
	}

	tx := openTx(t, url)
	for _, q := range []string{
		`SET LOCAL plan_cache_mode = force_generic_plan`,
		`PREPARE lost AS ` + pgstore.LostSQL,
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	rows, err := tx.Query(ctx, `EXPLAIN (VERBOSE) EXECUTE lost('d', '1 hour')`)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	plan := strings.Join(lines, "\n")
	if !strings.Contains(plan, "Index Only Scan using fairsched_jobs_granted on public.fairsched_jobs") || strings.Contains(plan, "Bitmap Heap Scan on public.fairsched_jobs") || strings.Contains(plan, "Seq Scan on public.fairsched_jobs") {
		t.Errorf("the holders are not found by two probes of the running rows' index:\n%s", plan)
	}
}
