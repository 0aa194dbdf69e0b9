package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// TestDomainResumesUnappliedEnds: a new leader's view of the domain marks
// as granted (to be resumed and read back, not run again) each job that
// runs, and each whose end was reported for an attempt after the last its
// record says was applied — a success or a failure — but not a job whose
// reported failure the last leader already turned into a retry.
func TestDomainResumesUnappliedEnds(t *testing.T) {
	t.Parallel()
	st := open(t, pgtest.URL(t))
	defer st.Close()
	ctx := context.Background()
	epoch := lead(t, st)
	recs := map[string]*fairsched.JobRecord{}
	for _, id := range []string{"running", "succeeded", "failed", "retrying", "pending"} {
		r := &fairsched.JobRecord{Type: "t", ID: id, EnqueuedAt: time.Unix(0, 0).UTC()}
		if err := st.Insert(ctx, r); err != nil {
			t.Fatal(err)
		}
		recs[id] = r
	}
	var grants []cluster.Grant
	for _, id := range []string{"running", "succeeded", "failed", "retrying"} {
		grants = append(grants, cluster.Grant{Seq: recs[id].Seq, Instance: "i1", Attempt: 1})
	}
	if _, err := st.GrantJobs(ctx, "d", epoch, grants); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ReportEnds(ctx, []cluster.End{
		{Seq: recs["succeeded"].Seq, Instance: "i1", Attempt: 1, Kind: cluster.EndOK},
		{Seq: recs["failed"].Seq, Instance: "i1", Attempt: 1, Kind: cluster.EndError, Error: "boom"},
		{Seq: recs["retrying"].Seq, Instance: "i1", Attempt: 1, Kind: cluster.EndError, Error: "boom"},
	}); err != nil {
		t.Fatal(err)
	}
	// The last leader applied "retrying"'s failure: a retry, recorded.
	r := *recs["retrying"]
	r.Attempt, r.EndedAttempt, r.LastError = 1, 1, "boom"
	if err := st.ApplyJobsFenced(ctx, "d", epoch, []fairsched.JobOp{{Put: &r}}); err != nil {
		t.Fatal(err)
	}
	_, loaded, _, err := st.Domain(ctx, "d", epoch)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, l := range loaded {
		got[l.ID] = l.Granted
	}
	want := map[string]string{"running": "i1", "succeeded": "i1", "failed": "i1", "retrying": "", "pending": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("granted as loaded (-want +got):\n%s", diff)
	}
}

// TestDomainLoadsBacklogInPages: a new leader's view holds every job that
// is not plainly pending (running, with an unapplied end, dead) and the
// first page of the pending ones; the feed's Backlog returns the rest of
// that snapshot a page at a time, in sequence order, each once; Next
// returns only the jobs inserted after the snapshot — not a row the
// snapshot holds that a transaction open at its start made the feed's
// cursor read again.
func TestDomainLoadsBacklogInPages(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	st := open(t, url, pgstore.WithBacklogPage(2))
	defer st.Close()
	ctx := context.Background()
	epoch := lead(t, st)
	insert := func(id string) *fairsched.JobRecord {
		t.Helper()
		r := &fairsched.JobRecord{Type: "t", ID: id, EnqueuedAt: time.Unix(0, 0).UTC()}
		if err := st.Insert(ctx, r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	insert("p1")
	running := insert("running")
	insert("p2")
	ended := insert("ended")
	insert("p3")
	dead := insert("dead")
	if _, err := st.GrantJobs(ctx, "d", epoch, []cluster.Grant{{Seq: running.Seq, Instance: "i1", Attempt: 1}, {Seq: ended.Seq, Instance: "i1", Attempt: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ReportEnds(ctx, []cluster.End{{Seq: ended.Seq, Instance: "i1", Attempt: 1, Kind: cluster.EndOK}}); err != nil {
		t.Fatal(err)
	}
	d := *dead
	d.State, d.LastError = core.RecordDead, "boom"
	if err := st.ApplyJobsFenced(ctx, "d", epoch, []fairsched.JobOp{{Put: &d}}); err != nil {
		t.Fatal(err)
	}
	// A transaction open across the snapshot holds its xmin back: the
	// rows committed after it began are ones the feed's cursor reads
	// again, whichever page of the backlog holds them.
	tx := openTx(t, url)
	if _, err := tx.Exec(ctx, `SELECT pg_current_xact_id()`); err != nil {
		t.Fatal(err)
	}
	insert("p4")
	insert("p5")
	_, first, feed, err := st.Domain(ctx, "d", epoch)
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	type rec struct {
		ID, Granted string
		Dead        bool
	}
	view := func(recs []fairsched.JobRecord) []rec {
		var out []rec
		for _, r := range recs {
			out = append(out, rec{r.ID, r.Granted, r.State == core.RecordDead})
		}
		return out
	}
	late := insert("late") // after the snapshot: the feed's, not the backlog's
	got := [][]rec{view(first)}
	var mores []bool
	for more := true; more; {
		recs, m, err := feed.Backlog(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, mores, more = append(got, view(recs)), append(mores, m), m
	}
	recs, m, err := feed.Backlog(ctx) // read to its end: nothing more
	if err != nil || len(recs) != 0 || m {
		t.Errorf("Backlog after the end = %v, %v, %v; want nothing", recs, m, err)
	}
	want := [][]rec{
		{{ID: "p1"}, {ID: "running", Granted: "i1"}, {ID: "p2"}, {ID: "ended", Granted: "i1"}, {ID: "dead", Dead: true}},
		{{ID: "p3"}, {ID: "p4"}},
		{{ID: "p5"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the view, then each page of the backlog (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{true, false}, mores); diff != "" {
		t.Errorf("more after each page (-want +got):\n%s", diff)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	news, err := feed.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]rec{{ID: late.ID}}, view(news)); diff != "" {
		t.Errorf("the feed after the backlog (-want +got):\n%s", diff)
	}
}

// TestDomainReturnsASmallFirstPage: whatever the page, Domain returns at
// most 500 pending records — the leader's first decisions wait for them —
// and the feed's Backlog the others in full pages.
func TestDomainReturnsASmallFirstPage(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	st := open(t, url, pgstore.WithBacklogPage(1000))
	defer st.Close()
	ctx := context.Background()
	recs := make([]*fairsched.JobRecord, 1600)
	for i := range recs {
		recs[i] = &fairsched.JobRecord{Type: "t", ID: fmt.Sprint("j", i), EnqueuedAt: time.Unix(0, 0).UTC()}
	}
	if errs, err := st.InsertMany(ctx, recs); err != nil || errors.Join(errs...) != nil {
		t.Fatal(err, errors.Join(errs...))
	}
	epoch := lead(t, st)
	_, first, feed, err := st.Domain(ctx, "d", epoch)
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	pages := []string{fmt.Sprintf("%d from %d", len(first), first[0].Seq)}
	for more := true; more; {
		var page []fairsched.JobRecord
		if page, more, err = feed.Backlog(ctx); err != nil {
			t.Fatal(err)
		}
		pages = append(pages, fmt.Sprintf("%d from %d", len(page), page[0].Seq))
	}
	if diff := cmp.Diff([]string{"500 from 1", "1000 from 501", "100 from 1501"}, pages); diff != "" {
		t.Errorf("Domain's records, then each page of the backlog (-want +got):\n%s", diff)
	}
}
