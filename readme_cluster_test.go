package fairsched_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// README:begin cluster

// JoinCluster makes this replica of the proxy one instance of a cluster:
// every replica shares one scheduler, its jobs and decisions kept in
// PostgreSQL. Give every replica the same options and types.
func JoinCluster(ctx context.Context, databaseURL, replica string, opts ...fairsched.Option) (*fairsched.Scheduler, func(), error) {
	st, err := pgstore.Open(ctx, databaseURL) // applies the schema's migrations
	if err != nil {
		return nil, nil, err
	}
	s, err := fairsched.New(append(opts, fairsched.WithCluster(st, fairsched.ClusterConfig{
		Domain: "git-proxy", Instance: replica, Slots: 8}))...)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return s, func() { s.Close(context.Background()); st.Close() }, nil
}

// README:end

// TestJoinCluster: two replicas joined as the README shows share one cap
// of one: a clone asked on each runs once, one after the other, and the
// mirror enqueued on one runs once, on either.
func TestJoinCluster(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	var replicas []*fairsched.Scheduler
	fetched := make(chan string, 2)
	for _, name := range []string{"proxy-a", "proxy-b"} {
		s, leave, err := JoinCluster(ctx, url, name, fairsched.WithMaxConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(leave)
		if err := s.RegisterType("clone", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Second}); err != nil {
			t.Fatal(err)
		}
		if err := RegisterMirrors(s, func(ctx context.Context, url string) error { fetched <- url; return nil }); err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, s)
	}
	if err := ScheduleMirror(ctx, replicas[0], "linux", "https://git.kernel.org/linux.git"); err != nil {
		t.Fatal(err)
	}
	running := make(chan int, 4)
	errs := make(chan error, 2)
	for i, s := range replicas {
		go func() {
			errs <- s.RunSync(ctx, "clone", fmt.Sprint("repo-", i), "alice", func(ctx context.Context) error {
				running <- 1
				defer func() { running <- -1 }()
				return nil
			})
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if c, err := replicas[0].Cancel(ctx, "clone", "repo-0"); err != nil || !c.None() {
		t.Errorf("Cancel of a clone that ran: %+v, %v", c, err)
	}
	close(running)
	level := 0
	for d := range running {
		if level += d; level > 1 {
			t.Fatal("two clones ran at once under a cap of one")
		}
	}
	if got := <-fetched; got != "https://git.kernel.org/linux.git" {
		t.Fatalf("fetched %q", got)
	}
	for _, s := range replicas { // the mirror's row is deleted once it succeeded: Close leaves nothing to run
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if len(fetched) != 0 {
		t.Errorf("the mirror ran %d more times", len(fetched))
	}
}
