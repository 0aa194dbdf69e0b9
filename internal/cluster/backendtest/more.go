package backendtest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/internal/cluster"
)

// forgetOrphans deletes the finished jobs (dead, or succeeded and kept)
// of owners not live, finished longer than after ago, and nothing else:
// not a live owner's, not one without an owner, not one finished
// recently, not a pending one.
func forgetOrphans(t *testing.T, b cluster.Backend) {
	longAgo, soon := time.Unix(2, 0).UTC(), time.Now().Add(time.Hour).UTC()
	type job struct {
		id, owner string
		state     core.RecordState
		finished  time.Time
	}
	jobs := []job{
		{"dead-gone", "gone", core.RecordDead, longAgo},
		{"kept-gone", "gone", core.RecordSucceeded, longAgo},
		{"dead-live", "live", core.RecordDead, longAgo},
		{"dead-ownerless", "", core.RecordDead, longAgo},
		{"dead-recent", "gone", core.RecordDead, soon},
		{"pending-gone", "gone", core.RecordPending, time.Time{}},
	}
	e := lead(t, b, "a")
	js, _, feed, err := b.Domain(bg, Domain, e)
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	seqs, ids := []uint64{}, map[uint64]string{}
	for _, j := range jobs {
		rec := insertOwned(t, b, j.id, j.owner)
		seqs, ids[rec.Seq] = append(seqs, rec.Seq), j.id
		if j.state == core.RecordPending {
			continue
		}
		put := *rec
		put.State, put.FinishedAt, put.LastError = j.state, j.finished, "boom"
		if err := js.ApplyJobs([]machine.JobOp{{Put: &put}}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := b.ForgetOrphans(bg, Domain, e, []string{"live"}, time.Hour)
	diff(t, "forgotten", []any{n, err}, []any{2, nil})
	rows, err := b.Rows(bg, seqs)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, r := range rows {
		left = append(left, ids[r.Seq])
	}
	slices.Sort(left)
	diff(t, "jobs left", left, []string{"dead-live", "dead-ownerless", "dead-recent", "pending-gone"})
	n, _ = b.ForgetOrphans(bg, Domain, e, []string{"live"}, time.Hour)
	diff(t, "forgotten again", n, 0)
}

// grantState is what an executor reads of one of its grants.
type grantState struct {
	Seq       uint64
	Attempt   int
	Key       string
	Cancelled bool
}

func granted(t *testing.T, b cluster.Backend, instance string) []grantState {
	t.Helper()
	gs, err := b.Granted(bg, instance)
	if err != nil {
		t.Fatal(err)
	}
	var out []grantState
	for _, g := range gs {
		out = append(out, grantState{g.Seq, g.Attempt, g.ConflictKey, g.Cancelled})
	}
	slices.SortFunc(out, func(a, b grantState) int { return int(a.Seq) - int(b.Seq) })
	return out
}

// revokeJobMarksTheGrant: RevokeJob marks a running job's grant cancelled
// (Granted says so) and leaves it in place — running, its exclusive key
// held — until its executor reports the end; a revoke of a pending or
// unknown job changes nothing (its later grant is not cancelled).
func revokeJobMarksTheGrant(t *testing.T, b cluster.Backend) {
	r1, r2, r3 := insert(t, b, "1"), insert(t, b, "2"), insert(t, b, "3")
	e := lead(t, b, "a")
	grant(t, b, e, cluster.Grant{Seq: r1.Seq, Instance: "i", Attempt: 1, ConflictKey: "g/k"})
	for _, seq := range []uint64{r1.Seq, r2.Seq, 999} {
		if err := b.RevokeJob(bg, Domain, e, seq, cluster.RevokeCancel); err != nil {
			t.Fatalf("revoke %d: %v", seq, err)
		}
	}
	diff(t, "granted after the revoke", granted(t, b, "i"), []grantState{{r1.Seq, 1, "g/k", true}})
	rows, _ := b.Rows(bg, []uint64{r1.Seq})
	diff(t, "the revoked job's row", rows, []cluster.Row{{Seq: r1.Seq, Running: true, Instance: "i", Attempt: 1, End: cluster.End{Seq: r1.Seq}}})
	_, _, err := b.Grant(bg, Domain, e, nil, nil, []cluster.Grant{{Seq: r3.Seq, Instance: "i", Attempt: 1, ConflictKey: "g/k"}})
	diff(t, "g/k while the revoked job runs", errors.Is(err, cluster.ErrDoubleAdmission), true)
	grant(t, b, e, cluster.Grant{Seq: r2.Seq, Instance: "i", Attempt: 1})
	diff(t, "granted after the pending job's grant", granted(t, b, "i"), []grantState{{r1.Seq, 1, "g/k", true}, {r2.Seq, 1, "", false}})
	if n, err := b.ReportEnds(bg, []cluster.End{{Seq: r1.Seq, Instance: "i", Attempt: 1, Kind: cluster.EndPermanent, Error: "cancelled"}}); err != nil || n != 1 {
		t.Fatalf("report: %d %v", n, err)
	}
	diff(t, "granted after the end", granted(t, b, "i"), []grantState{{r2.Seq, 1, "", false}})
	diff(t, "g/k after the end", grant(t, b, e, cluster.Grant{Seq: r3.Seq, Instance: "j", Attempt: 1, ConflictKey: "g/k"}), []uint64{r3.Seq})
}

// heartbeatsDescribeInstances: Instances returns what the last heartbeat
// of each instance of the domain said — slots, types, workers, subscribed —
// and nothing of another domain's.
func heartbeatsDescribeInstances(t *testing.T, b cluster.Backend) {
	beats := []struct {
		domain string
		in     cluster.Instance
	}{
		{Domain, cluster.Instance{ID: "j", Slots: 1}},
		{Domain, cluster.Instance{ID: "i", Slots: 2, Types: []string{"t"}, Workers: map[string][][]string{"w": {{"t"}, {"t", "u"}}}, Subscribed: true}},
		{"other", cluster.Instance{ID: "k", Slots: 3}},
		{Domain, cluster.Instance{ID: "j", Slots: 4, Types: []string{"u", "t"}}},
	}
	for _, beat := range beats {
		in := beat.in
		if _, err := b.Heartbeat(bg, beat.domain, in); err != nil {
			t.Fatal(err)
		}
		if in.Workers != nil { // the backend keeps its own copy
			in.Workers["w"][0][0] = "changed"
		}
	}
	ins, err := b.Instances(bg, Domain)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ins {
		if ins[i].Silent < 0 || ins[i].Silent > time.Hour {
			t.Errorf("%s silent for %v", ins[i].ID, ins[i].Silent)
		}
		ins[i].Silent = 0
	}
	want := []cluster.Instance{
		{ID: "i", Slots: 2, Types: []string{"t"}, Workers: map[string][][]string{"w": {{"t"}, {"t", "u"}}}, Subscribed: true},
		{ID: "j", Slots: 4, Types: []string{"u", "t"}},
	}
	diff(t, "instances", ins, want, cmpopts.EquateEmpty())
}

// stateSavedAndLoaded: the leader's JobStore saves the scheduler's state
// under its lease and loads it back; LoadJobs lists the records.
func stateSavedAndLoaded(t *testing.T, b cluster.Backend) {
	r := insert(t, b, "1")
	e := lead(t, b, "a")
	js, _, feed, err := b.Domain(bg, Domain, e)
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	st := core.State{KeyCosts: map[string]time.Duration{"k": time.Second}}
	if err := js.Save(st); err != nil {
		t.Fatal(err)
	}
	got, err := js.Load()
	diff(t, "loaded", []any{got, err}, []any{st, nil}, cmpopts.EquateEmpty())
	var seqs []uint64
	if err := js.LoadJobs(func(rec core.JobRecord) error { seqs = append(seqs, rec.Seq); return nil }); err != nil {
		t.Fatal(err)
	}
	diff(t, "records loaded", seqs, []uint64{r.Seq})
}

// grantWritesRecords: the turn's records (a dead job, a retry's new
// state) commit in the same transaction as its grants — and not at all
// when the turn is refused, a double admission or a deposed epoch.
func grantWritesRecords(t *testing.T, b cluster.Backend) {
	r1, r2, r3, r4 := insert(t, b, "1"), insert(t, b, "2"), insert(t, b, "3"), insert(t, b, "4")
	e := lead(t, b, "a")
	dead := *r1
	dead.State, dead.LastError, dead.FinishedAt = core.RecordDead, "boom", time.Unix(2, 0).UTC()
	_, took, err := b.Grant(bg, Domain, e, []machine.JobOp{{Put: &dead}}, nil, []cluster.Grant{{Seq: r2.Seq, Instance: "i", Attempt: 1, ConflictKey: "g/k"}})
	diff(t, "took, err", []any{took, err}, []any{[]uint64{r2.Seq}, nil})
	finals := func() []cluster.Final {
		got, err := b.Finals(bg, []uint64{r1.Seq, r3.Seq, r4.Seq})
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(got, func(a, b cluster.Final) int { return int(a.Seq) - int(b.Seq) })
		return got
	}
	diff(t, "finals after the turn", finals(), []cluster.Final{{Seq: r1.Seq, State: core.RecordDead, LastError: "boom"}})

	// A refused turn writes none of its records.
	dead3 := *r3
	dead3.State, dead3.LastError, dead3.FinishedAt = core.RecordDead, "no", time.Unix(3, 0).UTC()
	_, _, err = b.Grant(bg, Domain, e, []machine.JobOp{{Put: &dead3}, {Delete: r1.Seq}}, nil,
		[]cluster.Grant{{Seq: r4.Seq, Instance: "i", Attempt: 1, ConflictKey: "g/k"}})
	if !errors.Is(err, cluster.ErrDoubleAdmission) {
		t.Fatalf("second running grant of g/k: %v, want ErrDoubleAdmission", err)
	}
	diff(t, "finals after the refused turn (r3 not dead, r1's delete undone)", finals(),
		[]cluster.Final{{Seq: r1.Seq, State: core.RecordDead, LastError: "boom"}})

	// A deposed leader's turn writes none either.
	if err := b.Release(bg, Domain, "a", e); err != nil {
		t.Fatal(err)
	}
	lead(t, b, "b")
	_, _, err = b.Grant(bg, Domain, e, []machine.JobOp{{Put: &dead3}}, nil, nil)
	if !errors.Is(err, cluster.ErrFenced) {
		t.Fatalf("a deposed turn with records: %v, want ErrFenced", err)
	}
	diff(t, "finals after the fenced turn", finals(), []cluster.Final{{Seq: r1.Seq, State: core.RecordDead, LastError: "boom"}})
}

// grantRefusesARecordAlone: a record the database cannot keep fails the
// turn's write as refused (ErrRecordRefused), so that its owner writes
// the records in parts; nothing of the turn is written.
func grantRefusesARecordAlone(t *testing.T, b cluster.Backend) {
	r1, r2 := insert(t, b, "1"), insert(t, b, "2")
	e := lead(t, b, "a")
	bad := *r1
	bad.Type = "t\x00" // no database keeps a NUL in text
	_, _, err := b.Grant(bg, Domain, e, []machine.JobOp{{Put: &bad}}, nil, []cluster.Grant{{Seq: r2.Seq, Instance: "i", Attempt: 1}})
	if !errors.Is(err, machine.ErrRecordRefused) {
		t.Fatalf("a turn with a record the database refuses: %v, want ErrRecordRefused", err)
	}
	rows, _ := b.Rows(bg, []uint64{r2.Seq})
	diff(t, "r2 after the refused turn", rows[0].Running, false)
}

// handedGrantsNotReadBack: a grant handed to its executor in process is
// not among that executor's incremental reads — it runs there already —
// until the leader asks it to stop; a full read shows it.
func handedGrantsNotReadBack(t *testing.T, b cluster.Backend) {
	r1, r2 := insert(t, b, "1"), insert(t, b, "2")
	e := lead(t, b, "a")
	grant(t, b, e, cluster.Grant{Seq: r1.Seq, Instance: "i", Attempt: 1, Handed: true}, cluster.Grant{Seq: r2.Seq, Instance: "i", Attempt: 1})
	seqs := func(gs []cluster.Grant) (out []uint64) {
		for _, g := range gs {
			out = append(out, g.Seq)
		}
		return out
	}
	gs, cur, err := b.GrantsSince(bg, "i", cluster.ReadCursor{})
	diff(t, "incremental read", []any{seqs(gs), err}, []any{[]uint64{r2.Seq}, nil})
	all, err := b.Granted(bg, "i")
	diff(t, "full read", []any{seqs(all), err}, []any{[]uint64{r1.Seq, r2.Seq}, nil})
	if err := b.RevokeJob(bg, Domain, e, r1.Seq, cluster.RevokeCancel); err != nil {
		t.Fatal(err)
	}
	gs, _, _ = b.GrantsSince(bg, "i", cur)
	diff(t, "the handed grant asked to stop", len(gs) == 1 && gs[0].Seq == r1.Seq && gs[0].Cancelled, true)
}
