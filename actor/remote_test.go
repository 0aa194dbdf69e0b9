package actor_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/fairsched/fairsched/actor"
	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/workers"
)

// nopStore is a JobStore that keeps nothing and commits at once.
type nopStore struct{}

func (nopStore) Load() (core.State, error)                 { return core.State{}, nil }
func (nopStore) Save(core.State) error                     { return nil }
func (nopStore) LoadJobs(func(core.JobRecord) error) error { return nil }
func (nopStore) ApplyJobs([]machine.JobOp) error           { return nil }

// startRemote starts an owner whose type work (at most capN at once)
// starts remotely through a channel of room 1, and adopts n jobs of it
// (ids 1…n). The owner writes no start (GrantRecordsAttempt), as in
// cluster mode's leader.
func startRemote(t *testing.T, capN, n int) (*actor.Actor, chan messages.RemoteOp) {
	t.Helper()
	return startRemoteType(t, policy.JobTypeConfig{DefaultCost: time.Second, Priority: 10, MaxConcurrency: capN}, n)
}

// startRemoteType is startRemote with work configured as cfg.
func startRemoteType(t *testing.T, cfg policy.JobTypeConfig, n int) (*actor.Actor, chan messages.RemoteOp) {
	t.Helper()
	limits := policy.DefaultLimits()
	limits.PriorityMode = policy.PriorityOrderOnly // the type's cap is the only one
	a := actor.Start(core.New(limits), machine.Config{Clock: clock.NewMock(), Logger: zap.NewNop(), Tick: time.Minute,
		Store: nopStore{}, GrantRecordsAttempt: true})
	if err := a.Register(work, cfg); err != nil {
		t.Fatal(err)
	}
	ops := make(chan messages.RemoteOp, 1)
	if err := a.RegisterRemote([]policy.JobType{work}, ops); err != nil {
		t.Fatal(err)
	}
	recs := make([]core.JobRecord, n)
	for i := range recs {
		recs[i] = core.JobRecord{Seq: uint64(i + 1), Type: work, ID: fmt.Sprint(i + 1), State: core.RecordPending,
			EnqueuedAt: time.Unix(int64(i), 0)}
	}
	if _, err := a.Adopt(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	return a, ops
}

// opText names op: "start 3#1" or "revoke 3#1" (id, attempt).
func opText(op messages.RemoteOp) string {
	verb := "start"
	if op.Revoke {
		verb = "revoke"
	}
	return fmt.Sprintf("%s %s#%d", verb, op.Attempt.Job.ID, op.Attempt.Job.Attempt)
}

// pendingOps takes the ops the owner has sent or queued by now (the
// bubble idle).
func pendingOps(ops <-chan messages.RemoteOp) []messages.RemoteOp {
	var out []messages.RemoteOp
	for {
		synctest.Wait()
		select {
		case op := <-ops:
			out = append(out, op)
		default:
			return out
		}
	}
}

// TestRemoteBothDirectionsFull: the starter ends a whole cap's worth of
// attempts in a row, more than the owner's completions buffer holds,
// without taking the starts those ends admit, through a channel of room
// 1 — both directions full at once. The owner keeps them in order and
// never blocks on the starter, so nothing deadlocks (the bubble would
// report it): every job starts once, never more than the cap at a time.
func TestRemoteBothDirectionsFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A cap above what the owner takes in one batch (256) and its
		// completions' buffer (256) hold together.
		const capN, n = 600, 1800
		a, ops := startRemote(t, capN, n)
		var started []string
		peak := 0
		for len(started) < n {
			batch := pendingOps(ops)
			if len(batch) == 0 {
				t.Fatalf("no start pending after %d of %d", len(started), n)
			}
			peak = max(peak, len(batch))
			for _, op := range batch {
				started = append(started, opText(op))
			}
			for _, op := range batch { // every end before any start it admits is taken
				a.EndRemote(op.Attempt, nil)
			}
		}
		if err := a.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := make([]string, n)
		for i := range want {
			want[i] = fmt.Sprintf("start %d#1", i+1)
		}
		slices.Sort(want)
		slices.Sort(started)
		if diff := cmp.Diff(want, started); diff != "" {
			t.Errorf("starts (-want +got):\n%s", diff)
		}
		if peak != capN {
			t.Errorf("at most %d started at once, want the cap %d", peak, capN)
		}
	})
}

// TestRemoteCancelHoldsTheSlot: Cancel of a running remote attempt sends
// its starter a revoke of that attempt, after its start; the attempt
// holds its slot until the starter reports its end, then the next job
// starts. An end reported twice counts once.
func TestRemoteCancelHoldsTheSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, ops := startRemote(t, 1, 2)
		first := pendingOps(ops)
		if _, err := a.Cancel(context.Background(), messages.Cancel{Type: work, ID: "1"}); err != nil {
			t.Fatal(err)
		}
		held := pendingOps(ops)
		var got []string
		for _, op := range append(first, held...) {
			got = append(got, opText(op))
		}
		if diff := cmp.Diff([]string{"start 1#1", "revoke 1#1"}, got); diff != "" {
			t.Fatalf("ops before the end (-want +got):\n%s", diff)
		}
		if held[0].Attempt != first[0].Attempt || first[0].Attempt.Ctx.Err() == nil {
			t.Errorf("the revoke names another attempt, or the attempt's context is not cancelled")
		}
		a.EndRemote(first[0].Attempt, errors.New("stopped"))
		a.EndRemote(first[0].Attempt, nil) // stale: ignored
		next := pendingOps(ops)
		got = got[:0]
		for _, op := range next {
			got = append(got, opText(op))
		}
		if diff := cmp.Diff([]string{"start 2#1"}, got); diff != "" {
			t.Fatalf("ops after the end (-want +got):\n%s", diff)
		}
		a.EndRemote(next[0].Attempt, nil)
		if err := a.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestRemoteAbortEndsTheAttempts: a Close that gives up ends the remote
// attempts itself (as a handler returns its context's cause), cancelling
// their contexts; the owner stops without waiting for the starter, whose
// late report returns at once.
func TestRemoteAbortEndsTheAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, ops := startRemote(t, 2, 3)
		started := pendingOps(ops)
		if len(started) != 2 {
			t.Fatalf("%d started, want 2", len(started))
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = a.Close(ctx)                                                                            // gives up at once
		if err := a.Close(context.Background()); err != nil && !errors.Is(err, machine.ErrClosed) { // waits for the owner's end
			t.Fatal(err)
		}
		for _, op := range started {
			if op.Attempt.Ctx.Err() == nil {
				t.Errorf("%s: its context is not cancelled", opText(op))
			}
			a.EndRemote(op.Attempt, nil)
		}
	})
}

// TestRemoteWorkerLostEndsTheAttempt: a remote attempt on a worker's slot
// is handed over with its slot; when the worker goes, the owner ends the
// attempt at once (ErrWorkerLost: an interruption), and the job starts
// again once a slot is back, as attempt 2. The starter's late report of
// the first attempt is ignored: the second still holds the slot.
func TestRemoteWorkerLostEndsTheAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, ops := startRemoteType(t, policy.JobTypeConfig{DefaultCost: time.Second, Priority: 10, RequiresWorker: true}, 1)
		slots := [][]policy.JobType{{work}}
		if err := a.Worker("w", slots, false); err != nil {
			t.Fatal(err)
		}
		first := pendingOps(ops)
		if len(first) != 1 || !first[0].Attempt.OnSlot || first[0].Attempt.Slot != (messages.SlotRef{Worker: "w", Slot: 0}) {
			t.Fatalf("started %+v, want attempt 1 on slot w/0", first)
		}
		if err := a.Worker("w", nil, true); err != nil {
			t.Fatal(err)
		}
		if err := a.Worker("w", slots, false); err != nil {
			t.Fatal(err)
		}
		second := pendingOps(ops)
		if cause := context.Cause(first[0].Attempt.Ctx); !errors.Is(cause, workers.ErrWorkerLost) {
			t.Errorf("the first attempt's cause is %v, want ErrWorkerLost", cause)
		}
		a.EndRemote(first[0].Attempt, nil) // stale
		var got []string
		for _, op := range append(second, pendingOps(ops)...) {
			got = append(got, opText(op))
		}
		if diff := cmp.Diff([]string{"start 1#2"}, got); diff != "" {
			t.Fatalf("ops after the worker came back (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(state{Running: []string{"1"}}, stateOf(t, a)); diff != "" {
			t.Errorf("after the stale end (-want +got):\n%s", diff)
		}
		a.EndRemote(second[0].Attempt, nil)
		if err := a.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}
