package pgstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// TestListenWakesOnCommit: a commit of job rows by another store on the
// same database wakes the listener; the change feed then has the row;
// Stop ends the listener and its goroutine.
func TestListenWakesOnCommit(t *testing.T) {
	t.Parallel()
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

// TestGrantsWakeTheirInstances: a batch of grants notifies the executors'
// channel naming the instances granted to — each once, not those handed
// over in process — and an executor's wake-up takes only the
// notifications naming its instance, or nobody (a cancellation).
func TestGrantsWakeTheirInstances(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	st := open(t, url)
	defer st.Close()
	ctx := context.Background()
	epoch := lead(t, st)
	var seqs []uint64
	for _, id := range []string{"1", "2", "3", "4", "5"} {
		r := &fairsched.JobRecord{Type: "t", ID: id, EnqueuedAt: time.Unix(0, 0).UTC()}
		if err := st.Insert(ctx, r); err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, r.Seq)
	}
	raw, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close(ctx)
	if _, err := raw.Exec(ctx, "LISTEN fairsched_grants"); err != nil {
		t.Fatal(err)
	}
	wakeA, stopA := st.Wake(ctx, cluster.ExecutorReads, "a")
	defer stopA()
	if _, err := st.GrantJobs(ctx, "d", epoch, []cluster.Grant{
		{Seq: seqs[0], Instance: "b", Attempt: 1}, {Seq: seqs[1], Instance: "a", Attempt: 1},
		{Seq: seqs[2], Instance: "b", Attempt: 1}, {Seq: seqs[3], Instance: "c", Attempt: 1, Handed: true},
	}); err != nil {
		t.Fatal(err)
	}
	n, err := raw.WaitForNotification(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n.Payload != "a\nb" {
		t.Errorf("the grants' notification names %q, want a and b", n.Payload)
	}
	<-wakeA // named: woken
	for _, c := range []struct {
		payload, instance string
		want              bool
	}{
		{"a\nb", "a", true}, {"a\nb", "b", true}, {"a\nb", "c", false}, {"ab", "a", false},
		{"", "c", true}, // nobody named: everyone
	} {
		if got := pgstore.GrantsFor(c.payload, c.instance); got != c.want {
			t.Errorf("grants notified as %q for %s: %v, want %v", c.payload, c.instance, got, c.want)
		}
	}
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"b", "a", "b"}, "a\nb"},
		{[]string{"a\nb"}, ""},                    // a name of two lines: nobody named
		{[]string{strings.Repeat("x", 8000)}, ""}, // too long for a payload
		{nil, ""},
	} {
		if got := pgstore.GrantsPayload(c.names); got != c.want {
			t.Errorf("payload of grants to %q: %q, want %q", c.names, got, c.want)
		}
	}
}

// TestStopsAreIdempotent: the functions that stop Events and Wake return
// at once when called again (a caller's cleanup may stop what its loop
// stopped already), and the channels they stopped are closed.
func TestStopsAreIdempotent(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	st := open(t, url)
	defer st.Close()
	ctx := context.Background()
	b := st.ClusterBackend()
	evs, stopEvents := b.Events(ctx)
	wake, stopWake := b.Wake(ctx, cluster.LeaderReads, "a")
	if evs == nil || wake == nil {
		t.Fatal("cannot listen")
	}
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		for range 2 {
			stopEvents()
			stopWake()
		}
	}()
	select {
	case <-returned:
	case <-time.After(30 * time.Second): // a bound, not a measure: a hang fails here
		t.Fatal("a stop called twice has not returned after 30 s")
	}
	if _, ok := <-evs; ok {
		t.Error("the events' channel is open after stop")
	}
	if _, ok := <-wake; ok {
		t.Error("the wake-up channel is open after stop")
	}
}
