package trace_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
	"github.com/fairsched/fairsched/trace"
)

// TestRecordInClusterOnPostgres: on a cluster instance over PostgreSQL the
// recorder records every durable job's run once, with its key and tenant.
func TestRecordInClusterOnPostgres(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	st, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := fairsched.New(fairsched.WithCluster(st, fairsched.ClusterConfig{Domain: "trace", Instance: "one", Slots: 2}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if err := s.RegisterType("render", fairsched.JobTypeConfig{DefaultCost: time.Millisecond, Priority: 2}); err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterHandler("render", func(ctx context.Context, j fairsched.Job) error { return nil }); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rec, err := trace.NewRecorder(s, &out, trace.WithTenant(func(key string) string { return key[:4] }))
	if err != nil {
		t.Fatal(err)
	}
	// The runs end in the leader's scheduler (the instance's Close hands
	// the lease over at once: an end it has not read yet would be the
	// next leader's to announce): wait for their events, as the recorder
	// sees them.
	ends, cancel := s.Subscribe(64)
	defer cancel()
	want := map[string]string{}
	for i := range 6 {
		id, key := fmt.Sprint("j", i), []string{"acme/u1", "bolt/u1", "acme/u2"}[i%3]
		want[id] = key[:4] + " " + key
		if err := s.Enqueue(ctx, "render", id, nil, fairsched.WithFairnessKey(key)); err != nil {
			t.Fatal(err)
		}
	}
	for ended := 0; ended < len(want); {
		select {
		case e := <-ends:
			if _, ok := e.(fairsched.JobCompleted); ok {
				ended++
			}
		case <-time.After(30 * time.Second): // a bound: a lost event fails here
			t.Fatalf("%d of %d runs ended after 30 s", ended, len(want))
		}
	}
	if err := s.Close(ctx); err != nil { // the runs' last events come before the channel closes
		t.Fatal(err)
	}
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	recs, err := trace.Read(&out)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range recs {
		got[r.ID] = r.Tenant + " " + r.Key
	}
	if diff := cmp.Diff(want, got); diff != "" || len(recs) != len(want) {
		t.Errorf("%d records (-want +got):\n%s", len(recs), diff)
	}
}
