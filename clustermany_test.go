package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// TestEnqueueManyInCluster: EnqueueMany on a cluster instance writes its
// jobs in one commit, and each runs once; an invalid job writes none of
// the batch; a duplicate (type, id) — pending already, or twice in the
// batch — is refused alone (*ManyError with ErrDuplicateJob at its
// index), the others run.
func TestEnqueueManyInCluster(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	s, leave, err := JoinCluster(ctx, url, "many-a")
	if err != nil {
		t.Fatal(err)
	}
	defer leave()
	ran := make(chan string, 100)
	release := make(chan struct{})
	if err := s.RegisterType("m", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterHandler("m", func(ctx context.Context, j fairsched.Job) error {
		if j.ID == "hold" {
			<-release
		}
		ran <- j.ID
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Invalid: nothing written.
	err = s.EnqueueMany(ctx, []fairsched.Enqueueing{{Type: "m", ID: "x1"}, {Type: "nope", ID: "x2"}})
	if !errors.Is(err, fairsched.ErrUnknownJobType) {
		t.Fatalf("an unknown type in the batch: %v, want ErrUnknownJobType", err)
	}
	if err := s.Enqueue(ctx, "m", "hold", nil); err != nil {
		t.Fatal(err)
	}
	var batch []fairsched.Enqueueing
	for i := range 20 {
		batch = append(batch, fairsched.Enqueueing{Type: "m", ID: fmt.Sprint("j", i), Payload: []byte{byte(i)}})
	}
	batch = append(batch, fairsched.Enqueueing{Type: "m", ID: "hold"}, fairsched.Enqueueing{Type: "m", ID: "j3"})
	err = s.EnqueueMany(ctx, batch)
	var me *fairsched.ManyError
	if !errors.As(err, &me) || len(me.Errs) != 22 {
		t.Fatalf("EnqueueMany: %v, want a *ManyError of 22", err)
	}
	for i, e := range me.Errs {
		if want := i >= 20; errors.Is(e, fairsched.ErrDuplicateJob) != want || (e != nil) != want {
			t.Errorf("job %d: %v", i, e)
		}
	}
	close(release)
	seen := map[string]int{}
	timeout := time.After(30 * time.Second)
	for len(seen) < 21 {
		select {
		case id := <-ran:
			seen[id]++
		case <-timeout:
			t.Fatalf("ran %v, want j0…j19 and hold", seen)
		}
	}
	// Once every row is gone, no job can run again.
	st, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pgtest.Eventually(t, "no job rows left", func() bool { n, err := st.CountJobs(ctx); return err == nil && n == 0 })
	for id, n := range seen {
		if n != 1 || id == "x1" {
			t.Errorf("%s ran %d times", id, n)
		}
	}
	select {
	case id := <-ran:
		t.Errorf("%s ran again", id)
	default:
	}
}
