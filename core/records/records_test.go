package records_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/records"
	"github.com/fairsched/fairsched/policy"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

const cancelledText = "cancelled"

func newRec(seq uint64, id string) *core.JobRecord {
	return &core.JobRecord{Seq: seq, Type: "mail", ID: id, EnqueuedAt: t0, State: core.RecordPending}
}

func put(r core.JobRecord) records.Op { return records.Op{Put: &r} }
func del(seq uint64) records.Op       { return records.Op{Delete: seq} }

// step is one rule applied to a job's record in a timeline, with the ops
// it must emit.
type step struct {
	name string
	do   func(tb *records.Table, rec *core.JobRecord) []records.Op
	want func(rec core.JobRecord) []records.Op // of the record before the step
}

func runTimeline(t *testing.T, tb *records.Table, rec *core.JobRecord, steps []step) {
	t.Helper()
	for _, s := range steps {
		before := *rec
		got := s.do(tb, rec)
		if diff := cmp.Diff(s.want(before), got); diff != "" {
			t.Fatalf("%s: ops (-want +got):\n%s", s.name, diff)
		}
	}
}

func start(tb *records.Table, rec *core.JobRecord) []records.Op {
	ops, deferred, _ := records.Start(rec, false)
	if !deferred {
		panic("a start not granted is written before its handler runs")
	}
	return ops
}

// TestTimelineRetryThenDead: a job's attempts each write their start
// before the handler runs; a failure that retries writes its error and
// the attempt it ended; the last failure makes it dead, listed, and a
// revive makes a fresh pending record of a new sequence in one commit.
func TestTimelineRetryThenDead(t *testing.T) {
	tb := records.New(0, cancelledText)
	tb.Saw(6)
	rec := newRec(tb.Next(), "a")
	boom := errors.New("smtp: 451\x00down")
	runTimeline(t, tb, rec, []step{
		{"enqueue", func(tb *records.Table, r *core.JobRecord) []records.Op { return records.Enqueue(r, 0) },
			func(r core.JobRecord) []records.Op { return []records.Op{put(r)} }},
		{"start 1", start, func(r core.JobRecord) []records.Op { r.Attempt = 1; return []records.Op{put(r)} }},
		{"retry", func(tb *records.Table, r *core.JobRecord) []records.Op { return records.Retrying(r, boom) },
			func(r core.JobRecord) []records.Op {
				r.LastError, r.EndedAttempt = "smtp: 451down", 1
				return []records.Op{put(r)}
			}},
		{"start 2", start, func(r core.JobRecord) []records.Op { r.Attempt = 2; return []records.Op{put(r)} }},
		{"dead", func(tb *records.Table, r *core.JobRecord) []records.Op {
			return tb.Ended(r, records.End{Err: boom}, t0.Add(time.Minute))
		}, func(r core.JobRecord) []records.Op {
			r.State, r.LastError, r.FinishedAt = core.RecordDead, "smtp: 451down", t0.Add(time.Minute)
			return []records.Op{put(r)}
		}},
	})
	dead := tb.Dead("mail", "")
	if diff := cmp.Diff([]*core.JobRecord{rec}, dead); diff != "" {
		t.Fatalf("dead (-want +got):\n%s", diff)
	}
	fresh, ops := tb.Revive(dead[0], t0.Add(time.Hour))
	want := core.JobRecord{Seq: 8, Type: "mail", ID: "a", EnqueuedAt: t0.Add(time.Hour), State: core.RecordPending}
	if diff := cmp.Diff([]records.Op{del(7), put(want)}, ops); diff != "" {
		t.Fatalf("revive (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&want, fresh); diff != "" {
		t.Fatalf("revived record (-want +got):\n%s", diff)
	}
	if got := tb.Dead("", ""); len(got) != 0 {
		t.Fatalf("still dead after a revive: %v", got)
	}
	tb.Unrevive(dead[0]) // its commit failed: dead again
	if diff := cmp.Diff([]*core.JobRecord{rec}, tb.Dead("mail", "a")); diff != "" {
		t.Fatalf("dead after an unrevive (-want +got):\n%s", diff)
	}
}

// TestTimelineInterruptions: an interrupted attempt is counted and
// written; past MaxInterruptions the job ends dead with InterruptedError.
func TestTimelineInterruptions(t *testing.T) {
	tb := records.New(0, cancelledText)
	rec := newRec(tb.Next(), "b")
	stop := errors.New("worker lost")
	interrupted := func(tb *records.Table, r *core.JobRecord) []records.Op { return records.Interrupted(r) }
	counted := func(n int) func(core.JobRecord) []records.Op {
		return func(r core.JobRecord) []records.Op {
			r.Interruptions, r.EndedAttempt = n, r.Attempt
			return []records.Op{put(r)}
		}
	}
	runTimeline(t, tb, rec, []step{
		{"start 1", start, func(r core.JobRecord) []records.Op { r.Attempt = 1; return []records.Op{put(r)} }},
		{"interrupted 1", interrupted, counted(1)},
		{"start 2", start, func(r core.JobRecord) []records.Op { r.Attempt = 2; return []records.Op{put(r)} }},
		{"interrupted 2", interrupted, counted(2)},
		{"start 3", start, func(r core.JobRecord) []records.Op { r.Attempt = 3; return []records.Op{put(r)} }},
	})
	err := records.InterruptedTooOften(rec, stop)
	if !errors.Is(err, stop) || !policy.IsPermanent(err) {
		t.Fatalf("past MaxInterruptions: %v, want a permanent error wrapping the interruption", err)
	}
	ops := tb.Ended(rec, records.End{Err: err}, t0)
	want := core.JobRecord{Seq: 1, Type: "mail", ID: "b", EnqueuedAt: t0, Attempt: 3, Interruptions: 3, EndedAttempt: 3,
		State: core.RecordDead, LastError: policy.CleanText(err.Error()), FinishedAt: t0}
	if diff := cmp.Diff([]records.Op{put(want)}, ops); diff != "" {
		t.Fatalf("dead (-want +got):\n%s", diff)
	}
}

// TestRestored: an attempt a restart finds started and never ended is an
// interruption, written; past the retry policy's MaxInterruptions the job
// is dead instead (nothing written here: its end is).
func TestRestored(t *testing.T) {
	retry := policy.RetryPolicy{MaxInterruptions: 2}
	for _, c := range []struct {
		name    string
		rec     core.JobRecord
		ops     []records.Op
		counted bool
		dead    bool
	}{
		{name: "never started", rec: core.JobRecord{Seq: 1}},
		{name: "ended", rec: core.JobRecord{Seq: 1, Attempt: 2, EndedAttempt: 2}},
		{name: "running elsewhere", rec: core.JobRecord{Seq: 1, Attempt: 2, Granted: "n1"}},
		{name: "dead", rec: core.JobRecord{Seq: 1, Attempt: 2, State: core.RecordDead}},
		{name: "interrupted", rec: core.JobRecord{Seq: 1, Attempt: 2, EndedAttempt: 1, Interruptions: 1}, counted: true,
			ops: []records.Op{put(core.JobRecord{Seq: 1, Attempt: 2, EndedAttempt: 2, Interruptions: 2})}},
		{name: "too often", rec: core.JobRecord{Seq: 1, Attempt: 3, EndedAttempt: 2, Interruptions: 2}, counted: true, dead: true},
	} {
		rec := c.rec
		ops, counted, dead := records.Restored(&rec, retry)
		if diff := cmp.Diff(c.ops, ops); diff != "" {
			t.Errorf("%s: ops (-want +got):\n%s", c.name, diff)
		}
		if counted != c.counted || (dead != nil) != c.dead {
			t.Errorf("%s: counted %v, dead %v; want %v, %v", c.name, counted, dead, c.counted, c.dead)
		}
		if c.dead && !errors.Is(dead, core.ErrInterrupted) {
			t.Errorf("%s: dead with %v, want ErrInterrupted", c.name, dead)
		}
	}
}

// TestStart: a start is counted and written before the handler runs; a
// resumed attempt (granted by a previous leader) is neither; with the
// leader's grant writing the count, it is counted and not written.
func TestStart(t *testing.T) {
	for _, c := range []struct {
		name        string
		granted     string
		grantWrites bool
		wantAttempt int
		wantOps     bool
	}{
		{name: "written first", wantAttempt: 2, wantOps: true},
		{name: "resumed", granted: "n1", wantAttempt: 1},
		{name: "grant writes", grantWrites: true, wantAttempt: 2},
	} {
		rec := core.JobRecord{Seq: 3, Attempt: 1, Granted: c.granted}
		ops, deferred, granted := records.Start(&rec, c.grantWrites)
		var want []records.Op
		if c.wantOps {
			want = []records.Op{put(core.JobRecord{Seq: 3, Attempt: c.wantAttempt})}
		}
		if diff := cmp.Diff(want, ops); diff != "" {
			t.Errorf("%s: ops (-want +got):\n%s", c.name, diff)
		}
		if deferred != c.wantOps || granted != c.granted || rec.Granted != "" || rec.Attempt != c.wantAttempt {
			t.Errorf("%s: deferred %v granted %q, record %+v", c.name, deferred, granted, rec)
		}
	}
	rec := core.JobRecord{Seq: 3, Attempt: 1}
	records.Start(&rec, false)
	records.Unstarted(&rec) // its start was not written: the number is used again
	if ops, _, _ := records.Start(&rec, false); ops[0].Put.Attempt != 2 {
		t.Fatalf("after an unwritten start: attempt %d, want 2", ops[0].Put.Attempt)
	}
}

// TestEnded: how each end is written, for a job any instance runs and for
// a RunSync's or Submit's job of cluster mode (Owner), whose instance
// reads why it ended.
func TestEnded(t *testing.T) {
	boom := errors.New("boom")
	dead := func(why string) []records.Op {
		return []records.Op{put(core.JobRecord{Seq: 5, Type: "mail", ID: "c", EnqueuedAt: t0, State: core.RecordDead,
			LastError: why, FinishedAt: t0.Add(time.Second)})}
	}
	owned := func(ops []records.Op) []records.Op {
		for _, op := range ops {
			if op.Put != nil {
				op.Put.Owner = "i1"
			}
		}
		return ops
	}
	for _, c := range []struct {
		name  string
		owner string
		end   records.End
		want  []records.Op
	}{
		{name: "success", want: []records.Op{del(5)}},
		{name: "success of a cancelled job", end: records.End{Cancelled: true}, want: []records.Op{del(5)}},
		{name: "failure", end: records.End{Err: boom}, want: dead("boom")},
		{name: "cancelled", end: records.End{Err: boom, Cancelled: true}, want: []records.Op{del(5)}},
		{name: "dropped", end: records.End{Err: boom, Dropped: true, Cancelled: true}},
		{name: "owner success", owner: "i1", want: []records.Op{del(5)}},
		{name: "owner cancelled", owner: "i1", end: records.End{Cancelled: true}, want: owned(dead(cancelledText))},
		{name: "owner failure", owner: "i1", end: records.End{Err: boom, Cancelled: true}, want: owned(dead("boom"))},
		{name: "owner dropped", owner: "i1", end: records.End{Err: boom, Dropped: true}},
	} {
		tb := records.New(0, cancelledText)
		rec := newRec(5, "c")
		rec.Owner = c.owner
		if diff := cmp.Diff(c.want, tb.Ended(rec, c.end, t0.Add(time.Second))); diff != "" {
			t.Errorf("%s: ops (-want +got):\n%s", c.name, diff)
		}
		listed := len(tb.Dead("", "")) > 0
		if wantListed := c.owner == "" && c.name == "failure"; listed != wantListed {
			t.Errorf("%s: listed dead %v, want %v", c.name, listed, wantListed)
		}
	}
}

// TestRetentionAndRestore: a success is kept for the retention, then
// pruned; a restart reads pending, dead and retained records back, the
// retained ones pruned in the order they finished, and numbers new jobs
// after every sequence it read.
func TestRetentionAndRestore(t *testing.T) {
	tb := records.New(time.Hour, cancelledText)
	a, b := newRec(1, "a"), newRec(2, "b")
	if diff := cmp.Diff([]records.Op{put(core.JobRecord{Seq: 2, Type: "mail", ID: "b", EnqueuedAt: t0,
		State: core.RecordSucceeded, FinishedAt: t0})}, tb.Ended(b, records.End{}, t0)); diff != "" {
		t.Fatalf("kept success (-want +got):\n%s", diff)
	}
	tb.Ended(a, records.End{}, t0.Add(time.Minute))
	if ops := tb.Prune(t0.Add(59 * time.Minute)); len(ops) != 0 {
		t.Fatalf("pruned before the retention: %v", ops)
	}
	if diff := cmp.Diff([]records.Op{del(2)}, tb.Prune(t0.Add(time.Hour))); diff != "" {
		t.Fatalf("prune (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]records.Op{del(1)}, tb.Prune(t0.Add(time.Hour+time.Minute))); diff != "" {
		t.Fatalf("second prune (-want +got):\n%s", diff)
	}

	restarted := records.New(time.Hour, cancelledText)
	stored := []core.JobRecord{
		{Seq: 3, ID: "late", State: core.RecordSucceeded, FinishedAt: t0.Add(2 * time.Hour)},
		{Seq: 4, ID: "p1", State: core.RecordPending},
		{Seq: 9, ID: "gone", State: core.RecordDead},
		{Seq: 11, ID: "early", State: core.RecordSucceeded, FinishedAt: t0},
		{Seq: 12, ID: "p2", State: core.RecordPending, Attempt: 1},
	}
	pending := restarted.Restore(stored)
	if diff := cmp.Diff([]*core.JobRecord{&stored[1], &stored[4]}, pending); diff != "" {
		t.Fatalf("pending (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]*core.JobRecord{&stored[2]}, restarted.Dead("", "")); diff != "" {
		t.Fatalf("dead (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]records.Op{del(11), del(3)}, restarted.Prune(t0.Add(3*time.Hour))); diff != "" {
		t.Fatalf("prune after restore (-want +got):\n%s", diff)
	}
	if seq := restarted.Next(); seq != 13 {
		t.Fatalf("next sequence %d, want 13", seq)
	}
}

// TestSupersede: the record of an Enqueue with Supersede and the delete of
// the pending one it replaces are one unit of writes.
func TestSupersede(t *testing.T) {
	rec := newRec(8, "d")
	if diff := cmp.Diff([]records.Op{put(*rec), del(3)}, records.Enqueue(rec, 3)); diff != "" {
		t.Fatalf("ops (-want +got):\n%s", diff)
	}
}

// TestRefused: what replaces an op the store refused for its data.
func TestRefused(t *testing.T) {
	tb := records.New(0, cancelledText)
	deadRec := newRec(4, "e")
	tb.Ended(deadRec, records.End{Err: errors.New("x")}, t0)
	bad := *deadRec
	bad.LastError = "bad\x00text"
	for _, c := range []struct {
		name string
		op   records.Op
		rep  records.Op
		ok   bool
		why  records.Refusal
	}{
		{name: "delete", op: del(4), why: records.RefusedDelete},
		{name: "dirty text", op: put(bad), rep: put(func() core.JobRecord { c := bad; c.LastError = "badtext"; return c }()),
			ok: true, why: records.RefusedCleaned},
		{name: "ended", op: put(*deadRec), rep: del(4), ok: true, why: records.RefusedEndDeleted},
		{name: "pending", op: put(*newRec(6, "f")), why: records.RefusedKept},
	} {
		rep, ok, why := tb.Refused(c.op)
		if diff := cmp.Diff(c.rep, rep); diff != "" || ok != c.ok || why != c.why {
			t.Errorf("%s: ok %v why %v, want %v %v; replacement (-want +got):\n%s", c.name, ok, why, c.ok, c.why, diff)
		}
	}
	if got := tb.Dead("", ""); len(got) != 0 {
		t.Fatalf("a dead record whose end the store refused is still listed: %v", got)
	}
}

// TestEndWritten: a success whose record the handler's write deleted
// (cluster mode) needs no write, unless the record outlives it.
func TestEndWritten(t *testing.T) {
	for _, c := range []struct {
		name                  string
		retention             time.Duration
		owner                 string
		cancelled, coalescing bool
		want                  bool
	}{
		{name: "plain", want: true},
		{name: "retained", retention: time.Hour},
		{name: "owner", owner: "i1", retention: time.Hour, want: true},
		{name: "owner cancelled", owner: "i1", cancelled: true},
		{name: "owner coalescing", owner: "i1", coalescing: true},
	} {
		rec := newRec(1, "g")
		rec.Owner = c.owner
		if got := records.New(c.retention, cancelledText).EndWritten(rec, c.cancelled, c.coalescing); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestAdmit: an Enqueue of a held (type, id) coalesces, supersedes a job
// that waits, or is a duplicate.
func TestAdmit(t *testing.T) {
	waits := records.Held{Pending: true}
	for _, c := range []struct {
		name                  string
		held                  records.Held
		supersede, coalescing bool
		want                  records.Verdict
	}{
		{name: "duplicate", held: waits, want: records.Duplicate},
		{name: "coalescing", held: records.Held{Committing: true}, coalescing: true, want: records.Coalesced},
		{name: "supersede", held: waits, supersede: true, want: records.Supersedes},
		{name: "supersede a running one", held: records.Held{}, supersede: true, want: records.Duplicate},
		{name: "supersede one committing", held: records.Held{Pending: true, Committing: true}, supersede: true, want: records.Duplicate},
		{name: "supersede one replaced", held: records.Held{Pending: true, Replaced: true}, supersede: true, want: records.Duplicate},
	} {
		if got := records.Admit(c.held, c.supersede, c.coalescing); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
