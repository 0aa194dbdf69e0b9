package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/workers"
)

// turnBackend is a Backend for the leader's turn steps: it records the
// writes of the turns (Grant) and answers Rows from rows. Any other call
// panics (the embedded nil Backend): a step that makes it is not the step
// under test.
type turnBackend struct {
	Backend
	rows    []Row
	writes  []turnWrite
	revoked []uint64 // RevokeJob's jobs
}

func (b *turnBackend) RevokeJob(_ context.Context, _ string, _ int64, seq uint64, _ RevokeCause) error {
	b.revoked = append(b.revoked, seq)
	return nil
}

// turnWrite is one Grant call: the successes' rows deleted, the grants.
type turnWrite struct {
	Records   []string // "put seq state" or "delete seq"
	Succeeded []uint64
	Grants    []string // "seq on instance #attempt"
}

func (b *turnBackend) Grant(_ context.Context, _ string, _ int64, ops []machine.JobOp, succeeded []End, grants []Grant) (gone, took []uint64, err error) {
	var w turnWrite
	for _, op := range ops {
		if op.Put != nil {
			w.Records = append(w.Records, fmt.Sprintf("put %d state %d", op.Put.Seq, op.Put.State))
		} else {
			w.Records = append(w.Records, fmt.Sprintf("delete %d", op.Delete))
		}
	}
	for _, e := range succeeded {
		w.Succeeded = append(w.Succeeded, e.Seq)
		gone = append(gone, e.Seq)
	}
	for _, g := range grants {
		w.Grants = append(w.Grants, grantText(g))
		took = append(took, g.Seq)
	}
	b.writes = append(b.writes, w)
	return gone, took, nil
}

func (b *turnBackend) Rows(_ context.Context, seqs []uint64) ([]Row, error) {
	var out []Row
	for _, r := range b.rows {
		for _, s := range seqs {
			if r.Seq == s {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

func grantText(g Grant) string { return fmt.Sprintf("%d on %s #%d", g.Seq, g.Instance, g.Attempt) }

// endLog holds the ends a grant loop reported to its scheduler, by
// attempt, in order.
type endLog map[*messages.RemoteAttempt][]error

// newTestLoop is a leader's grant loop over b, its own instance "lead",
// with instances (id → slots, every one taking type "t"), and the log of
// the ends it reports.
func newTestLoop(b Backend, instances map[string]int) (*grantLoop, endLog) {
	n := &Node{cfg: Config{Domain: "d", Heartbeat: time.Minute, Poll: time.Minute, LostAfter: time.Hour}, id: "lead", b: b,
		log: zap.NewNop()}
	ends := endLog{}
	l := &leader{n: n, epoch: 1, failed: make(chan int64, 1), done: make(chan struct{}),
		ends: func(at *messages.RemoteAttempt, err error) { ends[at] = append(ends[at], err) }}
	g := newGrantLoop(l)
	for id, slots := range instances {
		g.instances[id] = &instance{Instance: Instance{ID: id, Slots: slots, Types: []string{"t"}}, types: map[string]bool{"t": true}}
	}
	return g, ends
}

// testWait is an admitted job of type "t", attempt 1, under ctx.
func testWait(ctx context.Context, seq uint64) *wait {
	job := messages.DurableJob{Type: "t", ID: fmt.Sprint(seq), Seq: seq, Attempt: 1}
	return newWait(messages.NewRemoteAttempt(ctx, nil, job, messages.SlotRef{}, false), "")
}

// answered is how each of ws was answered ("" while it waits; each end if
// more than one).
func (e endLog) answered(ws ...*wait) map[uint64]string {
	out := map[uint64]string{}
	for _, w := range ws {
		var texts []string
		for _, err := range e[w.at] {
			texts = append(texts, errText(err))
		}
		out[w.seq] = strings.Join(texts, ", ")
	}
	return out
}

// endTurnWritten ends g's turn as its loop does, each write it launches
// landed before it returns (the loop lands it, and ends the turn again).
func endTurnWritten(g *grantLoop) {
	for g.endTurn(); g.flying != nil; g.endTurn() {
		g.settle()
	}
}

// closeTurnWritten is endTurnWritten of a turn closed with its ops taken.
func closeTurnWritten(g *grantLoop) {
	for g.closeTurn(); g.flying != nil; g.closeTurn() {
		g.settle()
	}
}

// errText names the sentinels err matches, or says nil.
func errText(err error) string {
	switch {
	case err == nil:
		return "nil"
	case errors.Is(err, machine.EndWritten):
		return "EndWritten"
	case errors.Is(err, machine.ErrCancelled):
		return "ErrCancelled"
	case errors.Is(err, workers.ErrWorkerLost) && policy.IsPermanent(err):
		return "permanent ErrWorkerLost"
	case errors.Is(err, workers.ErrWorkerLost):
		return "ErrWorkerLost"
	}
	return "other: " + err.Error()
}

// TestTurnCancelledWhileWaitingIsNeverGranted: a job placed in a turn whose
// handler gives up (a Cancel) before the turn is written — its revoke
// still on its way to the loop, behind the ends that freed its slot — is
// left out of the write, answered ErrCancelled, and its slot is free again
// for the job after it.
func TestTurnCancelledWhileWaitingIsNeverGranted(t *testing.T) {
	b := &turnBackend{}
	g, ends := newTestLoop(b, map[string]int{"a": 1})
	ctx, cancel := context.WithCancel(context.Background())
	w1, w2 := testWait(ctx, 1), testWait(context.Background(), 2)
	g.place(w1)
	cancel() // the attempt is cancelled; its revoke is not read yet
	endTurnWritten(g)
	g.place(w2)
	endTurnWritten(g)
	want := []turnWrite{{Grants: []string{"2 on a #1"}}}
	if diff := cmp.Diff(want, b.writes); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[uint64]string{1: "ErrCancelled", 2: ""}, ends.answered(w1, w2)); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	g.revoke(w1.at) // the revoke arrives at last: nothing to do, nothing written
	if len(b.writes) != 1 || len(b.revoked) != 0 || len(g.outstanding) != 1 {
		t.Errorf("after the late revoke: %d writes, %v revoked, %d outstanding; want 1, none, 1", len(b.writes), b.revoked, len(g.outstanding))
	}
}

// TestTurnRevokeOfAGrantedJob: Cancel of a granted attempt takes its
// grant back in the database and holds its slot until its instance
// reports the end — the job waiting for that slot is not granted before —
// and the attempt ends as cancelled, however the instance ended it (a
// success's row is deleted all the same). A revoke of an attempt that
// is not the one outstanding does nothing.
func TestTurnRevokeOfAGrantedJob(t *testing.T) {
	b := &turnBackend{}
	g, ends := newTestLoop(b, map[string]int{"a": 1})
	w1, w2 := testWait(context.Background(), 1), testWait(context.Background(), 2)
	g.place(w1)
	endTurnWritten(g)
	g.place(w2) // waits for w1's slot
	endTurnWritten(g)
	g.revoke(testWait(context.Background(), 1).at) // another attempt of job 1
	g.revoke(w1.at)
	endTurnWritten(g)
	if diff := cmp.Diff(map[uint64]string{1: "", 2: ""}, ends.answered(w1, w2)); diff != "" {
		t.Errorf("answers before the end (-want +got):\n%s", diff)
	}
	b.rows = []Row{{Seq: 1, Ended: true, End: End{Seq: 1, Instance: "a", Attempt: 1, Kind: EndOK}}}
	g.timed(func(ctx context.Context) { g.readEnds(ctx, true) })
	g.replace()
	endTurnWritten(g)
	if diff := cmp.Diff(map[uint64]string{1: "ErrCancelled", 2: ""}, ends.answered(w1, w2)); diff != "" {
		t.Errorf("answers after the end (-want +got):\n%s", diff)
	}
	want := []turnWrite{{Grants: []string{"1 on a #1"}}, {Succeeded: []uint64{1}, Grants: []string{"2 on a #1"}}}
	if diff := cmp.Diff(want, b.writes); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]uint64{1}, b.revoked); diff != "" {
		t.Errorf("grants taken back (-want +got):\n%s", diff)
	}
}

// TestTurnRowsRead: given the grants outstanding and their rows read, each
// job is answered as its row says, a success's row is deleted with the
// next turn's grants (one write), and a resumed job learns where it runs.
func TestTurnRowsRead(t *testing.T) {
	b := &turnBackend{rows: []Row{
		{Seq: 1, Ended: true, End: End{Seq: 1, Instance: "a", Attempt: 1, Kind: EndOK}},
		{Seq: 2, Running: true, Instance: "a", Attempt: 2}, // granted again since: this attempt lost it
		{Seq: 3, Running: true, Instance: "b", Attempt: 4}, // resumed: runs on b, an instance not read yet
		{Seq: 5, Running: true, Instance: "a", Attempt: 1}, // runs on
		{Seq: 6, Ended: true, End: End{Seq: 6, Instance: "a", Attempt: 1, Kind: EndPermanent, Error: "bad"}},
	}}
	g, ends := newTestLoop(b, map[string]int{"a": 8})
	var ws []*wait
	for seq := range uint64(6) {
		ws = append(ws, testWait(context.Background(), seq+1))
	}
	ws[2].attempt, ws[2].instance = -1, "" // a previous leader's grant
	for _, w := range ws {
		g.place(w)
	}
	endTurnWritten(g) // the grants written
	g.timed(func(ctx context.Context) { g.readEnds(ctx, true) })
	next := testWait(context.Background(), 7)
	g.place(next)
	endTurnWritten(g)
	want := map[uint64]string{1: "EndWritten", 2: "ErrWorkerLost", 3: "", 4: "permanent ErrWorkerLost", 5: "", 6: "other: bad", 7: ""}
	if diff := cmp.Diff(want, ends.answered(append(ws, next)...)); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	wantWrites := []turnWrite{
		{Grants: []string{"1 on a #1", "2 on a #1", "4 on a #1", "5 on a #1", "6 on a #1"}},
		{Succeeded: []uint64{1}, Grants: []string{"7 on a #1"}},
	}
	if diff := cmp.Diff(wantWrites, b.writes); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	if got := fmt.Sprintf("%s #%d", ws[2].instance, ws[2].attempt); got != "b #4" {
		t.Errorf("the resumed job runs on %s, want b #4", got)
	}
}

// TestChoose: where placement puts a job, over the instances as the
// leader counts them.
func TestChoose(t *testing.T) {
	in := func(id string, slots, running int, types ...string) *instance {
		c := &instance{Instance: Instance{ID: id, Slots: slots, Types: types}, types: map[string]bool{}, running: running}
		for _, ty := range types {
			c.types[ty] = true
		}
		return c
	}
	view := func(leaderFirst bool, ins ...*instance) placeView {
		v := placeView{instances: map[string]*instance{}, workerHome: map[string]string{"w1": "b", "w2": "gone"},
			self: "lead", leaderFirst: leaderFirst}
		for _, c := range ins {
			v.instances[c.ID] = c
		}
		return v
	}
	for _, c := range []struct {
		name          string
		v             placeView
		typ           policy.JobType
		owner, worker string
		want          choice
	}{
		{"owner's instance, full or not", view(false, in("a", 1, 1, "t")), "t", "a", "", choice{instance: "a"}},
		{"owner unknown", view(false, in("a", 1, 0, "t")), "t", "x", "", choice{ownerUnknown: true}},
		{"worker's home", view(false, in("a", 1, 0, "t"), in("b", 1, 1, "u")), "t", "", "w1", choice{instance: "b"}},
		{"worker's home gone", view(false, in("a", 1, 0, "t")), "t", "", "w2", choice{refresh: true}},
		{"worker unknown", view(false, in("a", 1, 0, "t")), "t", "", "w9", choice{refresh: true}},
		{"fewest types first", view(false, in("a", 9, 0, "t", "u"), in("b", 1, 0, "t")), "t", "", "", choice{instance: "b"}},
		{"most free slots", view(false, in("a", 4, 3, "t"), in("lead", 4, 2, "t")), "t", "", "", choice{instance: "lead"}},
		{"most free slots, not the leader's", view(false, in("lead", 4, 3, "t"), in("z", 4, 2, "t")), "t", "", "", choice{instance: "z"}},
		{"tie: the leader's own", view(false, in("a", 4, 2, "t"), in("lead", 4, 2, "t")), "t", "", "", choice{instance: "lead"}},
		{"tie: the name", view(false, in("b", 4, 2, "t"), in("a", 4, 2, "t")), "t", "", "", choice{instance: "a"}},
		{"LeaderFirst: its own while free", view(true, in("a", 4, 0, "t"), in("lead", 4, 3, "t")), "t", "", "", choice{instance: "lead"}},
		{"LeaderFirst: the others once full", view(true, in("a", 4, 0, "t"), in("lead", 4, 4, "t")), "t", "", "", choice{instance: "a"}},
		{"only full instances: wait", view(false, in("a", 1, 1, "t")), "t", "", "", choice{}},
		{"no handler: read again", view(false, in("a", 1, 0, "u")), "t", "", "", choice{refresh: true}},
		{"no instance", view(false), "t", "", "", choice{refresh: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.v.choose(c.typ, c.owner, c.worker)
			if diff := cmp.Diff(c.want, got, cmp.AllowUnexported(choice{})); diff != "" {
				t.Errorf("choose (-want +got):\n%s", diff)
			}
		})
	}
}

// reportBackend records an executor's reports.
type reportBackend struct {
	Backend
	reports [][]End
}

func (b *reportBackend) ReportEnds(_ context.Context, ends []End) (int, error) {
	b.reports = append(b.reports, slices.Clone(ends))
	return len(ends), nil
}

// TestExecGrantsRead: an executor's full read of its grants starts none of
// those it must not — one cancelled before it started is reported so; a
// success handed back in process whose row still runs is reported through
// the database; one ended here is not run again — and stops the attempts
// cancelled or taken back; the ends go in one report.
func TestExecGrantsRead(t *testing.T) {
	b := &reportBackend{}
	x := &executor{n: &Node{cfg: Config{Heartbeat: time.Minute, LostAfter: time.Hour}, id: "me", b: b, log: zap.NewNop()}}
	e := newExecLoop(x)
	defer e.fence.remove()
	causes := map[uint64]error{}
	running := func(seq uint64) *attempt {
		return &attempt{seq: seq, attempt: 1, cancel: func(err error) { causes[seq] = err }}
	}
	e.running[4], e.running[5] = running(4), running(5)
	e.early[1] = earlyGrant{Grant: Grant{Seq: 1, Attempt: 1}}
	e.endedNow[2] = endedHere{attempt: 1, handed: true}
	e.endedNow[3] = endedHere{attempt: 1}
	e.grantsRead([]Grant{
		{Seq: 1, Attempt: 1, Cancelled: true},
		{Seq: 2, Attempt: 1},
		{Seq: 3, Attempt: 1},
		{Seq: 5, Attempt: 1, Cancelled: true},
	}, true, time.Now())
	e.flush()
	want := [][]End{{
		{Seq: 1, Instance: "me", Attempt: 1, Kind: EndPermanent, Error: machine.ErrCancelled.Error()},
		{Seq: 2, Instance: "me", Attempt: 1, Kind: EndOK},
	}}
	if diff := cmp.Diff(want, b.reports); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
	got := map[uint64]string{}
	for seq, err := range causes {
		got[seq] = errText(err)
	}
	if diff := cmp.Diff(map[uint64]string{4: "ErrWorkerLost", 5: "ErrCancelled"}, got); diff != "" {
		t.Errorf("attempts stopped (-want +got):\n%s", diff)
	}
	if len(e.early) != 0 || len(e.running) != 2 || len(e.ends) != 0 {
		t.Errorf("after: %d early, %d running, %d ends; want 0, 2, 0", len(e.early), len(e.running), len(e.ends))
	}
}

// nopJobStore keeps nothing and commits at once: the machine's records
// are not what the turn tests look at.
type nopJobStore struct{}

func (nopJobStore) Load() (core.State, error)                 { return core.State{}, nil }
func (nopJobStore) Save(core.State) error                     { return nil }
func (nopJobStore) LoadJobs(func(core.JobRecord) error) error { return nil }
func (nopJobStore) ApplyJobs([]machine.JobOp) error           { return nil }

// newMachineLoop is newTestLoop whose leader owns a real machine, as
// leading does: type "t" runs at most capN at once, remotely, and the
// jobs seqs 1…n wait, oldest first.
func newMachineLoop(t *testing.T, b Backend, instances map[string]int, capN, n int) *grantLoop {
	t.Helper()
	g, _ := newTestLoop(b, instances)
	limits := policy.DefaultLimits()
	limits.PriorityMode = policy.PriorityOrderOnly
	m := machine.New(core.New(limits), machine.Config{Clock: clock.NewMock(), Logger: zap.NewNop(), Tick: time.Minute,
		Store: nopJobStore{}, GrantRecordsAttempt: true, OwnerCommits: true})
	t.Cleanup(func() { <-m.Stop(nil) })
	if err := m.Register("t", policy.JobTypeConfig{Priority: 10, DefaultCost: time.Second, MaxConcurrency: capN}); err != nil {
		t.Fatal(err)
	}
	if err := m.RegisterRemote([]policy.JobType{"t"}); err != nil {
		t.Fatal(err)
	}
	recs := make([]core.JobRecord, n)
	for i := range recs {
		recs[i] = core.JobRecord{Seq: uint64(i + 1), Type: "t", ID: fmt.Sprint(i + 1), State: core.RecordPending,
			EnqueuedAt: time.Unix(int64(i), 0)}
	}
	m.Adopt(recs)
	g.l.m, g.l.ends = m, m.EndRemote
	return g
}

// TestTurnRegrantsInTheTurnThatReadsTheEnd: the leader's loop calls its
// machine in its turn, so the turn that reads a job's end also takes the
// start that end admits and writes it with the success's delete — one
// write a turn, no start left for a later one.
func TestTurnRegrantsInTheTurnThatReadsTheEnd(t *testing.T) {
	b := &turnBackend{}
	g := newMachineLoop(t, b, map[string]int{"a": 10}, 1, 3)
	g.takeOps()
	endTurnWritten(g)
	for seq := uint64(1); seq <= 3; seq++ {
		b.rows = []Row{{Seq: seq, Ended: true, End: End{Seq: seq, Instance: "a", Attempt: 1, Kind: EndOK}}}
		g.timed(func(ctx context.Context) { g.readEnds(ctx, true) })
		g.takeOps()
		g.tidy = true // the last success's delete goes without a grant
		endTurnWritten(g)
	}
	want := []turnWrite{
		{Grants: []string{"1 on a #1"}},
		{Succeeded: []uint64{1}, Grants: []string{"2 on a #1"}},
		{Succeeded: []uint64{2}, Grants: []string{"3 on a #1"}},
		{Succeeded: []uint64{3}},
	}
	if diff := cmp.Diff(want, b.writes); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	if len(g.outstanding) != 0 || len(g.queued) != 0 {
		t.Errorf("after the last end: %d outstanding, %d queued; want none", len(g.outstanding), len(g.queued))
	}
}

// TestTurnWritesItsRecordsWithItsGrants: the records the machine writes
// in a turn — here a job that failed for good, now dead — go in the
// turn's one write, with the grant its freed slot admits: one fenced
// transaction, not a second writer of the job's row.
func TestTurnWritesItsRecordsWithItsGrants(t *testing.T) {
	b := &turnBackend{}
	g := newMachineLoop(t, b, map[string]int{"a": 10}, 1, 2)
	g.takeOps()
	endTurnWritten(g)
	b.rows = []Row{{Seq: 1, Ended: true, End: End{Seq: 1, Instance: "a", Attempt: 1, Kind: EndPermanent, Error: "no"}}}
	g.timed(func(ctx context.Context) { g.readEnds(ctx, true) })
	closeTurnWritten(g)
	want := []turnWrite{
		{Grants: []string{"1 on a #1"}},
		{Records: []string{fmt.Sprintf("put 1 state %d", core.RecordDead)}, Grants: []string{"2 on a #1"}},
	}
	if diff := cmp.Diff(want, b.writes); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
}

// TestTurnNextAttemptWaitsForThePrevious: the scheduler may end an attempt
// before its instance does (its worker went: the job is free to run again
// at once). The next attempt of that job is not granted while the previous
// one still runs on its instance — its grant would find the row running —
// but as soon as that attempt's end is read.
func TestTurnNextAttemptWaitsForThePrevious(t *testing.T) {
	b := &turnBackend{}
	g, ends := newTestLoop(b, map[string]int{"a": 2})
	first := testWait(context.Background(), 1)
	g.place(first)
	endTurnWritten(g)
	job := first.at.Job
	job.Attempt = 2
	second := newWait(messages.NewRemoteAttempt(context.Background(), nil, job, messages.SlotRef{}, false), "")
	g.place(second)
	endTurnWritten(g)
	if diff := cmp.Diff([]turnWrite{{Grants: []string{"1 on a #1"}}}, b.writes); diff != "" {
		t.Errorf("writes while the first attempt runs (-want +got):\n%s", diff)
	}
	b.rows = []Row{{Seq: 1, Ended: true, End: End{Seq: 1, Instance: "a", Attempt: 1, Kind: EndError, Error: "worker lost"}}}
	g.timed(func(ctx context.Context) { g.readEnds(ctx, true) })
	g.replace()
	endTurnWritten(g)
	want := []turnWrite{{Grants: []string{"1 on a #1"}}, {Grants: []string{"1 on a #2"}}}
	if diff := cmp.Diff(want, b.writes); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[uint64]string{1: "other: worker lost"}, ends.answered(first)); diff != "" {
		t.Errorf("the first attempt's answer (-want +got):\n%s", diff)
	}
	if w := g.outstanding[1]; w != second || w.instance != "a" || w.attempt != 2 {
		t.Errorf("outstanding: %+v, want the second attempt on a", w)
	}
}

// TestExecStaleHandoffIsNotRun: a handoff that waited behind a read of
// every grant begun after it was sent is dropped — that read started its
// grants, or found them ended here (an end this executor may have
// forgotten since: handed over again, the attempt would run twice) —
// while a handoff sent after the last full read starts its grants.
func TestExecStaleHandoffIsNotRun(t *testing.T) {
	x := &executor{n: &Node{cfg: Config{Heartbeat: time.Minute, LostAfter: time.Hour}, id: "me", b: &reportBackend{}, log: zap.NewNop()},
		ended: make(chan ended, 1)}
	e := newExecLoop(x)
	defer e.fence.remove()
	e.handlers["t"] = func(context.Context, messages.DurableJob) error { return nil }
	g := Grant{Seq: 7, Attempt: 2, Record: &core.JobRecord{Seq: 7, Type: "t", ID: "7"}}
	sent := time.Now()
	e.fullFrom = sent.Add(time.Millisecond)
	e.handedOver(handoff{grants: []Grant{g}, sent: sent, launched: sent})
	var got []string
	got = append(got, fmt.Sprintf("stale: %d running", len(e.running)))
	e.handedOver(handoff{grants: []Grant{g}, sent: e.fullFrom.Add(time.Millisecond), launched: e.fullFrom})
	got = append(got, fmt.Sprintf("fresh: %d running", len(e.running)))
	d := <-x.ended
	got = append(got, fmt.Sprintf("ended %d #%d", d.seq, d.attempt))
	if diff := cmp.Diff([]string{"stale: 0 running", "fresh: 1 running", "ended 7 #2"}, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

// TestExecHandoffOfALongWriteIsNotRun: the leader's write of a turn is in
// flight while its loop goes on; the grants it hands to its own executor
// come once it lands. A full read begun after they committed starts them
// first, and ends remembered here last two periods of full reads. A
// handoff whose write was launched a Heartbeat or more before it came
// (its grant started by a read, ended, and forgotten) is dropped — run
// from it, the attempt would run a second time — while one launched
// within a Heartbeat starts its grants.
func TestExecHandoffOfALongWriteIsNotRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const beat = time.Minute
		x := &executor{n: &Node{cfg: Config{Heartbeat: beat, LostAfter: time.Hour}, id: "me", b: &reportBackend{}, log: zap.NewNop()},
			ended: make(chan ended, 4)}
		e := newExecLoop(x)
		defer e.fence.remove()
		runs := map[uint64]int{}
		e.handlers["t"] = func(_ context.Context, j messages.DurableJob) error { runs[j.Seq]++; return nil }
		grant := func(seq uint64) Grant {
			return Grant{Seq: seq, Attempt: 1, Handed: true, Record: &core.JobRecord{Seq: seq, Type: "t", ID: fmt.Sprint(seq)}}
		}
		launched := time.Now() // the leader's write of grant 7 goes out
		time.Sleep(time.Millisecond)
		e.grantsCame(readOfGrants{full: true, began: time.Now(), grants: []Grant{grant(7)}}) // committed: read, started
		e.take(<-x.ended)
		for range 2 { // two periods of full reads: its end is forgotten
			time.Sleep(beat)
			e.grantsCame(readOfGrants{full: true, began: time.Now()})
		}
		e.handedOver(handoff{grants: []Grant{grant(7)}, sent: time.Now(), launched: launched}) // the write lands at last
		e.handedOver(handoff{grants: []Grant{grant(8)}, sent: time.Now(), launched: time.Now().Add(-beat / 2)})
		synctest.Wait()
		if diff := cmp.Diff(map[uint64]int{7: 1, 8: 1}, runs); diff != "" {
			t.Errorf("runs by job (-want +got):\n%s", diff)
		}
	})
}

// TestTurnWritesAtMostMaxGrants: a turn that placed more jobs than one
// write carries writes them in order, maxGrants a write, the next write
// launched as the one before lands; the successes answered meanwhile go
// with the first write after them.
func TestTurnWritesAtMostMaxGrants(t *testing.T) {
	b := &turnBackend{}
	g, _ := newTestLoop(b, map[string]int{"a": 2 * maxGrants})
	for seq := range uint64(maxGrants + 2) {
		g.place(testWait(context.Background(), seq+1))
	}
	g.endTurn()
	if g.flying == nil || len(g.flying.gs) != maxGrants || len(g.batch) != 2 {
		t.Fatalf("first write: in flight %v, %d left to write; want %d in flight, 2 left", g.flying != nil, len(g.batch), maxGrants)
	}
	g.finished = append(g.finished, End{Seq: 1, Instance: "a", Attempt: 1, Kind: EndOK}) // answered while it is in flight
	endTurnWritten(g)
	var got []string
	for _, w := range b.writes {
		got = append(got, fmt.Sprintf("%d grants %v..%v, deletes %v", len(w.Grants), w.Grants[0], w.Grants[len(w.Grants)-1], w.Succeeded))
	}
	want := []string{
		fmt.Sprintf("%d grants 1 on a #1..%d on a #1, deletes []", maxGrants, maxGrants),
		fmt.Sprintf("2 grants %d on a #1..%d on a #1, deletes [1]", maxGrants+1, maxGrants+2),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
}
