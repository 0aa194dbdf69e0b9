package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
)

// TestWokenWithoutPolls: with the loops' poll an hour apart, every hop of
// a RunSync — its insert to the leader, the grant to the caller's
// instance, the end to the leader, the job's end back to its caller — and
// of a durable job is a wake-up (LISTEN/NOTIFY): RunSync calls on the
// leader and on a follower of an idle cluster return, and a durable job
// enqueued on the follower runs. Without a wake-up on some hop a call
// waits for the poll: the test's guard (30 s) fails it.
func TestWokenWithoutPolls(t *testing.T) {
	a, b, ran, _ := hourPolls(t, "wake")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a failure guard, not a timing assertion
	defer cancel()
	for i, m := range []*member{a, b, a, b} {
		call(ctx, t, m, fmt.Sprint("c", i))
	}
	if err := b.s.Enqueue(ctx, "work", "w1", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-ran:
		if id != "w1" {
			t.Fatalf("ran %q", id)
		}
	case <-ctx.Done():
		t.Fatal("the durable job never ran: its grant waited for the poll")
	}
}

// TestWokenAgainOnceTheListenersAreDropped: the connections that listen
// are ended by the server (as by its restart); every loop listens again
// at its next heartbeat and reads what it missed, so a RunSync on the
// follower returns though the polls are an hour apart (without, the
// test's 30 s guard fails it).
func TestWokenAgainOnceTheListenersAreDropped(t *testing.T) {
	a, b, _, url := hourPolls(t, "rewake")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a failure guard, not a timing assertion
	defer cancel()
	call(ctx, t, b, "before")
	pgtest.DropListeners(t, url)
	call(ctx, t, b, "after")
	call(ctx, t, a, "on the leader")
}

// hourPolls starts a leader a and a follower b of domain with their polls
// an hour apart on a database of the test's, at url; the type "call" on
// both and "work" served by b (its runs' ids on ran).
func hourPolls(t *testing.T, domain string) (a, b *member, ran chan string, url string) {
	url = pgtest.URL(t)
	slow := func(name string) fairsched.ClusterConfig {
		cfg := fast(domain, name, 2)
		cfg.Poll = time.Hour
		return cfg
	}
	a = joinLeader(t, url, slow("a"))
	b = join(t, url, slow("b"))
	ran = make(chan string, 1)
	for _, m := range []*member{a, b} {
		if err := m.s.RegisterType("call", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.s.RegisterType("work", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	serve(t, b, "work", func(_ context.Context, j fairsched.Job) error {
		ran <- j.ID
		return nil
	})
	return a, b, ran, url
}

// call makes a RunSync of "call" on m; a hop that waits for the poll
// fails it at ctx's end.
func call(ctx context.Context, t *testing.T, m *member, id string) {
	t.Helper()
	var got string
	start := time.Now()
	if err := m.s.RunSync(ctx, "call", id, "k", func(context.Context) error { got = id; return nil }); err != nil {
		t.Fatalf("RunSync %s: %v (a hop waited for the poll)", id, err)
	}
	if got != id {
		t.Fatalf("RunSync %s ran %q", id, got)
	}
	t.Logf("RunSync %s took %v", id, time.Since(start).Round(time.Millisecond))
}

// TestLeaderTakesWorkOnceItHandles: the leader's own instance takes a
// durable job from the turn after its handler is registered, not from the
// leader's next read of the heartbeats. The beats are an hour apart; the
// other instance, b, handles the type but its one slot is held, so that
// the job can only go to the leader's instance a.
func TestLeaderTakesWorkOnceItHandles(t *testing.T) {
	url := pgtest.URL(t)
	rare := func(name string) fairsched.ClusterConfig {
		cfg := fast("own", name, 1)
		cfg.LeaseTTL, cfg.Heartbeat, cfg.LostAfter = 3*time.Hour, time.Hour, 3*time.Hour
		return cfg
	}
	a := joinLeader(t, url, rare("a"))
	b := join(t, url, rare("b"))
	if err := a.s.RegisterType("work", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	ranOn := make(chan string, 2)
	release := make(chan struct{})
	serve(t, b, "work", func(ctx context.Context, j fairsched.Job) error {
		ranOn <- "b:" + j.ID
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	})
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a failure guard, not a timing assertion
	defer cancel()
	// The leader learns b's handler when no instance it knows handles the
	// type (a job waiting for one reads the instances again).
	if err := a.s.Enqueue(ctx, "work", "j1", nil); err != nil {
		t.Fatal(err)
	}
	next := func() string {
		select {
		case on := <-ranOn:
			return on
		case <-ctx.Done():
			t.Fatal("no job started in 30 s")
			return ""
		}
	}
	if got := next(); got != "b:j1" {
		t.Fatalf("first start %q, want b:j1", got)
	}
	if err := a.s.RegisterHandler("work", func(_ context.Context, j fairsched.Job) error {
		ranOn <- "a:" + j.ID
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := a.s.Enqueue(ctx, "work", "j2", nil); err != nil {
		t.Fatal(err)
	}
	if got := next(); got != "a:j2" {
		t.Fatalf("second start %q, want a:j2 (on the leader's instance, b's slot being held)", got)
	}
}
