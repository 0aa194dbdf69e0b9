package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// TestGrantsAreFencedAndGuarded: grants are written under the leader's
// epoch alone; the database refuses two running grants on one exclusive
// conflict key, in one batch or across batches; a lost instance's grants
// are revoked, and its late report matches nothing, while the new
// grant's report ends it.
func TestGrantsAreFencedAndGuarded(t *testing.T) {
	t.Parallel()
	st, epoch := leaderOver(t, 3)
	defer st.Close()
	ctx := context.Background()
	var log []string
	grant := func(e int64, gs ...pgstore.Grant) {
		n, err := st.GrantJobs(ctx, "d", e, gs)
		switch {
		case errors.Is(err, pgstore.ErrFenced):
			log = append(log, "fenced")
		case errors.Is(err, pgstore.ErrDoubleAdmission):
			log = append(log, "double admission")
		case err != nil:
			t.Fatal(err)
		default:
			log = append(log, fmt.Sprintf("granted %d", n))
		}
	}
	linux := "repo/linux"
	grant(epoch+1, pgstore.Grant{Seq: 3, Instance: "i1", Attempt: 1})
	grant(epoch, pgstore.Grant{Seq: 1, Instance: "i1", Attempt: 1, ConflictKey: linux}, pgstore.Grant{Seq: 2, Instance: "i2", Attempt: 1, ConflictKey: linux})
	grant(epoch, pgstore.Grant{Seq: 1, Instance: "i1", Attempt: 1, ConflictKey: linux}, pgstore.Grant{Seq: 3, Instance: "i2", Attempt: 1})
	grant(epoch, pgstore.Grant{Seq: 2, Instance: "i2", Attempt: 1, ConflictKey: linux})
	grant(epoch, pgstore.Grant{Seq: 1, Instance: "i2", Attempt: 1}) // running already: skipped
	g, err := st.Granted(ctx, "i1")
	if err != nil {
		t.Fatal(err)
	}
	for i := range g {
		if g[i].Record == nil || g[i].Record.Seq != g[i].Seq {
			t.Errorf("grant %d carries record %+v", g[i].Seq, g[i].Record)
		}
		g[i].Record = nil
	}
	log = append(log, fmt.Sprintf("i1 runs %+v", g))
	revoked, err := st.Revoke(ctx, "d", epoch, "i1") // i1 is lost
	if err != nil {
		t.Fatal(err)
	}
	log = append(log, fmt.Sprintf("revoked %v", revoked))
	report := func(e pgstore.End) {
		n, err := st.ReportEnds(ctx, []pgstore.End{e})
		if err != nil {
			t.Fatal(err)
		}
		log = append(log, fmt.Sprintf("report %s attempt %d matched %d", e.Instance, e.Attempt, n))
	}
	report(pgstore.End{Seq: 1, Instance: "i1", Attempt: 1}) // the zombie's late report
	grant(epoch, pgstore.Grant{Seq: 1, Instance: "i2", Attempt: 2, ConflictKey: linux})
	report(pgstore.End{Seq: 1, Instance: "i2", Attempt: 2})
	grant(epoch, pgstore.Grant{Seq: 2, Instance: "i2", Attempt: 1, ConflictKey: linux}) // the key is free again
	want := []string{
		"fenced",
		"double admission",
		"granted 2",
		"double admission",
		"granted 0",
		"i1 runs [{Seq:1 Instance:i1 Attempt:1 ConflictKey:repo/linux Worker: Slot:0 Record:<nil> Cancelled:false Preempted:false Handed:false}]",
		"revoked [1]",
		"report i1 attempt 1 matched 0",
		"granted 1",
		"report i2 attempt 2 matched 1",
		"granted 1",
	}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("grants (-want +got):\n%s", diff)
	}
}

// TestGrantRecordsTheAttempt: a grant counts its attempt in the job's row
// (its attempt column; the record's JSON is not rewritten), so the
// leader's scheduler need not write the record when an attempt starts,
// and every reader of the row — an executor, a new leader's snapshot
// running or pending, LoadJobs — counts the attempt.
func TestGrantRecordsTheAttempt(t *testing.T) {
	t.Parallel()
	st := open(t, pgtest.URL(t))
	defer st.Close()
	ctx := context.Background()
	rec := fairsched.JobRecord{Seq: 1, Type: "repack", ID: "j1", Attempt: 2, LastError: "boom", EndedAttempt: 2, EnqueuedAt: time.Unix(0, 0).UTC()}
	if err := st.ApplyJobs([]fairsched.JobOp{{Put: &rec}}); err != nil {
		t.Fatal(err)
	}
	epoch := lead(t, st)
	if _, err := st.GrantJobs(ctx, "d", epoch, []pgstore.Grant{{Seq: 1, Instance: "i1", Attempt: 3}}); err != nil {
		t.Fatal(err)
	}
	g, err := st.Granted(ctx, "i1")
	if err != nil || len(g) != 1 {
		t.Fatalf("granted: %v %v", g, err)
	}
	var loaded []fairsched.JobRecord
	if err := st.LoadJobs(func(r fairsched.JobRecord) error { loaded = append(loaded, r); return nil }); err != nil {
		t.Fatal(err)
	}
	// A new leader's snapshot: the job running (resumed where it runs),
	// then pending again once its instance's grants are revoked (read
	// with the backlog).
	_, running, feed, err := st.Domain(ctx, "d", epoch)
	if err != nil {
		t.Fatal(err)
	}
	feed.Close()
	if _, err := st.Revoke(ctx, "d", epoch, "i1"); err != nil {
		t.Fatal(err)
	}
	_, pending, feed, err := st.Domain(ctx, "d", epoch)
	if err != nil {
		t.Fatal(err)
	}
	feed.Close()
	if len(running) != 1 || len(pending) != 1 {
		t.Fatalf("snapshots: %v, %v", running, pending)
	}
	want := rec
	want.Attempt = 3 // the rest of the record as it was
	resumed := want
	resumed.Granted = "i1"
	if diff := cmp.Diff([]fairsched.JobRecord{want, want, resumed, want}, []fairsched.JobRecord{*g[0].Record, loaded[0], running[0], pending[0]}); diff != "" {
		t.Errorf("records after the grant (-want +got):\n%s", diff)
	}
}

// TestSucceededDeletesMatchingGrants: Succeeded deletes the rows of the
// successes that still match their grant, under the leader's epoch only;
// a report for another attempt or instance, or of a job not running,
// deletes nothing.
func TestSucceededDeletesMatchingGrants(t *testing.T) {
	t.Parallel()
	st, epoch := leaderOver(t, 4)
	defer st.Close()
	ctx := context.Background()
	if _, err := st.GrantJobs(ctx, "d", epoch, []pgstore.Grant{{Seq: 1, Instance: "i1", Attempt: 1}, {Seq: 2, Instance: "i1", Attempt: 1},
		{Seq: 3, Instance: "i1", Attempt: 1}}); err != nil {
		t.Fatal(err)
	}
	ends := []pgstore.End{{Seq: 1, Instance: "i1", Attempt: 1}, {Seq: 2, Instance: "i1", Attempt: 2}, {Seq: 3, Instance: "i2", Attempt: 1},
		{Seq: 4, Instance: "i1", Attempt: 1}}
	var log []string
	if _, err := st.Succeeded(ctx, "d", epoch+1, ends); !errors.Is(err, pgstore.ErrFenced) {
		log = append(log, fmt.Sprintf("deposed leader: %v", err))
	}
	gone, err := st.Succeeded(ctx, "d", epoch, ends)
	if err != nil {
		t.Fatal(err)
	}
	log = append(log, fmt.Sprintf("deleted %v", gone))
	n, err := st.CountJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	log = append(log, fmt.Sprintf("%d rows left", n))
	if diff := cmp.Diff([]string{"deleted [1]", "3 rows left"}, log); diff != "" {
		t.Errorf("Succeeded (-want +got):\n%s", diff)
	}
}

// TestGrantDeletesThenGrantsInOneTransaction: the leader's turn deletes
// the successes' rows and writes its grants together — the grants of a
// turn that frees the conflict key they take are admitted, and a turn the
// database refuses (a double admission) deletes nothing either.
func TestGrantDeletesThenGrantsInOneTransaction(t *testing.T) {
	t.Parallel()
	st, epoch := leaderOver(t, 4)
	defer st.Close()
	ctx := context.Background()
	key := "repo/linux"
	if _, err := st.GrantJobs(ctx, "d", epoch, []pgstore.Grant{{Seq: 1, Instance: "i1", Attempt: 1, ConflictKey: key}}); err != nil {
		t.Fatal(err)
	}
	var log []string
	turn := func(ends []pgstore.End, gs ...pgstore.Grant) {
		gone, took, err := st.Grant(ctx, "d", epoch, nil, ends, gs)
		n, cerr := st.CountJobs(ctx)
		if cerr != nil {
			t.Fatal(cerr)
		}
		log = append(log, fmt.Sprintf("deleted %v granted %v err %v: %d rows", gone, took, err, n))
	}
	// Job 1 holds the key: a turn granting 2 and 3 on it is refused, and
	// 1's success with it stays unwritten.
	turn([]pgstore.End{{Seq: 1, Instance: "i1", Attempt: 1}},
		pgstore.Grant{Seq: 2, Instance: "i1", Attempt: 1, ConflictKey: key}, pgstore.Grant{Seq: 3, Instance: "i1", Attempt: 1, ConflictKey: key})
	// 1's success frees the key for 2 in the same turn.
	turn([]pgstore.End{{Seq: 1, Instance: "i1", Attempt: 1}}, pgstore.Grant{Seq: 2, Instance: "i1", Attempt: 1, ConflictKey: key})
	turn(nil, pgstore.Grant{Seq: 4, Instance: "i2", Attempt: 1})
	turn([]pgstore.End{{Seq: 2, Instance: "i1", Attempt: 1}, {Seq: 4, Instance: "i2", Attempt: 1}})
	want := []string{
		"deleted [] granted [] err " + pgstore.ErrDoubleAdmission.Error() + ": 4 rows",
		"deleted [1] granted [2] err <nil>: 3 rows",
		"deleted [] granted [4] err <nil>: 3 rows",
		"deleted [2 4] granted [] err <nil>: 1 rows",
	}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("turns (-want +got):\n%s", diff)
	}
}

// TestGrantEndsSuccesses: the successes a leader's turn writes end their
// rows whether the grant still runs (a success handed back in process) or
// its executor reported it: deleted — or, when the leader's scheduler
// wrote the record since (kept WithRetention), kept and no longer running,
// its conflict key free. A reported failure, another attempt's success, or
// a grant running on another instance is left as it is.
func TestGrantEndsSuccesses(t *testing.T) {
	t.Parallel()
	st, epoch := leaderOver(t, 7)
	defer st.Close()
	ctx := context.Background()
	var gs []pgstore.Grant
	for seq := uint64(1); seq <= 7; seq++ {
		gs = append(gs, pgstore.Grant{Seq: seq, Instance: "i1", Attempt: 1, ConflictKey: fmt.Sprint("k", seq)})
	}
	if _, err := st.GrantJobs(ctx, "d", epoch, gs); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ReportEnds(ctx, []pgstore.End{{Seq: 1, Instance: "i1", Attempt: 1}, {Seq: 2, Instance: "i1", Attempt: 1},
		{Seq: 3, Instance: "i1", Attempt: 1, Kind: cluster.EndError, Error: "boom"}, {Seq: 5, Instance: "i1", Attempt: 1}}); err != nil {
		t.Fatal(err)
	}
	var kept []fairsched.JobOp
	for _, seq := range []uint64{5, 7} {
		kept = append(kept, fairsched.JobOp{Put: &fairsched.JobRecord{Seq: seq, Type: "repack", ID: fmt.Sprint("j", seq),
			EnqueuedAt: time.Unix(0, 0).UTC(), State: core.RecordSucceeded}})
	}
	if err := st.ApplyJobsFenced(ctx, "d", epoch, kept); err != nil {
		t.Fatal(err)
	}
	gone, _, err := st.Grant(ctx, "d", epoch, nil, []pgstore.End{
		{Seq: 1, Instance: "i1", Attempt: 1}, // reported success: deleted
		{Seq: 2, Instance: "i1", Attempt: 2}, // another attempt's
		{Seq: 3, Instance: "i1", Attempt: 1}, // reported failure
		{Seq: 4, Instance: "i2", Attempt: 1}, // runs on i1
		{Seq: 5, Instance: "i1", Attempt: 1}, // reported, written since: kept
		{Seq: 6, Instance: "i1", Attempt: 1}, // runs (handed back): deleted
		{Seq: 7, Instance: "i1", Attempt: 1}, // runs, written since: kept, stops running
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(gone)
	if diff := cmp.Diff([]uint64{1, 6, 7}, gone); diff != "" {
		t.Errorf("ended (-want +got):\n%s", diff)
	}
	rows, err := st.Rows(ctx, []uint64{1, 2, 3, 4, 5, 6, 7})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, r := range rows {
		left = append(left, fmt.Sprintf("%d running %v", r.Seq, r.Running))
	}
	slices.Sort(left)
	want := []string{"2 running false", "3 running false", "4 running true", "5 running false", "7 running false"}
	if diff := cmp.Diff(want, left); diff != "" {
		t.Errorf("rows left (-want +got):\n%s", diff)
	}
	// 7's conflict key is free: another job takes it.
	if _, err := st.GrantJobs(ctx, "d", epoch, []pgstore.Grant{{Seq: 2, Instance: "i1", Attempt: 2, ConflictKey: "k7"}}); err != nil {
		t.Errorf("granting on the key of a success kept: %v", err)
	}
}

// leaderOver returns a store holding jobs 1…n, pending, and the epoch of
// the lease of domain "d" it took.
func leaderOver(t *testing.T, n uint64) (pgstore.Backend, int64) {
	t.Helper()
	st := open(t, pgtest.URL(t))
	var ops []fairsched.JobOp
	for seq := uint64(1); seq <= n; seq++ {
		ops = append(ops, fairsched.JobOp{Put: &fairsched.JobRecord{Seq: seq, Type: "repack", ID: fmt.Sprint("j", seq), EnqueuedAt: time.Unix(0, 0).UTC()}})
	}
	if err := st.ApplyJobs(ops); err != nil {
		t.Fatal(err)
	}
	epoch := lead(t, st)
	return st, epoch
}

// TestWritesFindRowsByKey: the leader's turn and the executors' end
// reports look each row up by its key, in the order given, whatever the
// statistics say of the running rows. Taken before a burst of grants —
// none running — they make the partial index of the running rows look
// tiny, and a generic plan of "running AND instance = …" scanned it whole
// for each write (every running row and every dead entry since the last
// vacuum: 20 ms a write in a burn-down of 200 000 jobs). And each locks
// its rows in the keys' order before it changes any (lockedRows), in the
// statement itself, as every other writer of several rows does.
func TestWritesFindRowsByKey(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	st := open(t, url)
	defer st.Close()
	tx := openTx(t, url)
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO fairsched_jobs (seq, type, id, state, record)
			SELECT g, 'noop', 'j' || g, 0, jsonb_build_object('seq', g, 'type', 'noop', 'id', 'j' || g) FROM generate_series(1, 20000) g`,
		`ANALYZE fairsched_jobs`,
		`UPDATE fairsched_jobs SET running = true, instance = 'i1', attempt = 1 WHERE seq <= 10000`,
		`SET LOCAL plan_cache_mode = force_generic_plan`,
		`PREPARE deleteSucceeded AS ` + pgstore.DeleteSucceededSQL,
		`PREPARE reportEnds AS ` + pgstore.ReportEndsSQL,
		`PREPARE grantJobs AS ` + pgstore.GrantSQL,
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, q := range []string{
		`EXPLAIN EXECUTE deleteSucceeded('{1}', '{i1}', '{1}')`,
		`EXPLAIN EXECUTE reportEnds('{1}', '{i1}', '{1}', '{0}', '{""}')`,
		`EXPLAIN EXECUTE grantJobs('{10001}', '{i1}', '{1}', '{NULL}', '{NULL}', '{0}', '', '{false}')`,
	} {
		rows, err := tx.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var plan strings.Builder
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan.WriteString(line + "\n")
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		p := plan.String()
		if !strings.Contains(p, "Index Scan using fairsched_jobs_pkey") || strings.Contains(p, "fairsched_jobs_granted") {
			t.Errorf("%s: the rows are not looked up by key:\n%s", q, p)
		}
		if strings.Contains(p, "Seq Scan on fairsched_jobs") || strings.Contains(p, "Bitmap") {
			t.Errorf("%s: the table is scanned:\n%s", q, p)
		}
		// The ends' writes lock their rows first, in the keys' order:
		// LockRows over the key's index (in its order) or over a sort by
		// the key, read by a one-time filter before the plan starts; the
		// grant does not (grantSQL). Then each finds its rows by key, in
		// the order given.
		lock := regexp.MustCompile(`LockRows[^\n]*\n\s*->  (Index Scan using fairsched_jobs_pkey|Sort)`)
		if locks := !strings.Contains(q, "grantJobs"); locks != (lock.MatchString(p) && strings.Contains(p, "One-Time Filter")) {
			t.Errorf("%s: the rows locked in the keys' order first: %v, want %v:\n%s", q, !locks, locks, p)
		}
		if !strings.Contains(p, "Nested Loop") || strings.Contains(p, "Hash") {
			t.Errorf("%s: the rows are not looked up in the order given:\n%s", q, p)
		}
	}
}

// TestTurnsAndReportsNeverDeadlock: the leader's turn and an executor's
// end report of the same rows, given in opposite orders and written at
// once, take the rows' locks in one order — neither is refused as a
// deadlock — whatever order their plans meet the rows in: here a small
// table's hash join meets them in the table's order, the reverse of the
// keys' (a deadlock in the second or third round when each statement
// locked its rows in its plan's order, as change 20 had them).
func TestTurnsAndReportsNeverDeadlock(t *testing.T) {
	t.Parallel()
	const rounds, n = 20, 100
	st := open(t, pgtest.URL(t))
	defer st.Close()
	var ops []fairsched.JobOp
	for seq := uint64(1); seq <= rounds*n; seq++ {
		ops = append(ops, fairsched.JobOp{Put: &fairsched.JobRecord{Seq: seq, Type: "repack", ID: fmt.Sprint("j", seq), EnqueuedAt: time.Unix(0, 0).UTC()}})
	}
	if err := st.ApplyJobs(ops); err != nil {
		t.Fatal(err)
	}
	// A lease of an hour: the rounds' 2 000 grants, one a statement, take
	// longer than the usual lease on a loaded machine, and a lapse (a
	// fenced write) is not what this test is about.
	epoch, ok, err := st.Acquire(context.Background(), "d", "leader", time.Hour)
	if err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	ctx := context.Background()
	for r := range rounds {
		var ends []pgstore.End
		for i := range n {
			seq := uint64(r*n + i + 1)
			ends = append(ends, pgstore.End{Seq: seq, Instance: "i1", Attempt: 1})
		}
		// Granted one at a time, the last first: each grant's new row
		// version goes at the table's end, so the table holds the
		// running rows in the reverse of their keys' order — the order a
		// plan that scans the table (a small table's hash join) meets
		// them in.
		for i := n - 1; i >= 0; i-- {
			if _, err := st.GrantJobs(ctx, "d", epoch, []pgstore.Grant{{Seq: ends[i].Seq, Instance: "i1", Attempt: 1}}); err != nil {
				t.Fatal(err)
			}
		}
		reversed := slices.Clone(ends)
		slices.Reverse(reversed)
		errs := make(chan error, 2)
		go func() { _, err := st.ReportEnds(ctx, reversed); errs <- err }()
		go func() { _, _, err := st.Grant(ctx, "d", epoch, nil, ends, nil); errs <- err }()
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", r, err)
			}
		}
	}
}

// TestGrantTakesEachAttemptOnce: a turn written again — its first commit
// went through, but its reply was lost — grants nothing that first one
// granted, even once that attempt has ended and its row runs no more: an
// attempt is granted once. The next attempt is granted as usual.
func TestGrantTakesEachAttemptOnce(t *testing.T) {
	t.Parallel()
	st, epoch := leaderOver(t, 1)
	defer st.Close()
	ctx := context.Background()
	var log []string
	grant := func(attempt int) {
		n, err := st.GrantJobs(ctx, "d", epoch, []pgstore.Grant{{Seq: 1, Instance: "i1", Attempt: attempt}})
		if err != nil {
			t.Fatal(err)
		}
		log = append(log, fmt.Sprintf("grant attempt %d took %d", attempt, n))
	}
	report := func(attempt int) {
		n, err := st.ReportEnds(ctx, []pgstore.End{{Seq: 1, Instance: "i1", Attempt: attempt, Kind: cluster.EndError, Error: "boom"}})
		if err != nil {
			t.Fatal(err)
		}
		log = append(log, fmt.Sprintf("end of attempt %d matched %d", attempt, n))
	}
	grant(1)
	report(1)
	grant(1) // the same turn again
	grant(2)
	want := []string{"grant attempt 1 took 1", "end of attempt 1 matched 1", "grant attempt 1 took 0", "grant attempt 2 took 1"}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}
