package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// TestInsertFromSeveralInstances: three stores on one database insert 300
// jobs at once: every sequence number is distinct and follows those a
// single instance wrote before; the same (type, id) inserted from two
// instances at once is accepted once and refused once with
// ErrDuplicateJob.
func TestInsertFromSeveralInstances(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	first := open(t, url)
	defer first.Close()
	if err := first.ApplyJobs([]fairsched.JobOp{{Put: &fairsched.JobRecord{Seq: 41, Type: "t", ID: "old", EnqueuedAt: time.Unix(0, 0).UTC()}}}); err != nil {
		t.Fatal(err)
	}
	second, third := open(t, url), open(t, url)
	defer second.Close()
	defer third.Close()
	stores := []pgstore.Backend{first, second, third}
	ctx := context.Background()
	var mu sync.Mutex
	seqs := map[uint64]bool{}
	var wg sync.WaitGroup
	for i, st := range stores {
		wg.Go(func() {
			for n := range 100 {
				rec := &fairsched.JobRecord{Type: "t", ID: fmt.Sprintf("i%d-%d", i, n), EnqueuedAt: time.Now().UTC()}
				if err := st.Insert(ctx, rec); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if seqs[rec.Seq] || rec.Seq <= 41 {
					t.Errorf("sequence %d given twice, or not past the existing 41", rec.Seq)
				}
				seqs[rec.Seq] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	errs := make(chan error, 2)
	for _, st := range stores[1:] {
		wg.Go(func() {
			errs <- st.Insert(ctx, &fairsched.JobRecord{Type: "t", ID: "same", EnqueuedAt: time.Now().UTC()})
		})
	}
	wg.Wait()
	close(errs)
	var ok, dup int
	for err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, fairsched.ErrDuplicateJob):
			dup++
		default:
			t.Error(err)
		}
	}
	if ok != 1 || dup != 1 {
		t.Errorf("the same job from two instances: %d accepted, %d duplicates; want 1 and 1", ok, dup)
	}
}
