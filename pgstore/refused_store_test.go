package pgstore_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/fairschedtest"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// refuseWhen adds a trigger to url's job table that refuses, as a data
// exception (SQLSTATE 22023), every insert or update of a row where cond
// holds (of NEW).
func refuseWhen(t *testing.T, url, cond string) {
	t.Helper()
	pgtest.Exec(t, url, `CREATE FUNCTION test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF `+cond+` THEN
				RAISE EXCEPTION 'refused by the test' USING ERRCODE = '22023';
			END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER test_refuse BEFORE INSERT OR UPDATE ON fairsched_jobs
			FOR EACH ROW EXECUTE FUNCTION test_refuse()`)
}

// holdCommits makes every write of a job of id 'gate' wait for the
// advisory lock 77, held by the returned transaction until released.
func holdCommits(t *testing.T, url string) (release func()) {
	t.Helper()
	pgtest.Exec(t, url, `CREATE FUNCTION test_gate() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.id = 'gate' THEN PERFORM pg_advisory_xact_lock_shared(77); END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER test_gate BEFORE INSERT OR UPDATE ON fairsched_jobs
			FOR EACH ROW EXECUTE FUNCTION test_gate()`)
	tx := openTx(t, url)
	if _, err := tx.Exec(context.Background(), `SELECT pg_advisory_xact_lock(77)`); err != nil {
		t.Fatal(err)
	}
	return func() { _ = tx.Rollback(context.Background()) }
}

// waitingForGate waits until a commit waits on holdCommits' lock.
func waitingForGate(t *testing.T, st *pgx.Conn) {
	t.Helper()
	pgtest.Eventually(t, "a commit waiting on the gate", func() bool {
		var n int
		err := st.QueryRow(context.Background(), `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 77 AND NOT granted`).Scan(&n)
		return err == nil && n > 0
	})
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// TestRefusedEnqueueFailsOnlyItself: 16 goroutines enqueue 10 valid jobs
// each while one Enqueue's record is refused by the database (a trigger
// raising a data exception): that Enqueue alone fails, with ErrStore and
// ErrRecordRefused; the 160 others succeed and run. The first commit is
// held while they queue up, so they share commits with the refused one.
func TestRefusedEnqueueFailsOnlyItself(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	ctx := context.Background()
	st := open(t, url)
	defer st.Close()
	refuseWhen(t, url, `NEW.id = 'poison'`)
	release := holdCommits(t, url)
	s, err := fairsched.New(fairsched.WithStore(st), fairsched.WithMaxConcurrency(200))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if err := s.RegisterType("mail", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	ran := map[string]int{}
	if err := s.RegisterHandler("mail", func(_ context.Context, j fairsched.Job) error {
		mu.Lock()
		ran[j.ID]++
		mu.Unlock()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	gate := make(chan error, 1)
	go func() { gate <- s.Enqueue(ctx, "mail", "gate", nil) }()
	waitingForGate(t, connect(t, url))
	var wg, started sync.WaitGroup
	errs := map[string]error{}
	enqueue := func(id string) {
		started.Done()
		err := s.Enqueue(ctx, "mail", id, nil)
		mu.Lock()
		errs[id] = err
		mu.Unlock()
	}
	started.Add(16*10 + 1)
	for g := range 16 {
		for i := range 10 {
			wg.Go(func() { enqueue(fmt.Sprintf("m%02d-%d", g, i)) })
		}
	}
	wg.Go(func() { enqueue("poison") })
	started.Wait()
	release()
	wg.Wait()
	if err := <-gate; err != nil {
		t.Fatal(err)
	}
	fairschedtest.WaitIdle(t, s)
	want, got := map[string]string{}, map[string]string{}
	for id, err := range errs {
		want[id], got[id] = "ok", outcome(err)
	}
	want["poison"] = "refused"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Enqueue's answers (-want +got):\n%s", diff)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	wantRan := map[string]int{"gate": 1}
	for id := range errs {
		if id != "poison" {
			wantRan[id] = 1
		}
	}
	if diff := cmp.Diff(wantRan, ran); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}

func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, fairsched.ErrStore) && errors.Is(err, fairsched.ErrRecordRefused):
		return "refused"
	case errors.Is(err, fairsched.ErrStore) && errors.Is(err, fairsched.ErrOutcomeUnknown):
		return "unknown"
	case errors.Is(err, fairsched.ErrDuplicateJob):
		return "duplicate"
	}
	return err.Error()
}

// TestRefusedDeadRecordFailsOnlyItself: 200 jobs succeed in the same
// commits as one that fails for good and whose dead record the database
// refuses (a trigger), cleaned error text or not. The 200 successes are
// deleted; the dead job's record is deleted too — it is over, and must
// not run again — so DeadJobs no longer lists it once that is written.
// After Close and a restart nothing runs again, and DeadJobs is empty.
func TestRefusedDeadRecordFailsOnlyItself(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	ctx := context.Background()
	st := open(t, url)
	refuseWhen(t, url, `NEW.id = 'poison' AND NEW.state <> 0`)
	release := holdCommits(t, url)
	var mu sync.Mutex
	ran := map[string]int{}
	start := func(st pgstore.Backend) *fairsched.Scheduler {
		s, err := fairsched.New(fairsched.WithStore(st), fairsched.WithMaxConcurrency(300))
		if err != nil {
			t.Fatal(err)
		}
		for _, typ := range []fairsched.JobType{"mail", "other"} {
			// Priority 300: its tier's cap lets every job run at once.
			if err := s.RegisterType(typ, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 300}); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	started, proceed := make(chan struct{}, 1000), make(chan struct{})
	handler := func(_ context.Context, j fairsched.Job) error {
		mu.Lock()
		ran[j.ID]++
		mu.Unlock()
		started <- struct{}{}
		<-proceed
		if j.ID == "poison" {
			return fairsched.Permanent(errors.New("boom"))
		}
		return nil
	}
	s := start(st)
	jobs := []fairsched.Enqueueing{{Type: "mail", ID: "poison"}}
	for i := range 200 {
		jobs = append(jobs, fairsched.Enqueueing{Type: "mail", ID: fmt.Sprintf("ok%03d", i)})
	}
	if err := s.EnqueueMany(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	events, unsubscribe := s.Subscribe(1000)
	// Every job starts (each start committed before its handler runs),
	// then a commit is held while the 201 jobs end: their writes share
	// the commits after it.
	if err := s.RegisterHandler("mail", handler); err != nil {
		t.Fatal(err)
	}
	for range jobs {
		<-started
	}
	gate := make(chan error, 1)
	go func() { gate <- s.Enqueue(ctx, "other", "gate", nil) }()
	waitingForGate(t, connect(t, url))
	close(proceed)
	for ended := 0; ended < len(jobs); {
		switch (<-events).(type) {
		case fairsched.JobCompleted, fairsched.JobFailed:
			ended++
		}
	}
	unsubscribe()
	release()
	if err := <-gate; err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()

	st = open(t, url)
	defer st.Close()
	s = start(st)
	defer s.Close(ctx)
	if err := s.RegisterHandler("mail", handler); err != nil {
		t.Fatal(err)
	}
	// Registering the handler queues and starts any job restored pending
	// (none should be): Close lets the started ones finish.
	dead, err := s.DeadJobs(ctx, 0)
	if err != nil || len(dead) != 0 {
		t.Errorf("dead jobs after the restart: %v %v; want none", dead, err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	wantRan := map[string]int{}
	for _, j := range jobs {
		wantRan[j.ID] = 1
	}
	if diff := cmp.Diff(wantRan, ran); diff != "" {
		t.Errorf("runs over both lives (-want +got):\n%s", diff)
	}
	var left []string
	rows, err := connect(t, url).Query(ctx, `SELECT id FROM fairsched_jobs ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	left, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"gate"}, left); diff != "" {
		t.Errorf("rows left (-want +got):\n%s", diff)
	}
}

// cutProxy forwards TCP connections to a PostgreSQL server's Unix socket.
// Once armed, the first reply that reports an executed statement (a
// CommandComplete before its ReadyForQuery) never reaches the client:
// the server has run — and committed — the request, and the proxy cuts
// the connection before the client reads a byte of the answer.
type cutProxy struct {
	url    string // the database's, through the proxy
	target string
	ln     net.Listener
	armed  atomic.Bool
	cuts   chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  []net.Conn
}

func newCutProxy(t *testing.T, dbURL string) *cutProxy {
	t.Helper()
	cfg, err := pgconn.ParseConfig(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(cfg.Host) {
		t.Skip("the proxy forwards to a Unix socket: FAIRSCHED_TEST_DATABASE_URL names a TCP server")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("host", "127.0.0.1")
	q.Set("port", strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	p := &cutProxy{url: u.String(), target: filepath.Join(cfg.Host, fmt.Sprintf(".s.PGSQL.%d", cfg.Port)), ln: ln,
		cuts: make(chan struct{}, 8)}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *cutProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		sc, err := net.Dial("unix", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, sc)
		p.mu.Unlock()
		p.wg.Go(func() { _, _ = io.Copy(sc, c); sc.Close() })
		p.wg.Go(func() { p.replies(c, sc); c.Close(); sc.Close() })
	}
}

// replies forwards the server's messages to the client, message by
// message; while armed, it holds each reply until its ReadyForQuery
// ('Z') and drops it, cutting the connection, if it reports an executed
// statement ('C').
func (p *cutProxy) replies(c, sc net.Conn) {
	r := bufio.NewReader(sc)
	var held []byte
	executed := false
	for {
		var hdr [5]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		msg := make([]byte, 1+binary.BigEndian.Uint32(hdr[1:]))
		copy(msg, hdr[:])
		if _, err := io.ReadFull(r, msg[5:]); err != nil {
			return
		}
		if held == nil && !p.armed.Load() {
			if _, err := c.Write(msg); err != nil {
				return
			}
			continue
		}
		held = append(held, msg...)
		executed = executed || msg[0] == 'C'
		if msg[0] != 'Z' {
			continue
		}
		if executed && p.armed.CompareAndSwap(true, false) {
			p.cuts <- struct{}{}
			return // the client never sees the answer
		}
		if _, err := c.Write(held); err != nil {
			return
		}
		held, executed = nil, false
	}
}

// TestOutcomeUnknown: a commit whose reply is lost — the server committed
// it, the connection died before the client read the answer — is an
// Enqueue's ErrOutcomeUnknown, matching ErrStore; the job is stored, and
// an Enqueue of the same id then says ErrDuplicateJob, and the job runs
// once, without a restart (the scheduler wrote it again until that was
// known to work). The same holds for cluster mode's writes of new jobs
// (Insert, InsertMany), whose jobs run after a restart here.
func TestOutcomeUnknown(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	ctx := context.Background()
	p := newCutProxy(t, url)
	st := open(t, p.url)
	s, err := fairsched.New(fairsched.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterType("mail", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
		t.Fatal(err)
	}
	db := connect(t, url)
	stored := func(id string) int {
		var n int
		if err := db.QueryRow(ctx, `SELECT count(*) FROM fairsched_jobs WHERE type = 'mail' AND id = $1`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	got := map[string]string{}
	p.armed.Store(true)
	got["enqueue"] = outcome(s.Enqueue(ctx, "mail", "a", nil))
	<-p.cuts
	got["enqueue again"] = outcome(s.Enqueue(ctx, "mail", "a", nil))
	// The scheduler writes a's record again until that is known to work:
	// it runs now.
	runs := make(chan string, 8)
	handler := func(_ context.Context, j fairsched.Job) error { runs <- j.ID; return nil }
	if err := s.RegisterHandler("mail", handler); err != nil {
		t.Fatal(err)
	}
	if id := <-runs; id != "a" {
		t.Errorf("%s ran; want a", id)
	}

	// Cluster mode's writes, on a store of their own (the scheduler may
	// still be writing a's end through p).
	p2 := newCutProxy(t, url)
	st2 := open(t, p2.url)
	defer st2.Close()
	p = p2
	p.armed.Store(true)
	got["insert"] = outcome(st2.Insert(ctx, &fairsched.JobRecord{Type: "mail", ID: "b", EnqueuedAt: time.Now().UTC()}))
	<-p.cuts
	got["insert again"] = outcome(st2.Insert(ctx, &fairsched.JobRecord{Type: "mail", ID: "b", EnqueuedAt: time.Now().UTC()}))

	p.armed.Store(true)
	_, err = st2.InsertMany(ctx, []*fairsched.JobRecord{{Type: "mail", ID: "c", EnqueuedAt: time.Now().UTC()}})
	got["insert many"] = outcome(err)
	<-p.cuts
	errs, err := st2.InsertMany(ctx, []*fairsched.JobRecord{{Type: "mail", ID: "c", EnqueuedAt: time.Now().UTC()}})
	if err != nil {
		t.Fatal(err)
	}
	got["insert many again"] = outcome(errs[0])

	want := map[string]string{"enqueue": "unknown", "enqueue again": "duplicate", "insert": "unknown",
		"insert again": "duplicate", "insert many": "unknown", "insert many again": "duplicate"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	// (a's row is written again by the scheduler, and deleted once it ran:
	// that it was committed shows in the proxy's cut, which waits for the
	// server's answer to its commit.)
	if n := []int{stored("b"), stored("c")}; !cmp.Equal(n, []int{1, 1}) {
		t.Errorf("rows of b, c: %v; want one each", n)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()

	st = open(t, url)
	defer st.Close()
	s, err = fairsched.New(fairsched.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if err := s.RegisterType("mail", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterHandler("mail", handler); err != nil {
		t.Fatal(err)
	}
	fairschedtest.WaitIdle(t, s)
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	close(runs)
	ran := map[string]int{"a": 1}
	for id := range runs {
		ran[id]++
	}
	if diff := cmp.Diff(map[string]int{"a": 1, "b": 1, "c": 1}, ran); diff != "" {
		t.Errorf("runs over both lives (-want +got):\n%s", diff)
	}
}
