package machine

import (
	"time"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// begin starts a call's turn: its time is read afresh.
func (m *Machine) begin() { m.turnNow = time.Time{} }

// settle ends a call's turn: the dispatch its changes asked for, the
// records to write, the timer.
func (m *Machine) settle() {
	m.flush()
	m.endTurn()
}

// do hands request r to the machine, as the owner goroutine takes a
// caller's message.
func (m *Machine) do(r messages.Request) {
	if m.stopped {
		return
	}
	m.begin()
	m.flush() // what it asks or answers sees every earlier admission
	m.handle(r)
	m.settle()
}

// await returns the answer on reply, taking the store writer's answers
// meanwhile: some answers (a dead-job operation) wait for a commit.
func await[T any](m *Machine, reply chan T) T {
	for {
		if m.dur != nil && m.dur.ownerCommits {
			select {
			case v := <-reply:
				return v
			default:
			}
			if !m.commitNow() {
				return <-reply
			}
			continue
		}
		select {
		case v := <-reply:
			return v
		case r := <-m.committedC():
			m.Committed(r)
		}
	}
}

// Register adds a job type.
func (m *Machine) Register(t policy.JobType, cfg policy.JobTypeConfig) error {
	if m.stopped {
		return ErrClosed
	}
	reply := make(chan error, 1)
	m.do(messages.Register{Type: t, Config: cfg, Reply: reply})
	return await(m, reply)
}

// RegisterRemote makes the machine start the durable jobs of types
// remotely: each attempt's start, and a Cancel's revoke of it, waits in
// the outbox for TakeOps.
func (m *Machine) RegisterRemote(types []policy.JobType) error {
	if m.stopped {
		return ErrClosed
	}
	all := make(map[policy.JobType]messages.Handler, len(types))
	for _, t := range types {
		all[t] = nil
	}
	reply := make(chan error, 1)
	m.do(messages.RegisterHandler{All: all, Remote: true, Reply: reply})
	return await(m, reply)
}

// Adopt adds durable records written by another process; it returns how
// many were taken.
func (m *Machine) Adopt(recs []core.JobRecord) int {
	if m.stopped {
		return 0
	}
	reply := make(chan int, 1)
	m.do(messages.Adopt{Records: recs, Reply: reply})
	return await(m, reply)
}

// Worker registers worker id with slots, or unregisters it (remove).
func (m *Machine) Worker(id string, slots [][]policy.JobType, remove bool) error {
	if m.stopped {
		return ErrClosed
	}
	reply := make(chan error, 1)
	m.do(messages.WorkerOp{ID: id, Slots: slots, Remove: remove, Reply: reply})
	return await(m, reply)
}

// Group changes a group's weight, resets all weights, pauses or resumes
// a group.
func (m *Machine) Group(op messages.GroupOpKind, group string, weight int) error {
	if m.stopped {
		return ErrClosed
	}
	reply := make(chan error, 1)
	m.do(messages.GroupOp{Op: op, Group: group, Weight: weight, Reply: reply})
	return await(m, reply)
}

// SetKeyWeight changes a fairness key's weight.
func (m *Machine) SetKeyWeight(key string, weight float64) error {
	if m.stopped {
		return ErrClosed
	}
	reply := make(chan error, 1)
	m.do(messages.SetKeyWeight{Key: key, Weight: weight, Reply: reply})
	return await(m, reply)
}

// ApplyPolicy replaces the limits, priorities and weights with p's.
func (m *Machine) ApplyPolicy(p policy.Policy) error {
	if m.stopped {
		return ErrClosed
	}
	reply := make(chan error, 1)
	m.do(messages.ApplyPolicy{Policy: p, Reply: reply})
	return await(m, reply)
}

// Cancel withdraws the pending jobs of c's (type, id) and revokes its
// running attempts.
func (m *Machine) Cancel(c messages.Cancel) (messages.CancelResult, error) {
	if m.stopped {
		return messages.CancelResult{}, ErrClosed
	}
	c.Reply = make(chan messages.CancelResult, 1)
	m.do(c)
	return await(m, c.Reply), nil
}

// Dead lists, deletes or requeues dead jobs.
func (m *Machine) Dead(op messages.DeadOp) (messages.DeadResult, error) {
	if m.stopped {
		return messages.DeadResult{}, ErrClosed
	}
	op.Reply = make(chan messages.DeadResult, 1)
	m.do(op)
	r := await(m, op.Reply)
	return r, r.Err
}

// ReplacePending withdraws the pending durable job of (t, id), if one
// waits, for a record that replaces it.
func (m *Machine) ReplacePending(t policy.JobType, id string) (messages.DeadResult, error) {
	if m.stopped {
		return messages.DeadResult{}, ErrClosed
	}
	reply := make(chan messages.DeadResult, 1)
	m.do(messages.ReplacePending{Type: t, ID: id, Reply: reply})
	r := await(m, reply)
	return r, r.Err
}

// Snapshot returns a copy of the machine's state with at most rows
// pending jobs (0: all).
func (m *Machine) Snapshot(rows int) (core.Snapshot, error) {
	if m.stopped {
		return core.Snapshot{}, ErrClosed
	}
	reply := make(chan core.Snapshot, 1)
	m.do(messages.SnapshotRequest{Rows: rows, Reply: reply})
	return await(m, reply), nil
}

// Subscribe registers a channel of the given buffer for the machine's
// events; Stop closes it.
func (m *Machine) Subscribe(buffer int) <-chan messages.Event {
	ch := make(chan messages.Event, max(buffer, 0))
	if m.stopped {
		close(ch)
		return ch
	}
	reply := make(chan struct{}, 1)
	m.do(messages.Subscribe{Events: ch, Reply: reply})
	await(m, reply)
	return ch
}

// EndRemote takes the end of remote attempt at: err (nil: success,
// EndWritten: a success whose record the starter deleted). The dispatch
// it allows is made by the turn's TakeOps (or its next call), once for
// every end of the turn.
func (a *Machine) EndRemote(at *messages.RemoteAttempt, err error) {
	if a.stopped {
		return
	}
	a.begin()
	a.batching = true
	a.finish(messages.Done{Job: at.Of(), Err: err, Remote: at})
	a.batching = false
	a.turnNow = time.Time{}
}

// TakeOps ends the turn (its dispatch, its records handed to the writer)
// and appends the starts and revokes it made, in order, to dst.
func (m *Machine) TakeOps(dst []messages.RemoteOp) []messages.RemoteOp {
	if m.stopped {
		return dst
	}
	m.begin()
	m.settle()
	r := m.remote
	if r == nil {
		return dst
	}
	dst = append(dst, r.out...)
	clear(r.out)
	r.out = r.out[:0]
	return dst
}

// WakeC fires at the machine's next deadline (a deferred job's return, a
// periodic occurrence); nil while it has none. Read it again after every
// call: each may move it.
func (m *Machine) WakeC() <-chan time.Time { return m.wakeC }

// Wake is the owner's call when WakeC fired.
func (m *Machine) Wake() {
	if m.stopped {
		m.wakeC, m.wake = nil, nil
		return
	}
	m.begin()
	m.woken()
	m.settle()
}

// TickC is the period of the cost model's eviction and the state's save.
func (m *Machine) TickC() <-chan time.Time { return m.ticker.C }

// Tick is the owner's call when TickC fired.
func (m *Machine) Tick() {
	if m.stopped {
		return
	}
	m.begin()
	m.ticked()
	m.settle()
}

// LoadC fires when the load signal is due; nil without one.
func (m *Machine) LoadC() <-chan time.Time { return m.loadC }

// ReadLoad is the owner's call when LoadC fired.
func (m *Machine) ReadLoad() {
	if m.stopped {
		return
	}
	m.begin()
	m.readLoad()
	m.settle()
}

// CommittedC carries the store writer's answer for the records handed to
// it; nil without durable jobs.
func (m *Machine) CommittedC() <-chan Commit { return m.committedC() }

// Committed is the owner's call with the writer's answer r.
func (m *Machine) Committed(r Commit) {
	m.begin()
	m.committed(r)
	m.settle()
}

// Stop ends the machine as an expired Close does: the attempts running
// are ended here (their starters' reports are stale), the pending jobs
// stay in the store, the outbox is dropped. It takes the answers of the
// records in flight until giveUp fires (a nil giveUp: until they are
// all in), then saves the state; the returned channel is closed once the
// writer has stored it.
func (a *Machine) Stop(giveUp <-chan time.Time) <-chan struct{} {
	if a.stopped {
		return a.written
	}
	a.begin()
	a.abort()
	a.settle()
wait:
	for !a.durableIdle() {
		if a.dur.ownerCommits {
			if !a.commitNow() {
				break wait // a batch taken and not reported: its owner stopped writing
			}
			continue
		}
		select {
		case r := <-a.committedC():
			a.Committed(r)
		case <-giveUp:
			break wait // the writer finishes on its own
		}
	}
	a.stopped = true
	a.StopTimers()
	a.Shutdown()
	return a.written
}

// Explain says why the job of (t, id) waits (core.Core.Explain).
func (m *Machine) Explain(t policy.JobType, id string) (core.Explanation, error) {
	if m.stopped {
		return core.Explanation{}, ErrClosed
	}
	reply := make(chan messages.ExplainResult, 1)
	m.do(messages.ExplainRequest{Type: t, ID: id, Reply: reply})
	r := await(m, reply)
	return r.Explanation, r.Err
}

// CheckStart says whether j, to be submitted elsewhere, would start later
// than within from now (core.Core.CheckStart).
func (m *Machine) CheckStart(j *core.Job, within time.Duration) error {
	if m.stopped {
		return ErrClosed
	}
	reply := make(chan error, 1)
	m.do(messages.StartCheck{Job: j, Within: within, Reply: reply})
	return await(m, reply)
}

// LoadVerdict is what the load signal's last good reading says: whether
// it is overloaded, and when it was taken (the scheduler's clock).
type LoadVerdict struct {
	Overloaded bool
	At         time.Time
}

// LoadVerdict returns the last good reading's verdict, and false before
// the first (or without a load signal). Any goroutine may call it: a
// cluster's leader publishes it for the other instances.
func (a *Machine) LoadVerdict() (LoadVerdict, bool) {
	if v := a.verdict.Load(); v != nil {
		return *v, true
	}
	return LoadVerdict{}, false
}
