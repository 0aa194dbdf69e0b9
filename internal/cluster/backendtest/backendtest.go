// Package backendtest is the conformance suite of cluster.Backend: one
// subtest per contract the cluster relies on, run against every backend
// (package pgstore's Store, package memback's). The suite never waits
// for a clock: a lease ends by Release, an instance is lost by a deadline
// in the future or not by one long past.
package backendtest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/internal/cluster"
)

// Domain is the domain every subtest uses.
const Domain = "d"

const ttl = time.Minute

// Option configures Run.
type Option func(*config)

type config struct {
	deafen func(*testing.T, cluster.Backend)
}

// Deafen gives Run the way to make a backend stop listening as when its
// listening connections are lost (deafen returns once that is done, or
// under way): the contract that Wake and Events channels close then is
// skipped without it.
func Deafen(deafen func(t *testing.T, b cluster.Backend)) Option {
	return func(c *config) { c.deafen = deafen }
}

// Run runs every contract against a fresh backend from open (each subtest
// opens its own; open registers its cleanup with t).
func Run(t *testing.T, open func(t *testing.T) cluster.Backend, opts ...Option) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	for _, c := range []struct {
		name string
		f    func(*testing.T, cluster.Backend)
	}{
		{"LeaseOneHolderEpochsRise", leaseOneHolder},
		{"ReleaseLetsAnotherLead", releaseLetsAnother},
		{"DeposedWritesAreFenced", deposedFenced},
		{"InsertNumbersAndRefusesDuplicates", insertDuplicates},
		{"InsertManyErrorsPerRecord", insertMany},
		{"GrantTakesOnlyPendingNotRunning", grantOnce},
		{"GrantTakesEachAttemptOnce", grantEachAttemptOnce},
		{"ExclusiveKeyRefusesTheWholeTurn", doubleAdmission},
		{"SuccessFreesItsKeyInTheSameTurn", successFreesKey},
		{"GrantWritesTheTurnsRecordsWithIt", grantWritesRecords},
		{"GrantRefusesARecordItCannotKeep", grantRefusesARecordAlone},
		{"ReportEndsMatchesItsAttempt", reportEnds},
		{"SucceededDeletesReportedSuccess", succeededReported},
		{"RevokeTakesBackAndLateReportsMatchNothing", revoke},
		{"LostReturnsSilentAndUnrevoked", lost},
		{"CommandsAnswersSettings", commands},
		{"ClaimSlotOncePerLaterSlot", claimSlot},
		{"FinalsAndForget", finals},
		{"DomainMarksRunningAndFeedsNewJobs", domain},
		{"IncrementalReadsEachOnce", incremental},
		{"HandedGrantsAreNotReadBack", handedGrantsNotReadBack},
		{"WakeNamesItsReaders", wakeNamesItsReaders},
		{"EventsReachListenersFromNow", eventsReachListenersFromNow},
		{"SuccessesToldReachListenersWhole", successesTold},
		{"ListenersCloseWhenTheBackendStopsListening", listenersCloseWhenDeaf(cfg.deafen)},
		{"ForgetOrphansDeletesOnlyOrphans", forgetOrphans},
		{"RevokeJobMarksTheGrantUntilItsEnd", revokeJobMarksTheGrant},
		{"HeartbeatsDescribeInstances", heartbeatsDescribeInstances},
		{"HeartbeatsThatChangeWakeTheLeader", instancesWake},
		{"StateSavedAndLoaded", stateSavedAndLoaded},
		{"OverloadVerdictOfTheLiveEpoch", overloadVerdicts},
	} {
		t.Run(c.name, func(t *testing.T) { c.f(t, open(t)) })
	}
}

var bg = context.Background()

func lead(t *testing.T, b cluster.Backend, holder string) int64 {
	t.Helper()
	e, ok, err := b.Acquire(bg, Domain, holder, ttl)
	if err != nil || !ok {
		t.Fatalf("%s acquires: %v %v", holder, ok, err)
	}
	return e
}

func insert(t *testing.T, b cluster.Backend, id string) *core.JobRecord {
	t.Helper()
	rec := &core.JobRecord{Type: "t", ID: id, EnqueuedAt: time.Unix(1, 0).UTC()}
	if err := b.Insert(bg, rec); err != nil {
		t.Fatalf("insert %s: %v", id, err)
	}
	return rec
}

func grant(t *testing.T, b cluster.Backend, epoch int64, gs ...cluster.Grant) []uint64 {
	t.Helper()
	_, took, err := b.Grant(bg, Domain, epoch, nil, nil, gs)
	if err != nil {
		t.Fatalf("grant: %v", err)
	}
	return took
}

func diff(t *testing.T, what string, got, want any, opts ...cmp.Option) {
	t.Helper()
	if d := cmp.Diff(want, got, opts...); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
}

func leaseOneHolder(t *testing.T, b cluster.Backend) {
	e1 := lead(t, b, "a")
	_, ok, err := b.Acquire(bg, Domain, "b", ttl)
	diff(t, "b acquires a live lease", []any{ok, err}, []any{false, nil})
	e2 := lead(t, b, "a") // the same holder takes it back under a new epoch
	if e2 <= e1 {
		t.Errorf("epoch %d after %d", e2, e1)
	}
	ok, err = b.Renew(bg, Domain, "a", e1, ttl)
	diff(t, "renew under the old epoch", []any{ok, err}, []any{false, nil})
	ok, err = b.Renew(bg, Domain, "a", e2, ttl)
	diff(t, "renew", []any{ok, err}, []any{true, nil})
	h, e, live, err := b.Leader(bg, Domain)
	diff(t, "leader", []any{h, e, live, err}, []any{"a", e2, true, nil})
	h, e, live, err = b.Leader(bg, "other")
	diff(t, "leader of a domain never held", []any{h, e, live, err}, []any{"", int64(0), false, nil})
}

func releaseLetsAnother(t *testing.T, b cluster.Backend) {
	e1 := lead(t, b, "a")
	if err := b.Release(bg, Domain, "a", e1); err != nil {
		t.Fatal(err)
	}
	_, _, live, _ := b.Leader(bg, Domain)
	diff(t, "live after release", live, false)
	e2 := lead(t, b, "b")
	if e2 <= e1 {
		t.Errorf("epoch %d after %d", e2, e1)
	}
	if err := b.Release(bg, Domain, "a", e1); err != nil { // lost already: nothing
		t.Fatal(err)
	}
	h, _, live, _ := b.Leader(bg, Domain)
	diff(t, "after a's late release", []any{h, live}, []any{"b", true})
}

func deposedFenced(t *testing.T, b cluster.Backend) {
	e1 := lead(t, b, "a")
	js, _, feed, err := b.Domain(bg, Domain, e1)
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	rec := insert(t, b, "x")
	if err := b.Release(bg, Domain, "a", e1); err != nil {
		t.Fatal(err)
	}
	lead(t, b, "b")
	put := *rec
	put.State = core.RecordDead
	writes := map[string]error{
		"ApplyJobs": js.ApplyJobs([]machine.JobOp{{Put: &put}}),
		"Grant":     third(b.Grant(bg, Domain, e1, nil, nil, []cluster.Grant{{Seq: rec.Seq, Instance: "i", Attempt: 1}})),
		"Revoke":    second(b.Revoke(bg, Domain, e1, "i")),
		"Lost":      second(b.Lost(bg, Domain, e1, -time.Hour)),
		"Answer":    b.Answer(bg, Domain, e1, 1, []byte("r"), "", nil),
		"RevokeJob": b.RevokeJob(bg, Domain, e1, rec.Seq, cluster.RevokeCancel),
		"Forget":    second(b.ForgetOrphans(bg, Domain, e1, nil, 0)),
		"Save":      js.Save(core.State{}),
	}
	for name, err := range writes {
		if !errors.Is(err, cluster.ErrFenced) {
			t.Errorf("%s under a deposed epoch: %v, want ErrFenced", name, err)
		}
	}
	rows, _ := b.Rows(bg, []uint64{rec.Seq})
	diff(t, "the row after fenced writes", rows, []cluster.Row{{Seq: rec.Seq, End: cluster.End{Seq: rec.Seq}}})
}

func second[T any](_ T, err error) error { return err }

func third[T, U any](_ T, _ U, err error) error { return err }

func insertDuplicates(t *testing.T, b cluster.Backend) {
	r1, r2 := insert(t, b, "1"), insert(t, b, "2")
	if r1.Seq == 0 || r2.Seq <= r1.Seq {
		t.Errorf("seqs %d then %d", r1.Seq, r2.Seq)
	}
	if err := b.Insert(bg, &core.JobRecord{Type: "t", ID: "1", EnqueuedAt: time.Unix(1, 0)}); !errors.Is(err, machine.ErrDuplicateJob) {
		t.Errorf("a second pending t/1: %v, want ErrDuplicateJob", err)
	}
	e := lead(t, b, "a")
	js, _, feed, err := b.Domain(bg, Domain, e)
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	dead := *r1
	dead.State, dead.FinishedAt = core.RecordDead, time.Unix(2, 0).UTC()
	if err := js.ApplyJobs([]machine.JobOp{{Put: &dead}}); err != nil {
		t.Fatal(err)
	}
	insert(t, b, "1") // t/1 finished: a new one is welcome
	// RunSync and Submit jobs (an owner) may share an id, with each other
	// and with a durable job, as in one process.
	insertOwned(t, b, "1", "o1")
	insertOwned(t, b, "1", "o2")
	insertOwned(t, b, "3", "o1")
	insert(t, b, "3")
}

func insertMany(t *testing.T, b cluster.Backend) {
	insert(t, b, "old")
	mk := func(id string) *core.JobRecord {
		return &core.JobRecord{Type: "t", ID: id, EnqueuedAt: time.Unix(1, 0).UTC()}
	}
	recs := []*core.JobRecord{mk("a"), mk("old"), mk("b"), mk("a")}
	errs, err := b.InsertMany(bg, recs)
	if err != nil {
		t.Fatal(err)
	}
	var dup []bool
	for _, e := range errs {
		dup = append(dup, errors.Is(e, machine.ErrDuplicateJob))
	}
	diff(t, "duplicates", dup, []bool{false, true, false, true})
	if recs[0].Seq == 0 || recs[2].Seq <= recs[0].Seq {
		t.Errorf("seqs %d, %d", recs[0].Seq, recs[2].Seq)
	}
	bad := &core.JobRecord{Type: "", ID: "x"}
	if _, err := b.InsertMany(bg, []*core.JobRecord{mk("c"), bad}); err == nil {
		t.Error("an invalid record: no error")
	}
	if err := b.Insert(bg, mk("c")); err != nil {
		t.Errorf("t/c after a batch that failed: %v", err)
	}
}

func grantOnce(t *testing.T, b cluster.Backend) {
	r1, r2 := insert(t, b, "1"), insert(t, b, "2")
	e := lead(t, b, "a")
	took := grant(t, b, e, cluster.Grant{Seq: r2.Seq, Instance: "i", Attempt: 1}, cluster.Grant{Seq: r1.Seq, Instance: "i", Attempt: 1}, cluster.Grant{Seq: 999, Instance: "i", Attempt: 1})
	diff(t, "took", took, []uint64{r1.Seq, r2.Seq})
	diff(t, "granted again", grant(t, b, e, cluster.Grant{Seq: r1.Seq, Instance: "j", Attempt: 2}), []uint64(nil))
	gs, err := b.Granted(bg, "i")
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, g := range gs {
		got = append(got, g.Seq)
		if g.Record == nil || g.Record.Seq != g.Seq || g.Record.Attempt < 1 {
			t.Errorf("grant %d's record %+v", g.Seq, g.Record)
		}
	}
	diff(t, "granted to i", got, []uint64{r1.Seq, r2.Seq})
}

// grantEachAttemptOnce: a turn written again after its reply was lost
// grants nothing its first write granted, even once that attempt has
// ended; a later attempt is granted.
func grantEachAttemptOnce(t *testing.T, b cluster.Backend) {
	r := insert(t, b, "1")
	e := lead(t, b, "a")
	diff(t, "attempt 1", grant(t, b, e, cluster.Grant{Seq: r.Seq, Instance: "i", Attempt: 1}), []uint64{r.Seq})
	if n, err := b.ReportEnds(bg, []cluster.End{{Seq: r.Seq, Instance: "i", Attempt: 1, Kind: cluster.EndError, Error: "boom"}}); err != nil || n != 1 {
		t.Fatalf("report: %d %v", n, err)
	}
	diff(t, "attempt 1 again", grant(t, b, e, cluster.Grant{Seq: r.Seq, Instance: "i", Attempt: 1}), []uint64(nil))
	diff(t, "attempt 2", grant(t, b, e, cluster.Grant{Seq: r.Seq, Instance: "i", Attempt: 2}), []uint64{r.Seq})
}

func doubleAdmission(t *testing.T, b cluster.Backend) {
	r1, r2, r3 := insert(t, b, "1"), insert(t, b, "2"), insert(t, b, "3")
	e := lead(t, b, "a")
	grant(t, b, e, cluster.Grant{Seq: r1.Seq, Instance: "i", Attempt: 1, ConflictKey: "g/k"})
	_, _, err := b.Grant(bg, Domain, e, nil, nil, []cluster.Grant{{Seq: r3.Seq, Instance: "i", Attempt: 1}, {Seq: r2.Seq, Instance: "i", Attempt: 1, ConflictKey: "g/k"}})
	if !errors.Is(err, cluster.ErrDoubleAdmission) {
		t.Fatalf("second running grant of g/k: %v, want ErrDoubleAdmission", err)
	}
	rows, _ := b.Rows(bg, []uint64{r3.Seq})
	diff(t, "r3 after the refused turn", rows[0].Running, false)
}

func successFreesKey(t *testing.T, b cluster.Backend) {
	r1, r2 := insert(t, b, "1"), insert(t, b, "2")
	e := lead(t, b, "a")
	grant(t, b, e, cluster.Grant{Seq: r1.Seq, Instance: "i", Attempt: 1, ConflictKey: "g/k"})
	gone, took, err := b.Grant(bg, Domain, e, nil, []cluster.End{{Seq: r1.Seq, Instance: "i", Attempt: 1}},
		[]cluster.Grant{{Seq: r2.Seq, Instance: "i", Attempt: 1, ConflictKey: "g/k"}})
	diff(t, "gone, took", []any{gone, took, err}, []any{[]uint64{r1.Seq}, []uint64{r2.Seq}, nil})
	gone, _, err = b.Grant(bg, Domain, e, nil, []cluster.End{{Seq: r2.Seq, Instance: "j", Attempt: 1}}, nil)
	diff(t, "a success of another instance", []any{gone, err}, []any{[]uint64(nil), nil})
}

func reportEnds(t *testing.T, b cluster.Backend) {
	r1 := insert(t, b, "1")
	e := lead(t, b, "a")
	grant(t, b, e, cluster.Grant{Seq: r1.Seq, Instance: "i", Attempt: 1, ConflictKey: "g/k"})
	n, err := b.ReportEnds(bg, []cluster.End{{Seq: r1.Seq, Instance: "i", Attempt: 2, Kind: cluster.EndError}, {Seq: r1.Seq, Instance: "j", Attempt: 1}})
	diff(t, "mismatched reports", []any{n, err}, []any{0, nil})
	end := cluster.End{Seq: r1.Seq, Instance: "i", Attempt: 1, Kind: cluster.EndError, Error: "boom"}
	n, err = b.ReportEnds(bg, []cluster.End{end})
	diff(t, "report", []any{n, err}, []any{1, nil})
	n, _ = b.ReportEnds(bg, []cluster.End{end})
	diff(t, "the report again", n, 0)
	rows, _ := b.Rows(bg, []uint64{r1.Seq, 999})
	diff(t, "rows", rows, []cluster.Row{{Seq: r1.Seq, Instance: "i", Attempt: 1, Ended: true, End: end}})
	r2 := insert(t, b, "2") // the key is free once the end is reported
	diff(t, "g/k again", grant(t, b, e, cluster.Grant{Seq: r2.Seq, Instance: "i", Attempt: 1, ConflictKey: "g/k"}), []uint64{r2.Seq})
}

func succeededReported(t *testing.T, b cluster.Backend) {
	r1, r2 := insert(t, b, "1"), insert(t, b, "2")
	e := lead(t, b, "a")
	grant(t, b, e, cluster.Grant{Seq: r1.Seq, Instance: "i", Attempt: 1}, cluster.Grant{Seq: r2.Seq, Instance: "i", Attempt: 1})
	_, _ = b.ReportEnds(bg, []cluster.End{{Seq: r1.Seq, Instance: "i", Attempt: 1, Kind: cluster.EndOK},
		{Seq: r2.Seq, Instance: "i", Attempt: 1, Kind: cluster.EndError}})
	gone, _, err := b.Grant(bg, Domain, e, nil, []cluster.End{{Seq: r1.Seq, Instance: "i", Attempt: 1}, {Seq: r2.Seq, Instance: "i", Attempt: 1}}, nil)
	diff(t, "gone: the reported success only", []any{gone, err}, []any{[]uint64{r1.Seq}, nil})
}

func revoke(t *testing.T, b cluster.Backend) {
	r1, r2 := insert(t, b, "1"), insert(t, b, "2")
	e := lead(t, b, "a")
	grant(t, b, e, cluster.Grant{Seq: r2.Seq, Instance: "i", Attempt: 1}, cluster.Grant{Seq: r1.Seq, Instance: "i", Attempt: 1, ConflictKey: "g/k"})
	seqs, err := b.Revoke(bg, Domain, e, "i")
	diff(t, "revoked", []any{seqs, err}, []any{[]uint64{r1.Seq, r2.Seq}, nil})
	n, _ := b.ReportEnds(bg, []cluster.End{{Seq: r1.Seq, Instance: "i", Attempt: 1}})
	diff(t, "a late report", n, 0)
	gs, _ := b.Granted(bg, "i")
	diff(t, "granted after revoke", len(gs), 0)
	diff(t, "granted again, key free", grant(t, b, e, cluster.Grant{Seq: r1.Seq, Instance: "j", Attempt: 2, ConflictKey: "g/k"}), []uint64{r1.Seq})
}

func lost(t *testing.T, b cluster.Backend) {
	e := lead(t, b, "a")
	beat := func(id string) bool {
		t.Helper()
		listed, err := b.Heartbeat(bg, Domain, cluster.Instance{ID: id, Slots: 2, Types: []string{"t"}})
		if err != nil {
			t.Fatal(err)
		}
		return listed
	}
	for _, id := range []string{"i", "j"} {
		diff(t, "a first heartbeat lists its instance", beat(id), true)
	}
	diff(t, "a second does not", beat("j"), false)
	ins, err := b.Instances(bg, Domain)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range ins {
		ids = append(ids, in.ID)
		diff(t, "slots, types", []any{in.Slots, in.Types}, []any{2, []string{"t"}})
	}
	diff(t, "instances", ids, []string{"i", "j"})
	got, err := b.Lost(bg, Domain, e, time.Hour)
	diff(t, "lost within the deadline", []any{got, err}, []any{[]string(nil), nil})
	r1 := insert(t, b, "1")
	grant(t, b, e, cluster.Grant{Seq: r1.Seq, Instance: "i", Attempt: 1})
	got, _ = b.Lost(bg, Domain, e, -time.Hour)
	diff(t, "lost past the deadline", got, []string{"i", "j"})
	got, _ = b.Lost(bg, Domain, e, -time.Hour)
	diff(t, "lost again: the one whose grants stand", got, []string{"i"})
	_, _ = b.Revoke(bg, Domain, e, "i")
	got, _ = b.Lost(bg, Domain, e, -time.Hour)
	diff(t, "lost after revoke", got, []string(nil))
	diff(t, "a heartbeat after its instance was lost lists it again", beat("j"), true)
}

func commands(t *testing.T, b cluster.Backend) {
	e := lead(t, b, "a")
	id1, err := b.Command(bg, Domain, cluster.Command{Kind: "k1", Args: []byte(`[1]`)})
	if err != nil {
		t.Fatal(err)
	}
	id2, _ := b.Command(bg, Domain, cluster.Command{Kind: "k2", Args: []byte(`{}`)})
	_, _ = b.Command(bg, "other", cluster.Command{Kind: "k3", Args: []byte(`{}`)})
	cs, _ := b.Commands(bg, Domain)
	diff(t, "open commands", cs, []cluster.Command{{ID: id1, Kind: "k1", Args: []byte(`[1]`)}, {ID: id2, Kind: "k2", Args: []byte(`{}`)}})
	_, ok, _ := b.Reply(bg, id1)
	diff(t, "reply before the answer", ok, false)
	if err := b.DefineTypes(bg, Domain, map[string][]byte{"type/t": []byte(`1`), "cap/x": []byte(`2`), "cap/y": []byte(`3`)}); err != nil {
		t.Fatal(err)
	}
	if err := b.Answer(bg, Domain, e, id1, []byte(`"ok"`), "cap/", map[string][]byte{"cap/z": []byte(`4`), "type/t": nil}); err != nil {
		t.Fatal(err)
	}
	reply, ok, err := b.Reply(bg, id1)
	diff(t, "reply", []any{string(reply), ok, err}, []any{`"ok"`, true, nil})
	_, ok, _ = b.Reply(bg, id1)
	diff(t, "reply read twice", ok, false)
	cs, _ = b.Commands(bg, Domain)
	diff(t, "open after the answer", len(cs), 1)
	s, _ := b.Settings(bg, Domain)
	diff(t, "settings", s, map[string][]byte{"cap/z": []byte(`4`)})
}

func claimSlot(t *testing.T, b cluster.Backend) {
	var got []bool
	for _, slot := range []int64{10, 10, 5, 11} {
		ok, err := b.ClaimSlot(bg, Domain, "p", slot)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ok)
	}
	ok, _ := b.ClaimSlot(bg, Domain, "q", 1)
	diff(t, "claims", append(got, ok), []bool{true, false, false, true, true})
	// A schedule's claims are its own: a setting of the same name
	// neither stands in for them nor is changed by them.
	if err := b.DefineTypes(bg, Domain, map[string][]byte{"r": []byte(`7`)}); err != nil {
		t.Fatal(err)
	}
	ok, err := b.ClaimSlot(bg, Domain, "r", 5)
	s, _ := b.Settings(bg, Domain)
	diff(t, "a claim beside a setting of its name", []any{ok, err, string(s["r"])}, []any{true, nil, "7"})
}

func finals(t *testing.T, b cluster.Backend) {
	r1, r2 := insert(t, b, "1"), insert(t, b, "2")
	e := lead(t, b, "a")
	js, _, feed, err := b.Domain(bg, Domain, e)
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	dead := *r1
	dead.State, dead.LastError, dead.FinishedAt = core.RecordDead, "boom", time.Unix(2, 0).UTC()
	if err := js.ApplyJobs([]machine.JobOp{{Put: &dead}}); err != nil {
		t.Fatal(err)
	}
	got, err := b.Finals(bg, []uint64{r1.Seq, r2.Seq, 999})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b cluster.Final) int { return int(a.Seq) - int(b.Seq) })
	diff(t, "finals", got, []cluster.Final{{Seq: r1.Seq, State: core.RecordDead, LastError: "boom"}, {Seq: 999, Gone: true}})
	if err := b.Forget(bg, []uint64{r1.Seq, r2.Seq}); err != nil {
		t.Fatal(err)
	}
	rows, _ := b.Rows(bg, []uint64{r1.Seq, r2.Seq})
	diff(t, "rows after forget: the pending one", len(rows) == 1 && rows[0].Seq == r2.Seq, true)
}

func domain(t *testing.T, b cluster.Backend) {
	r1, r2 := insert(t, b, "1"), insert(t, b, "2")
	e := lead(t, b, "a")
	grant(t, b, e, cluster.Grant{Seq: r1.Seq, Instance: "i", Attempt: 1})
	_, recs, feed, err := b.Domain(bg, Domain, e)
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	for more := true; more; {
		var page []core.JobRecord
		if page, more, err = feed.Backlog(bg); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, page...)
	}
	got := map[uint64]string{}
	for _, r := range recs {
		got[r.Seq] = r.Granted
	}
	diff(t, "records and their grants", got, map[uint64]string{r1.Seq: "i", r2.Seq: ""})
	r3 := insert(t, b, "3")
	next, err := feed.Next(bg)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	for _, r := range next {
		seqs = append(seqs, r.Seq)
	}
	diff(t, "next", seqs, []uint64{r3.Seq})
	next, _ = feed.Next(bg)
	diff(t, "next again", len(next), 0)
}

func incremental(t *testing.T, b cluster.Backend) {
	r1, r2 := insert(t, b, "1"), insert(t, b, "2")
	e := lead(t, b, "a")
	grant(t, b, e, cluster.Grant{Seq: r1.Seq, Instance: "i", Attempt: 1}, cluster.Grant{Seq: r2.Seq, Instance: "j", Attempt: 1})
	gs, cur, err := b.GrantsSince(bg, "i", cluster.ReadCursor{})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "grants of i", len(gs) == 1 && gs[0].Seq == r1.Seq, true)
	gs, cur, _ = b.GrantsSince(bg, "i", cur)
	diff(t, "read again", len(gs), 0)
	if err := b.RevokeJob(bg, Domain, e, r1.Seq, cluster.RevokeCancel); err != nil {
		t.Fatal(err)
	}
	gs, _, _ = b.GrantsSince(bg, "i", cur)
	diff(t, "cancelled", len(gs) == 1 && gs[0].Cancelled && !gs[0].Preempted, true)
	// A preemption is a revoke that says so; a later Cancel keeps the
	// first cause.
	for _, why := range []cluster.RevokeCause{cluster.RevokePreempt, cluster.RevokeCancel} {
		if err := b.RevokeJob(bg, Domain, e, r2.Seq, why); err != nil {
			t.Fatal(err)
		}
	}
	gs, _ = b.Granted(bg, "j")
	diff(t, "preempted", len(gs) == 1 && gs[0].Cancelled && gs[0].Preempted, true)
	rows, ecur, err := b.EndsSince(bg, cluster.ReadCursor{})
	diff(t, "no ends", []any{len(rows), err}, []any{0, nil})
	_, _ = b.ReportEnds(bg, []cluster.End{{Seq: r2.Seq, Instance: "j", Attempt: 1}})
	rows, ecur, _ = b.EndsSince(bg, ecur)
	diff(t, "ended", len(rows) == 1 && rows[0].Seq == r2.Seq && rows[0].Ended, true)
	rows, _, _ = b.EndsSince(bg, ecur)
	diff(t, "ended, read again", len(rows), 0)
}
