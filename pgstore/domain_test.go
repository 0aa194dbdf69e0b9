package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/cluster"
	"github.com/fairsched/fairsched/internal/pgtest"
)

// TestDomainResumesUnappliedEnds: a new leader's view of the domain marks
// as granted (to be resumed and read back, not run again) each job that
// runs, and each whose end was reported for an attempt after the last its
// record says was applied — a success or a failure — but not a job whose
// reported failure the last leader already turned into a retry.
func TestDomainResumesUnappliedEnds(t *testing.T) {
	st := open(t, pgtest.URL(t))
	defer st.Close()
	ctx := context.Background()
	epoch, ok, err := st.Acquire(ctx, "d", "leader", 10*time.Second)
	if err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
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
	if _, err := st.Grant(ctx, "d", epoch, grants); err != nil {
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
