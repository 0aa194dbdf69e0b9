package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/boltstore"
)

// SubmitMany queues a batch of background jobs in one call: one message to
// the scheduler and one dispatch for all, instead of one each. An invalid
// job queues none of them; with a pending bound, each job's refusal is its
// own (a *ManyError).
func ExampleScheduler_SubmitMany() {
	s, err := fairsched.New(fairsched.WithMaxConcurrency(1))
	if err != nil {
		panic(err)
	}
	_ = s.RegisterType("thumbnail", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1})
	done := make(chan string, 3)
	var batch []fairsched.Submission
	for _, img := range []string{"a.png", "b.png", "c.png"} {
		batch = append(batch, fairsched.Submission{Type: "thumbnail", ID: img,
			Fn: func(context.Context) error { done <- img; return nil }})
	}
	if err := s.SubmitMany(batch); err != nil {
		panic(err)
	}
	for range batch {
		fmt.Println("thumbnail of", <-done)
	}
	err = s.SubmitMany([]fairsched.Submission{{Type: "thumbnail", ID: "d.png"}}) // no function
	fmt.Println(errors.Is(err, fairsched.ErrInvalidJob))
	_ = s.Close(context.Background())
	// Output:
	// thumbnail of a.png
	// thumbnail of b.png
	// thumbnail of c.png
	// true
}

// EnqueueMany makes a batch of durable jobs durable in one commit of the
// store — one fsync for all — and returns once they are.
func ExampleScheduler_EnqueueMany() {
	dir, _ := os.MkdirTemp("", "fairsched-example")
	defer os.RemoveAll(dir)
	st, err := boltstore.Open(filepath.Join(dir, "jobs.db"))
	if err != nil {
		panic(err)
	}
	defer st.Close()
	s, err := fairsched.New(fairsched.WithStore(st), fairsched.WithMaxConcurrency(1))
	if err != nil {
		panic(err)
	}
	_ = s.RegisterType("mail", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1})
	done := make(chan struct{}, 2)
	_ = s.RegisterHandler("mail", func(ctx context.Context, job fairsched.Job) error {
		fmt.Printf("%s: %s\n", job.ID, job.Payload)
		done <- struct{}{}
		return nil
	})
	err = s.EnqueueMany(context.Background(), []fairsched.Enqueueing{
		{Type: "mail", ID: "welcome/ada", Payload: []byte("hello, ada")},
		{Type: "mail", ID: "welcome/grace", Payload: []byte("hello, grace")},
	})
	if err != nil {
		panic(err)
	}
	<-done
	<-done
	_ = s.Close(context.Background())
	// Output:
	// welcome/ada: hello, ada
	// welcome/grace: hello, grace
}
