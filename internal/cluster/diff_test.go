package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// TestClusterDecidesAsOneScheduler is the differential test: the same
// durable jobs — three tenants of different weights and costs, one global
// slot so that every admission is the policy's choice — are run by a
// 3-instance cluster and by one in-memory scheduler restored from the same
// records. Without faults the cluster admits them in the same order.
func TestClusterDecidesAsOneScheduler(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	st, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	at := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	var recs []fairsched.JobRecord
	for i := range 45 {
		tenant := []string{"alice", "bob", "carol"}[i%3]
		if i >= 30 {
			tenant = "alice" // a burst from one tenant arrives last
		}
		rec := &fairsched.JobRecord{Type: "work", ID: fmt.Sprint("job-", i), Key: tenant,
			Tokens: time.Duration(1+i%3) * time.Millisecond, EnqueuedAt: at.Add(time.Duration(i) * time.Millisecond)}
		if err := st.ClusterBackend().Insert(ctx, rec); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, *rec)
	}
	opts := []fairsched.Option{fairsched.WithMaxConcurrency(1), fairsched.WithKeyWeight("carol", 3)}
	cfg := fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}

	// The reference: one scheduler, the same records in its store.
	var want []string
	done := make(chan struct{})
	ref, err := fairsched.New(append(opts, fairsched.WithStore(&memStore{recs: recs}))...)
	if err != nil {
		t.Fatal(err)
	}
	if err := ref.RegisterType("work", cfg); err != nil {
		t.Fatal(err)
	}
	if err := ref.RegisterHandler("work", func(ctx context.Context, j fairsched.Job) error {
		want = append(want, j.ID) // one at a time: the cap is 1
		if len(want) == len(recs) {
			close(done)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	<-done
	if err := ref.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// The cluster.
	rec := newRecorder()
	for i := range 3 {
		m := join(t, url, fast("diff", fmt.Sprint("i", i+1), 2), opts...)
		if err := m.s.RegisterType("work", cfg); err != nil {
			t.Fatal(err)
		}
		if err := m.s.RegisterHandler("work", func(ctx context.Context, j fairsched.Job) error {
			rec.start(j.ID, "")
			rec.end("")
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	rec.waitEnds(t, len(recs))
	if diff := cmp.Diff(want, rec.order); diff != "" {
		t.Errorf("the cluster's admissions differ from one scheduler's (-one +cluster):\n%s", diff)
	}
	if rec.peak > 1 {
		t.Errorf("%d jobs ran at once; the cap is 1", rec.peak)
	}
}

// memStore is a JobStore in memory, holding records given.
type memStore struct {
	recs  []fairsched.JobRecord
	state fairsched.StoreState
}

func (m *memStore) Load() (fairsched.StoreState, error)   { return m.state, nil }
func (m *memStore) Save(s fairsched.StoreState) error     { m.state = s; return nil }
func (m *memStore) ApplyJobs(ops []fairsched.JobOp) error { return nil }
func (m *memStore) LoadJobs(fn func(fairsched.JobRecord) error) error {
	for _, r := range m.recs {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}
