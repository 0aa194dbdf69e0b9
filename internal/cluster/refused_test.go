package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
	"github.com/fairsched/fairsched/policy"
)

// The database refusing one record (refused.go): each loop of the cluster
// splits the batch it belongs to, the others are written, and only that
// record is dealt with — once.

// steady are fast's timings with a lease and a loss that a loaded machine
// (-race, other tests) does not lose: these tests are of refusals, not of
// failovers.
func steady(domain, instance string, slots int) fairsched.ClusterConfig {
	cfg := fast(domain, instance, slots)
	cfg.LeaseTTL, cfg.Heartbeat, cfg.LostAfter = 6*time.Second, 500*time.Millisecond, 3*time.Second
	return cfg
}

// refuse makes the database refuse, as a data exception, the writes to
// table (BEFORE op) whose rows meet when: a value it cannot keep, as
// PostgreSQL refuses a NUL or a key too long for its index.
func refuse(t *testing.T, url, name, table, op, when string) {
	t.Helper()
	pgtest.Exec(t, url, `CREATE OR REPLACE FUNCTION fairsched_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'refused by the test' USING ERRCODE = '22023'; END $$`)
	pgtest.Exec(t, url, `CREATE TRIGGER `+name+` BEFORE `+op+` ON `+table+` FOR EACH ROW WHEN (`+when+`)
		EXECUTE FUNCTION fairsched_test_refuse()`)
}

// counting is a Backend that counts the writes the database refused.
type counting struct {
	cluster.Backend
	grants, reports, answers atomic.Int64 // refused
	calls                    atomic.Int64 // Grant and ReportEnds, refused or not
	// refusePublish: Publish refuses the payloads that hold it (the
	// database would refuse a payload too long).
	refusePublish string
}

func (c *counting) count(n *atomic.Int64, err error) error {
	if errors.Is(err, fairsched.ErrRecordRefused) {
		n.Add(1)
	}
	return err
}

func (c *counting) Grant(ctx context.Context, domain string, epoch int64, ops []machine.JobOp, succeeded []cluster.End, grants []cluster.Grant) ([]uint64, []uint64, error) {
	c.calls.Add(1)
	gone, took, err := c.Backend.Grant(ctx, domain, epoch, ops, succeeded, grants)
	return gone, took, c.count(&c.grants, err)
}

func (c *counting) ReportEnds(ctx context.Context, ends []cluster.End) (int, error) {
	c.calls.Add(1)
	n, err := c.Backend.ReportEnds(ctx, ends)
	return n, c.count(&c.reports, err)
}

func (c *counting) Answer(ctx context.Context, domain string, epoch, id int64, reply []byte, reset string, settings map[string][]byte) error {
	return c.count(&c.answers, c.Backend.Answer(ctx, domain, epoch, id, reply, reset, settings))
}

func (c *counting) Publish(ctx context.Context, payload []byte) error {
	if c.refusePublish != "" && strings.Contains(string(payload), c.refusePublish) {
		return fmt.Errorf("%w: %w: test: payload refused", machine.ErrStore, machine.ErrRecordRefused)
	}
	return c.Backend.Publish(ctx, payload)
}

// observed is a logger that writes to t and is observed: the entries of
// level Warn and above.
func observed(t *testing.T) (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.WarnLevel)
	return zap.New(zapcore.NewTee(zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)).Core(), core)), logs
}

// incompressible returns n letters that no compression shortens much.
func incompressible(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for range n {
		b.WriteByte(byte('a' + r.IntN(26)))
	}
	return b.String()
}

// TestRefusedRecordsAreSplitOut: the leader's turn and an executor's
// report, refused whole by the database for one record — a conflict key of
// 8 000 bytes, too long for its index; an end's error text with a NUL, and
// one the database refuses whatever its bytes —, are written in parts in a
// few writes: every other grant takes and every other end is written; the
// bad grant alone fails, for good, saying why; the NUL's end is written
// with its text cleaned, the other with a fixed reason.
func TestRefusedRecordsAreSplitOut(t *testing.T) {
	url := pgtest.URL(t)
	st, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	const n = 41
	var ops []fairsched.JobOp
	for seq := uint64(1); seq <= n; seq++ {
		ops = append(ops, fairsched.JobOp{Put: &fairsched.JobRecord{Seq: seq, Type: "t", ID: fmt.Sprint("j", seq), EnqueuedAt: time.Unix(0, 0).UTC()}})
	}
	if err := st.ApplyJobs(ops); err != nil {
		t.Fatal(err)
	}
	epoch, ok, err := st.ClusterBackend().Acquire(ctx, "d", "leader", 10*time.Second)
	if err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	refuse(t, url, "refuse_end", "fairsched_jobs", "UPDATE", `NEW.end_error LIKE '%poison%'`)
	b := &counting{Backend: st.ClusterBackend()}
	log, logs := observed(t)

	var grants []cluster.Grant
	var wantTook []uint64
	for seq := uint64(1); seq <= n; seq++ {
		g := cluster.Grant{Seq: seq, Instance: "i1", Attempt: 1, ConflictKey: fmt.Sprint("repo/", seq)}
		if seq == 17 {
			g.ConflictKey = "repo/" + incompressible(8000)
		} else {
			wantTook = append(wantTook, seq)
		}
		grants = append(grants, g)
	}
	_, _, refusal := b.Grant(ctx, "d", epoch, nil, nil, grants)
	if !errors.Is(refusal, fairsched.ErrRecordRefused) {
		t.Fatalf("the whole turn: %v, want it refused", refusal)
	}
	took, refused, dealt, err := cluster.GrantApart(ctx, b, log, "d", epoch, nil, grants, refusal)
	if err != nil || dealt != n {
		t.Fatalf("grants dealt with: %d of %d, %v", dealt, n, err)
	}
	slices.Sort(took)
	if diff := cmp.Diff(wantTook, took); diff != "" {
		t.Errorf("grants that took (-want +got):\n%s", diff)
	}
	if len(refused) != 1 || refused[16] == nil {
		t.Fatalf("refused grants: %v, want grant 17's", refused)
	}
	if err := refused[16]; !errors.Is(err, fairsched.ErrRecordRefused) || !policy.IsPermanent(err) || strings.Contains(err.Error(), incompressible(8000)[:100]) {
		t.Errorf("the refused grant fails with %q, want ErrRecordRefused, permanent, without the key", err)
	}
	// The whole turn, then the half that holds it at each level, down to
	// the one: 1 + ⌈log2 41⌉.
	if got := b.grants.Load(); got > 1+6 {
		t.Errorf("%d grants refused; want at most 7", got)
	}
	t.Logf("41 grants, one refused: %d writes, %d of them refused", b.calls.Load(), b.grants.Load())
	b.calls.Store(0)

	var ends []cluster.End
	want := map[uint64]string{}
	for _, seq := range wantTook {
		e := cluster.End{Seq: seq, Instance: "i1", Attempt: 1, Kind: cluster.EndError, Error: fmt.Sprint("failed ", seq)}
		switch seq {
		case 5:
			e.Error = "bad\x00byte"
		case 30:
			e.Error = "poison pill"
		}
		ends = append(ends, e)
		want[seq] = map[uint64]string{5: "badbyte", 30: cluster.EndTextRefused}[seq]
		if want[seq] == "" {
			want[seq] = e.Error
		}
	}
	if _, refusal = b.ReportEnds(ctx, ends); !errors.Is(refusal, fairsched.ErrRecordRefused) {
		t.Fatalf("the whole report: %v, want it refused", refusal)
	}
	dealt, err = cluster.ReportApart(ctx, b, log, ends, refusal)
	if err != nil || dealt != len(ends) {
		t.Fatalf("ends dealt with: %d of %d, %v", dealt, len(ends), err)
	}
	rows, err := st.ClusterBackend().Rows(ctx, wantTook)
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint64]string{}
	for _, r := range rows {
		if r.Running || !r.Ended || r.End.Kind != cluster.EndError {
			t.Errorf("job %d after its end: %+v", r.Seq, r)
		}
		got[r.Seq] = r.End.Error
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the ends' texts (-want +got):\n%s", diff)
	}
	// The whole report, the halves that hold a bad end at each level (two
	// bad ends: at most twice ⌈log2 40⌉), and the poison's cut text.
	if got := b.reports.Load(); got > 1+2*6+1 {
		t.Errorf("%d reports refused; want at most 14", got)
	}
	t.Logf("40 ends, two refused: %d writes, %d of them refused", b.calls.Load(), b.reports.Load())
	// Each refusal said once.
	var said []string
	for _, e := range logs.All() {
		said = append(said, e.Message)
	}
	slices.Sort(said)
	wantSaid := []string{
		"the store refused a grant; the job fails",
		"the store refused an end's report; reporting it with its error text cut",
		"the store refused an end's report; reporting it with its error text cut",
	}
	if diff := cmp.Diff(wantSaid, said); diff != "" {
		t.Errorf("logged (-want +got):\n%s", diff)
	}
}

// poisonCluster is a leader with no handler and an instance "work" that
// runs type "t" on 64 slots, each on a counting backend and an observed
// logger; "t" is registered, its handler not yet.
func poisonCluster(t *testing.T, url string) (lead, work *member, lb, wb *counting, llogs, wlogs *observer.ObservedLogs) {
	t.Helper()
	lb, wb = &counting{}, &counting{}
	wrap := func(c *counting) func(cluster.Backend) cluster.Backend {
		return func(b cluster.Backend) cluster.Backend { c.Backend = b; return c }
	}
	llog, llogs := observed(t)
	lead = joinVia(t, url, wrap(lb), steady("d", "lead", 4), fairsched.WithLogger(llog))
	if leaderOf(t, lead) != lead {
		t.Fatal("the first instance does not lead")
	}
	wlog, wlogs := observed(t)
	work = joinVia(t, url, wrap(wb), steady("d", "work", 64), fairsched.WithLogger(wlog))
	// A priority of 64: its value is its tier's cap.
	if err := work.s.RegisterType("t", fairsched.JobTypeConfig{Priority: 64, DefaultCost: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	return lead, work, lb, wb, llogs, wlogs
}

// handle registers h as the handler of "t" on m.
func handle(t *testing.T, m *member, h fairsched.Handler) {
	t.Helper()
	if err := m.s.RegisterHandler("t", h); err != nil {
		t.Fatal(err)
	}
}

// deadOf waits until m lists n dead jobs and returns their last errors by
// id.
func deadOf(t *testing.T, m *member, n int) map[string]string {
	t.Helper()
	var dead []fairsched.DeadJob
	waitFor(t, func() bool {
		var err error
		dead, err = m.s.DeadJobs(context.Background(), 0)
		return err == nil && len(dead) >= n
	})
	out := map[string]string{}
	for _, d := range dead {
		out[d.ID] = d.LastError
	}
	return out
}

// said counts the entries of logs with message msg.
func said(logs *observer.ObservedLogs, msg string) int {
	return logs.FilterMessage(msg).Len()
}

// TestPoisonGrantFailsAlone: the database refuses the grant of one job
// (as it refuses a conflict key too long for its index) in a turn of 41:
// the 40 others run, the poison job ends dead saying the store refused
// its grant, the refusal is logged once, and the leader goes on granting.
func TestPoisonGrantFailsAlone(t *testing.T) {
	url := pgtest.URL(t)
	lead, work, lb, _, llogs, _ := poisonCluster(t, url)
	refuse(t, url, "refuse_grant", "fairsched_jobs", "UPDATE", `NEW.id = 'poison' AND NEW.running AND NOT OLD.running`)
	ctx := context.Background()
	ids := []string{"poison"}
	for i := range 40 {
		ids = append(ids, fmt.Sprint("j", i))
	}
	for _, id := range ids { // queued: no instance has a handler yet
		if err := work.s.Enqueue(ctx, "t", id, nil); err != nil {
			t.Fatal(err)
		}
	}
	rec := newRecorder()
	handle(t, work, func(ctx context.Context, j fairsched.Job) error {
		rec.start(j.ID, "")
		defer rec.end("")
		return nil
	})
	rec.waitEnds(t, 40)
	dead := deadOf(t, lead, 1)
	if len(dead) != 1 || !strings.Contains(dead["poison"], fairsched.ErrRecordRefused.Error()) || !strings.Contains(dead["poison"], "refused by the test") {
		t.Errorf("dead jobs: %q; want poison's, its grant refused", dead)
	}
	if err := work.s.Enqueue(ctx, "t", "after", nil); err != nil {
		t.Fatal(err)
	}
	rec.waitEnds(t, 41)
	rec.mu.Lock()
	starts := rec.starts
	rec.mu.Unlock()
	for _, id := range append(ids[1:], "after") {
		if starts[id] != 1 {
			t.Errorf("%s ran %d times", id, starts[id])
		}
	}
	if starts["poison"] != 0 {
		t.Errorf("poison ran %d times", starts["poison"])
	}
	// The turn; its grants alone when it had successes to delete; then
	// the half that holds the poison at each level: 1 + 1 + ⌈log2 41⌉.
	if got := lb.grants.Load(); got < 1 || got > 1+1+6 {
		t.Errorf("%d turns refused; want 1 to 8", got)
	}
	if got := said(llogs, "the store refused a grant; the job fails"); got != 1 {
		t.Errorf("the refused grant logged %d times", got)
	}
	// A RunSync whose grant is refused: its caller is told so, its
	// function never runs.
	var ran atomic.Bool
	err := work.s.RunSync(ctx, "t", "poison", "", func(context.Context) error { ran.Store(true); return nil })
	if !errors.Is(err, fairsched.ErrRecordRefused) || ran.Load() {
		t.Errorf("a RunSync whose grant is refused: %v (ran %t), want ErrRecordRefused", err, ran.Load())
	}
}

// TestPoisonEndIsWrittenAlone: the database refuses an end's report for
// its error text, cleaned or not (and a NUL in another's): the other
// ends of the report are written, the NUL's with its text cleaned, the
// poison's with a fixed reason — it ends, and its slot is free —, each
// refusal logged once, and the instance runs on.
func TestPoisonEndIsWrittenAlone(t *testing.T) {
	url := pgtest.URL(t)
	lead, work, _, wb, _, wlogs := poisonCluster(t, url)
	refuse(t, url, "refuse_end", "fairsched_jobs", "UPDATE", `NEW.end_error LIKE '%poison%'`)
	ctx := context.Background()
	ids := []string{"poison", "nul"}
	for i := range 40 {
		ids = append(ids, fmt.Sprint("j", i))
	}
	for _, id := range ids {
		if err := work.s.Enqueue(ctx, "t", id, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Every job waits for all to have started: their ends come together,
	// in few reports.
	var started sync.WaitGroup
	var once sync.Map
	started.Add(len(ids))
	rec := newRecorder()
	handle(t, work, func(ctx context.Context, j fairsched.Job) error {
		rec.start(j.ID, "")
		defer rec.end("")
		if _, again := once.LoadOrStore(j.ID, true); !again {
			started.Done()
		}
		started.Wait()
		switch j.ID {
		case "poison":
			return fairsched.Permanent(errors.New("poison pill"))
		case "nul":
			return fairsched.Permanent(errors.New("bad\x00byte"))
		}
		return nil
	})
	rec.waitEnds(t, len(ids))
	dead := deadOf(t, lead, 2)
	if len(dead) != 2 || !strings.Contains(dead["poison"], cluster.EndTextRefused) || !strings.Contains(dead["nul"], "badbyte") {
		t.Errorf("dead jobs: %q; want poison's with the fixed reason, nul's cleaned", dead)
	}
	if err := work.s.Enqueue(ctx, "t", "after", nil); err != nil {
		t.Fatal(err)
	}
	rec.waitEnds(t, len(ids)+1)
	waitFor(t, func() bool { // every slot free
		snap, err := lead.s.Snapshot(ctx)
		if err != nil || snap.Cluster == nil {
			return false
		}
		running := 0
		for _, in := range snap.Cluster.Instances {
			running += in.Running
		}
		return running == 0
	})
	// As in TestRefusedRecordsAreSplitOut, report by report.
	if got := wb.reports.Load(); got < 1 || got > 2*(1+6+1) {
		t.Errorf("%d reports refused; want 1 to 16", got)
	}
	per := map[any]int{}
	for _, e := range wlogs.FilterMessage("the store refused an end's report; reporting it with its error text cut").All() {
		per[e.ContextMap()["seq"]]++
	}
	for seq, n := range per {
		if n != 1 {
			t.Errorf("the refused end of job %v logged %d times", seq, n)
		}
	}
	if len(per) == 0 {
		t.Error("no refused end logged")
	}
}

// TestRefusedEventIsDroppedAlone: the database refuses the payloads that
// hold one job's events (as it refuses a payload too long): the payloads
// are published in halves down to each of its events, which alone are
// lost (events are delivered at most once), each said once; every other
// event reaches the subscriber.
func TestRefusedEventIsDroppedAlone(t *testing.T) {
	url := pgtest.URL(t)
	lb := &counting{refusePublish: `"poison"`}
	llog, llogs := observed(t)
	lead := joinVia(t, url, func(b cluster.Backend) cluster.Backend { lb.Backend = b; return lb }, steady("d", "lead", 4), fairsched.WithLogger(llog))
	if leaderOf(t, lead) != lead {
		t.Fatal("the first instance does not lead")
	}
	work := join(t, url, steady("d", "work", 64))
	if err := work.s.RegisterType("t", fairsched.JobTypeConfig{Priority: 64, DefaultCost: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	evs, stop := work.s.Subscribe(1 << 12)
	defer stop()
	subscribedOn(t, lead, "work")
	ctx := context.Background()
	ids := []string{"poison"}
	for i := range 20 {
		ids = append(ids, fmt.Sprint("j", i))
	}
	for _, id := range ids { // queued together: their events share payloads
		if err := work.s.Enqueue(ctx, "t", id, nil); err != nil {
			t.Fatal(err)
		}
	}
	handle(t, work, func(context.Context, fairsched.Job) error { return nil })
	completed := map[string]bool{}
	deadline := time.After(time.Minute)
	for len(completed) < 20 {
		select {
		case e := <-evs:
			switch e := e.(type) {
			case fairsched.JobCompleted:
				completed[e.ID] = true
			case fairsched.JobQueued:
				if e.ID == "poison" {
					t.Errorf("an event of poison was published: %+v", e)
				}
			}
		case <-deadline:
			t.Fatalf("%d of 20 jobs' completions came in a minute", len(completed))
		}
	}
	if completed["poison"] {
		t.Error("poison's completion was published")
	}
	// Poison's events: queued, admitted, completed — each lost alone, once.
	if got := said(llogs, "the store refused an event; it is lost"); got < 1 || got > 3 {
		t.Errorf("%d refused events logged; want 1 to 3", got)
	}
}

// TestRefusedAnswerSaysWhy: the database refuses a command's answer (a
// setting's name it cannot keep): its asker is told why (ErrRecordRefused)
// and the next command is answered. A command whose every answer is
// refused is left unanswered — its asker gives up — and not run again at
// every read.
func TestRefusedAnswerSaysWhy(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a lease and a loss (9 s) for the command never answered; make check runs it")
	}
	url := pgtest.URL(t)
	lb := &counting{}
	lead := joinVia(t, url, func(b cluster.Backend) cluster.Backend { lb.Backend = b; return lb }, steady("d", "lead", 4))
	if leaderOf(t, lead) != lead {
		t.Fatal("the first instance does not lead")
	}
	follow := join(t, url, steady("d", "follow", 1))
	refuse(t, url, "refuse_setting", "fairsched_settings", "INSERT OR UPDATE", `NEW.name LIKE '%poison%'`)
	refuse(t, url, "refuse_answer", "fairsched_commands", "UPDATE", `NEW.args->>'key' = 'doomed'`)
	if err := follow.s.SetKeyWeight("poison", 2); !errors.Is(err, fairsched.ErrRecordRefused) {
		t.Errorf("a weight whose setting is refused: %v, want ErrRecordRefused", err)
	}
	// Its asker gives up when its time is out (ErrNoLeader, or the
	// deadline in the read of the reply under way then).
	if err := follow.s.SetKeyWeight("doomed", 2); !errors.Is(err, cluster.ErrNoLeader) && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a weight never answered: %v, want ErrNoLeader", err)
	}
	if err := follow.s.SetKeyWeight("good", 3); err != nil {
		t.Errorf("the next weight: %v", err)
	}
	settings, err := lead.st.ClusterBackend().Settings(context.Background(), "d")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name := range settings {
		if strings.HasPrefix(name, "key_weight/") {
			names = append(names, name)
		}
	}
	if diff := cmp.Diff([]string{"key_weight/good"}, names); diff != "" {
		t.Errorf("weights kept (-want +got):\n%s", diff)
	}
	// poison's answer, then doomed's two: not one a read.
	if got := lb.answers.Load(); got != 3 {
		t.Errorf("%d answers refused; want 3", got)
	}
}

// TestLongErrorTextsArePublished: a job's error text that JSON escapes to
// more than a notification holds (3 000 '<', 18 000 bytes escaped) is
// published cut, and the events beside it as they are.
func TestLongErrorTextsArePublished(t *testing.T) {
	url := pgtest.URL(t)
	lead := joinLeader(t, url, steady("d", "lead", 4))
	work := join(t, url, steady("d", "work", 64))
	if err := work.s.RegisterType("t", fairsched.JobTypeConfig{Priority: 64, DefaultCost: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	evs, stop := work.s.Subscribe(1 << 12)
	defer stop()
	subscribedOn(t, lead, "work")
	ctx := context.Background()
	ids := []string{"long"}
	for i := range 20 {
		ids = append(ids, fmt.Sprint("j", i))
	}
	for _, id := range ids {
		if err := work.s.Enqueue(ctx, "t", id, nil); err != nil {
			t.Fatal(err)
		}
	}
	text := strings.Repeat("<", 3000)
	handle(t, work, func(_ context.Context, j fairsched.Job) error {
		if j.ID == "long" {
			return fairsched.Permanent(errors.New(text))
		}
		return nil
	})
	completed, failed := map[string]bool{}, ""
	deadline := time.After(time.Minute)
	for len(completed) < 20 || failed == "" {
		select {
		case e := <-evs:
			switch e := e.(type) {
			case fairsched.JobCompleted:
				completed[e.ID] = true
			case fairsched.JobFailed:
				if e.ID == "long" && e.Err != nil {
					failed = e.Err.Error()
				}
			}
		case <-deadline:
			t.Fatalf("in a minute: %d of 20 jobs' completions, the long one's failure %t", len(completed), failed != "")
		}
	}
	if !strings.Contains(failed, strings.Repeat("<", 100)) || len(failed) >= len(text) {
		t.Errorf("the long failure's text came as %d bytes: %.40q…", len(failed), failed)
	}
}

// TestRefusedTypeIsLeftOut: the database refuses one type's definition:
// it is left out, said once, and the types registered after it are
// written — their jobs run.
func TestRefusedTypeIsLeftOut(t *testing.T) {
	url := pgtest.URL(t)
	log, logs := observed(t)
	lead := joinVia(t, url, nil, steady("d", "lead", 4), fairsched.WithLogger(log))
	if leaderOf(t, lead) != lead {
		t.Fatal("the first instance does not lead")
	}
	refuse(t, url, "refuse_type", "fairsched_settings", "INSERT OR UPDATE", `NEW.name = 'type/poison'`)
	cfg := fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}
	if err := lead.s.RegisterType("poison", cfg); err != nil {
		t.Fatal(err)
	}
	if err := lead.s.RegisterType("good", cfg); err != nil {
		t.Fatal(err)
	}
	ran := make(chan string, 1)
	if err := lead.s.RegisterHandler("good", func(_ context.Context, j fairsched.Job) error { ran <- j.ID; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := lead.s.Enqueue(context.Background(), "good", "j1", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-ran:
		if id != "j1" {
			t.Errorf("ran %s", id)
		}
	case <-time.After(time.Minute):
		t.Fatal("the job of a type registered after a refused one did not run in a minute")
	}
	if got := said(logs, "the store refused a job type; its jobs will not run"); got != 1 {
		t.Errorf("the refused type logged %d times", got)
	}
}
