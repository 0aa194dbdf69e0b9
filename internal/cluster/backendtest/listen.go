package backendtest

import (
	"sync"
	"testing"
	"time"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/internal/cluster"
)

// waitBound bounds a wait for a wake-up or an event that must come: past
// it the test fails (a bound on a failure, not a measure of time).
const waitBound = 30 * time.Second

// reader is one Wake listener of the suite, by name.
type reader struct {
	name string
	ch   <-chan struct{}
}

// listeners are the Wake readers of wakeNamesItsReaders.
type listeners []reader

func listen(t *testing.T, b cluster.Backend, specs map[string]struct {
	r        cluster.Reader
	instance string
}) listeners {
	t.Helper()
	var ls listeners
	for _, name := range []string{"leader", "ends", "exec i", "exec j", "owner o1", "owner o2"} {
		s := specs[name]
		ch, stop := b.Wake(bg, s.r, s.instance)
		if ch == nil {
			t.Fatalf("Wake(%s): nil channel, the backend cannot listen", name)
		}
		t.Cleanup(stop)
		ls = append(ls, reader{name, ch})
	}
	return ls
}

// after checks what step woke: each reader of want receives a wake-up,
// and every reader of quiet has none pending. Other readers are not
// checked (a wake-up is a hint: a backend may wake more than it must).
// On a backend whose wake-ups are asynchronous (PostgreSQL's
// notifications), the quiet ones are checked once the wanted ones have
// come, which the same commit's notification reaches at about that time.
func (ls listeners) after(t *testing.T, step string, want, quiet []string) {
	t.Helper()
	for _, name := range want {
		select {
		case <-ls.ch(t, name):
		case <-time.After(waitBound):
			t.Fatalf("%s: %s not woken", step, name)
		}
	}
	for _, name := range quiet {
		select {
		case <-ls.ch(t, name):
			t.Errorf("%s: %s woken", step, name)
		default:
		}
	}
}

func (ls listeners) ch(t *testing.T, name string) <-chan struct{} {
	t.Helper()
	for _, r := range ls {
		if r.name == name {
			return r.ch
		}
	}
	t.Fatalf("no reader %s", name)
	return nil
}

// but is every reader's name except those given.
func (ls listeners) but(names ...string) []string {
	var out []string
	for _, r := range ls {
		skip := false
		for _, n := range names {
			skip = skip || r.name == n
		}
		if !skip {
			out = append(out, r.name)
		}
	}
	return out
}

// wakeNamesItsReaders: each commit wakes the readers that read it — new
// jobs and commands the leader, reported ends the leader's end reader, a
// grant the executor of its instance (none when handed in process), the
// delete of a success its owner, the leader's writes of records every
// owner, a revoke the executor of the job's instance — and not the
// others.
func wakeNamesItsReaders(t *testing.T, b cluster.Backend) {
	type spec = struct {
		r        cluster.Reader
		instance string
	}
	ls := listen(t, b, map[string]spec{
		"leader": {cluster.LeaderReads, "lead"}, "ends": {cluster.EndReads, "lead"},
		"exec i": {cluster.ExecutorReads, "i"}, "exec j": {cluster.ExecutorReads, "j"},
		"owner o1": {cluster.OwnerReads, "o1"}, "owner o2": {cluster.OwnerReads, "o2"},
	})
	r1 := insertOwned(t, b, "1", "o1")
	ls.after(t, "insert", []string{"leader"}, ls.but("leader"))
	r2 := insertOwned(t, b, "2", "o2")
	ls.after(t, "second insert", []string{"leader"}, ls.but("leader"))
	if _, err := b.Command(bg, Domain, cluster.Command{Kind: "k", Args: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	ls.after(t, "command", []string{"leader"}, ls.but("leader"))
	e := lead(t, b, "a")
	grant(t, b, e, cluster.Grant{Seq: r1.Seq, Instance: "i", Attempt: 1})
	ls.after(t, "grant to i", []string{"exec i"}, ls.but("exec i"))
	grant(t, b, e, cluster.Grant{Seq: r2.Seq, Instance: "j", Attempt: 1, Handed: true})
	ls.after(t, "grant handed to j", nil, ls.but())
	if n, err := b.ReportEnds(bg, []cluster.End{{Seq: r1.Seq, Instance: "i", Attempt: 1, Kind: cluster.EndOK}}); err != nil || n != 1 {
		t.Fatalf("report: %d %v", n, err)
	}
	ls.after(t, "report of an end", []string{"ends"}, ls.but("ends"))
	gone, _, err := b.Grant(bg, Domain, e, nil, []cluster.End{{Seq: r1.Seq, Instance: "i", Attempt: 1}}, nil)
	diff(t, "the success's delete", []any{gone, err}, []any{[]uint64{r1.Seq}, nil})
	ls.after(t, "delete of o1's success", []string{"owner o1"}, ls.but("owner o1"))
	js, _, feed, err := b.Domain(bg, Domain, e)
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	r3 := insertOwned(t, b, "3", "o1")
	ls.after(t, "third insert", []string{"leader"}, ls.but("leader"))
	dead := *r3
	dead.State, dead.FinishedAt = core.RecordDead, time.Unix(2, 0).UTC()
	if err := js.ApplyJobs([]machine.JobOp{{Put: &dead}}); err != nil {
		t.Fatal(err)
	}
	ls.after(t, "the leader's write of a record", []string{"owner o1", "owner o2"}, []string{"leader", "ends", "exec i", "exec j"})
	if err := b.RevokeJob(bg, Domain, e, r2.Seq, cluster.RevokeCancel); err != nil {
		t.Fatal(err)
	}
	ls.after(t, "revoke of j's job", []string{"exec j"}, []string{"leader", "ends", "owner o1", "owner o2"})
}

func insertOwned(t *testing.T, b cluster.Backend, id, owner string) *core.JobRecord {
	t.Helper()
	rec := &core.JobRecord{Type: "t", ID: id, Owner: owner, EnqueuedAt: time.Unix(1, 0).UTC()}
	if err := b.Insert(bg, rec); err != nil {
		t.Fatalf("insert %s: %v", id, err)
	}
	return rec
}

// eventsReachListenersFromNow: a payload published reaches every Events
// listener of the moment, in the order published, and none that started
// listening after it or stopped before it.
func eventsReachListenersFromNow(t *testing.T, b cluster.Backend) {
	l1, stop := b.Events(bg)
	if l1 == nil {
		t.Fatal("Events: nil channel, the backend cannot listen")
	}
	stop1 := sync.OnceFunc(stop) // a stop is called once
	defer stop1()
	publish(t, b, "p1")
	l2, stop2 := b.Events(bg)
	if l2 == nil {
		t.Fatal("Events: nil channel, the backend cannot listen")
	}
	defer stop2()
	publish(t, b, "p2")
	diff(t, "the first listener", receive(t, l1, 2), []string{"p1", "p2"})
	diff(t, "the listener started between", receive(t, l2, 1), []string{"p2"})
	stop1()
	publish(t, b, "p3")
	diff(t, "after the first stopped", receive(t, l2, 1), []string{"p3"})
}

// successesTold: the successes an executor tells (TellSucceeded) reach
// every Successes listener whole, in order — a batch of any size, from
// instances of any name —, and write nothing: the rows still run.
func successesTold(t *testing.T, b cluster.Backend) {
	c, stop := b.Successes(bg)
	if c == nil {
		t.Fatal("Successes: nil channel, the backend cannot listen")
	}
	defer stop()
	epoch := lead(t, b, "L")
	rec := insert(t, b, "a")
	grant(t, b, epoch, cluster.Grant{Seq: rec.Seq, Instance: "i", Attempt: 1})
	var want []cluster.End
	for i := range 2000 { // more than one notification holds
		want = append(want, cluster.End{Seq: uint64(i + 1), Instance: "i", Attempt: 1 + i%3, Kind: cluster.EndOK})
	}
	odd := "j \"\n,:{}[]é"
	want = append(want, cluster.End{Seq: 7, Instance: odd, Attempt: 2, Kind: cluster.EndOK})
	if err := b.TellSucceeded(bg, want[:1000]); err != nil {
		t.Fatal(err)
	}
	if err := b.TellSucceeded(bg, want[1000:]); err != nil {
		t.Fatal(err)
	}
	var got []cluster.End
	for len(got) < len(want) {
		select {
		case ends, ok := <-c:
			if !ok {
				t.Fatalf("closed after %d of %d", len(got), len(want))
			}
			got = append(got, ends...)
		case <-time.After(waitBound):
			t.Fatalf("%d of %d successes came", len(got), len(want))
		}
	}
	diff(t, "successes heard", got, want)
	diff(t, "the row told of", granted(t, b, "i"), []grantState{{Seq: rec.Seq, Attempt: 1}})
}

func publish(t *testing.T, b cluster.Backend, p string) {
	t.Helper()
	if err := b.Publish(bg, []byte(p)); err != nil {
		t.Fatalf("publish %s: %v", p, err)
	}
}

// receive takes n payloads from c.
func receive(t *testing.T, c <-chan []byte, n int) []string {
	t.Helper()
	var out []string
	for range n {
		select {
		case p, ok := <-c:
			if !ok {
				t.Fatalf("closed after %q", out)
			}
			out = append(out, string(p))
		case <-time.After(waitBound):
			t.Fatalf("%d of %d payloads came: %q", len(out), n, out)
		}
	}
	return out
}

// listenersCloseWhenDeaf: once the backend stops listening (deafen: a
// listening connection lost), every Wake, Events and Successes channel is closed, so
// that its reader polls or listens again instead of waiting for nothing.
func listenersCloseWhenDeaf(deafen func(*testing.T, cluster.Backend)) func(*testing.T, cluster.Backend) {
	return func(t *testing.T, b cluster.Backend) {
		if deafen == nil {
			t.Skip("no way given to make this backend stop listening (backendtest.Deafen)")
		}
		var wakes []<-chan struct{}
		for _, r := range []cluster.Reader{cluster.LeaderReads, cluster.EndReads, cluster.ExecutorReads, cluster.OwnerReads, cluster.InstanceReads} {
			ch, stop := b.Wake(bg, r, "i")
			if ch == nil {
				t.Fatalf("Wake(%d): nil channel", r)
			}
			defer stop()
			wakes = append(wakes, ch)
		}
		events, stop := b.Events(bg)
		if events == nil {
			t.Fatal("Events: nil channel")
		}
		defer stop()
		told, stopTold := b.Successes(bg)
		if told == nil {
			t.Fatal("Successes: nil channel")
		}
		defer stopTold()
		deafen(t, b)
		for i, ch := range wakes {
			if !closes(ch) {
				t.Errorf("Wake(%d) still open once the backend stopped listening", i)
			}
		}
		if !closes(events) {
			t.Error("Events still open once the backend stopped listening")
		}
		if !closes(told) {
			t.Error("Successes still open once the backend stopped listening")
		}
	}
}

// closes reports whether c is closed within waitBound, taking what is
// pending in it first.
func closes[T any](c <-chan T) bool {
	bound := time.After(waitBound)
	for {
		select {
		case _, ok := <-c:
			if !ok {
				return true
			}
		case <-bound:
			return false
		}
	}
}
