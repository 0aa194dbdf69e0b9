package pgstore_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// TestChangesMissNoLateCommit: the commit-order trap. Transaction A writes
// sequence 1 and stays open; B writes sequence 2 and commits; the reader
// sees 2. Then A commits: a reader that remembered "sequence 2 seen"
// would miss 1 for ever; the change feed returns it next. Rows already
// read do not come again, rewritten or not: the feed carries new jobs
// (layout 7), and the leader's own rewrites are its own.
func TestChangesMissNoLateCommit(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	st := open(t, url)
	defer st.Close()
	ctx := context.Background()
	record := func(seq uint64, id string, attempt int) []byte {
		b, _ := json.Marshal(fairsched.JobRecord{Seq: seq, Type: "t", ID: id, EnqueuedAt: time.Unix(0, 0).UTC(), Attempt: attempt})
		return b
	}
	insert := `INSERT INTO fairsched_jobs (seq, type, id, state, record) VALUES ($1, 't', $2, 0, $3)`
	txA := openTx(t, url)
	if _, err := txA.Exec(ctx, insert, 1, "late", record(1, "late", 0)); err != nil {
		t.Fatal(err)
	}
	if err := st.ApplyJobs([]fairsched.JobOp{{Put: &fairsched.JobRecord{Seq: 2, Type: "t", ID: "early", EnqueuedAt: time.Unix(0, 0).UTC()}}}); err != nil {
		t.Fatal(err)
	}
	var reads [][]string
	read := func(c pgstore.Cursor) pgstore.Cursor {
		t.Helper()
		recs, next, err := st.Changes(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range recs {
			ids = append(ids, r.ID)
		}
		reads = append(reads, ids)
		return next
	}
	c := read(pgstore.Cursor{})
	if err := txA.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	c = read(c)
	c = read(c) // nothing new
	// A rewrite of a record read already is not news.
	if err := st.ApplyJobs([]fairsched.JobOp{{Put: &fairsched.JobRecord{Seq: 2, Type: "t", ID: "early", Attempt: 1, EnqueuedAt: time.Unix(0, 0).UTC()}}}); err != nil {
		t.Fatal(err)
	}
	read(c)
	if diff := cmp.Diff([][]string{{"early"}, {"late"}, nil, nil}, reads); diff != "" {
		t.Errorf("reads (-want +got):\n%s", diff)
	}
}
