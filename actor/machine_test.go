package actor_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/workers"
)

// newRemoteMachine is startRemote's machine with no owner goroutine: type
// work (at most capN at once) starts remotely, n jobs of it adopted (ids
// 1…n, the k-th RunAt after[k] past the clock's start if given).
func newRemoteMachine(t *testing.T, clk clock.Clock, capN, n int, after map[int]time.Duration) *machine.Machine {
	t.Helper()
	limits := policy.DefaultLimits()
	limits.PriorityMode = policy.PriorityOrderOnly
	m := machine.New(core.New(limits), machine.Config{Clock: clk, Logger: zap.NewNop(), Tick: time.Minute,
		Store: nopStore{}, GrantRecordsAttempt: true})
	cfg := policy.JobTypeConfig{DefaultCost: time.Second, Priority: 10, MaxConcurrency: capN}
	if err := m.Register(work, cfg); err != nil {
		t.Fatal(err)
	}
	if err := m.RegisterRemote([]policy.JobType{work}); err != nil {
		t.Fatal(err)
	}
	recs := make([]core.JobRecord, n)
	for i := range recs {
		recs[i] = core.JobRecord{Seq: uint64(i + 1), Type: work, ID: fmt.Sprint(i + 1), State: core.RecordPending,
			EnqueuedAt: time.Unix(int64(i), 0)}
		if d, ok := after[i+1]; ok {
			recs[i].RunAt = clk.Now().Add(d)
		}
	}
	if got := m.Adopt(recs); got != n {
		t.Fatalf("adopted %d of %d", got, n)
	}
	return m
}

// machineScript plays the same turns on an owner: take the ops; end every
// start but job 3's first, which is cancelled while it runs and ended
// once its revoke is taken. take returns the ops of the turn, end and
// cancel pass the owner's calls on.
func machineScript(t *testing.T, take func() []messages.RemoteOp, end func(*messages.RemoteAttempt, error),
	cancel func(id string)) []string {
	t.Helper()
	var log []string
	cancelled := false
	for turn := 0; turn < 20; turn++ {
		ops := take()
		if len(ops) == 0 {
			return log
		}
		var ended []string
		for _, op := range ops {
			log = append(log, opText(op))
			switch {
			case op.Revoke:
				end(op.Attempt, machine.ErrCancelled)
				ended = append(ended, op.Attempt.Job.ID)
			case op.Attempt.Job.ID == "3" && !cancelled:
				cancelled = true
				cancel("3")
			default:
				end(op.Attempt, nil)
			}
		}
		log = append(log, fmt.Sprintf("turn %d: revoked %v", turn, ended))
	}
	t.Fatal("no end after 20 turns")
	return nil
}

// TestMachineDecidesAsTheActor: the machine called in its owner's turns
// (Machine) and the same machine behind its owner goroutine (Actor) make
// the same starts and revokes, in the same order, for the same ends and
// cancels; and that order is the cap's: two at a time, oldest first.
func TestMachineDecidesAsTheActor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newRemoteMachine(t, clock.NewMock(), 2, 5, nil)
		viaMachine := machineScript(t, func() []messages.RemoteOp { return m.TakeOps(nil) }, m.EndRemote,
			func(id string) {
				if _, err := m.Cancel(messages.Cancel{Type: work, ID: id}); err != nil {
					t.Fatal(err)
				}
			})
		<-m.Stop(nil)

		a, ops := startRemote(t, 2, 5)
		viaActor := machineScript(t, func() []messages.RemoteOp { return pendingOps(ops) }, a.EndRemote,
			func(id string) {
				if _, err := a.Cancel(context.Background(), messages.Cancel{Type: work, ID: id}); err != nil {
					t.Fatal(err)
				}
			})
		if err := a.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := []string{
			"start 1#1", "start 2#1", "turn 0: revoked []",
			"start 3#1", "start 4#1", "turn 1: revoked []",
			"revoke 3#1", "start 5#1", "turn 2: revoked [3]",
		}
		// The actor takes ends one message at a time, and a start they
		// admit may come out before the revoke its Cancel made: its log is
		// compared as a set of turns' ops, the machine's exactly.
		if diff := cmp.Diff(want, viaMachine); diff != "" {
			t.Errorf("machine's ops (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(opsOnly(want), opsOnly(viaActor)); diff != "" {
			t.Errorf("actor's ops (-want +got):\n%s", diff)
		}
	})
}

// opsOnly keeps the starts and revokes of a script's log.
func opsOnly(log []string) map[string]bool {
	out := map[string]bool{}
	for _, s := range log {
		if s[:4] != "turn" {
			out[s] = true
		}
	}
	return out
}

// TestMachineWakesAtItsDeadline: a job whose RunAt is ahead starts only
// once the owner passes WakeC's firing back (Wake): the machine holds no
// timer goroutine of its own and starts nothing early.
func TestMachineWakesAtItsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewMock()
		m := newRemoteMachine(t, clk, 2, 2, map[int]time.Duration{2: time.Minute})
		var got []string
		for _, op := range m.TakeOps(nil) {
			got = append(got, opText(op))
		}
		if m.WakeC() == nil {
			t.Fatal("no deadline with a job due in a minute")
		}
		clk.Add(59 * time.Second)
		select {
		case <-m.WakeC():
			t.Fatal("woken a second early")
		default:
		}
		got = append(got, "59s")
		clk.Add(time.Second)
		<-m.WakeC()
		m.Wake()
		for _, op := range m.TakeOps(nil) {
			got = append(got, opText(op))
		}
		if diff := cmp.Diff([]string{"start 1#1", "59s", "start 2#1"}, got); diff != "" {
			t.Errorf("ops (-want +got):\n%s", diff)
		}
		<-m.Stop(nil)
	})
}

// TestMachineStop: Stop ends the attempts running here (their reports are
// stale), closes the subscribers' channels, and turns every later call
// away with ErrClosed.
func TestMachineStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newRemoteMachine(t, clock.NewMock(), 1, 2, nil)
		evs := m.Subscribe(64)
		ops := m.TakeOps(nil)
		if len(ops) != 1 {
			t.Fatalf("%d starts, want 1", len(ops))
		}
		<-m.Stop(nil)
		m.EndRemote(ops[0].Attempt, nil) // stale: nothing happens
		if got := m.TakeOps(nil); len(got) != 0 {
			t.Errorf("ops after Stop: %v", got)
		}
		if err := m.Register("other", policy.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); !errors.Is(err, machine.ErrClosed) {
			t.Errorf("Register after Stop: %v, want ErrClosed", err)
		}
		if _, err := m.Snapshot(0); !errors.Is(err, machine.ErrClosed) {
			t.Errorf("Snapshot after Stop: %v, want ErrClosed", err)
		}
		for range evs { // closed by Stop: the range ends
		}
	})
}

// TestMachineEndsAStartCancelledWhileItWaited: with GrantRecordsAttempt an
// attempt whose job has a write under way starts once that write commits.
// A job cancelled meanwhile never starts, and ends in the machine's own
// turn: a machine has no owner goroutine to hear a runner's end, so an
// end left to a runner would leave the job running for ever.
func TestMachineEndsAStartCancelledWhileItWaited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &heldStore{commits: make(chan []string), release: make(chan struct{})}
		m := machine.New(core.New(policy.DefaultLimits()), machine.Config{Clock: clock.NewMock(), Logger: zap.NewNop(),
			Tick: time.Minute, Store: st, GrantRecordsAttempt: true})
		if err := m.Register(work, policy.JobTypeConfig{DefaultCost: time.Second, Priority: 10}); err != nil {
			t.Fatal(err)
		}
		if err := m.RegisterRemote([]policy.JobType{work}); err != nil {
			t.Fatal(err)
		}
		m.Adopt([]core.JobRecord{{Seq: 1, Type: work, ID: "1", State: core.RecordPending, EnqueuedAt: time.Unix(0, 0)}})
		var got []string
		take := func() {
			for _, op := range m.TakeOps(nil) {
				got = append(got, opText(op))
			}
		}
		// settle answers the writer until nothing moves: each commit is
		// released and its answer handed back to the machine.
		settle := func() {
			for {
				synctest.Wait()
				select {
				case c := <-st.commits:
					got = append(got, fmt.Sprint("commit ", c))
					st.release <- struct{}{}
				case r := <-m.CommittedC():
					m.Committed(r)
				default:
					return
				}
			}
		}
		var first *messages.RemoteAttempt
		for _, op := range m.TakeOps(nil) {
			got = append(got, opText(op))
			first = op.Attempt
		}
		if first == nil {
			t.Fatal("job 1 did not start")
		}
		m.EndRemote(first, fmt.Errorf("%w: its instance went silent", workers.ErrWorkerLost))
		take()
		c := <-st.commits // the interruption's write, held: the next attempt waits for it
		got = append(got, fmt.Sprint("commit ", c))
		if _, err := m.Cancel(messages.Cancel{Type: work, ID: "1"}); err != nil {
			t.Fatal(err)
		}
		got = append(got, "cancel 1")
		st.release <- struct{}{}
		settle()
		take()
		snap, err := m.Snapshot(10)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("running %d, pending %d", len(snap.Running), len(snap.Pending)))
		want := []string{"start 1#1", "commit [put 1 interruptions 1]", "cancel 1", "commit [delete 1]", "running 0, pending 0"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
		stopped := m.Stop(nil)
		settle()
		<-stopped
	})
}
