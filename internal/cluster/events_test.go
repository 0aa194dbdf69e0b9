package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/internal/cluster/memback"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/policy"
)

// TestEventsOnEveryInstance: Subscribe works alike on every instance:
// each gets the domain's events — the leader's scheduler's — in order,
// with their errors' messages.
func TestEventsOnEveryInstance(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	lead := joinLeader(t, url, fast("d", "lead", 2))
	follow := join(t, url, fast("d", "follow", 2))
	cfg := fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}
	for _, m := range []*member{lead, follow} {
		if err := m.s.RegisterType("mail", cfg); err != nil {
			t.Fatal(err)
		}
	}
	if err := follow.s.RegisterHandler("mail", func(ctx context.Context, j fairsched.Job) error {
		if j.ID == "bad" {
			return fairsched.Permanent(errors.New("no such mailbox"))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	type sub struct {
		name string
		c    <-chan fairsched.Event
	}
	var subs []sub
	for _, m := range []struct {
		name string
		m    *member
	}{{"lead", lead}, {"follow", follow}} {
		c, cancel := m.m.s.Subscribe(256)
		t.Cleanup(cancel)
		subs = append(subs, sub{m.name, c})
	}
	subscribedOn(t, lead, "follow")
	for _, id := range []string{"ok", "bad"} {
		if err := follow.s.Enqueue(ctx, "mail", id, nil, fairsched.WithFairnessKey("alice")); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]string{
		"ok":  {"queued", "admitted", "completed"},
		"bad": {"queued", "admitted", "failed: no such mailbox"},
	}
	for _, s := range subs {
		got := eventsOf(t, s.name, s.c, 3, "ok", "bad")
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s's events (-want +got):\n%s", s.name, diff)
		}
	}
}

// eventsOf reads c until each of ids has had n events of the kinds these
// tests follow — queued, admitted, completed, failed (with its error's
// message) — and returns them by id, in order; it fails after 30 s.
func eventsOf(t *testing.T, name string, c <-chan fairsched.Event, n int, ids ...string) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	deadline := time.After(30 * time.Second)
	for slices.ContainsFunc(ids, func(id string) bool { return len(got[id]) < n }) {
		select {
		case e := <-c:
			switch e := e.(type) {
			case fairsched.JobQueued:
				got[e.ID] = append(got[e.ID], "queued")
			case fairsched.JobAdmitted:
				got[e.ID] = append(got[e.ID], "admitted")
			case fairsched.JobCompleted:
				got[e.ID] = append(got[e.ID], "completed")
			case fairsched.JobFailed:
				got[e.ID] = append(got[e.ID], fmt.Sprintf("failed: %v", e.Err))
			}
		case <-deadline:
			t.Fatalf("%s: events after 30 s: %v", name, got)
		}
	}
	return got
}

// TestEventsOnlyForSubscribers: the leader publishes nothing while no
// instance has subscribers, and publishes once one subscribes. Job "one"
// runs with nobody subscribed, job "two" after a subscription; a raw
// listener of the events channel — notifications arrive in commit order —
// must see "two" in the first payload of events and "one" in none.
func TestEventsOnlyForSubscribers(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	lead := joinLeader(t, url, fast("d", "lead", 2))
	if err := lead.s.RegisterType("mail", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 2)
	if err := lead.s.RegisterHandler("mail", func(ctx context.Context, j fairsched.Job) error { done <- j.ID; return nil }); err != nil {
		t.Fatal(err)
	}
	raw, stop := lead.st.ClusterBackend().Events(ctx)
	if raw == nil {
		t.Fatal("cannot listen for events")
	}
	defer stop()
	if err := lead.s.Enqueue(ctx, "mail", "one", nil); err != nil {
		t.Fatal(err)
	}
	<-done
	// Done in the leader's scheduler, not only its row gone (deleted
	// before the scheduler hears of the end): its events are emitted
	// before the subscription.
	pgtest.Eventually(t, "job one ended in the leader's scheduler", func() bool {
		n, _ := lead.st.CountJobs(ctx)
		snap, err := lead.s.Snapshot(ctx)
		return n == 0 && err == nil && len(snap.Running)+len(snap.Pending) == 0
	})
	// Another instance subscribes: the leader learns of it from its
	// heartbeat, long after it read job one's events (its own instance's
	// subscription would count at once, even for an event emitted before
	// and not yet read by its publisher).
	follow := join(t, url, fast("d", "follow", 2))
	_, cancel := follow.s.Subscribe(64)
	defer cancel()
	subscribedOn(t, lead, "follow")
	if err := lead.s.Enqueue(ctx, "mail", "two", nil); err != nil {
		t.Fatal(err)
	}
	<-done
	var first string
	for first == "" || strings.Contains(first, `"e":null`) { // acknowledgements of subscriptions carry no events
		select {
		case p := <-raw:
			first = string(p)
		case <-time.After(30 * time.Second):
			t.Fatal("no events published after a subscription")
		}
	}
	if !strings.Contains(first, `"id":"two"`) || strings.Contains(first, `"id":"one"`) {
		t.Errorf("the first events published: %s", first)
	}
}

// TestEventsSurviveFailedPublishes: a publish that fails (the database
// slow or out of reach) is tried again at the next tick, in order, so the
// subscriber still sees each event once and in order. Before, the failed
// batch was dropped and a subscriber waited for ever.
func TestEventsSurviveFailedPublishes(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	var fails atomic.Int32
	fails.Store(3)
	lead := joinVia(t, url, func(b cluster.Backend) cluster.Backend { return &flakyPublish{Backend: b, fails: &fails} }, fast("d", "lead", 2))
	if leaderOf(t, lead) != lead {
		t.Fatal("the only instance does not lead")
	}
	if err := lead.s.RegisterType("mail", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := lead.s.RegisterHandler("mail", func(context.Context, fairsched.Job) error { return nil }); err != nil {
		t.Fatal(err)
	}
	c, cancel := lead.s.Subscribe(256)
	defer cancel()
	subscribedOn(t, lead, "lead")
	for _, id := range []string{"a", "b"} {
		if err := lead.s.Enqueue(ctx, "mail", id, nil); err != nil {
			t.Fatal(err)
		}
	}
	got := eventsOf(t, "lead", c, 3, "a", "b")
	want := map[string][]string{"a": {"queued", "admitted", "completed"}, "b": {"queued", "admitted", "completed"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if n := fails.Load(); n > 0 {
		t.Errorf("%d injected failures left: no publish failed, the test tested nothing", n)
	}
}

// flakyPublish fails the first publishes (as many as fails says).
type flakyPublish struct {
	cluster.Backend
	fails *atomic.Int32
}

func (f *flakyPublish) Publish(ctx context.Context, payload []byte) error {
	if f.fails.Add(-1) >= 0 {
		return errors.New("injected: publishing failed")
	}
	return f.Backend.Publish(ctx, payload)
}

// TestEventsRoundTrip: every kind of event crosses the wire as itself,
// its error as its message matching its sentinel.
func TestEventsRoundTrip(t *testing.T) {
	at := time.Unix(1700000000, 0).UTC()
	in := []fairsched.Event{
		fairsched.JobQueued{Time: at, Type: "t", ID: "a", Attempt: 2, Foreground: true},
		fairsched.JobJoined{Time: at, Type: "t", ID: "a"},
		fairsched.JobCancelled{Time: at, Type: "t", ID: "a", Err: fairsched.ErrCancelled},
		fairsched.JobAdmitted{Time: at, Type: "t", ID: "a", Waited: time.Second, Cost: time.Millisecond},
		fairsched.JobCompleted{Time: at, Type: "t", ID: "a", Elapsed: time.Second},
		fairsched.JobFailed{Time: at, Type: "t", ID: "a", Err: errors.New("boom"), Retrying: true},
		fairsched.JobAged{Time: at, Type: "t", ID: "a", EffectivePriority: 3},
		fairsched.GroupAllocationChanged{Time: at, Group: "g", NewSlots: 2, Reason: fairsched.AllocationRebalance},
		fairsched.JobDenied{Time: at, Type: "t", ID: "a", Err: fairsched.ErrDenied},
		fairsched.JobRefused{Time: at, Type: "t", ID: "a", Reason: fairsched.ReasonTenantLimit},
		fairsched.JobExpired{Time: at, Type: "t", ID: "a", Waited: time.Minute},
		fairsched.JobDropped{Time: at, Type: "t", ID: "a"},
		fairsched.JobSuperseded{Time: at, Type: "t", ID: "a"},
		fairsched.JobPreempted{Time: at, Type: "t", ID: "a", Tier: 1, By: 3, Ran: time.Second},
	}
	out := cluster.RoundTripEvents(t, "d", in)
	if len(out) != len(in) {
		t.Fatalf("%d events back of %d", len(out), len(in))
	}
	for i := range in {
		if diff := cmp.Diff(in[i], out[i], cmp.Comparer(func(x, y error) bool {
			return x == nil && y == nil || x != nil && y != nil && x.Error() == y.Error()
		})); diff != "" {
			t.Errorf("event %d (-sent +received):\n%s", i, diff)
		}
	}
	if c := out[2].(fairsched.JobCancelled); !errors.Is(c.Err, fairsched.ErrCancelled) {
		t.Errorf("a cancellation's error %v does not match ErrCancelled", c.Err)
	}
	if d := out[8].(fairsched.JobDenied); !errors.Is(d.Err, fairsched.ErrDenied) {
		t.Errorf("a denial's error %v does not match ErrDenied", d.Err)
	}
}

// TestEventErrorsCrossCleaned: an event whose error holds a NUL, invalid
// UTF-8 or 100 KB of text crosses to other instances with that text
// cleaned (policy.CleanText), and small enough to be published.
func TestEventErrorsCrossCleaned(t *testing.T) {
	at := time.Unix(1700000000, 0).UTC()
	texts := []string{"bad\x00byte", "bad\xff\xfebytes", strings.Repeat("x", 100_000)}
	var in []fairsched.Event
	for _, text := range texts {
		e := fairsched.JobFailed{Time: at, Type: "t", ID: "a", Err: errors.New(text)}
		if n := cluster.EncodedSize(t, e); n > cluster.MaxPayload {
			t.Errorf("an event with an error of %d bytes takes %d bytes on the wire, over %d", len(text), n, cluster.MaxPayload)
		}
		in = append(in, e)
	}
	out := cluster.RoundTripEvents(t, "d", in)
	if len(out) != len(in) {
		t.Fatalf("%d events back of %d", len(out), len(in))
	}
	for i, text := range texts {
		if got, want := out[i].(fairsched.JobFailed).Err.Error(), policy.CleanText(text); got != want {
			t.Errorf("event %d: error %.40q…; want %.40q…", i, got, want)
		}
	}
}

// TestEscapedLenCountsTheEscapes: the size of a text in a payload is at
// least what encoding/json makes of it — control bytes, HTML characters,
// invalid bytes and the line separators each take more than their bytes.
func TestEscapedLenCountsTheEscapes(t *testing.T) {
	for _, s := range []string{"", "plain", "a\x00b\nc\t", "<>&\"\\", "\xff\xfe", "\u2028\u2029", "é€𝄞"} {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got, min := cluster.EscapedLen(s), len(b)-2; got < min {
			t.Errorf("EscapedLen(%q) = %d, under the %d bytes of %s", s, got, min, b)
		}
	}
}

// everyEventAfterSubscribe subscribes on follow, which does not lead (and
// on it only: the leader publishes for every instance once one has
// subscribers), and at once, without waiting for the leader to read the
// subscription, enqueues jobs on follow, whose handler runs them: the
// subscriber must see every one of their events.
func everyEventAfterSubscribe(t *testing.T, lead, follow *fairsched.Scheduler) {
	t.Helper()
	ctx := context.Background()
	for _, s := range []*fairsched.Scheduler{lead, follow} {
		if err := s.RegisterType("mail", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	}
	if err := follow.RegisterHandler("mail", func(context.Context, fairsched.Job) error { return nil }); err != nil {
		t.Fatal(err)
	}
	c, cancel := follow.Subscribe(1024)
	defer cancel()
	var ids []string
	want := map[string][]string{}
	for i := range 20 {
		id := fmt.Sprint("m", i)
		ids = append(ids, id)
		want[id] = []string{"queued", "admitted", "completed"}
		if err := follow.Enqueue(ctx, "mail", id, nil); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(want, eventsOf(t, "follow", c, 3, ids...)); diff != "" {
		t.Errorf("the follower's events (-want +got):\n%s", diff)
	}
}

// TestEveryEventAfterSubscribe: a subscriber sees every event of the jobs
// submitted after its Subscribe returned, on a follower too (in-memory backend, virtual time: the jobs run within the leader's
// first read of the follower's subscription, unless Subscribe waits for
// it).
func TestEveryEventAfterSubscribe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := memback.New()
		defer b.Close()
		start := func(name string) *fairsched.Scheduler {
			s, err := fairsched.New(fairsched.WithCluster(b, fast("ev", name, 4)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close(context.Background()) })
			return s
		}
		lead := start("lead")
		time.Sleep(time.Second) // virtual: lead holds the lease
		everyEventAfterSubscribe(t, lead, start("follow"))
	})
}

// TestEveryEventAfterSubscribeOnPostgres is TestEveryEventAfterSubscribe
// over PostgreSQL.
func TestEveryEventAfterSubscribeOnPostgres(t *testing.T) {
	url := pgtest.URL(t)
	lead := joinLeader(t, url, fast("ev", "lead", 4))
	follow := join(t, url, fast("ev", "follow", 4))
	everyEventAfterSubscribe(t, lead.s, follow.s)
}
