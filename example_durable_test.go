package fairsched_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/boltstore"
)

// Durable jobs survive a restart: the first scheduler enqueues two jobs
// and stops before it runs them (their type has no handler yet); the
// second, on the same file, runs them once its handler is registered.
func ExampleScheduler_Enqueue() {
	dir, _ := os.MkdirTemp("", "fairsched-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "jobs.db")
	type welcome struct{ To string }

	start := func() (*fairsched.Scheduler, *boltstore.Store) {
		st, err := boltstore.Open(path)
		if err != nil {
			panic(err)
		}
		s, err := fairsched.New(fairsched.WithStore(st), fairsched.WithMaxConcurrency(1))
		if err != nil {
			panic(err)
		}
		_ = s.RegisterType("mail", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1})
		return s, st
	}

	s, st := start()
	for _, to := range []string{"ada", "grace"} {
		if err := fairsched.EnqueueJSON(context.Background(), s, "mail", "welcome/"+to, welcome{To: to}); err != nil {
			panic(err)
		}
	}
	_ = s.Close(context.Background()) // graceful: pending durable jobs stay in the store
	_ = st.Close()

	s, st = start() // a restart
	done := make(chan struct{}, 2)
	_ = s.RegisterHandler("mail", fairsched.HandleJSON(func(ctx context.Context, job fairsched.Job, w welcome) error {
		fmt.Printf("%s: welcome, %s (attempt %d)\n", job.ID, w.To, job.Attempt)
		done <- struct{}{}
		return nil
	}))
	<-done
	<-done
	_ = s.Close(context.Background())
	_ = st.Close()
	// Output:
	// welcome/ada: welcome, ada (attempt 1)
	// welcome/grace: welcome, grace (attempt 1)
}
