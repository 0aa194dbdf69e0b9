package cluster_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// gated is a backend whose leader's feed reads no page of its backlog
// until the test lets it (pass), or fails its first page (failFirst); it
// tells of each command inserted and each read of new jobs.
type gated struct {
	cluster.Backend
	pass      chan struct{}
	failFirst atomic.Bool
	commands  chan struct{}
	nexts     chan struct{}
}

func (g *gated) Domain(ctx context.Context, domain string, epoch int64) (machine.JobStore, []core.JobRecord, cluster.Feed, error) {
	st, recs, feed, err := g.Backend.Domain(ctx, domain, epoch)
	if err != nil {
		return nil, nil, nil, err
	}
	return st, recs, &gatedFeed{Feed: feed, g: g}, nil
}

func (g *gated) Command(ctx context.Context, domain string, c cluster.Command) (int64, error) {
	id, err := g.Backend.Command(ctx, domain, c)
	if err == nil {
		g.commands <- struct{}{}
	}
	return id, err
}

type gatedFeed struct {
	cluster.Feed
	g *gated
}

var errPage = errors.New("the backlog's page is unreadable")

func (f *gatedFeed) Backlog(ctx context.Context) ([]core.JobRecord, bool, error) {
	if f.g.failFirst.CompareAndSwap(true, false) {
		return nil, false, errPage
	}
	select {
	case <-f.g.pass:
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
	return f.Feed.Backlog(ctx)
}

func (f *gatedFeed) Next(ctx context.Context) ([]core.JobRecord, error) {
	recs, err := f.Feed.Next(ctx)
	select {
	case f.g.nexts <- struct{}{}:
	default:
	}
	return recs, err
}

// backlogCluster inserts ids as pending jobs of type "t" in a new domain,
// then starts its first instance over g, with 2 slots, reading its
// backlog two jobs a page; every start of a job is sent on the channel
// returned, and no job returns before release is closed.
func backlogCluster(t *testing.T, g *gated, release <-chan struct{}, ids ...string) (*member, <-chan string) {
	t.Helper()
	url := pgtest.URL(t)
	st, err := pgstore.Open(context.Background(), url, pgstore.WithBacklogPage(2))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if err := st.ClusterBackend().Insert(context.Background(), &core.JobRecord{Type: "t", ID: id, EnqueuedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	g.Backend = st.ClusterBackend()
	s, err := fairsched.New(fairsched.WithCluster(link{g}, fast("d", "lead", 2)),
		fairsched.WithLogger(zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel))))
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	m := &member{s: s, st: st}
	t.Cleanup(m.close)
	started := make(chan string, 64)
	if err := s.RegisterType("t", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterHandler("t", func(_ context.Context, j fairsched.Job) error {
		started <- j.ID
		<-release
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return m, started
}

// next waits for the next start.
func next(t *testing.T, started <-chan string) string {
	t.Helper()
	select {
	case id := <-started:
		return id
	case <-time.After(time.Minute):
		t.Fatal("no job started in a minute")
		return ""
	}
}

// TestLeaderDecidesWhileTheBacklogLoads: a new leader runs the jobs of
// the backlog's first page while the rest is still unread, and runs the
// rest once it is read; a command asked meanwhile waits for the whole
// backlog, so that a Cancel finds a job of a page not read yet (and that
// job never runs) instead of answering "no such job". The first page's
// two jobs hold both slots until the end: the others wait, pending.
func TestLeaderDecidesWhileTheBacklogLoads(t *testing.T) {
	g := &gated{pass: make(chan struct{}), commands: make(chan struct{}, 1), nexts: make(chan struct{}, 1)}
	release := make(chan struct{})
	lead, started := backlogCluster(t, g, release, "p1", "p2", "p3", "p4", "p5", "p6", "p7")
	first := []string{next(t, started), next(t, started)}
	slices.Sort(first)
	if diff := cmp.Diff([]string{"p1", "p2"}, first); diff != "" {
		t.Errorf("the first page's jobs, run before the rest is read (-want +got):\n%s", diff)
	}
	type cancelled struct {
		c   fairsched.Cancelled
		err error
	}
	answer := make(chan cancelled, 1)
	go func() {
		c, err := lead.s.Cancel(context.Background(), "t", "p7")
		answer <- cancelled{c, err}
	}()
	<-g.commands
	// Two reads of new jobs after the command was written: the second
	// began after it, and would have run it had commands not waited.
	<-g.nexts
	<-g.nexts
	close(g.pass) // every page from now on
	a := <-answer
	// Running in the leader's scheduler is all it can be: its handler
	// waits for an instance's free slot, and never gets one.
	if a.err != nil || a.c.Pending+a.c.Running != 1 {
		t.Errorf("Cancel of a job loaded after it was asked = %+v, %v; want it cancelled", a.c, a.err)
	}
	close(release)
	var rest []string
	for range 4 {
		rest = append(rest, next(t, started))
	}
	slices.Sort(rest)
	if diff := cmp.Diff([]string{"p3", "p4", "p5", "p6"}, rest); diff != "" {
		t.Errorf("the rest of the backlog (-want +got):\n%s", diff)
	}
}

// TestUnreadableBacklogEndsLeading: a leader that cannot read a page of
// its backlog stops leading; the next leadership (here the same instance,
// once the lease expires) loads it from a new snapshot, and every job runs
// once.
func TestUnreadableBacklogEndsLeading(t *testing.T) {
	g := &gated{pass: make(chan struct{}), commands: make(chan struct{}, 1), nexts: make(chan struct{}, 1)}
	close(g.pass)
	g.failFirst.Store(true)
	release := make(chan struct{})
	close(release)
	_, started := backlogCluster(t, g, release, "p1", "p2", "p3", "p4", "p5")
	runs := map[string]int{}
	for range 5 {
		runs[next(t, started)]++
	}
	want := map[string]int{"p1": 1, "p2": 1, "p3": 1, "p4": 1, "p5": 1}
	if diff := cmp.Diff(want, runs); diff != "" {
		t.Errorf("runs of each job (-want +got):\n%s", diff)
	}
	select {
	case id := <-started:
		t.Errorf("%s ran again", id)
	default:
	}
}
