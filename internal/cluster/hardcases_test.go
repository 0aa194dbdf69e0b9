package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/internal/cluster/memback"
)

// The leader's hard cases, each on the in-memory backend in virtual time
// (testing/synctest): a step of the cluster is held at a memback Stall
// until the test has set the scene, and the whole outcome — every run of
// every job, every answer, the rows left — is compared at the end.

const hcType = "work"

// hcLink is one instance's way to the shared backend: it can keep the
// instance from taking the lease (follower), and counts the leader's
// writes of this instance that landed while counting is on (under an
// epoch that is no longer the domain's, there must be none): its turns
// (Grant), its records (ApplyJobs), its verdicts on instances (Lost,
// Revoke) and its cleanup (ForgetOrphans).
type hcLink struct {
	cluster.Backend
	follower atomic.Bool
	// renewHeld, when set, holds every Renew until it is closed: the
	// instance's lease loop stands still (a pause), its other loops run.
	renewHeld atomic.Pointer[chan struct{}]
	counting  atomic.Bool
	landed    atomic.Int32
	fenced    atomic.Int32
	revoked   atomic.Int32 // RevokeJob written
	commanded atomic.Int32 // commands stored (Command)
	// finalsHeld: Finals reads no job as final (the leader is behind).
	finalsHeld atomic.Bool
}

func (l *hcLink) Finals(ctx context.Context, seqs []uint64) ([]cluster.Final, error) {
	if l.finalsHeld.Load() {
		return nil, nil
	}
	return l.Backend.Finals(ctx, seqs)
}

func (l *hcLink) Command(ctx context.Context, domain string, cmd cluster.Command) (int64, error) {
	id, err := l.Backend.Command(ctx, domain, cmd)
	if err == nil {
		l.commanded.Add(1)
	}
	return id, err
}

func (l *hcLink) RevokeJob(ctx context.Context, domain string, epoch int64, seq uint64, why cluster.RevokeCause) error {
	err := l.Backend.RevokeJob(ctx, domain, epoch, seq, why)
	if err == nil {
		l.revoked.Add(1)
	}
	return err
}

func (l *hcLink) Acquire(ctx context.Context, domain, holder string, ttl time.Duration) (int64, bool, error) {
	if l.follower.Load() {
		return 0, false, nil
	}
	return l.Backend.Acquire(ctx, domain, holder, ttl)
}

func (l *hcLink) Renew(ctx context.Context, domain, holder string, epoch int64, ttl time.Duration) (bool, error) {
	if held := l.renewHeld.Load(); held != nil {
		<-*held
	}
	return l.Backend.Renew(ctx, domain, holder, epoch, ttl)
}

// holdRenew holds the instance's renewals until the function it returns
// is called.
func (l *hcLink) holdRenew() (release func()) {
	ch := make(chan struct{})
	l.renewHeld.Store(&ch)
	return sync.OnceFunc(func() { l.renewHeld.Store(nil); close(ch) })
}

func (l *hcLink) count(wrote bool, err error) {
	if !l.counting.Load() {
		return
	}
	switch {
	case errors.Is(err, cluster.ErrFenced):
		l.fenced.Add(1)
	case err == nil && wrote:
		l.landed.Add(1)
	}
}

func (l *hcLink) Grant(ctx context.Context, domain string, epoch int64, ops []machine.JobOp, succeeded []cluster.End, grants []cluster.Grant) ([]uint64, []uint64, error) {
	gone, took, err := l.Backend.Grant(ctx, domain, epoch, ops, succeeded, grants)
	l.count(len(gone)+len(took) > 0, err)
	return gone, took, err
}

func (l *hcLink) Lost(ctx context.Context, domain string, epoch int64, deadline time.Duration) ([]string, error) {
	lost, err := l.Backend.Lost(ctx, domain, epoch, deadline)
	l.count(true, err)
	return lost, err
}

func (l *hcLink) Revoke(ctx context.Context, domain string, epoch int64, instance string) ([]uint64, error) {
	seqs, err := l.Backend.Revoke(ctx, domain, epoch, instance)
	l.count(true, err)
	return seqs, err
}

func (l *hcLink) ForgetOrphans(ctx context.Context, domain string, epoch int64, live []string, after time.Duration) (int, error) {
	n, err := l.Backend.ForgetOrphans(ctx, domain, epoch, live, after)
	l.count(true, err)
	return n, err
}

func (l *hcLink) Domain(ctx context.Context, domain string, epoch int64) (machine.JobStore, []core.JobRecord, cluster.Feed, error) {
	js, recs, feed, err := l.Backend.Domain(ctx, domain, epoch)
	if err != nil {
		return nil, nil, nil, err
	}
	return &hcStore{JobStore: js, l: l}, recs, feed, nil
}

// hcStore is the leader's JobStore through an hcLink.
type hcStore struct {
	machine.JobStore
	l *hcLink
}

func (s *hcStore) ApplyJobs(ops []machine.JobOp) error {
	err := s.JobStore.ApplyJobs(ops)
	s.l.count(len(ops) > 0, err)
	return err
}

// hcRun is one attempt of a job as its handler saw it: where, which, and
// how it ended ("ok", or the sentinel its context's cause matched).
type hcRun struct {
	Job      string
	Instance string
	Attempt  int
	End      string
}

// hcCluster is a test's cluster: the backend, its instances by name, and
// the runs of their handlers.
type hcCluster struct {
	t     *testing.T
	b     *memback.Backend
	nodes map[string]*fairsched.Scheduler
	links map[string]*hcLink
	mu    sync.Mutex
	runs  []hcRun
	// started receives "job#attempt" as each run starts.
	started chan string
	// hold: the runs started wait for their context to end; otherwise
	// they return nil at once. slowStop: once it has ended, they wait
	// for free too. free is closed as the test ends.
	hold, slowStop atomic.Bool
	free           chan struct{}
	freeOnce       sync.Once
	// config adjusts each instance's configuration (fast's by default).
	config func(*fairsched.ClusterConfig)
}

func newHC(t *testing.T, opts ...memback.Option) *hcCluster {
	c := &hcCluster{t: t, b: memback.New(opts...), nodes: map[string]*fairsched.Scheduler{}, links: map[string]*hcLink{},
		started: make(chan string, 64), free: make(chan struct{})}
	t.Cleanup(c.close)
	return c
}

// join starts instance name; handles: it runs the jobs; follower: it
// never takes the lease (until told).
func (c *hcCluster) join(name string, handles, follower bool) {
	c.t.Helper()
	l := &hcLink{Backend: c.b}
	l.follower.Store(follower)
	cfg := fast("d", name, 2)
	if c.config != nil {
		c.config(&cfg)
	}
	s, err := fairsched.New(fairsched.WithCluster(link{l}, cfg))
	if err != nil {
		c.t.Fatal(err)
	}
	c.nodes[name], c.links[name] = s, l
	if err := s.RegisterType(hcType, fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
		c.t.Fatal(err)
	}
	if handles {
		if err := s.RegisterHandler(hcType, func(ctx context.Context, j fairsched.Job) error { return c.run(ctx, name, j) }); err != nil {
			c.t.Fatal(err)
		}
	}
}

func (c *hcCluster) run(ctx context.Context, inst string, j fairsched.Job) error {
	hold := c.hold.Load() // as the run starts
	c.started <- fmt.Sprintf("%s#%d", j.ID, j.Attempt)
	end := "ok"
	var err error
	if hold {
		select {
		case <-ctx.Done():
			err = context.Cause(ctx)
			end = sentinelOf(err)
			if c.slowStop.Load() {
				<-c.free
			}
		case <-c.free:
			end = "freed as the test ended"
		}
	}
	c.mu.Lock()
	c.runs = append(c.runs, hcRun{j.ID, inst, j.Attempt, end})
	c.mu.Unlock()
	return err
}

// sentinelOf names the library sentinel err matches.
func sentinelOf(err error) string {
	for _, s := range []error{fairsched.ErrCancelled, fairsched.ErrWorkerLost, fairsched.ErrClosed} {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return "other: " + err.Error()
}

// kill stops instance name as a crash would: its Close under a context
// already ended takes Node.Kill's path (no report of its ends, no release
// of its lease, no more heartbeats; its runs' contexts cancelled).
func (c *hcCluster) kill(name string) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = c.nodes[name].Close(ctx)
	delete(c.nodes, name)
}

func (c *hcCluster) close() {
	c.freeOnce.Do(func() { close(c.free) })
	for _, l := range c.links {
		if held := l.renewHeld.Load(); held != nil {
			close(*held)
		}
	}
	for _, s := range c.nodes {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_ = s.Close(ctx)
		cancel()
	}
	c.b.Close()
}

// until waits, in virtual time, for cond; a minute of it without is a
// failure.
func (c *hcCluster) until(what string, cond func() bool) {
	c.t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); {
		if time.Now().After(deadline) {
			c.t.Fatalf("no %s in a virtual minute", what)
		}
		time.Sleep(10 * time.Millisecond) // virtual: the cluster moves on
	}
}

// leads waits until instance name leads, as the lease says.
func (c *hcCluster) leads(name string) {
	c.t.Helper()
	c.until(name+" leading", func() bool {
		holder, _, live, err := c.b.Leader(context.Background(), "d")
		return err == nil && live && cluster.NameOf(holder) == name
	})
}

// enqueue enqueues jobs ids through instance name.
func (c *hcCluster) enqueue(name string, opts []fairsched.JobOption, ids ...string) {
	c.t.Helper()
	for _, id := range ids {
		if err := c.nodes[name].Enqueue(context.Background(), hcType, id, nil, opts...); err != nil {
			c.t.Fatal(err)
		}
	}
}

// rows are the jobs the backend holds, as "id state[ running on]".
func (c *hcCluster) rows() []string {
	c.t.Helper()
	_, recs, feed, err := c.b.Domain(context.Background(), "d", 0)
	if err != nil {
		c.t.Fatal(err)
	}
	feed.Close()
	var out []string
	for _, r := range recs {
		s := fmt.Sprintf("%s %d", r.ID, r.State)
		if r.Granted != "" {
			s += " running on " + cluster.NameOf(r.Granted)
		}
		out = append(out, s)
	}
	return out
}

// settled: no job pending or running any more.
func (c *hcCluster) settled() bool {
	for _, r := range c.rows() {
		var id string
		var state core.RecordState
		if _, err := fmt.Sscanf(r, "%s %d", &id, &state); err != nil || state == core.RecordPending {
			return false
		}
	}
	return true
}

func (c *hcCluster) allRuns() []hcRun {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.runs)
	slices.SortFunc(out, func(a, b hcRun) int {
		if a.Job != b.Job {
			return cmpStrings(a.Job, b.Job)
		}
		return a.Attempt - b.Attempt
	})
	return out
}

func cmpStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func wantSame(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
}

// cancelOutcome is all a Cancel during a grant's write leads to.
type cancelOutcome struct {
	Answer fairsched.Cancelled
	Runs   []hcRun
	Rows   []string
}

// startCancel cancels job id through instance name on a goroutine of its
// own, and returns where its answer comes.
func (c *hcCluster) startCancel(name, id string) <-chan fairsched.Cancelled {
	answer := make(chan fairsched.Cancelled, 1)
	s := c.nodes[name]
	go func() {
		r, err := s.Cancel(context.Background(), hcType, id)
		if err != nil {
			c.t.Errorf("cancel: %v", err)
		}
		answer <- r
	}()
	return answer
}

// cancelDuringGrant sets the scene of the cancel race: "lead" leads and
// runs nothing, "work" runs job "j"; the leader's write of the turn that
// grants "j" is held (Stall "Grant") while "work" asks to cancel "j", and
// the command is stored before the write goes on. The leader's loop runs
// on while its write is in flight: it may read the command meanwhile, and
// runs it once the write lands. Stalled, the methods of stall are held
// from before the cancel is asked (their releases are returned in order).
func cancelDuringGrant(t *testing.T, stall ...string) (c *hcCluster, answer <-chan fairsched.Cancelled, releaseGrant func(), release []func()) {
	c = newHC(t)
	c.hold.Store(true)
	c.join("lead", false, false)
	c.leads("lead")
	c.join("work", true, true)
	releaseGrant = c.b.Stall("Grant")
	c.enqueue("work", nil, "j")
	c.until("the grant's write", func() bool { return c.b.Waiting("Grant") == 1 })
	for _, m := range stall {
		release = append(release, c.b.Stall(m))
	}
	answer = c.startCancel("work", "j")
	c.until("the cancel stored", func() bool { return c.links["work"].commanded.Load() == 1 })
	return c, answer, releaseGrant, release
}

// answered waits for the cancel's answer.
func (c *hcCluster) answered(answer <-chan fairsched.Cancelled) (got fairsched.Cancelled) {
	c.t.Helper()
	c.until("the cancel's answer", func() bool {
		select {
		case got = <-answer:
			return true
		default:
			return false
		}
	})
	return got
}

// TestHardCancelBeforeTheExecutorReads: a job cancelled while the turn
// that grants it is being written, the grant read by its executor only
// after the cancel was answered and its revoke written: the answer
// counts it running (its grant took), and it never runs — its executor
// finds the grant cancelled and ends it without starting it.
func TestHardCancelBeforeTheExecutorReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, answer, releaseGrant, releaseReads := cancelDuringGrant(t, "Granted", "GrantsSince")
		releaseGrant()
		var got cancelOutcome
		got.Answer = c.answered(answer)
		c.until("the revoke written", func() bool { return c.links["lead"].revoked.Load() == 1 })
		for _, release := range releaseReads {
			release()
		}
		c.until("the job settled", c.settled)
		got.Runs, got.Rows = c.allRuns(), c.rows()
		wantSame(t, "outcome", cancelOutcome{Answer: fairsched.Cancelled{Running: 1}}, got)
	})
}

// TestHardCancelAnsweredBeforeItsRevoke: the same race, the cancel
// answered before the leader's revoke of the grant is written (Stall
// "RevokeJob") and the grant read meanwhile: the job starts after the
// answer — which said it runs — and the revoke stops it (ErrCancelled).
func TestHardCancelAnsweredBeforeItsRevoke(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, answer, releaseGrant, releaseReads := cancelDuringGrant(t, "Granted", "GrantsSince")
		releaseRevoke := c.b.Stall("RevokeJob")
		releaseGrant()
		var got cancelOutcome
		got.Answer = c.answered(answer)
		for _, release := range releaseReads {
			release()
		}
		if s := <-c.started; s != "j#1" {
			t.Fatalf("started %s", s)
		}
		releaseRevoke()
		c.until("the job settled", c.settled)
		got.Runs, got.Rows = c.allRuns(), c.rows()
		want := cancelOutcome{Answer: fairsched.Cancelled{Running: 1},
			Runs: []hcRun{{"j", "work", 1, fairsched.ErrCancelled.Error()}}}
		wantSame(t, "outcome", want, got)
	})
}

// TestHardCancelAfterTheExecutorStarted: the same race, the grant read
// and its job started before the leader reads the cancel (Stall
// "Commands" from before the cancel is stored: the loop's read of it waits
// until the job runs): the answer says it was running, and its run ends
// with ErrCancelled.
func TestHardCancelAfterTheExecutorStarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, answer, releaseGrant, release := cancelDuringGrant(t, "Commands")
		releaseCommands := release[0]
		releaseGrant()
		if got := <-c.started; got != "j#1" {
			t.Fatalf("started %s", got)
		}
		releaseCommands()
		var got cancelOutcome
		got.Answer = <-answer
		c.until("the job settled", c.settled)
		got.Runs, got.Rows = c.allRuns(), c.rows()
		want := cancelOutcome{Answer: fairsched.Cancelled{Running: 1},
			Runs: []hcRun{{"j", "work", 1, fairsched.ErrCancelled.Error()}}}
		wantSame(t, "outcome", want, got)
	})
}

// leaseOutcome is what a lease lost under a leader leads to.
type leaseOutcome struct {
	Runs []hcRun
	Rows []string
	// OldLanded counts the deposed leader's writes that landed once the
	// lease had moved; OldFenced whether some were refused (it tried).
	OldLanded int32
	OldFenced bool
}

func (c *hcCluster) leaseOutcome(old string) leaseOutcome {
	l := c.links[old]
	return leaseOutcome{Runs: c.allRuns(), Rows: c.rows(), OldLanded: l.landed.Load(), OldFenced: l.fenced.Load() > 0}
}

// TestHardLeaseLostMidTurn: the leader's write of a turn is under way
// (held at Stall "Grant") when its lease moves to another instance (its
// lease loop stands still past the lease's end); the write, let go once
// the new leader holds the lease, is fenced — nothing of it lands — and
// the new leader grants each job once.
func TestHardLeaseLostMidTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newHC(t)
		c.join("a", false, false)
		c.leads("a")
		c.join("b", true, true)
		releaseGrant := c.b.Stall("Grant")
		c.enqueue("b", nil, "j1", "j2")
		c.until("a's turn written", func() bool { return c.b.Waiting("Grant") == 1 })
		a := c.links["a"]
		releaseRenew := a.holdRenew()
		c.links["b"].follower.Store(false)
		c.leads("b")
		a.counting.Store(true)
		releaseGrant()
		c.until("the jobs done", c.settled)
		releaseRenew()
		want := leaseOutcome{Runs: []hcRun{{"j1", "b", 1, "ok"}, {"j2", "b", 1, "ok"}}, OldFenced: true}
		wantSame(t, "outcome", want, c.leaseOutcome("a"))
	})
}

// TestHardStaleEpochRefused: the lease expires by the database's clock
// while the leader's own clock says it holds it (the database's clock
// jumps; the leader's lease loop stands still), another instance takes
// it, and the old leader goes on deciding: every write under its stale
// epoch is refused, and the new leader grants each job once.
func TestHardStaleEpochRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var skew atomic.Int64
		c := newHC(t, memback.WithClock(func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }))
		// Instances are lost only long after the lease ends: the jump
		// ends the lease, not the instances.
		c.config = func(cfg *fairsched.ClusterConfig) { cfg.LostAfter = time.Minute }
		c.join("a", false, false)
		c.leads("a")
		c.join("b", true, true)
		a := c.links["a"]
		releaseRenew := a.holdRenew()
		// No call in flight: a's every write from now on is under an
		// epoch ended.
		synctest.Wait()
		skew.Store(int64(5 * time.Second)) // past the lease's TTL (2 s)
		a.counting.Store(true)
		c.links["b"].follower.Store(false)
		c.leads("b")
		c.enqueue("b", nil, "j1", "j2") // both leaders read them
		c.until("the jobs done", c.settled)
		releaseRenew()
		want := leaseOutcome{Runs: []hcRun{{"j1", "b", 1, "ok"}, {"j2", "b", 1, "ok"}}, OldFenced: true}
		wantSame(t, "outcome", want, c.leaseOutcome("a"))
	})
}

// TestHardInstanceLostWithJobsInFlight: an instance killed while it runs
// two jobs (no report of their ends, no more heartbeats) is declared
// lost; each job runs again on the other instance as its next attempt,
// and the interruption counts once — MaxInterruptions 1 lets it run
// again, a second count would end it dead.
func TestHardInstanceLostWithJobsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newHC(t)
		c.hold.Store(true)
		c.join("lead", false, false)
		c.leads("lead")
		c.join("b", true, true)
		retry := fairsched.WithRetry(fairsched.RetryPolicy{MaxAttempts: 1, MaxInterruptions: 1})
		c.enqueue("b", []fairsched.JobOption{retry}, "j1", "j2")
		started := []string{<-c.started, <-c.started}
		slices.Sort(started)
		wantSame(t, "started on b", []string{"j1#1", "j2#1"}, started)
		c.join("c", true, true)
		c.hold.Store(false)
		c.kill("b")
		c.until("the jobs done", c.settled)
		want := leaseOutcome{Runs: []hcRun{
			{"j1", "b", 1, fairsched.ErrClosed.Error()}, {"j1", "c", 2, "ok"},
			{"j2", "b", 1, fairsched.ErrClosed.Error()}, {"j2", "c", 2, "ok"},
		}}
		wantSame(t, "outcome", want, c.leaseOutcome("lead"))
	})
}

// TestHardLeaderStopsWhileACancelledJobStops: a leader stops (its
// instance closes, within a second) while a job it cancelled still runs
// on another instance, its function taking its time to stop. The close
// ends within its context: the leader's scheduler waits for no goroutine
// of the cancelled attempt (it started remotely), so stopping it does not
// wait for the job's end on its instance.
func TestHardLeaderStopsWhileACancelledJobStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newHC(t)
		c.hold.Store(true)
		c.slowStop.Store(true)
		c.join("lead", false, false)
		c.leads("lead")
		c.join("work", true, true)
		c.enqueue("work", nil, "j")
		if got := <-c.started; got != "j#1" {
			t.Fatalf("started %s", got)
		}
		if got := <-c.startCancel("work", "j"); got != (fairsched.Cancelled{Running: 1}) {
			t.Fatalf("cancel: %+v", got)
		}
		closed := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			closed <- c.nodes["lead"].Close(ctx)
		}()
		c.until("the leader's instance closed", func() bool { return len(closed) == 1 })
	})
}

// TestCloseAnswersARunSyncThatRan: a graceful Close that comes after a
// RunSync's function returned nil, while its end is not yet read back as
// final, answers the caller nil — its function ran and succeeded — not
// ErrClosed, which would tell it the function may not have run.
func TestCloseAnswersARunSyncThatRan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newHC(t)
		c.join("a", true, false)
		c.leads("a")
		c.links["a"].finalsHeld.Store(true)
		s := c.nodes["a"]
		ran := make(chan struct{})
		answered := make(chan error, 1)
		go func() {
			answered <- s.RunSync(context.Background(), hcType, "x", "", func(context.Context) error { close(ran); return nil })
		}()
		<-ran
		synctest.Wait() // its end is taken
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		delete(c.nodes, "a")
		if err := <-answered; err != nil {
			t.Errorf("RunSync = %v; want nil (its function ran and returned nil)", err)
		}
	})
}
