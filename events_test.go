package fairsched_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/testkit"
)

// equateErrors compares errors as the tests can predict them: a sentinel by
// identity (errors.Is), a *PanicError by its value (its stack is checked
// apart).
var equateErrors = cmp.Comparer(func(x, y error) bool {
	if x == nil || y == nil {
		return x == nil && y == nil
	}
	var px, py *fairsched.PanicError
	if errors.As(x, &px) && errors.As(y, &py) {
		return px.Value == py.Value
	}
	return errors.Is(x, y) || errors.Is(y, x)
})

// collectAll reads events until the channel closes.
func collectAll(events <-chan fairsched.Event) []fairsched.Event {
	var got []fairsched.Event
	for e := range events {
		got = append(got, e)
	}
	return got
}

// collect reads events until the channel closes, leaving out JobQueued:
// the tests that compare timelines of admissions and completions ask for
// those alone (TestEventSequence checks JobQueued).
func collect(events <-chan fairsched.Event) []fairsched.Event {
	var got []fairsched.Event
	for e := range events {
		if _, ok := e.(fairsched.JobQueued); !ok {
			got = append(got, e)
		}
	}
	return got
}

// isClosed reports whether ch is closed and drained, without waiting.
func isClosed(ch <-chan fairsched.Event) bool {
	select {
	case _, ok := <-ch:
		return !ok
	default:
		return false
	}
}

// TestEventSequence: a scripted run on a mock clock produces exactly these
// events, with their times, in the order of the debug log lines.
func TestEventSequence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		t0 := mock.Now()
		logs, records := observer.New(zap.DebugLevel)
		s := openScheduler(t, fairsched.WithMaxConcurrency(1), fairsched.WithClock(mock),
			fairsched.WithLogger(zap.New(logs)))
		events, cancel := s.Subscribe(16)
		defer cancel()
		errDisk := errors.New("disk full")

		// t0: c1 (alice) runs at once.
		c1 := testkit.NewGate()
		c1Done := make(chan error, 1)
		go func() { c1Done <- s.RunSync(context.Background(), clone, "c1", "alice", c1.Run) }()
		synctest.Wait()
		// t0+2s: the background repack r1 waits for the global slot.
		mock.Add(2 * time.Second)
		r1 := testkit.NewGate()
		if err := s.Submit(repack, "r1", r1.Run); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		// t0+3s: c2 (bob) waits too, ahead of r1 by priority.
		mock.Add(time.Second)
		c2Done := make(chan error, 1)
		go func() {
			c2Done <- s.RunSync(context.Background(), clone, "c2", "bob", func(context.Context) error { panic("boom") })
		}()
		synctest.Wait()
		// t0+5s: c1 ends; c2 runs and panics at once; r1 runs.
		mock.Add(2 * time.Second)
		c1.Release(nil)
		if err := <-c1Done; err != nil {
			t.Fatalf("c1: %v", err)
		}
		var pe *fairsched.PanicError
		if err := <-c2Done; !errors.As(err, &pe) {
			t.Fatalf("c2: %v; want a *PanicError", err)
		}
		synctest.Wait()
		// t0+9s: r1 fails; r2 runs and succeeds at once.
		mock.Add(4 * time.Second)
		r1.Release(errDisk)
		synctest.Wait()
		if err := s.Submit(repack, "r2", func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := collectAll(events) // Close closed the channel after the last event

		sec := func(n float64) time.Duration { return time.Duration(n * float64(time.Second)) }
		at := func(n float64) time.Time { return t0.Add(sec(n)) }
		// A key that joins starts at the least accumulated cost of the active
		// keys: "" and bob join at alice's 10s; "" rejoins for r2 at that floor,
		// which rose to 30s.
		want := []fairsched.Event{
			fairsched.JobQueued{Time: at(0), Type: clone, ID: "c1", FairnessKey: "alice", Foreground: true, Attempt: 1},
			fairsched.JobAdmitted{Time: at(0), Type: clone, ID: "c1", FairnessKey: "alice",
				BasePriority: 8, EffectivePriority: 8, Cost: sec(10), KeyCost: sec(10)},
			fairsched.JobQueued{Time: at(2), Type: repack, ID: "r1", Attempt: 1},
			fairsched.JobQueued{Time: at(3), Type: clone, ID: "c2", FairnessKey: "bob", Foreground: true, Attempt: 1},
			// α = 0.3: 0.3·5s + 0.7·10s
			fairsched.JobCompleted{Time: at(5), Type: clone, ID: "c1", FairnessKey: "alice",
				Elapsed: sec(5), Estimate: sec(8.5)},
			fairsched.JobAdmitted{Time: at(5), Type: clone, ID: "c2", FairnessKey: "bob",
				BasePriority: 8, EffectivePriority: 8, Waited: sec(2), Cost: sec(10), KeyCost: sec(20)},
			fairsched.JobFailed{Time: at(5), Type: clone, ID: "c2", FairnessKey: "bob",
				Elapsed: 0, Estimate: sec(7), Err: &fairsched.PanicError{Value: "boom"}, Panicked: true},
			fairsched.JobAdmitted{Time: at(5), Type: repack, ID: "r1", FairnessKey: "",
				BasePriority: 4, EffectivePriority: 4, Waited: sec(3), Cost: sec(20), KeyCost: sec(30)},
			// 0.3·4s + 0.7·20s
			fairsched.JobFailed{Time: at(9), Type: repack, ID: "r1", FairnessKey: "",
				Elapsed: sec(4), Estimate: sec(15.2), Err: errDisk},
			fairsched.JobQueued{Time: at(9), Type: repack, ID: "r2", Attempt: 1},
			fairsched.JobAdmitted{Time: at(9), Type: repack, ID: "r2", FairnessKey: "",
				BasePriority: 4, EffectivePriority: 4, Cost: sec(20), KeyCost: sec(50)},
			fairsched.JobCompleted{Time: at(9), Type: repack, ID: "r2", FairnessKey: "",
				Elapsed: 0, Estimate: sec(14)},
		}
		if diff := cmp.Diff(want, got, equateErrors); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		for _, e := range got {
			if f, ok := e.(fairsched.JobFailed); ok && f.Panicked {
				var p *fairsched.PanicError
				if !errors.As(f.Err, &p) || !strings.Contains(string(p.Stack), "TestEventSequence") {
					t.Errorf("panic event's error %v lacks the panicking frame", f.Err)
				}
			}
		}

		// The events follow the debug log, line for line.
		var logged, emitted []string
		for _, r := range records.All() {
			if r.Message == "admit" || r.Message == "complete" {
				logged = append(logged, r.Message+" "+r.ContextMap()["id"].(string))
			}
		}
		for _, e := range got {
			switch e := e.(type) {
			case fairsched.JobAdmitted:
				emitted = append(emitted, "admit "+e.ID)
			case fairsched.JobCompleted:
				emitted = append(emitted, "complete "+e.ID)
			case fairsched.JobFailed:
				emitted = append(emitted, "complete "+e.ID)
			}
		}
		if diff := cmp.Diff(logged, emitted); diff != "" {
			t.Errorf("events out of the log's order (-log +events):\n%s", diff)
		}
	})
}

// TestSlowSubscriberLosesEvents: subscribers that never read lose what does
// not fit in their buffer; the owner goes on regardless and the snapshot
// counts every loss; a subscriber with room gets everything.
func TestSlowSubscriberLosesEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, fairsched.WithClock(clock.NewMock()))
		unbuffered, cancel0 := s.Subscribe(0)
		defer cancel0()
		one, cancel1 := s.Subscribe(1)
		defer cancel1()
		negative, cancelNeg := s.Subscribe(-5) // treated as 0
		defer cancelNeg()
		roomy, cancelRoomy := s.Subscribe(64)
		defer cancelRoomy()
		if cap(unbuffered) != 0 || cap(one) != 1 || cap(negative) != 0 || cap(roomy) != 64 {
			t.Fatalf("capacities %d %d %d %d; want 0 1 0 64", cap(unbuffered), cap(one), cap(negative), cap(roomy))
		}

		const jobs = 5 // 3 events each: queued, admitted, completed
		for i := range jobs {
			id := fmt.Sprintf("r%d", i)
			if err := s.RunSync(context.Background(), clone, id, "k", func(context.Context) error { return nil }); err != nil {
				t.Fatalf("RunSync %s: %v", id, err)
			}
		}
		if err := s.RegisterType("snapshot", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatalf("RegisterType with stalled subscribers: %v", err)
		}
		synctest.Wait() // the last completion is the owner's
		const events = 3 * jobs
		if got, want := snapshot(t, s).EventsLost, uint64(events+(events-1)+events); got != want {
			t.Errorf("EventsLost = %d; want %d (unbuffered, buffer 1, negative buffer)", got, want)
		}
		if e, ok := <-one; !ok || e.(fairsched.JobQueued).ID != "r0" {
			t.Errorf("buffer-1 subscriber holds %v; want the first queueing", e)
		}
		if len(roomy) != events {
			t.Errorf("roomy subscriber got %d events; want %d", len(roomy), events)
		}
	})
}

// TestCancelStopsDelivery: cancel closes the channel, keeping what was
// buffered, and nothing is delivered or counted lost afterwards. Calling it
// again, or after Close, is safe.
func TestCancelStopsDelivery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := openScheduler(t, fairsched.WithClock(clock.NewMock()))
		events, cancel := s.Subscribe(8)
		other, cancelOther := s.Subscribe(8)
		run := func(id string) {
			t.Helper()
			if err := s.RunSync(context.Background(), clone, id, "k", func(context.Context) error { return nil }); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		run("before")
		cancel()
		if len(events) != 3 {
			t.Fatalf("%d events buffered at cancel; want 3", len(events))
		}
		var ids []string
		for e := range events { // ends: cancel closed the channel
			switch e := e.(type) {
			case fairsched.JobQueued:
				ids = append(ids, "queue "+e.ID)
			case fairsched.JobAdmitted:
				ids = append(ids, "admit "+e.ID)
			case fairsched.JobCompleted:
				ids = append(ids, "complete "+e.ID)
			}
		}
		if diff := cmp.Diff([]string{"queue before", "admit before", "complete before"}, ids); diff != "" {
			t.Errorf("events before cancel (-want +got):\n%s", diff)
		}
		cancel() // twice
		run("after")
		if n := len(other); n != 6 {
			t.Errorf("the other subscriber has %d events; want 6", n)
		}
		if lost := snapshot(t, s).EventsLost; lost != 0 {
			t.Errorf("EventsLost = %d; a cancelled subscriber loses nothing", lost)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		cancel() // after Close
		cancelOther()
		cancelOther()
		if n := len(collectAll(other)); n != 6 {
			t.Errorf("the other subscriber ends with %d events; want 6", n)
		}
	})
}

// TestCloseClosesSubscribers: Close closes every channel once the last job
// has ended and its events have been sent; Subscribe during or after Close
// returns a closed channel.
func TestCloseClosesSubscribers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := openScheduler(t, fairsched.WithClock(clock.NewMock()))
		buffered, cancelBuffered := s.Subscribe(4)
		defer cancelBuffered()
		unbuffered, cancelUnbuffered := s.Subscribe(0)
		defer cancelUnbuffered()
		bg := testkit.NewGate()
		if err := s.Submit(repack, "r", bg.Run); err != nil {
			t.Fatal(err)
		}
		closed := make(chan error, 1)
		go func() { closed <- s.Close(context.Background()) }()
		synctest.Wait()
		if isClosed(unbuffered) || len(buffered) != 2 {
			t.Fatalf("while the job runs: unbuffered closed %v, %d buffered; want open, 2", isClosed(unbuffered), len(buffered))
		}
		late, cancelLate := s.Subscribe(4)
		if !isClosed(late) {
			t.Error("Subscribe during Close returned an open channel")
		}
		cancelLate()

		bg.Release(nil)
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, e := range collectAll(buffered) {
			switch e.(type) {
			case fairsched.JobQueued:
				kinds = append(kinds, "queued")
			case fairsched.JobAdmitted:
				kinds = append(kinds, "admitted")
			case fairsched.JobCompleted:
				kinds = append(kinds, "completed")
			default:
				kinds = append(kinds, fmt.Sprintf("%#v", e))
			}
		}
		if diff := cmp.Diff([]string{"queued", "admitted", "completed"}, kinds); diff != "" {
			t.Errorf("events before Close ended (-want +got):\n%s", diff)
		}
		if !isClosed(unbuffered) {
			t.Error("Close left the unbuffered channel open")
		}
	})
}

func TestSubscribeAfterClose(t *testing.T) {
	s := openScheduler(t)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	events, cancel := s.Subscribe(3)
	if !isClosed(events) {
		t.Error("Subscribe after Close returned an open channel")
	}
	cancel()
	cancel()
}

// TestEventJSON: events serialise with snake_case fields, durations in
// nanoseconds, reasons as strings and a failure's error as its message, and
// decode back.
func TestEventJSON(t *testing.T) {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		event fairsched.Event
		json  string
	}{
		{fairsched.JobAdmitted{Time: t0, Type: clone, ID: "c", FairnessKey: "k", BasePriority: 4, EffectivePriority: 6,
			Group: "g", Waited: 3, Cost: 2, KeyCost: 5},
			`{"time":"2025-01-02T03:04:05Z","type":"sync-clone","id":"c","fairness_key":"k","base_priority":4,` +
				`"effective_priority":6,"group":"g","waited":3,"cost":2,"key_cost":5}`},
		{fairsched.JobCompleted{Time: t0, Type: clone, ID: "c", FairnessKey: "k", Elapsed: 7, Estimate: 8},
			`{"time":"2025-01-02T03:04:05Z","type":"sync-clone","id":"c","fairness_key":"k","elapsed":7,"estimate":8}`},
		{fairsched.JobFailed{Time: t0, Type: repack, ID: "r", Elapsed: 7, Estimate: 8, Err: errors.New("disk full")},
			`{"time":"2025-01-02T03:04:05Z","type":"repack","id":"r","fairness_key":"","elapsed":7,"estimate":8,` +
				`"panicked":false,"error":"disk full"}`},
		{fairsched.JobFailed{Time: t0, Type: repack, ID: "r", Err: &fairsched.PanicError{Value: "boom"}, Panicked: true},
			`{"time":"2025-01-02T03:04:05Z","type":"repack","id":"r","fairness_key":"","elapsed":0,"estimate":0,` +
				`"panicked":true,"error":"fairsched: job panicked: boom"}`},
		{fairsched.JobAged{Time: t0, Type: repack, ID: "r", BasePriority: 1, EffectivePriority: 3, Waited: 9},
			`{"time":"2025-01-02T03:04:05Z","type":"repack","id":"r","fairness_key":"","base_priority":1,` +
				`"effective_priority":3,"waited":9}`},
		{fairsched.GroupAllocationChanged{Time: t0, Group: "a", PreviousSlots: 12, NewSlots: 10, Reason: fairsched.AllocationRebalance},
			`{"time":"2025-01-02T03:04:05Z","group":"a","previous_slots":12,"new_slots":10,"reason":"rebalance"}`},
	} {
		raw, err := json.Marshal(tc.event)
		if err != nil {
			t.Fatal(err)
		}
		if string(raw) != tc.json {
			t.Errorf("%T:\n got %s\nwant %s", tc.event, raw, tc.json)
		}
		back := decodeLike(t, tc.event, raw)
		if f, ok := tc.event.(fairsched.JobFailed); ok {
			// The error comes back as its message.
			g := back.(fairsched.JobFailed)
			if g.Err == nil || g.Err.Error() != f.Err.Error() {
				t.Errorf("JobFailed error decodes as %v; want %q", g.Err, f.Err)
			}
			f.Err, g.Err = nil, nil
			tc.event, back = f, g
		}
		if diff := cmp.Diff(tc.event, back); diff != "" {
			t.Errorf("%T JSON round trip (-orig +back):\n%s", tc.event, diff)
		}
	}
	var f fairsched.JobFailed
	if err := json.Unmarshal([]byte(`{"id":"x","error":""}`), &f); err != nil || f.Err != nil || f.ID != "x" {
		t.Errorf("JobFailed without an error decodes as %+v, %v", f, err)
	}
}

// decodeLike decodes raw into a value of e's type.
func decodeLike(t *testing.T, e fairsched.Event, raw []byte) fairsched.Event {
	t.Helper()
	var err error
	switch e.(type) {
	case fairsched.JobAdmitted:
		var v fairsched.JobAdmitted
		err = json.Unmarshal(raw, &v)
		e = v
	case fairsched.JobCompleted:
		var v fairsched.JobCompleted
		err = json.Unmarshal(raw, &v)
		e = v
	case fairsched.JobFailed:
		var v fairsched.JobFailed
		err = json.Unmarshal(raw, &v)
		e = v
	case fairsched.JobAged:
		var v fairsched.JobAged
		err = json.Unmarshal(raw, &v)
		e = v
	case fairsched.GroupAllocationChanged:
		var v fairsched.GroupAllocationChanged
		err = json.Unmarshal(raw, &v)
		e = v
	}
	if err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	return e
}

func ExampleScheduler_Subscribe() {
	s, _ := fairsched.New(fairsched.WithMaxConcurrency(1))
	_ = s.RegisterType("build", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 2})
	_ = s.RegisterType("cleanup", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1})

	events, cancel := s.Subscribe(16) // room for the whole burst: nothing is lost
	defer cancel()

	_ = s.RunSync(context.Background(), "build", "app", "alice", func(context.Context) error { return nil })
	_ = s.Submit("cleanup", "app", func(context.Context) error { return errors.New("disk full") })
	_ = s.Close(context.Background()) // closes events after the last job's

	for e := range events {
		switch e := e.(type) {
		case fairsched.JobAdmitted:
			fmt.Printf("admitted %s/%s for %q\n", e.Type, e.ID, e.FairnessKey)
		case fairsched.JobCompleted:
			fmt.Printf("completed %s/%s\n", e.Type, e.ID)
		case fairsched.JobFailed:
			fmt.Printf("failed %s/%s: %v\n", e.Type, e.ID, e.Err)
		}
	}
	// Output:
	// admitted build/app for "alice"
	// completed build/app
	// admitted cleanup/app for ""
	// failed cleanup/app: disk full
}
