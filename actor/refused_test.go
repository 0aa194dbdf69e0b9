package actor_test

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/fairsched/fairsched/actor"
	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// refusingStore is a JobStore in memory that commits a batch whole or not
// at all, as a database does, and refuses (ErrRecordRefused) a batch
// holding a put that refuse matches. Each commit first runs the next
// step the test queued on next, if any (hold it, fail it transiently).
// Its records are read once the owner has stopped (after Close).
type refusingStore struct {
	recs   map[uint64]core.JobRecord
	refuse func(core.JobRecord) bool
	next   chan func(commit func() error) error
	calls  atomic.Int64
}

func newRefusingStore(refuse func(core.JobRecord) bool) *refusingStore {
	return &refusingStore{recs: map[uint64]core.JobRecord{}, refuse: refuse, next: make(chan func(func() error) error, 8)}
}

func (s *refusingStore) Load() (core.State, error) { return core.State{}, nil }
func (s *refusingStore) Save(core.State) error     { return nil }
func (s *refusingStore) LoadJobs(fn func(core.JobRecord) error) error {
	seqs := make([]uint64, 0, len(s.recs))
	for seq := range s.recs {
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	for _, seq := range seqs {
		if err := fn(s.recs[seq]); err != nil {
			return err
		}
	}
	return nil
}

func (s *refusingStore) ApplyJobs(ops []machine.JobOp) error {
	s.calls.Add(1)
	select {
	case step := <-s.next:
		return step(func() error { return s.commit(ops) })
	default:
		return s.commit(ops)
	}
}

func (s *refusingStore) commit(ops []machine.JobOp) error {
	for _, op := range ops {
		if op.Put != nil && s.refuse(*op.Put) {
			return fmt.Errorf("%w: record %d", machine.ErrRecordRefused, op.Put.Seq)
		}
	}
	for _, op := range ops {
		if op.Put != nil {
			s.recs[op.Put.Seq] = *op.Put
		} else {
			delete(s.recs, op.Delete)
		}
	}
	return nil
}

// hold makes the store's next commit wait until the returned release is
// called; held is closed once it waits.
func (s *refusingStore) hold() (held chan struct{}, release func()) {
	held, gate := make(chan struct{}), make(chan struct{})
	s.next <- func(commit func() error) error { close(held); <-gate; return commit() }
	return held, func() { close(gate) }
}

// startRefusing starts an owner over st (records: what st held at start).
func startRefusing(t *testing.T, st *refusingStore) *actor.Actor {
	t.Helper()
	limits := policy.DefaultLimits()
	limits.MaxConcurrency = 1000
	var recs []core.JobRecord
	_ = st.LoadJobs(func(r core.JobRecord) error { recs = append(recs, r); return nil })
	a := actor.Start(core.New(limits), machine.Config{Clock: clock.NewMock(), Logger: zap.NewNop(), Tick: time.Minute,
		Store: st, Jobs: recs})
	// Priority 100: its tier's cap lets a hundred jobs run at once.
	if err := a.Register(work, policy.JobTypeConfig{DefaultCost: time.Second, Priority: 100, MaxConcurrency: 1000}); err != nil {
		t.Fatal(err)
	}
	return a
}

// outcome names an Enqueue's answer.
func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, machine.ErrStore) && errors.Is(err, machine.ErrRecordRefused):
		return "refused"
	case errors.Is(err, machine.ErrStore) && errors.Is(err, machine.ErrOutcomeUnknown):
		return "unknown"
	case errors.Is(err, machine.ErrStore):
		return "store"
	case errors.Is(err, machine.ErrDuplicateJob):
		return "duplicate"
	}
	return err.Error()
}

// TestRefusedRecordFailsOnlyItself: a batch of 64 Enqueues, one of which
// the store refuses for its data: that one's caller gets ErrRecordRefused
// (and ErrStore), the 63 others succeed and are stored, in at most
// 1 + 2·log2(64) commits.
func TestRefusedRecordFailsOnlyItself(t *testing.T) {
	st := newRefusingStore(func(r core.JobRecord) bool { return r.ID == "poison" })
	a := startRefusing(t, st)
	jobs := make([]*messages.Job, 64)
	want := make([]string, len(jobs))
	for i := range jobs {
		id := fmt.Sprintf("j%02d", i)
		want[i] = "ok"
		if i == 37 {
			id, want[i] = "poison", "refused"
		}
		jobs[i] = messages.NewJob(work, id, "", nil)
	}
	errs, err := a.EnqueueMany(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(errs))
	for i, err := range errs {
		got[i] = outcome(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Enqueue's answers (-want +got):\n%s", diff)
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var stored []string
	_ = st.LoadJobs(func(r core.JobRecord) error { stored = append(stored, r.ID); return nil })
	var wantStored []string
	for i, j := range jobs {
		if i != 37 {
			wantStored = append(wantStored, j.ID)
		}
	}
	if diff := cmp.Diff(wantStored, stored); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
	if n, bound := st.calls.Load(), int64(1+2*bits.Len(uint(len(jobs)-1))); n > bound {
		t.Errorf("%d commits for one refused record among %d; want at most %d", n, len(jobs), bound)
	}
}

// deadView is what a test compares of a stored or listed record.
type deadView struct {
	ID        string
	State     core.RecordState
	LastError string
}

// TestRefusedEndFailsOnlyItself: 50 durable jobs succeed in the same
// commit as two that fail for good, whose dead records the store refuses:
// one for a NUL in its error text, one for its data whatever the text.
// The 50 successes are deleted; the first dead record is written with its
// error text cleaned (and listed so), the second is deleted — its job is
// over and must not run again — and no longer listed. A restart over the
// store runs nothing. The attempts' starts and the ends ride in one
// commit (the one before is held), so a put and a later delete of a
// sequence share it.
func TestRefusedEndFailsOnlyItself(t *testing.T) {
	st := newRefusingStore(func(r core.JobRecord) bool {
		return strings.ContainsRune(r.LastError, 0) || r.ID == "poison" && r.State == core.RecordDead
	})
	a := startRefusing(t, st)
	jobs := []*messages.Job{messages.NewJob(work, "nul", "", nil), messages.NewJob(work, "poison", "", nil)}
	for i := range 50 {
		jobs = append(jobs, messages.NewJob(work, fmt.Sprintf("ok%02d", i), "", nil))
	}
	if errs, err := a.EnqueueMany(context.Background(), jobs); err != nil || slices.ContainsFunc(errs, func(e error) bool { return e != nil }) {
		t.Fatal(err, errs)
	}
	events, unsubscribe := a.Subscribe(len(jobs) * 8)
	defer unsubscribe()
	// Every job starts (each start committed before its handler runs),
	// then a commit (of a job of a type without handler) is held while
	// every job ends: their writes wait for the next one together.
	if err := a.Register("other", policy.JobTypeConfig{DefaultCost: time.Second, Priority: 10}); err != nil {
		t.Fatal(err)
	}
	started, gate := make(chan string, len(jobs)), make(chan struct{})
	if err := a.RegisterHandler(work, func(_ context.Context, j messages.DurableJob) error {
		started <- j.ID
		<-gate
		switch j.ID {
		case "nul":
			return policy.Permanent(errors.New("bad\x00byte"))
		case "poison":
			return policy.Permanent(errors.New("boom"))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for range jobs {
		<-started
	}
	held, release := st.hold()
	other := make(chan error, 1)
	go func() { other <- a.Enqueue(context.Background(), messages.NewJob("other", "x", "", nil)) }()
	<-held
	close(gate)
	for ended := 0; ended < len(jobs); {
		switch (<-events).(type) {
		case messages.JobCompleted, messages.JobFailed:
			ended++
		}
	}
	calls := st.calls.Load()
	release()
	if err := <-other; err != nil {
		t.Fatal(err)
	}
	if _, err := a.Dead(context.Background(), messages.DeadOp{Op: messages.SyncDead}); err != nil {
		t.Fatal(err)
	}
	r, err := a.Dead(context.Background(), messages.DeadOp{Op: messages.ListDead})
	if err != nil {
		t.Fatal(err)
	}
	wantDead := []deadView{{"nul", core.RecordDead, "badbyte"}}
	if diff := cmp.Diff(wantDead, views(r.Jobs)); diff != "" {
		t.Errorf("dead jobs listed (-want +got):\n%s", diff)
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// One held commit, the refused one, its parts (2 refused ops among
	// 2×52 riding ops: at most 2·2·log2(104)), and the 2 replacements.
	if n, bound := st.calls.Load()-calls, int64(2+2*2*bits.Len(uint(2*len(jobs)))+2); n > bound {
		t.Errorf("%d commits; want at most %d", n, bound)
	}
	var stored []core.JobRecord
	_ = st.LoadJobs(func(r core.JobRecord) error { stored = append(stored, r); return nil })
	wantStored := []deadView{{"nul", core.RecordDead, "badbyte"}, {"x", core.RecordPending, ""}}
	if diff := cmp.Diff(wantStored, views(stored)); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}

	// A restart runs nothing: every end was kept.
	a = startRefusing(t, st)
	ran := make(chan string, len(jobs))
	if err := a.RegisterHandler(work, func(_ context.Context, j messages.DurableJob) error { ran <- j.ID; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(ran)
	for id := range ran {
		t.Errorf("%s ran again after the restart", id)
	}
}

func views(recs []core.JobRecord) []deadView {
	out := make([]deadView, len(recs))
	for i, r := range recs {
		out[i] = deadView{r.ID, r.State, r.LastError}
	}
	return out
}

// TestTransientFailureLosesNoEnd: a commit of the jobs' ends (nobody waits
// on them) that fails for a transient reason is not lost: its writes are
// committed with a later batch, and a restart runs nothing again.
func TestTransientFailureLosesNoEnd(t *testing.T) {
	st := newRefusingStore(func(core.JobRecord) bool { return false })
	a := startRefusing(t, st)
	var jobs []*messages.Job
	for i := range 20 {
		jobs = append(jobs, messages.NewJob(work, fmt.Sprintf("ok%02d", i), "", nil))
	}
	if errs, err := a.EnqueueMany(context.Background(), jobs); err != nil || slices.ContainsFunc(errs, func(e error) bool { return e != nil }) {
		t.Fatal(err, errs)
	}
	events, unsubscribe := a.Subscribe(len(jobs) * 8)
	defer unsubscribe()
	if err := a.Register("other", policy.JobTypeConfig{DefaultCost: time.Second, Priority: 10}); err != nil {
		t.Fatal(err)
	}
	// Every job starts (its start committed), then its end waits behind a
	// held commit and rides in the one after, which fails.
	started, gate := make(chan struct{}, len(jobs)), make(chan struct{})
	if err := a.RegisterHandler(work, func(context.Context, messages.DurableJob) error {
		started <- struct{}{}
		<-gate
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for range jobs {
		<-started
	}
	held, release := st.hold()
	other := make(chan error, 1)
	go func() { other <- a.Enqueue(context.Background(), messages.NewJob("other", "x", "", nil)) }()
	<-held
	st.next <- func(func() error) error { return errors.New("connection reset") } // the commit after the held one
	close(gate)
	for ended := 0; ended < len(jobs); {
		if _, ok := (<-events).(messages.JobCompleted); ok {
			ended++
		}
	}
	release()
	if err := <-other; err != nil {
		t.Fatal(err)
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var stored []core.JobRecord
	_ = st.LoadJobs(func(r core.JobRecord) error { stored = append(stored, r); return nil })
	if diff := cmp.Diff([]deadView{{"x", core.RecordPending, ""}}, views(stored)); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
}

// TestOutcomeUnknownIsResolved: an Enqueue whose commit's reply is lost —
// committed or not — gets ErrOutcomeUnknown (with ErrStore); the owner
// writes its record again until that works, so the job is stored and runs
// once, and an Enqueue of its id meanwhile or after is ErrDuplicateJob.
// Ends of other jobs in the same commits are kept.
func TestOutcomeUnknownIsResolved(t *testing.T) {
	for _, committed := range []bool{false, true} {
		t.Run(fmt.Sprint("committed=", committed), func(t *testing.T) {
			st := newRefusingStore(func(core.JobRecord) bool { return false })
			a := startRefusing(t, st)
			ran := make(chan string, 8)
			if err := a.RegisterHandler(work, func(_ context.Context, j messages.DurableJob) error { ran <- j.ID; return nil }); err != nil {
				t.Fatal(err)
			}
			lost := func(commit func() error) error {
				if committed {
					if err := commit(); err != nil {
						return err
					}
				}
				return fmt.Errorf("%w: connection closed", machine.ErrOutcomeUnknown)
			}
			st.next <- lost
			st.next <- lost // the first write again too
			held, release := st.hold()
			got := []string{outcome(a.Enqueue(context.Background(), messages.NewJob(work, "u", "", nil)))}
			<-held // the second write again
			got = append(got, outcome(a.Enqueue(context.Background(), messages.NewJob(work, "u", "", nil))))
			release()
			if id := <-ran; id != "u" {
				t.Errorf("%s ran; want u", id)
			}
			if err := a.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			close(ran)
			for id := range ran {
				t.Errorf("%s ran again", id)
			}
			if diff := cmp.Diff([]string{"unknown", "duplicate"}, got); diff != "" {
				t.Errorf("answers (-want +got):\n%s", diff)
			}
			if len(st.recs) != 0 {
				t.Errorf("records left: %v", st.recs)
			}
		})
	}
}
