package machine_test

import (
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/workers"
)

// heldStore is a JobStore whose every commit waits for the test: it
// tells the commit's ops on commits, then returns once release receives.
type heldStore struct {
	commits chan []string
	release chan struct{}
}

func newHeldStore() *heldStore {
	return &heldStore{commits: make(chan []string), release: make(chan struct{})}
}

func (s *heldStore) Load() (core.State, error)                 { return core.State{}, nil }
func (s *heldStore) Save(core.State) error                     { return nil }
func (s *heldStore) LoadJobs(func(core.JobRecord) error) error { return nil }
func (s *heldStore) ApplyJobs(ops []machine.JobOp) error {
	var out []string
	for _, op := range ops {
		if op.Put != nil {
			out = append(out, fmt.Sprintf("put %d attempt %d interruptions %d", op.Put.Seq, op.Put.Attempt, op.Put.Interruptions))
		} else {
			out = append(out, fmt.Sprintf("delete %d", op.Delete))
		}
	}
	s.commits <- out
	<-s.release
	return nil
}

// timeline records what a machine over a heldStore does, in order: the
// commits, the starts and revokes, the events.
type timeline struct {
	m   *machine.Machine
	st  *heldStore
	evs <-chan messages.Event
	log []string
}

func newTimeline(m *machine.Machine, st *heldStore) *timeline {
	return &timeline{m: m, st: st, evs: m.Subscribe(64)}
}

// add writes a line of the test's own.
func (l *timeline) add(line string) { l.log = append(l.log, line) }

// commit takes the next commit, logs it and lets it go on.
func (l *timeline) commit() {
	l.add(fmt.Sprint("commit ", <-l.st.commits))
	l.st.release <- struct{}{}
}

// settle lets every commit go on and hands its answer back to the
// machine, until nothing moves (the bubble idle).
func (l *timeline) settle() {
	for {
		synctest.Wait()
		select {
		case c := <-l.st.commits:
			l.add(fmt.Sprint("commit ", c))
			l.st.release <- struct{}{}
		case r := <-l.m.CommittedC():
			l.m.Committed(r)
		default:
			return
		}
	}
}

// take ends the turn and logs the jobs' ends among the events, then its
// starts and revokes (the job's record seq with each); it returns the
// ops.
func (l *timeline) take() []messages.RemoteOp {
	l.events()
	ops := l.m.TakeOps(nil)
	for _, op := range ops {
		l.add(fmt.Sprintf("%s seq %d", opText(op), op.Attempt.Job.Seq))
	}
	l.events()
	return ops
}

// events logs the jobs' ends among the events so far.
func (l *timeline) events() {
	for {
		select {
		case e := <-l.evs:
			if text, ok := endText(e); ok {
				l.add(text)
			}
		default:
			return
		}
	}
}

// turn takes the turn's ops, then settles its writes.
func (l *timeline) turn() []messages.RemoteOp {
	ops := l.take()
	l.settle()
	return ops
}

// stop stops the machine, letting its last writes go on unlogged: Stop
// waits for them in the caller's goroutine.
func (l *timeline) stop() {
	l.settle()
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-l.st.commits:
				l.st.release <- struct{}{}
			case <-done:
				return
			}
		}
	}()
	<-l.m.Stop(nil)
	close(done)
}

// TestGrantRecordsAttempt: with GrantRecordsAttempt (cluster mode's
// leader, whose grant counts the attempt in the job's row), the machine
// writes nothing when a durable job's attempt starts, and starts it at
// once; without it, the attempt's start is written first, and the
// attempt starts once that write commits. The start names the attempt
// either way.
func TestGrantRecordsAttempt(t *testing.T) {
	for _, grantRecords := range []bool{false, true} {
		t.Run(fmt.Sprint(grantRecords), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := newHeldStore()
				l := newTimeline(remoteMachine(t, machine.Config{Store: st, GrantRecordsAttempt: grantRecords}, capped(1)), st)
				l.m.Adopt([]core.JobRecord{pendingRecord(1, "j")})
				ops := l.turn()
				if len(ops) == 0 {
					ops = l.turn()
				}
				if len(ops) != 1 {
					t.Fatalf("%d starts, want 1", len(ops))
				}
				l.m.EndRemote(ops[0].Attempt, nil)
				l.turn()
				want := []string{"start j#1 seq 1", "completed j", "commit [delete 1]"}
				if !grantRecords {
					want = append([]string{"commit [put 1 attempt 1 interruptions 0]"}, want...)
				}
				if diff := cmp.Diff(want, l.log); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				l.stop()
			})
		})
	}
}

// TestAdoptParksAJobOfABusyID: a record adopted while a job of its
// (type, id) is still unfinished here — in cluster mode the database
// takes the new job once the old one's row is gone, which may be before
// the machine sees the old one end — starts once the old one has ended,
// instead of being dropped; a record adopted again (the feed may repeat
// a row) starts no second time.
func TestAdoptParksAJobOfABusyID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newHeldStore()
		l := newTimeline(remoteMachine(t, machine.Config{Store: st, GrantRecordsAttempt: true}, capped(2)), st)
		l.m.Adopt([]core.JobRecord{pendingRecord(1, "x")})
		first := l.turn()
		l.m.Adopt([]core.JobRecord{pendingRecord(2, "x"), pendingRecord(1, "x")}) // 1 again: the feed may repeat a row
		l.add("adopted 2 and 1")
		l.turn()
		l.m.EndRemote(first[0].Attempt, nil)
		second := l.turn()
		for _, op := range second {
			l.m.EndRemote(op.Attempt, nil)
		}
		l.turn()
		l.turn()
		want := []string{"start x#1 seq 1", "adopted 2 and 1", "completed x", "start x#1 seq 2", "commit [delete 1]",
			"completed x", "commit [delete 2]"}
		if diff := cmp.Diff(want, l.log); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		l.stop()
	})
}

// TestEndWrittenWritesNothingMore: a remote attempt that ends with
// EndWritten (cluster mode's leader, whose fenced delete of the row came
// first) ends its job as a success — a JobCompleted event, the (type, id)
// free again, so that a new job of it starts at once — and the machine
// writes no delete of its own; an attempt that ends with nil has its
// record deleted.
func TestEndWrittenWritesNothingMore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newHeldStore()
		l := newTimeline(remoteMachine(t, machine.Config{Store: st, GrantRecordsAttempt: true}, capped(2)), st)
		for i, end := range []error{machine.EndWritten, nil} {
			l.m.Adopt([]core.JobRecord{pendingRecord(uint64(i+1), "x")})
			for _, op := range l.turn() {
				l.m.EndRemote(op.Attempt, end)
			}
			l.turn()
		}
		want := []string{"start x#1 seq 1", "completed x", "start x#1 seq 2", "completed x", "commit [delete 2]"}
		if diff := cmp.Diff(want, l.log); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		l.stop()
	})
}

// TestEndWrittenOfARunSync: a RunSync's or Submit's job (its record has
// an owner) whose attempt ends with EndWritten is not deleted again by
// the machine either — its success writes nothing else; a job whose
// attempt ends with nil still has its record deleted.
func TestEndWrittenOfARunSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newHeldStore()
		l := newTimeline(remoteMachine(t, machine.Config{Store: st, GrantRecordsAttempt: true}, capped(2)), st)
		owned := pendingRecord(1, "j1")
		owned.Owner = "i1"
		l.m.Adopt([]core.JobRecord{owned, pendingRecord(2, "j2")})
		for _, op := range l.turn() {
			end := error(nil)
			if op.Attempt.Job.Owner != "" {
				end = machine.EndWritten
			}
			l.m.EndRemote(op.Attempt, end)
		}
		l.turn()
		want := []string{"start j1#1 seq 1", "start j2#1 seq 2", "completed j1", "completed j2", "commit [delete 2]"}
		if diff := cmp.Diff(want, l.log); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		l.stop()
	})
}

// TestNoStartBeforeItsWrites: with GrantRecordsAttempt (cluster mode's
// leader, where the grant's write is another writer's than the
// machine's), an attempt does not start while a write of its job's
// record is under way — here the record of the interrupted attempt
// before it. Started at once, its success's delete (the leader's) could
// commit before that write, which would then bring the finished job back.
func TestNoStartBeforeItsWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newHeldStore()
		l := newTimeline(remoteMachine(t, machine.Config{Store: st, GrantRecordsAttempt: true}, capped(1)), st)
		l.m.Adopt([]core.JobRecord{pendingRecord(1, "j")})
		first := l.turn()
		l.m.EndRemote(first[0].Attempt, fmt.Errorf("%w: its instance went silent", workers.ErrWorkerLost))
		l.take()
		c := <-st.commits // the interruption's write, held
		l.add(fmt.Sprint("commit held ", c))
		synctest.Wait()
		l.add(fmt.Sprint("starts while held: ", len(l.take())))
		st.release <- struct{}{}
		l.settle()
		for _, op := range l.turn() {
			l.m.EndRemote(op.Attempt, machine.EndWritten)
		}
		l.turn()
		want := []string{"start j#1 seq 1", "failed j: fairsched: worker lost: its instance went silent",
			"commit held [put 1 attempt 1 interruptions 1]", "starts while held: 0",
			"start j#2 seq 1", "completed j"}
		if diff := cmp.Diff(want, l.log); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		l.stop()
	})
}

// TestMachineEndsAStartCancelledWhileItWaited: with GrantRecordsAttempt an
// attempt whose job has a write under way starts once that write commits.
// A job cancelled meanwhile never starts, and ends in the machine's own
// turn: a machine has no owner goroutine to hear a runner's end, so an
// end left to a runner would leave the job running for ever.
func TestMachineEndsAStartCancelledWhileItWaited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newHeldStore()
		l := newTimeline(remoteMachine(t, machine.Config{Store: st, GrantRecordsAttempt: true}, capped(1)), st)
		l.m.Adopt([]core.JobRecord{pendingRecord(1, "1")})
		first := l.turn()
		if len(first) != 1 {
			t.Fatalf("%d starts, want 1", len(first))
		}
		l.m.EndRemote(first[0].Attempt, fmt.Errorf("%w: its instance went silent", workers.ErrWorkerLost))
		l.take()
		c := <-st.commits // the interruption's write, held: the next attempt waits for it
		l.add(fmt.Sprint("commit held ", c))
		if _, err := l.m.Cancel(messages.Cancel{Type: work, ID: "1"}); err != nil {
			t.Fatal(err)
		}
		l.add("cancel 1")
		st.release <- struct{}{}
		l.turn()
		snap, err := l.m.Snapshot(10)
		if err != nil {
			t.Fatal(err)
		}
		l.add(fmt.Sprintf("running %d, pending %d", len(snap.Running), len(snap.Pending)))
		want := []string{"start 1#1 seq 1", "failed 1: fairsched: worker lost: its instance went silent",
			"commit held [put 1 attempt 1 interruptions 1]", "cancel 1",
			"commit [delete 1]", "running 0, pending 0"}
		if diff := cmp.Diff(want, l.log); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
		l.stop()
	})
}
