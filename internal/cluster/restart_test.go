package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
	"github.com/fairsched/fairsched/policy"
)

// Restarts under a stable name (a StatefulSet's pod): the processes of
// these tests are killed with SIGKILL and started again at once under the
// same Instance. What is judged comes from the database — the lease row's
// instants, the grants it held at the kill, each job's record as its next
// attempt starts — and from the attempt numbers the children log, never
// from how long anything took.

// TestRestartedLeaderWaitsOutItsLease: the leader pod-0, alone, is killed
// while it runs four jobs and restarted at once as pod-0. The new process
// takes the lease only after the old lease's expiry as the lease row
// recorded it at the kill; the old incarnation is declared lost, and each
// job it ran starts again only as a later attempt whose record, read as
// it starts, says the earlier one ended with ErrWorkerLost; no attempt
// starts twice. (Without incarnations the restarted process took the
// lease back at once as its old holder, and ran the old grants again
// under their old attempt numbers.)
func TestRestartedLeaderWaitsOutItsLease(t *testing.T) {
	r := newRestart(t)
	old := r.spawn("pod-0")
	oldInc := old.incarnation(t)
	waitLeader(t, r.st, map[string]*child{"pod-0": old}, "")
	r.insert(8)
	r.log.waitFor(t, "four jobs running on pod-0", func(s logState) bool { return s.open["pod-0"] >= 4 })

	old.kill(t, r.st)
	grants := r.granted(oldInc)
	before := r.lease()
	if before.holder != oldInc {
		t.Fatalf("the lease is held by %s, not by the killed leader %s", before.holder, oldInc)
	}

	neu := r.spawn("pod-0")
	newInc := neu.incarnation(t)
	if newInc == oldInc || cluster.NameOf(newInc) != "pod-0" {
		t.Fatalf("the restarted process is incarnation %q of %q; the killed one was %q", newInc, cluster.NameOf(newInc), oldInc)
	}
	var after leaseRow
	pgtest.Eventually(t, "a new epoch of the lease", func() bool {
		after = r.lease()
		return after.epoch > before.epoch
	})
	if after.holder != newInc {
		t.Errorf("epoch %d is held by %s, want the restarted process %s", after.epoch, after.holder, newInc)
	}
	if after.acquired.Before(before.expires) {
		t.Errorf("epoch %d was taken at %v, before epoch %d's lease expired at %v (database clock)",
			after.epoch, after.acquired.Format(time.RFC3339Nano), before.epoch, before.expires.Format(time.RFC3339Nano))
	}
	t.Logf("epoch %d expired at %s; epoch %d taken %v after (database clock)", before.epoch,
		before.expires.Format("15:04:05.000"), after.epoch, after.acquired.Sub(before.expires).Round(time.Millisecond))

	r.waitAllDone()
	neu.stop(t)
	r.judge(grants, oldInc)
}

// TestRestartedFollowerRunsNewGrantsOnly: pod-1, which does not lead, is
// killed while it runs jobs and restarted at once as pod-1. The leader
// pod-0 declares the old incarnation lost; each job it ran starts again
// only as a later attempt whose record says the earlier one ended with
// ErrWorkerLost; the new pod-1 runs jobs, none under a grant of the old
// one; no attempt starts twice. (Without incarnations the restarted pod-1
// read the old grants as its own and ran them again under their old
// attempt numbers, never declared lost.)
func TestRestartedFollowerRunsNewGrantsOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("two processes and a lease waited out (5–10 s); make check runs it")
	}
	r := newRestart(t)
	lead := r.spawn("pod-0")
	leadInc := lead.incarnation(t)
	waitLeader(t, r.st, map[string]*child{"pod-0": lead}, "")
	old := r.spawn("pod-1")
	oldInc := old.incarnation(t)
	r.insert(24)
	r.log.waitFor(t, "jobs running on pod-1", func(s logState) bool { return s.open["pod-1"] >= 2 })

	old.kill(t, r.st)
	grants := r.granted(oldInc)
	neu := r.spawn("pod-1")
	newInc := neu.incarnation(t)
	if newInc == oldInc {
		t.Fatalf("the restarted pod-1 has the killed one's incarnation %s", oldInc)
	}

	r.waitAllDone()
	if holder := r.lease().holder; holder != leadInc {
		// A loaded machine can stall a renewal: what is judged holds
		// whoever leads.
		t.Logf("the lease moved from %s to %s during the test", leadInc, holder)
	}
	ins, err := r.st.ClusterBackend().Instances(context.Background(), childDomain)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range ins {
		if in.ID == oldInc {
			t.Errorf("the killed incarnation %s is still listed: it was never declared lost", oldInc)
		}
	}
	neu.stop(t)
	lead.stop(t)
	ran := 0
	for _, e := range r.log.events(t) {
		if e.start && e.incarnation == newInc {
			ran++
		}
	}
	if ran == 0 {
		t.Errorf("the restarted pod-1 (%s) ran no job", newInc)
	}
	t.Logf("the restarted pod-1 ran %d attempts", ran)
	r.judge(grants, oldInc)
}

// restart is the setting of a restart test: a database, the children's
// log, and every child started (for their stderr on a failure).
type restart struct {
	t    *testing.T
	url  string
	st   *pgstore.Store
	dir  string
	log  *jobLog
	kids []*child
	// recordedLost counts the restarted jobs whose record said, as they
	// started again, that the killed attempt ended with ErrWorkerLost.
	recordedLost int
}

func newRestart(t *testing.T) *restart {
	url := pgtest.URL(t)
	st, err := pgstore.Open(context.Background(), url) // the schema, before the children race to apply it
	if err != nil {
		t.Fatal(err)
	}
	pgtest.CloseAtEnd(t, st)
	r := &restart{t: t, url: url, st: st, dir: t.TempDir()}
	r.log = &jobLog{path: filepath.Join(r.dir, "jobs.log")}
	t.Cleanup(func() {
		if t.Failed() {
			for _, c := range r.kids {
				c.dumpStderr(t)
			}
		}
	})
	return r
}

// spawn starts a child under name: 4 slots, a cap of 8, jobs of a second,
// each start logging how the job's last attempt ended.
func (r *restart) spawn(name string) *child {
	c := startChild(r.t, r.dir, r.url, r.log.path, name, 4, 8, time.Second, childPrevEnv+"=1")
	r.kids = append(r.kids, c)
	return c
}

// insert writes jobs build/j0 … build/j(n-1).
func (r *restart) insert(n int) {
	for i := range n {
		rec := &fairsched.JobRecord{Type: "build", ID: fmt.Sprint("j", i), EnqueuedAt: time.Now().UTC()}
		if err := r.st.ClusterBackend().Insert(context.Background(), rec); err != nil {
			r.t.Fatal(err)
		}
	}
}

// granted returns the grants the database holds for incarnation inc,
// which must hold some.
func (r *restart) granted(inc string) []cluster.Grant {
	r.t.Helper()
	gs, err := r.st.ClusterBackend().Granted(context.Background(), inc)
	if err != nil {
		r.t.Fatal(err)
	}
	if len(gs) == 0 {
		r.t.Fatalf("%s held no grant when it was killed", inc)
	}
	return gs
}

// leaseRow is the domain's lease as the database records it.
type leaseRow struct {
	holder            string
	epoch             int64
	expires, acquired time.Time
}

func (r *restart) lease() leaseRow {
	r.t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, r.url)
	if err != nil {
		r.t.Fatal(err)
	}
	defer conn.Close(ctx)
	var l leaseRow
	if err := conn.QueryRow(ctx, `SELECT holder, epoch, expires_at, acquired_at FROM fairsched_leader WHERE domain = $1`, childDomain).
		Scan(&l.holder, &l.epoch, &l.expires, &l.acquired); err != nil {
		r.t.Fatal(err)
	}
	return l
}

// waitAllDone waits until every job has succeeded (its row deleted),
// failing on a dead one.
func (r *restart) waitAllDone() {
	r.t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // a failure guard only: a loaded machine is slow
	for {
		n := 0
		if err := r.st.LoadJobs(func(rec fairsched.JobRecord) error {
			if rec.State != core.RecordPending {
				r.t.Fatalf("job %s/%s ended %v: %s", rec.Type, rec.ID, rec.State, rec.LastError)
			}
			n++
			return nil
		}); err != nil {
			r.t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%d jobs still in the table after two minutes", n)
		}
		time.Sleep(20 * time.Millisecond) // polling the table, not a timing assertion
	}
}

// judge checks the log against the grants the killed incarnation oldInc
// held: no attempt of a job started twice; each job granted to it started
// again, elsewhere or in a later process, only under a later attempt,
// once oldInc had been declared lost, with its record saying the killed
// attempt ended with ErrWorkerLost (or nothing, its writer deposed).
func (r *restart) judge(grants []cluster.Grant, oldInc string) {
	t := r.t
	t.Helper()
	events := r.log.events(t)
	type run struct {
		id      string
		attempt int
	}
	started := map[run][]string{}
	for _, e := range events {
		if e.start {
			k := run{e.id, e.attempt}
			started[k] = append(started[k], e.incarnation)
		}
	}
	for k, incs := range started {
		if len(incs) > 1 {
			t.Errorf("attempt %d of %s started %d times, on %v", k.attempt, k.id, len(incs), incs)
		}
	}
	for _, g := range grants {
		id := string(g.Record.Type) + "/" + g.Record.ID
		var again []event
		for _, e := range events {
			if e.start && e.id == id && e.incarnation != oldInc {
				again = append(again, e)
			}
		}
		if len(again) == 0 {
			t.Errorf("%s, granted to %s (attempt %d) at the kill, never started again", id, oldInc, g.Attempt)
			continue
		}
		first := again[0]
		for _, e := range again {
			if e.attempt <= g.Attempt {
				t.Errorf("%s started as attempt %d on %s: the killed %s held attempt %d", id, e.attempt, e.incarnation, oldInc, g.Attempt)
			}
			if e.attempt < first.attempt {
				first = e
			}
		}
		// The database, read as the next attempt started: the killed
		// incarnation was declared lost already (its row gone), and the
		// job's record says the killed attempt (or a later one) ended
		// with ErrWorkerLost — or says no end, when the leader that
		// declared it lost lost its own lease before writing the record
		// (a loaded machine): the revoke committed all the same.
		kind, rest, _ := strings.Cut(first.prev, "@")
		endedS, othersS, _ := strings.Cut(rest, "/")
		ended, err1 := strconv.Atoi(endedS)
		others, err2 := strconv.Atoi(othersS)
		switch {
		case err1 != nil || err2 != nil:
			t.Errorf("%s: unreadable start %q", id, first.prev)
		case others != 0:
			t.Errorf("%s started again (attempt %d on %s) while %d names had two incarnations listed: %s was not declared lost yet",
				id, first.attempt, first.incarnation, others, oldInc)
		case kind == "lost" && ended >= g.Attempt:
			r.recordedLost++
		case kind != "none":
			t.Errorf("%s started again (attempt %d on %s) while its record said its last ended attempt was %q, not attempt %d or later lost",
				id, first.attempt, first.incarnation, first.prev, g.Attempt)
		}
	}
	if !t.Failed() {
		t.Logf("%d grants of %s: each started again as a later attempt, after being declared lost (%d with the lost end in the record)",
			len(grants), oldInc, r.recordedLost)
	}
}

// TestConfigNamesAreCallerStrings: Domain and Instance follow the rule of
// every caller string (valid UTF-8, no NUL, at most policy.MaxNameLen
// bytes), refused at Start with ErrInvalidConfig naming the field.
func TestConfigNamesAreCallerStrings(t *testing.T) {
	long := strings.Repeat("p", policy.MaxNameLen+1)
	for _, c := range []struct{ domain, instance, field string }{
		{"d\x00", "pod-0", "Domain"},
		{"d", "pod-\xff", "Instance"},
		{"d", long, "Instance"},
		{long, "pod-0", "Domain"},
	} {
		_, err := cluster.Start(nil, cluster.Config{Domain: c.domain, Instance: c.instance}, nil)
		if !errors.Is(err, cluster.ErrInvalidConfig) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("Start(Domain %.20q, Instance %.20q): %v, want ErrInvalidConfig naming %s", c.domain, c.instance, err, c.field)
		}
	}
}

// TestFailedRevokeIsTriedAgain: the leader declares an instance lost (cut
// off from the database while it runs a job) and its first Revoke of that
// instance's grants fails; the job does not stay granted to the lost
// instance for ever — the revoke is tried again, and the job runs again
// elsewhere. (It stayed granted for ever: the instance, once declared
// lost, was never named again.)
func TestFailedRevokeIsTriedAgain(t *testing.T) {
	url := pgtest.URL(t)
	var failed atomic.Bool
	lead := joinVia(t, url, func(b cluster.Backend) cluster.Backend { return &revokeFailsOnce{Backend: b, failed: &failed} },
		fast("d", "lead", 2))
	if leaderOf(t, lead) != lead {
		t.Fatal("the first instance does not lead")
	}
	work, f := joinFaulty(t, url, fast("d", "work", 2))
	cfg := fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}
	for _, m := range []*member{lead, work} {
		if err := m.s.RegisterType("slow", cfg); err != nil {
			t.Fatal(err)
		}
	}
	started := make(chan string, 8)
	if err := work.s.RegisterHandler("slow", func(ctx context.Context, j fairsched.Job) error {
		started <- fmt.Sprint("work ", j.Attempt)
		<-ctx.Done()
		return context.Cause(ctx)
	}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := lead.s.Enqueue(ctx, "slow", "report", nil,
		fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 5, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond})); err != nil {
		t.Fatal(err)
	}
	if s := <-started; s != "work 1" {
		t.Fatalf("first start: %s", s)
	}
	// From now on the leader's own instance runs it too.
	if err := lead.s.RegisterHandler("slow", func(ctx context.Context, j fairsched.Job) error {
		started <- fmt.Sprint("lead ", j.Attempt)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	f.cut.Store(true) // work goes silent: declared lost after LostAfter
	select {
	case s := <-started:
		if !strings.HasPrefix(s, "lead ") {
			t.Errorf("the job started again as %q, want on lead", s)
		}
	case <-time.After(time.Minute): // a failure guard only
		t.Fatal("the job never ran again: it stayed granted to the lost instance")
	}
	if !failed.Load() {
		t.Error("no Revoke failed: this test tested nothing")
	}
}

// revokeFailsOnce is a backend whose first Revoke fails (a timeout, a
// dropped connection), changing nothing.
type revokeFailsOnce struct {
	cluster.Backend
	failed *atomic.Bool
}

func (r *revokeFailsOnce) Revoke(ctx context.Context, domain string, epoch int64, instance string) ([]uint64, error) {
	if r.failed.CompareAndSwap(false, true) {
		return nil, fmt.Errorf("%w: test: the revoke's connection dropped", fairsched.ErrStore)
	}
	return r.Backend.Revoke(ctx, domain, epoch, instance)
}
