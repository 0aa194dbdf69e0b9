package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
	"github.com/fairsched/fairsched/policy"
	"github.com/google/go-cmp/cmp"
)

// joinFast joins the cluster of domain on url as instance, with the short
// timings of the tests; the instance leaves at the end of the test.
func joinFast(t *testing.T, url, domain, instance string, opts ...fairsched.Option) *fairsched.Scheduler {
	t.Helper()
	return joinWith(t, url, fairsched.ClusterConfig{Domain: domain, Instance: instance, Slots: 8,
		LeaseTTL: 2 * time.Second, Heartbeat: 200 * time.Millisecond, LostAfter: time.Second,
		Poll: 20 * time.Millisecond, ReportEvery: 5 * time.Millisecond}, opts...)
}

// joinWith joins cfg's instance to the domain over PostgreSQL.
func joinWith(t *testing.T, url string, cfg fairsched.ClusterConfig, opts ...fairsched.Option) *fairsched.Scheduler {
	t.Helper()
	st, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	s, err := fairsched.New(append(opts, fairsched.WithCluster(st, cfg))...)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()); st.Close() })
	return s
}

// closedWithin fails t unless done is closed before a generous bound: a
// liveness bound for a cluster on a real database, not a timed assertion.
func closedWithin(t *testing.T, what string, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: not done", what)
	}
}

// TestPgstoreOneBadEnqueueFailsOnlyItself: on pgstore in one process, 16
// goroutines enqueue valid jobs while one enqueues ids with a NUL, with
// invalid UTF-8 and of 8 000 bytes: only those fail, at the call, with
// ErrInvalidJob — nothing of theirs reaches the shared commit — and every
// valid job is stored.
func TestPgstoreOneBadEnqueueFailsOnlyItself(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	ctx := context.Background()
	st, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := fairsched.New(fairsched.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterType("d", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
		t.Fatal(err)
	}
	const producers, each = 16, 25
	var wg sync.WaitGroup
	errs := make([]error, producers*each)
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				errs[p*each+i] = s.Enqueue(ctx, "d", fmt.Sprintf("p%d-%d", p, i), nil, fairsched.WithFairnessKey(fmt.Sprint("k", p)))
			}
		}()
	}
	bad := []struct{ id, key string }{
		{"nul\x00id", "k"}, {"bad\xffid", "k"}, {strings.Repeat("i", 8000), "k"},
		{"id", "nul\x00key"}, {"id", "bad\xfekey"}, {"id", strings.Repeat("k", 8000)},
	}
	badErrs := make([]error, len(bad))
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i, b := range bad {
			badErrs[i] = s.Enqueue(ctx, "d", b.id, nil, fairsched.WithFairnessKey(b.key))
		}
	}()
	wg.Wait()
	for i, err := range badErrs {
		if !errors.Is(err, fairsched.ErrInvalidJob) {
			t.Errorf("bad Enqueue %d: %v; want ErrInvalidJob", i, err)
		}
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("valid Enqueue %d: %v", i, err)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := st.LoadJobs(func(r fairsched.JobRecord) error {
		if !strings.HasPrefix(r.ID, "p") {
			t.Errorf("stored %q", r.ID[:min(len(r.ID), 20)])
		}
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != producers*each {
		t.Errorf("stored %d jobs; want %d", n, producers*each)
	}
}

// TestClusterHandlerErrorsOfAnyBytes: in cluster mode, durable handlers
// that fail with a NUL in their error, with invalid UTF-8, or with 100 KB
// of text end dead — once, nothing loops — with their text cleaned in
// DeadJobs, while the 40 other jobs all run.
func TestClusterHandlerErrorsOfAnyBytes(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	ctx := context.Background()
	s := joinFast(t, url, "texts", "a")
	if err := s.RegisterType("d", fairsched.JobTypeConfig{DefaultCost: time.Millisecond, Priority: 1}); err != nil {
		t.Fatal(err)
	}
	huge := strings.Repeat("x", 100_000)
	fails := map[string]string{
		"nul":  "bad\x00byte",
		"utf8": "bad\xff\xfebytes",
		"huge": huge,
	}
	var mu sync.Mutex
	runs := map[string]int{}
	okDone := make(chan struct{})
	if err := s.RegisterHandler("d", func(ctx context.Context, j fairsched.Job) error {
		mu.Lock()
		runs[j.ID]++
		ok := 0
		for id, n := range runs {
			if _, bad := fails[id]; !bad && n > 0 {
				ok++
			}
		}
		if ok == 40 && runs[j.ID] == 1 && fails[j.ID] == "" {
			close(okDone)
		}
		mu.Unlock()
		if text, bad := fails[j.ID]; bad {
			return errors.New(text)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for id := range fails { // first: the others queue behind their ends
		if err := s.Enqueue(ctx, "d", id, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 40 {
		if err := s.Enqueue(ctx, "d", fmt.Sprint("ok", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	closedWithin(t, "the 40 valid jobs run", okDone)
	// A RunSync's caller, in the process, gets its function's own error.
	for _, text := range fails {
		own := errors.New(text)
		if err := s.RunSync(ctx, "d", "sync", "k", func(context.Context) error { return own }); !errors.Is(err, own) {
			t.Errorf("RunSync: %.40q; want the function's own error", err)
		}
	}
	var dead []fairsched.DeadJob
	pgtest.Eventually(t, "the three failures listed dead", func() bool {
		var err error
		dead, err = s.DeadJobs(ctx, 0)
		return err == nil && len(dead) == 3
	})
	got := map[string]string{}
	for _, d := range dead {
		got[d.ID] = d.LastError
		if !utf8.ValidString(d.LastError) || strings.IndexByte(d.LastError, 0) >= 0 || len(d.LastError) > policy.MaxTextLen {
			t.Errorf("%s: LastError is not clean: %d bytes", d.ID, len(d.LastError))
		}
	}
	for id, want := range map[string]string{"nul": "badbyte", "utf8": "bad\ufffdbytes"} {
		if !strings.HasSuffix(got[id], want) {
			t.Errorf("%s: LastError %q; want it to end with %q", id, got[id], want)
		}
	}
	if !strings.HasSuffix(got["huge"], "xxx…") {
		t.Errorf("huge: LastError ends %q; want the text cut with …", got["huge"][max(0, len(got["huge"])-10):])
	}
	mu.Lock()
	defer mu.Unlock()
	for id := range fails {
		if runs[id] != 1 {
			t.Errorf("%s ran %d times; want once (no retry policy)", id, runs[id])
		}
	}
}

// TestClusterNamesFitEveryIndex: in cluster mode an id of 8 000 bytes on
// an exclusive conflict type is refused at the call (ErrInvalidJob), by
// RunSync and by Enqueue; names at the bound — a type, a conflict group
// and ids of MaxNameLen bytes — are taken and run on PostgreSQL, so every
// index key the database builds of them fits.
func TestClusterNamesFitEveryIndex(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	ctx := context.Background()
	// A lease and a loss of seconds: on a loaded machine a beat a second
	// late must not declare the only instance lost (its RunSync would end
	// as its instance gone), and failover is not what this test is about.
	s := joinWith(t, url, fairsched.ClusterConfig{Domain: "names", Instance: "a", Slots: 8,
		LeaseTTL: 20 * time.Second, Heartbeat: 200 * time.Millisecond, LostAfter: 20 * time.Second,
		Poll: 20 * time.Millisecond, ReportEvery: 5 * time.Millisecond})
	long := fairsched.JobType(strings.Repeat("t", policy.MaxNameLen))
	group := fairsched.ConflictGroup(strings.Repeat("g", policy.MaxNameLen))
	if err := s.RegisterType(long, fairsched.JobTypeConfig{DefaultCost: time.Millisecond, Priority: 1, ConflictGroup: group}); err != nil {
		t.Fatal(err)
	}
	ran := make(chan string, 4)
	if err := s.RegisterHandler(long, func(ctx context.Context, j fairsched.Job) error { ran <- j.ID; return nil }); err != nil {
		t.Fatal(err)
	}
	over := strings.Repeat("i", 8000)
	if err := s.RunSync(ctx, long, over, "k", func(context.Context) error { return nil }); !errors.Is(err, fairsched.ErrInvalidJob) {
		t.Errorf("RunSync of an 8000-byte id: %v; want ErrInvalidJob", err)
	}
	if err := s.Enqueue(ctx, long, over, nil); !errors.Is(err, fairsched.ErrInvalidJob) {
		t.Errorf("Enqueue of an 8000-byte id: %v; want ErrInvalidJob", err)
	}
	id := strings.Repeat("é", policy.MaxNameLen/2) // MaxNameLen bytes, 2 a rune
	key := strings.Repeat("k", policy.MaxNameLen)
	syncRan := false
	if err := s.RunSync(ctx, long, id, key, func(context.Context) error { syncRan = true; return nil }); err != nil || !syncRan {
		t.Fatalf("RunSync at the bound: %v (ran %v)", err, syncRan)
	}
	if err := s.Enqueue(ctx, long, id, nil, fairsched.WithFairnessKey(key), fairsched.InGroup(key)); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var got string
	go func() { got = <-ran; close(done) }()
	closedWithin(t, "the durable job at the bound runs", done)
	if diff := cmp.Diff(id, got); diff != "" {
		t.Errorf("the job ran with another id (-want +got):\n%s", diff)
	}
}

// TestEnqueueManyInCluster: EnqueueMany on a cluster instance writes its
// jobs in one commit, and each runs once; an invalid job writes none of
// the batch; a duplicate (type, id) — pending already, or twice in the
// batch — is refused alone (*ManyError with ErrDuplicateJob at its
// index), the others run.
func TestEnqueueManyInCluster(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	ctx := context.Background()
	s, leave, err := JoinCluster(ctx, url, "many-a")
	if err != nil {
		t.Fatal(err)
	}
	defer leave()
	ran := make(chan string, 100)
	release := make(chan struct{})
	if err := s.RegisterType("m", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterHandler("m", func(ctx context.Context, j fairsched.Job) error {
		if j.ID == "hold" {
			<-release
		}
		ran <- j.ID
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Invalid: nothing written.
	err = s.EnqueueMany(ctx, []fairsched.Enqueueing{{Type: "m", ID: "x1"}, {Type: "nope", ID: "x2"}})
	if !errors.Is(err, fairsched.ErrUnknownJobType) {
		t.Fatalf("an unknown type in the batch: %v, want ErrUnknownJobType", err)
	}
	if err := s.Enqueue(ctx, "m", "hold", nil); err != nil {
		t.Fatal(err)
	}
	var batch []fairsched.Enqueueing
	for i := range 20 {
		batch = append(batch, fairsched.Enqueueing{Type: "m", ID: fmt.Sprint("j", i), Payload: []byte{byte(i)}})
	}
	batch = append(batch, fairsched.Enqueueing{Type: "m", ID: "hold"}, fairsched.Enqueueing{Type: "m", ID: "j3"})
	err = s.EnqueueMany(ctx, batch)
	var me *fairsched.ManyError
	if !errors.As(err, &me) || len(me.Errs) != 22 {
		t.Fatalf("EnqueueMany: %v, want a *ManyError of 22", err)
	}
	for i, e := range me.Errs {
		if want := i >= 20; errors.Is(e, fairsched.ErrDuplicateJob) != want || (e != nil) != want {
			t.Errorf("job %d: %v", i, e)
		}
	}
	close(release)
	seen := map[string]int{}
	timeout := time.After(30 * time.Second)
	for len(seen) < 21 {
		select {
		case id := <-ran:
			seen[id]++
		case <-timeout:
			t.Fatalf("ran %v, want j0…j19 and hold", seen)
		}
	}
	// Once every row is gone, no job can run again.
	st, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pgtest.Eventually(t, "no job rows left", func() bool { n, err := st.CountJobs(ctx); return err == nil && n == 0 })
	for id, n := range seen {
		if n != 1 || id == "x1" {
			t.Errorf("%s ran %d times", id, n)
		}
	}
	select {
	case id := <-ran:
		t.Errorf("%s ran again", id)
	default:
	}
}
