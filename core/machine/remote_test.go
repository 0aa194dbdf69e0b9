package machine_test

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

// work is the job type the remote tests start.
const work policy.JobType = "work"

// remoteMachine builds a machine whose type work, configured as cfg,
// starts remotely, as cluster mode's leader's does; mc's unset fields
// take a mock clock, a nopStore, no log and a tick of a minute.
func remoteMachine(t *testing.T, mc machine.Config, cfg policy.JobTypeConfig) *machine.Machine {
	t.Helper()
	if mc.Clock == nil {
		mc.Clock = clock.NewMock()
	}
	if mc.Store == nil {
		mc.Store = nopStore{}
	}
	mc.Logger, mc.Tick = zap.NewNop(), time.Minute
	limits := policy.DefaultLimits()
	limits.PriorityMode = policy.PriorityOrderOnly // the type's cap is the only one
	m := machine.New(core.New(limits), mc)
	if err := m.Register(work, cfg); err != nil {
		t.Fatal(err)
	}
	if err := m.RegisterRemote([]policy.JobType{work}); err != nil {
		t.Fatal(err)
	}
	return m
}

// capped is type work's configuration with at most capN running at once.
func capped(capN int) policy.JobTypeConfig {
	return policy.JobTypeConfig{DefaultCost: time.Second, Priority: 10, MaxConcurrency: capN}
}

// newRemoteMachine is remoteMachine with the grant writing each attempt's
// count (GrantRecordsAttempt), at most capN of work at once, and n jobs
// of it adopted (ids 1…n, the k-th due after[k] past the clock's time if
// given).
func newRemoteMachine(t *testing.T, clk clock.Clock, capN, n int, after map[int]time.Duration) *machine.Machine {
	t.Helper()
	m := remoteMachine(t, machine.Config{Clock: clk, GrantRecordsAttempt: true}, capped(capN))
	recs := make([]core.JobRecord, n)
	for i := range recs {
		recs[i] = pendingRecord(uint64(i+1), fmt.Sprint(i+1))
		if d, ok := after[i+1]; ok {
			recs[i].RunAt = clk.Now().Add(d)
		}
	}
	if got := m.Adopt(recs); got != n {
		t.Fatalf("adopted %d of %d", got, n)
	}
	return m
}

// pendingRecord is a pending record of work, as another process wrote it.
func pendingRecord(seq uint64, id string) core.JobRecord {
	return core.JobRecord{Seq: seq, Type: work, ID: id, State: core.RecordPending, EnqueuedAt: time.Unix(int64(seq), 0)}
}

// opText names op: "start 3#1" or "revoke 3#1" (id, attempt).
func opText(op messages.RemoteOp) string {
	verb := "start"
	if op.Revoke {
		verb = "revoke"
	}
	return fmt.Sprintf("%s %s#%d", verb, op.Attempt.Job.ID, op.Attempt.Job.Attempt)
}

// opsTexts names every op of ops.
func opsTexts(ops []messages.RemoteOp) []string {
	var out []string
	for _, op := range ops {
		out = append(out, opText(op))
	}
	return out
}

// endText names event e if it is a job's end: "completed 3" or
// "failed 3: <its error>".
func endText(e messages.Event) (string, bool) {
	switch e := e.(type) {
	case messages.JobCompleted:
		return "completed " + e.ID, true
	case messages.JobFailed:
		return fmt.Sprintf("failed %s: %v", e.ID, e.Err), true
	}
	return "", false
}

// takeCommitted hands the store writer's answers back to m until the
// writer is idle (the bubble idle): the turn's records are committed.
func takeCommitted(m *machine.Machine) {
	for {
		synctest.Wait()
		select {
		case r := <-m.CommittedC():
			m.Committed(r)
		default:
			return
		}
	}
}

// TestRemoteCancelHoldsTheSlot: Cancel of a running remote attempt
// cancels its context and puts a revoke of that attempt in the outbox,
// after its start; the attempt holds its slot until its end is reported,
// then the next job starts. An end reported twice counts once.
func TestRemoteCancelHoldsTheSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newRemoteMachine(t, clock.NewMock(), 1, 2, nil)
		defer func() { <-m.Stop(nil) }()
		first := m.TakeOps(nil)
		log := append(opsTexts(first), "cancel 1")
		if _, err := m.Cancel(messages.Cancel{Type: work, ID: "1"}); err != nil {
			t.Fatal(err)
		}
		held := m.TakeOps(nil)
		log = append(log, opsTexts(held)...)
		log = append(log, fmt.Sprint("cancelled: ", first[0].Attempt.Ctx.Err()), "end 1")
		if len(held) == 1 && held[0].Attempt != first[0].Attempt {
			t.Errorf("the revoke names another attempt than the start")
		}
		m.EndRemote(first[0].Attempt, errors.New("stopped"))
		m.EndRemote(first[0].Attempt, nil) // stale: ignored
		takeCommitted(m)
		next := m.TakeOps(nil)
		log = append(log, opsTexts(next)...)
		want := []string{"start 1#1", "cancel 1", "revoke 1#1", "cancelled: context canceled", "end 1", "start 2#1"}
		if diff := cmp.Diff(want, log); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
		m.EndRemote(next[0].Attempt, nil)
	})
}

// TestRemoteAbortEndsTheAttempts: a Stop that gives up (a Close whose
// time is over) ends the remote attempts itself, as a handler returns its
// context's cause, cancelling their contexts; it does not wait for their
// ends, whose late reports change nothing, and drops the outbox.
func TestRemoteAbortEndsTheAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newRemoteMachine(t, clock.NewMock(), 2, 3, nil)
		evs := m.Subscribe(64)
		started := m.TakeOps(nil)
		log := append(opsTexts(started), "stop")
		giveUp := make(chan time.Time)
		close(giveUp)
		<-m.Stop(giveUp)
		for e := range evs { // closed by Stop
			if text, ok := endText(e); ok {
				log = append(log, text)
			}
		}
		for _, op := range started {
			log = append(log, fmt.Sprintf("%s: %v", opText(op), context.Cause(op.Attempt.Ctx)))
			m.EndRemote(op.Attempt, nil) // late: nothing happens
		}
		log = append(log, fmt.Sprint("ops after: ", opsTexts(m.TakeOps(nil))))
		want := []string{"start 1#1", "start 2#1", "stop", "failed 1: context canceled", "failed 2: context canceled",
			"start 1#1: context canceled", "start 2#1: context canceled", "ops after: []"}
		if diff := cmp.Diff(want, log); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

// TestRemoteWorkerLostEndsTheAttempt: a remote attempt on a worker's slot
// is started with its slot; when the worker goes, the machine ends the
// attempt at once (ErrWorkerLost: an interruption), and the job starts
// again once a slot is back, as attempt 2. The late report of the first
// attempt is ignored: the second still holds the slot.
func TestRemoteWorkerLostEndsTheAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := remoteMachine(t, machine.Config{GrantRecordsAttempt: true}, policy.JobTypeConfig{DefaultCost: time.Second, Priority: 10, RequiresWorker: true})
		defer func() { <-m.Stop(nil) }()
		m.Adopt([]core.JobRecord{pendingRecord(1, "1")})
		slots := [][]policy.JobType{{work}}
		worker := func(remove bool) {
			if err := m.Worker("w", slots, remove); err != nil {
				t.Fatal(err)
			}
		}
		var log []string
		onSlot := func(ops []messages.RemoteOp) {
			for _, op := range ops {
				log = append(log, fmt.Sprintf("%s on %v %+v", opText(op), op.Attempt.OnSlot, op.Attempt.Slot))
			}
		}
		worker(false)
		first := m.TakeOps(nil)
		onSlot(first)
		worker(true)
		log = append(log, fmt.Sprint("worker gone: ", errors.Is(context.Cause(first[0].Attempt.Ctx), workers.ErrWorkerLost)))
		takeCommitted(m) // the interruption's record
		worker(false)
		second := m.TakeOps(nil)
		onSlot(second)
		m.EndRemote(first[0].Attempt, nil) // stale
		onSlot(m.TakeOps(nil))
		snap, err := m.Snapshot(0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range snap.Running {
			log = append(log, "running "+r.ID)
		}
		want := []string{"start 1#1 on true {Worker:w Slot:0}", "worker gone: true", "start 1#2 on true {Worker:w Slot:0}", "running 1"}
		if diff := cmp.Diff(want, log); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
		m.EndRemote(second[0].Attempt, nil)
	})
}

// TestMachineTimeline: turn after turn, the machine's starts and revokes
// follow the cap (two at a time, oldest first), the ends and a Cancel:
// job 3's first attempt is cancelled while it runs and ends once its
// revoke is taken, and its slot goes to the next job only then.
func TestMachineTimeline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newRemoteMachine(t, clock.NewMock(), 2, 5, nil)
		defer func() { <-m.Stop(nil) }()
		var log []string
		cancelled := false
		for turn := 0; turn < 20; turn++ {
			takeCommitted(m)
			ops := m.TakeOps(nil)
			if len(ops) == 0 {
				break
			}
			var revoked []string
			for _, op := range ops {
				log = append(log, opText(op))
				switch {
				case op.Revoke:
					m.EndRemote(op.Attempt, machine.ErrCancelled)
					revoked = append(revoked, op.Attempt.Job.ID)
				case op.Attempt.Job.ID == "3" && !cancelled:
					cancelled = true
					if _, err := m.Cancel(messages.Cancel{Type: work, ID: "3"}); err != nil {
						t.Fatal(err)
					}
				default:
					m.EndRemote(op.Attempt, nil)
				}
			}
			log = append(log, fmt.Sprintf("turn %d: revoked %v", turn, revoked))
		}
		want := []string{
			"start 1#1", "start 2#1", "turn 0: revoked []",
			"start 3#1", "start 4#1", "turn 1: revoked []",
			"revoke 3#1", "start 5#1", "turn 2: revoked [3]",
		}
		if diff := cmp.Diff(want, log); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
	})
}

// TestMachineWakesAtItsDeadline: a job whose RunAt is ahead starts only
// once the owner passes WakeC's firing back (Wake): the machine holds no
// timer goroutine of its own and starts nothing early.
func TestMachineWakesAtItsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewMock()
		m := newRemoteMachine(t, clk, 2, 2, map[int]time.Duration{2: time.Minute})
		defer func() { <-m.Stop(nil) }()
		got := opsTexts(m.TakeOps(nil))
		if m.WakeC() == nil {
			t.Fatal("no deadline with a job due in a minute")
		}
		clk.Add(59 * time.Second)
		select {
		case <-m.WakeC():
			got = append(got, "woken at 59s")
		default:
			got = append(got, "59s")
		}
		clk.Add(time.Second)
		<-m.WakeC()
		m.Wake()
		got = append(got, opsTexts(m.TakeOps(nil))...)
		if diff := cmp.Diff([]string{"start 1#1", "59s", "start 2#1"}, got); diff != "" {
			t.Errorf("ops (-want +got):\n%s", diff)
		}
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
