package cluster_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/internal/cluster/memback"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	os.Exit(pgtest.Run(m)) // tests, the throwaway PostgreSQL stopped, then a leak check
}

// fast are the timings of the tests' clusters: a lease of 2 s renewed
// every 200 ms, instances lost after 1 s of silence.
func fast(domain, instance string, slots int) fairsched.ClusterConfig {
	return fairsched.ClusterConfig{Domain: domain, Instance: instance, Slots: slots,
		LeaseTTL: 2 * time.Second, Heartbeat: 200 * time.Millisecond, LostAfter: time.Second,
		Poll: 20 * time.Millisecond, ReportEvery: 5 * time.Millisecond}
}

// recorder is the executors' shared log: which job ran where, and how many
// ran at once, cluster-wide and per conflict id.
type recorder struct {
	mu      sync.Mutex
	running int
	peak    int
	// now are the runs under way ("id at time"), atPeak a copy taken at
	// the highest peak: what a failure names.
	now     map[string]string
	atPeak  []string
	byID    map[string]int
	overlap []string
	starts  map[string]int
	order   []string
	ends    int
	endC    chan struct{}
}

func newRecorder() *recorder {
	return &recorder{byID: map[string]int{}, starts: map[string]int{}, now: map[string]string{}, endC: make(chan struct{}, 1<<16)}
}

func (r *recorder) start(id, conflict string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.running++
	r.now[id] = time.Now().Format("05.000")
	if r.running > r.peak {
		r.atPeak = r.atPeak[:0]
		for k, at := range r.now {
			r.atPeak = append(r.atPeak, k+" since "+at)
		}
	}
	r.peak = max(r.peak, r.running)
	r.starts[id]++
	r.order = append(r.order, id)
	if conflict != "" {
		r.byID[conflict]++
		if r.byID[conflict] > 1 {
			r.overlap = append(r.overlap, conflict)
		}
	}
}

// left forgets run id (start's id) from the runs under way.
func (r *recorder) left(id string) {
	r.mu.Lock()
	delete(r.now, id)
	r.mu.Unlock()
}

func (r *recorder) end(conflict string) {
	r.mu.Lock()
	r.running--
	if conflict != "" {
		r.byID[conflict]--
	}
	r.ends++
	r.mu.Unlock()
	r.endC <- struct{}{}
}

// waitEnds waits for n ends in all, failing t after a minute.
func (r *recorder) waitEnds(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		r.mu.Lock()
		got := r.ends
		r.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-r.endC:
		case <-deadline:
			t.Fatalf("%d of %d jobs ended in a minute", got, n)
		}
	}
}

// member is one instance of a test cluster.
type member struct {
	s  *fairsched.Scheduler
	st *pgstore.Store
}

// join starts an instance over url with the given options after the
// cluster's own.
func join(t *testing.T, url string, cfg fairsched.ClusterConfig, opts ...fairsched.Option) *member {
	t.Helper()
	return joinVia(t, url, nil, cfg, opts...)
}

// joinVia is join with the backend wrapped by wrap (nil: none).
func joinVia(t *testing.T, url string, wrap func(cluster.Backend) cluster.Backend, cfg fairsched.ClusterConfig, opts ...fairsched.Option) *member {
	t.Helper()
	st, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	var b cluster.Backend = st.ClusterBackend()
	if wrap != nil {
		b = wrap(st.ClusterBackend())
	}
	// The instance's warnings and leadership changes, shown with a failure
	// (a later WithLogger in opts replaces it).
	log := zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel))
	s, err := fairsched.New(append([]fairsched.Option{fairsched.WithCluster(link{b}, cfg), fairsched.WithLogger(log)}, opts...)...)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	m := &member{s: s, st: st}
	t.Cleanup(m.close)
	return m
}

func (m *member) close() {
	if m.s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = m.s.Close(ctx)
	m.st.Close()
	m.s = nil
}

// leaderOf waits until some instance of ms leads and returns it.
func leaderOf(t *testing.T, ms ...*member) *member {
	t.Helper()
	var l *member
	pgtest.Eventually(t, "a leader", func() bool {
		for _, m := range ms {
			if m.s == nil {
				continue
			}
			if snap, err := m.s.Snapshot(context.Background()); err == nil && snap.Cluster != nil && snap.Cluster.Leading {
				l = m
				return true
			}
		}
		return false
	})
	return l
}

// subscribedOn waits until the leader lead has read, from the heartbeats,
// that instance id has subscribers: from then on it publishes the
// domain's events for it.
func subscribedOn(t *testing.T, lead *member, id string) {
	t.Helper()
	pgtest.Eventually(t, "the leader reads "+id+"'s subscription", func() bool {
		snap, err := lead.s.Snapshot(context.Background())
		if err != nil || snap.Cluster == nil {
			return false
		}
		for _, in := range snap.Cluster.Instances {
			if in.ID == id && in.Subscribed {
				return true
			}
		}
		return false
	})
}

// joinLeader joins the first instance of a domain and waits until it leads.
func joinLeader(t *testing.T, url string, cfg fairsched.ClusterConfig, opts ...fairsched.Option) *member {
	t.Helper()
	lead := join(t, url, cfg, opts...)
	if leaderOf(t, lead) != lead {
		t.Fatal("the first instance does not lead")
	}
	return lead
}

// serve registers type typ (priority 8, a millisecond's cost) on m and
// h as its handler there.
func serve(t *testing.T, m *member, typ fairsched.JobType, h fairsched.Handler) {
	t.Helper()
	if err := m.s.RegisterType(typ, fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := m.s.RegisterHandler(typ, h); err != nil {
		t.Fatal(err)
	}
}

// waitTypes waits until the leader lead counts n handled types over the
// instances it knows (a type once per instance that handles it).
func waitTypes(t *testing.T, lead *member, n int) {
	t.Helper()
	waitFor(t, func() bool {
		snap, err := lead.s.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		types := 0
		for _, in := range snap.Cluster.Instances {
			types += len(in.Types)
		}
		return types == n
	})
}

// newMem returns an in-memory backend closed when the test ends, after
// the instances a test's helpers started on it.
func newMem(t *testing.T) *memback.Backend {
	b := memback.New()
	t.Cleanup(func() { b.Close() })
	return b
}

// leadAndFollower starts two instances of domain "d" with 2 slots each
// (fast, changed by tune): lead on leadB, which leads, then w on wB,
// whose backend a test makes never take the lease (faulty.follower); the
// type "build" registered on both. Both are closed when the test ends.
func leadAndFollower(t *testing.T, leadB, wB cluster.Backend, tune ...func(*fairsched.ClusterConfig)) (lead, w *fairsched.Scheduler) {
	t.Helper()
	return memNode(t, leadB, "lead", tune...), memNode(t, wB, "w", tune...)
}

// memNode starts instance name on b (two slots, fast's timings, tuned),
// with type "build" registered, and closes it as the test ends.
func memNode(t *testing.T, b cluster.Backend, name string, tune ...func(*fairsched.ClusterConfig)) *fairsched.Scheduler {
	t.Helper()
	cfg := fast("d", name, 2)
	for _, f := range tune {
		f(&cfg)
	}
	n, err := fairsched.New(fairsched.WithCluster(link{b}, cfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close(context.Background()) })
	if err := n.RegisterType("build", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	return n
}

// timeline is what a test notes as it happens, each line stamped with the
// bubble's clock, to be compared whole (check).
type timeline struct {
	mu    sync.Mutex
	lines []string
}

func (l *timeline) note(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, time.Now().Format("05.000 ")+fmt.Sprintf(format, args...))
}

// check fails t unless the timeline is want.
func (l *timeline) check(t *testing.T, want []string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if diff := cmp.Diff(want, l.lines); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
}

// checkSorted is check with the lines sorted: by time, and within an
// instant by what (when the order of goroutines is not the test's).
func (l *timeline) checkSorted(t *testing.T, want []string) {
	t.Helper()
	l.mu.Lock()
	slices.Sort(l.lines)
	l.mu.Unlock()
	l.check(t, want)
}

// follower is a backend whose instance never takes the lease, and listens
// as the backend does.
type follower struct{ cluster.Backend }

func (follower) Acquire(context.Context, string, string, time.Duration) (int64, bool, error) {
	return 0, false, nil
}
