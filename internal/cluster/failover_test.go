package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// TestKillLeaderAndExecutor is the multi-process proof of cluster mode:
// three processes (this test binary re-executed as children, childMain)
// run 300 durable jobs of 20 ms under a global cap of 6 (4 slots each) and
// an exclusive conflict group (build/jN and deploy/jN, N < 100, never run
// at once). The leader is killed (SIGKILL) while it runs jobs, then, once
// another instance leads and dispatch has resumed, a non-leader executor
// is killed too, and a replacement process joins. From the log the
// children append at every start and end, the test asserts that every
// job ended, that a job started more than once only if a kill interrupted
// it, and that the cap and the conflicts held at every instant among the
// processes alive (a killed process's jobs counted as running until its
// death). The children beat their heartbeats calmly (childCalmEnv); an
// attempt interrupted without a kill all the same — its executor stopped
// it, or the leader declared its instance lost (a loaded machine) — may
// run again too (countLosses). A kill interrupts the attempts the log shows started and not
// ended on the killed process, and those the database still showed
// granted to it once it was reaped (its handler had returned, its end was
// not yet reported). It logs how long dispatch took to resume after each
// kill and how many duplicates the kills cost; no duration is asserted.
// (It failed, with jobs run twice that no kill interrupted, while a new
// leader ran again the jobs whose success was reported after the last
// leader's last read of the ends; the leader now resumes them on the
// instance that reported the end and reads it back.)
func TestKillLeaderAndExecutor(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	st, err := pgstore.Open(ctx, url) // applies the schema before the children race to
	if err != nil {
		t.Fatal(err)
	}
	pgtest.CloseAtEnd(t, st)
	recordLosses(t, url)
	const (
		slots   = 4
		maxConc = 6
		work    = 20 * time.Millisecond
	)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "jobs.log")
	children := map[string]*child{}
	spawn := func(name string) {
		children[name] = startChild(t, dir, url, logPath, name, slots, maxConc, work, childCalmEnv+"=1")
	}
	for _, name := range []string{"c1", "c2", "c3"} {
		spawn(name)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, name := range sortedNames(children) {
				children[name].dumpStderr(t)
			}
		}
	})
	lg := &jobLog{path: logPath}

	first := waitLeader(t, st, children, "")
	t.Logf("leader: %s", first)

	// 300 jobs, enqueued at once from 6 goroutines straight into the
	// database (any instance's Enqueue is this Insert).
	var ids []string
	for i := range 200 {
		ids = append(ids, fmt.Sprint("build/j", i))
		if i < 100 {
			ids = append(ids, fmt.Sprint("deploy/j", i))
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(ids))
	for g := range 6 {
		wg.Go(func() {
			for i := g; i < len(ids); i += 6 {
				typ, id, _ := strings.Cut(ids[i], "/")
				rec := &fairsched.JobRecord{Type: fairsched.JobType(typ), ID: id, EnqueuedAt: time.Now().UTC()}
				if err := st.ClusterBackend().Insert(ctx, rec); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// Kill the leader once 60 jobs have ended, while it runs some.
	lg.waitFor(t, "60 ends with jobs running on the leader "+first, func(s logState) bool {
		return s.ends >= 60 && s.open[first] > 0
	})
	k1 := children[first].kill(t, st)
	next := waitLeader(t, st, children, first)
	takeover := time.Now()
	t.Logf("killed the leader %s; %s leads (observed %v after the kill)", first, next, takeover.Sub(k1.at).Round(time.Millisecond))

	// Once dispatch has resumed (60 more ends), kill an executor that does
	// not lead, while it runs jobs.
	var victim string
	endsAt := lg.state(t).ends
	lg.waitFor(t, "60 more ends with jobs running on an instance that does not lead", func(s logState) bool {
		if s.ends < endsAt+60 {
			return false
		}
		holder, _, live, err := st.ClusterBackend().Leader(ctx, childDomain)
		if err != nil || !live {
			return false
		}
		holder = cluster.NameOf(holder)
		for _, name := range sortedNames(children) {
			if !children[name].dead && name != holder && s.open[name] > 0 {
				victim = name
				return true
			}
		}
		return false
	})
	k2 := children[victim].kill(t, st)
	if holder, _, _, err := st.ClusterBackend().Leader(ctx, childDomain); err != nil || cluster.NameOf(holder) == victim {
		t.Fatalf("the lease moved to %s just before it was killed (%v)", victim, err)
	}
	t.Logf("killed the executor %s", victim)
	spawn("c4")

	// Wait for the table to empty: every job succeeded and was deleted.
	deadline := time.Now().Add(2 * time.Minute) // a failure guard only
	for {
		n, dead := 0, 0
		if err := st.LoadJobs(func(r fairsched.JobRecord) error {
			n++
			if r.State != core.RecordPending {
				dead++
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if dead > 0 {
			t.Fatalf("%d jobs are dead", dead)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs still in the table after two minutes", n)
		}
		time.Sleep(20 * time.Millisecond) // polling the table, not a timing assertion
	}
	for _, name := range sortedNames(children) {
		children[name].stop(t)
	}

	// Judge the log.
	events := lg.events(t)
	kills := []killed{k1, k2}
	r := analyse(events, kills, losses(t, url), maxConc)
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
		if r.ends[id] == 0 {
			t.Errorf("job %s never ended (started %d times)", id, r.starts[id])
		}
	}
	for id := range r.starts {
		if !want[id] {
			t.Errorf("unknown job %s ran", id)
		}
	}
	dups, byLoss := 0, 0
	for _, id := range ids {
		extra := r.starts[id] - 1
		dups += max(extra, 0)
		if extra > r.interrupted[id]+r.lost[id] {
			t.Errorf("job %s started %d times; kills interrupted it %d times, losses without a kill %d times; its lines: %s",
				id, r.starts[id], r.interrupted[id], r.lost[id], linesOf(events, id, k1.at))
		}
		byLoss += r.lost[id]
	}
	if byLoss > 0 {
		// A loaded machine: heartbeats timed out, so an instance stopped
		// its attempts or was declared lost without being killed.
		t.Logf("%d attempts were interrupted by an instance declared lost or stopping its jobs, without a kill", byLoss)
	}
	for inst, open := range r.unended {
		t.Errorf("instance %s, never killed, left %v without an end", inst, open)
	}
	for _, v := range r.violations {
		t.Error(v)
	}
	for i, k := range kills {
		fig := resumeFigures(events, k, r.killedJobs[i])
		what := fmt.Sprintf("kill %d (the executor %s, at +%v): first start after it %v later",
			i+1, k.name, k.at.Sub(k1.at).Round(time.Millisecond), fig.next)
		if i == 0 {
			what = fmt.Sprintf("kill 1 (the leader %s): lease taken over %v later (observed); dispatch resumed %v after the kill (first start after the takeover; first start of any job, perhaps granted before the kill: %v)",
				k.name, takeover.Sub(k.at).Round(time.Millisecond),
				firstStartAfter(events, takeover.UnixNano()).Sub(k.at).Round(time.Millisecond), fig.next)
		}
		t.Logf("%s; %d jobs interrupted (%d of them had ended but not reported), restarted %v … %v after the kill",
			what, len(r.killedJobs[i]), r.unreported[i], fig.firstRestart, fig.lastRestart)
	}
	t.Logf("%d jobs, %d starts, %d duplicates, peak %d running at once (cap %d)",
		len(ids), len(events)-r.nEnds, dups, r.peak, maxConc)
}

// child is one instance of the children's cluster, in its own process.
type child struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr string
	inc    string // the file where it writes its incarnation
	dead   bool
}

// killed is a child killed: when the signal went, and when it was reaped
// (after which it wrote nothing).
type killed struct {
	name    string
	at      time.Time
	reaped  time.Time
	granted []string // type/id of the jobs granted to it when it was reaped
	// grantedAttempt: type/id → the attempt granted to it when it was
	// reaped; the kill accounts for that attempt, not for earlier ones.
	grantedAttempt map[string]int
}

// spawned counts the children started, so that a name started twice has
// files of its own each time (atomic: parallel tests start children).
var spawned atomic.Int64

// startChild starts child name; env are more variables for it.
func startChild(t *testing.T, dir, url, logPath, name string, slots, maxConc int, work time.Duration, env ...string) *child {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	n := spawned.Add(1)
	c := &child{name: name, stderr: filepath.Join(dir, fmt.Sprintf("%s-%d.stderr", name, n)),
		inc: filepath.Join(dir, fmt.Sprintf("%s-%d.incarnation", name, n))}
	errf, err := os.Create(c.stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer errf.Close() // the child holds its own descriptor
	c.cmd = exec.Command(exe)
	c.cmd.Env = append(os.Environ(), childEnv+"="+name, childURLEnv+"="+url, childLogEnv+"="+logPath,
		childSlotsEnv+"="+strconv.Itoa(slots), childCapEnv+"="+strconv.Itoa(maxConc), childWorkEnv+"="+work.String(), childIncEnv+"="+c.inc)
	c.cmd.Env = append(c.cmd.Env, env...)
	c.cmd.Stdout, c.cmd.Stderr = errf, errf
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !c.dead {
			_ = c.cmd.Process.Kill()
			_ = c.cmd.Wait()
			c.dead = true
		}
	})
	return c
}

// kill sends SIGKILL and reaps the process.
func (c *child) kill(t *testing.T, st *pgstore.Store) killed {
	t.Helper()
	k := killed{name: c.name, at: time.Now()}
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = c.cmd.Wait()
	k.reaped, c.dead = time.Now(), true
	// What the cluster counts as running there now stays so until the
	// leader declares the instance lost: with the attempts the log shows
	// unfinished, these are the attempts the kill interrupted (an attempt
	// whose end line was written but whose end was not yet reported is
	// one).
	gs, err := st.ClusterBackend().Granted(context.Background(), c.incarnation(t))
	if err != nil {
		t.Fatal(err)
	}
	k.grantedAttempt = map[string]int{}
	for _, g := range gs {
		id := string(g.Record.Type) + "/" + g.Record.ID
		k.granted = append(k.granted, id)
		k.grantedAttempt[id] = g.Attempt
	}
	return k
}

// incarnation waits until the child has joined and returns its
// incarnation (its identity in the database).
func (c *child) incarnation(t *testing.T) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(c.inc)
		if err == nil {
			return string(b)
		}
		if !os.IsNotExist(err) || time.Now().After(deadline) {
			t.Fatalf("the incarnation of %s: %v", c.name, err)
		}
		time.Sleep(5 * time.Millisecond) // polling the file, not a timing assertion
	}
}

// stop closes the child's stdin, so that it leaves the cluster, and waits
// for it to exit (killing it after 20 s).
func (c *child) stop(t *testing.T) {
	t.Helper()
	if c.dead {
		return
	}
	_ = c.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("child %s: %v", c.name, err)
		}
	case <-time.After(20 * time.Second):
		t.Errorf("child %s did not leave in 20 s", c.name)
		_ = c.cmd.Process.Kill()
		<-done
	}
	c.dead = true
}

func (c *child) dumpStderr(t *testing.T) {
	b, _ := os.ReadFile(c.stderr)
	if len(b) > 8000 {
		b = append([]byte("…"), b[len(b)-8000:]...)
	}
	t.Logf("stderr of %s:\n%s", c.name, b)
}

func sortedNames(m map[string]*child) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// waitLeader waits until a live child other than not holds the lease.
func waitLeader(t *testing.T, st *pgstore.Store, children map[string]*child, not string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		holder, _, live, err := st.ClusterBackend().Leader(context.Background(), childDomain)
		if err != nil {
			t.Fatal(err)
		}
		name := cluster.NameOf(holder)
		if c := children[name]; live && name != not && c != nil && !c.dead {
			return name
		}
		time.Sleep(5 * time.Millisecond) // polling the lease, not a timing assertion
	}
	t.Fatalf("no live leader other than %q in 30 s", not)
	return ""
}

// event is a line of the children's log.
type event struct {
	start       bool
	id          string // type/id
	inst        string
	ts          int64
	attempt     int
	incarnation string
	prev        string // how the job's last attempt ended, as its start read it (childMain)
}

type jobLog struct{ path string }

func (l *jobLog) events(t *testing.T) []event {
	t.Helper()
	b, err := os.ReadFile(l.path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []event
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 7 || f[0] != "start" && f[0] != "end" {
			t.Fatalf("log line %q", sc.Text())
		}
		ts, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		attempt, err := strconv.Atoi(f[4])
		if err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, event{start: f[0] == "start", id: f[1], inst: f[2], ts: ts, attempt: attempt, incarnation: f[5], prev: f[6]})
	}
	return out
}

// logState is the log's summary so far: ends, and the jobs each instance
// runs (started, not ended).
type logState struct {
	ends int
	open map[string]int
}

func (l *jobLog) state(t *testing.T) logState {
	s := logState{open: map[string]int{}}
	for _, e := range l.events(t) {
		if e.start {
			s.open[e.inst]++
		} else {
			s.open[e.inst]--
			s.ends++
		}
	}
	return s
}

func (l *jobLog) waitFor(t *testing.T, what string, ok func(logState) bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		s := l.state(t)
		if ok(s) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s in a minute (%d ends, running %v)", what, s.ends, s.open)
		}
		time.Sleep(5 * time.Millisecond) // polling the log, not a timing assertion
	}
}

// analysis is what the log says.
type analysis struct {
	starts, ends map[string]int
	nEnds        int
	// interrupted counts, per job, the kills that found it running on the
	// killed process; killedJobs lists them per kill.
	interrupted map[string]int
	// lost counts, per job, its attempts interrupted without a kill:
	// their executor stopped them (their end says "lost"), or, on a
	// process never killed, the leader declared their incarnation lost
	// after they started (its row deleted: losses).
	lost       map[string]int
	killedJobs [][]string
	unreported []int               // of killedJobs, those whose end line was written
	unended    map[string][]string // per instance never killed
	peak       int
	violations []string
}

// analyse replays the log in time order: each attempt is an interval from
// its start line to its end line on the same instance, or to the death of
// its process when a kill cut it short.
func analyse(events []event, kills []killed, lostAt map[string][]int64, maxConc int) analysis {
	r := analysis{starts: map[string]int{}, ends: map[string]int{}, interrupted: map[string]int{}, lost: map[string]int{},
		unended: map[string][]string{}, killedJobs: make([][]string, len(kills))}
	r.countLosses(events, kills, lostAt)
	type point struct {
		ts    int64
		delta int
		id    string
		inst  string
	}
	var points []point
	open := map[[2]string]int{} // (instance, id): attempts started, not ended
	for _, e := range events {
		k := [2]string{e.inst, e.id}
		if e.start {
			r.starts[e.id]++
			open[k]++
			points = append(points, point{e.ts, +1, e.id, e.inst})
		} else {
			r.ends[e.id]++
			r.nEnds++
			open[k]--
			points = append(points, point{e.ts, -1, e.id, e.inst})
		}
	}
	for k, n := range open {
		if n <= 0 {
			if n < 0 {
				r.violations = append(r.violations, fmt.Sprintf("%s ended on %s more often than it started", k[1], k[0]))
			}
			continue
		}
		i := slices.IndexFunc(kills, func(x killed) bool { return x.name == k[0] })
		if i < 0 {
			r.unended[k[0]] = append(r.unended[k[0]], k[1])
			continue
		}
		r.interrupted[k[1]] += n
		r.killedJobs[i] = append(r.killedJobs[i], k[1])
		for range n {
			points = append(points, point{kills[i].reaped.UnixNano(), -1, k[1], k[0]})
		}
	}
	// An attempt that ended in the log but was still granted to the
	// killed process when it died: its end went with it.
	r.unreported = make([]int, len(kills))
	for i, k := range kills {
		for _, id := range k.granted {
			if !slices.Contains(r.killedJobs[i], id) {
				r.interrupted[id]++
				r.killedJobs[i] = append(r.killedJobs[i], id)
				r.unreported[i]++
			}
		}
	}
	// Ends before starts at one instant: an end is written before the
	// leader can read it and admit the next.
	slices.SortStableFunc(points, func(a, b point) int {
		if a.ts != b.ts {
			return int(min(max(a.ts-b.ts, -1), 1))
		}
		return a.delta - b.delta
	})
	running := 0
	byKey := map[string][]string{} // conflict id → jobs running on it
	for _, p := range points {
		_, key, _ := strings.Cut(p.id, "/")
		running += p.delta
		if p.delta > 0 {
			if running > maxConc {
				r.violations = append(r.violations, fmt.Sprintf("%d jobs ran at once at %d (cap %d), %s on %s starting",
					running, p.ts, maxConc, p.id, p.inst))
			}
			if len(byKey[key]) > 0 {
				r.violations = append(r.violations, fmt.Sprintf("%s started on %s at %d while %v ran on conflict id %s",
					p.id, p.inst, p.ts, byKey[key], key))
			}
			byKey[key] = append(byKey[key], p.id)
		} else if i := slices.Index(byKey[key], p.id); i >= 0 {
			byKey[key] = slices.Delete(byKey[key], i, i+1)
		}
		r.peak = max(r.peak, running)
	}
	return r
}

type resume struct{ next, firstRestart, lastRestart time.Duration }

// resumeFigures: after kill k, the first start of any job, and the first
// and last restart of the jobs it interrupted.
func resumeFigures(events []event, k killed, interrupted []string) resume {
	var f resume
	at := k.at.UnixNano()
	f.next = firstStartAfter(events, at).Sub(k.at).Round(time.Millisecond)
	restart := map[string]int64{} // each interrupted job's first start after k
	for _, id := range interrupted {
		restart[id] = 0
	}
	for _, e := range events {
		if first, ok := restart[e.id]; ok && e.start && e.ts > at && (first == 0 || e.ts < first) {
			restart[e.id] = e.ts
		}
	}
	for _, ts := range restart {
		if ts == 0 {
			continue // never restarted: the test reports it as never ended
		}
		d := time.Duration(ts - at).Round(time.Millisecond)
		if f.firstRestart == 0 || d < f.firstRestart {
			f.firstRestart = d
		}
		f.lastRestart = max(f.lastRestart, d)
	}
	return f
}

// firstStartAfter is the time of the first start line after ts.
func firstStartAfter(events []event, ts int64) time.Time {
	best := int64(0)
	for _, e := range events {
		if e.start && e.ts > ts && (best == 0 || e.ts < best) {
			best = e.ts
		}
	}
	return time.Unix(0, best)
}

// countLosses fills r.lost: each attempt that its executor stopped (its
// end line says "lost"), and each on a process never killed whose
// incarnation the leader declared lost after it started and before the
// job's next start (the revoke that freed the job to run again) —
// interruptions, which durable jobs run again whatever the retry policy.
func (r *analysis) countLosses(events []event, kills []killed, lostAt map[string][]int64) {
	starts := map[string][]int64{} // per job, its starts' times in order
	for _, e := range events {
		if e.start {
			starts[e.id] = append(starts[e.id], e.ts)
		}
	}
	for _, ts := range starts {
		slices.Sort(ts)
	}
	revokedBeforeNext := func(s event) bool {
		i, _ := slices.BinarySearch(starts[s.id], s.ts+1)
		if i == len(starts[s.id]) {
			return false // never started again: nothing to explain
		}
		next := starts[s.id][i]
		return slices.ContainsFunc(lostAt[s.incarnation], func(ts int64) bool { return ts > s.ts && ts < next })
	}
	type attempt struct {
		id, inst string
		n        int
	}
	started := map[attempt]event{}
	for _, e := range events {
		if i := slices.IndexFunc(kills, func(k killed) bool { return k.name == e.inst }); i >= 0 {
			// The kill accounting covers the attempts it cut and the one
			// it found granted; not those its executor had stopped
			// before, even of a job granted there again.
			if !e.start && e.prev == "lost" && kills[i].grantedAttempt[e.id] != e.attempt {
				r.lost[e.id]++
			}
			continue
		}
		a := attempt{e.id, e.inst, e.attempt}
		if e.start {
			started[a] = e
			continue
		}
		s, ok := started[a]
		delete(started, a)
		if e.prev == "lost" || ok && revokedBeforeNext(s) {
			r.lost[e.id]++
		}
	}
	for _, s := range started { // never ended here
		if revokedBeforeNext(s) {
			r.lost[s.id]++
		}
	}
}

// recordLosses makes the test's database remember each instance the
// leader declares lost (Backend.Lost deletes its row): when, by
// incarnation. A test-only trigger; the product keeps no such history.
func recordLosses(t *testing.T, url string) {
	t.Helper()
	pgtest.Exec(t, url, `
		CREATE TABLE test_losses (instance text NOT NULL, at bigint NOT NULL);
		CREATE FUNCTION test_record_loss() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			INSERT INTO test_losses VALUES (OLD.instance, (extract(epoch FROM clock_timestamp()) * 1e9)::bigint);
			RETURN OLD;
		END $$;
		CREATE TRIGGER test_record_loss AFTER DELETE ON fairsched_instances FOR EACH ROW EXECUTE FUNCTION test_record_loss();`)
}

// losses returns what recordLosses recorded: by incarnation, when (Unix
// nanoseconds) its row was deleted.
func losses(t *testing.T, url string) map[string][]int64 {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT instance, at FROM test_losses`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]int64{}
	for rows.Next() {
		var inst string
		var at int64
		if err := rows.Scan(&inst, &at); err != nil {
			t.Fatal(err)
		}
		out[inst] = append(out[inst], at)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// linesOf is job id's lines of the log, for a failure's message: times
// from at.
func linesOf(events []event, id string, at time.Time) string {
	var b strings.Builder
	for _, e := range events {
		if e.id != id {
			continue
		}
		kind := "end"
		if e.start {
			kind = "start"
		}
		fmt.Fprintf(&b, "\n\t%s on %s attempt %d at %+v (%s)", kind, e.incarnation, e.attempt,
			time.Unix(0, e.ts).Sub(at).Round(time.Millisecond), e.prev)
	}
	return b.String()
}
