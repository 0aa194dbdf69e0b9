package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// TestListenWakesOnCommit: a commit of job rows by another store on the
// same database wakes the listener; the change feed then has the row;
// Stop ends the listener and its goroutine.
func TestListenWakesOnCommit(t *testing.T) {
	url := pgtest.URL(t)
	reader, writer := open(t, url), open(t, url)
	defer reader.Close()
	defer writer.Close()
	ctx := context.Background()
	l, err := reader.Listen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := writer.ApplyJobs([]fairsched.JobOp{{Put: &fairsched.JobRecord{Seq: 9, Type: "t", ID: "x", EnqueuedAt: time.Unix(0, 0).UTC()}}}); err != nil {
		t.Fatal(err)
	}
	<-l.C // the commit's wake-up
	recs, _, err := reader.Changes(ctx, pgstore.Cursor{})
	if err != nil || len(recs) != 1 || recs[0].ID != "x" {
		t.Errorf("changes after the wake-up: %v, %v", recs, err)
	}
	if err := l.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if _, open := <-l.C; open {
		t.Error("the wake-up channel is open after Stop")
	}
}
