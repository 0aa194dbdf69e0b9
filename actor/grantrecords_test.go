package actor_test

import (
	"context"
	"fmt"
	"slices"
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

// opsStore is a JobStore that keeps nothing and tells each commit's
// operations, as text, on commits.
type opsStore struct{ commits chan []string }

func (s *opsStore) Load() (core.State, error)                 { return core.State{}, nil }
func (s *opsStore) Save(core.State) error                     { return nil }
func (s *opsStore) LoadJobs(func(core.JobRecord) error) error { return nil }
func (s *opsStore) ApplyJobs(ops []machine.JobOp) error {
	s.commits <- opsText(ops, func(r *core.JobRecord) string {
		return fmt.Sprintf("put %d attempt %d", r.Seq, r.Attempt)
	})
	return nil
}

// opsText tells a commit's operations as text: each put as put says (the
// fields its test watches), each delete as "delete <seq>".
func opsText(ops []machine.JobOp, put func(*core.JobRecord) string) []string {
	var out []string
	for _, op := range ops {
		if op.Put != nil {
			out = append(out, put(op.Put))
		} else {
			out = append(out, fmt.Sprintf("delete %d", op.Delete))
		}
	}
	return out
}

// startOps starts an owner over an opsStore with type work registered;
// grantRecords is its Config.GrantRecordsAttempt. Closed at the test's end.
func startOps(t *testing.T, grantRecords bool) (*actor.Actor, *opsStore) {
	t.Helper()
	st := &opsStore{commits: make(chan []string, 64)}
	a := actor.Start(core.New(policy.DefaultLimits()), machine.Config{Clock: clock.NewMock(), Logger: zap.NewNop(), Tick: time.Minute,
		Store: st, GrantRecordsAttempt: grantRecords})
	t.Cleanup(func() { a.Close(context.Background()) })
	if err := a.Register(work, policy.JobTypeConfig{DefaultCost: time.Second, Priority: 10}); err != nil {
		t.Fatal(err)
	}
	return a, st
}

// TestGrantRecordsAttempt: with GrantRecordsAttempt (cluster mode's
// leader, whose grant counts the attempt in the job's row), the owner
// writes nothing when a durable job's attempt starts; without it, the
// attempt's start is written. The handler sees the attempt either way.
func TestGrantRecordsAttempt(t *testing.T) {
	for _, grantRecords := range []bool{false, true} {
		t.Run(fmt.Sprint(grantRecords), func(t *testing.T) {
			a, st := startOps(t, grantRecords)
			attempts := make(chan int, 1)
			if err := a.RegisterHandlers(map[policy.JobType]messages.Handler{work: func(_ context.Context, j messages.DurableJob) error {
				attempts <- j.Attempt
				return nil
			}}); err != nil {
				t.Fatal(err)
			}
			if err := a.Enqueue(context.Background(), messages.NewJob(work, "j", "", nil)); err != nil {
				t.Fatal(err)
			}
			if got := <-attempts; got != 1 {
				t.Errorf("the handler saw attempt %d, want 1", got)
			}
			// Every commit until the record is deleted: the job is done.
			var got []string
			for {
				c := <-st.commits
				got = append(got, c...)
				if c[len(c)-1] == "delete 1" {
					break
				}
			}
			want := []string{"put 1 attempt 0", "put 1 attempt 1", "delete 1"}
			if grantRecords {
				want = []string{"put 1 attempt 0", "delete 1"}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAdoptParksAJobOfABusyID: a record adopted while a job of its
// (type, id) is still unfinished here — in cluster mode the database
// takes the new job once the old one's row is gone, which may be before
// the owner sees the old one end — runs once the old one has ended,
// instead of being dropped.
func TestAdoptParksAJobOfABusyID(t *testing.T) {
	a, _ := startOps(t, false)
	started := make(chan uint64, 2)
	release := make(chan struct{})
	if err := a.RegisterHandlers(map[policy.JobType]messages.Handler{work: func(_ context.Context, j messages.DurableJob) error {
		started <- j.Seq
		if j.Seq == 1 {
			<-release
		}
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	rec := func(seq uint64) core.JobRecord {
		return core.JobRecord{Seq: seq, Type: work, ID: "x", State: core.RecordPending, EnqueuedAt: time.Unix(0, 0)}
	}
	ctx := context.Background()
	if _, err := a.Adopt(ctx, []core.JobRecord{rec(1)}); err != nil {
		t.Fatal(err)
	}
	got := []uint64{<-started}
	if _, err := a.Adopt(ctx, []core.JobRecord{rec(2), rec(1)}); err != nil { // 1 again: the feed may repeat a row
		t.Fatal(err)
	}
	close(release)
	got = append(got, <-started)
	if diff := cmp.Diff([]uint64{1, 2}, got); diff != "" {
		t.Errorf("jobs run (-want +got):\n%s", diff)
	}
	select {
	case s := <-started:
		t.Errorf("job %d ran again", s)
	default:
	}
}

// TestEndWrittenWritesNothingMore: a durable handler that returns
// EndWritten (cluster mode's leader, whose fenced delete of the row came
// first) ends its job as a success — a JobCompleted event, the (type, id)
// free again — and the owner writes no delete of its own; a handler
// returning nil has its record deleted as before.
func TestEndWrittenWritesNothingMore(t *testing.T) {
	a, st := startOps(t, true)
	if err := a.RegisterHandlers(map[policy.JobType]messages.Handler{work: func(_ context.Context, j messages.DurableJob) error {
		if j.Seq == 1 {
			return machine.EndWritten
		}
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	events, cancel := a.Subscribe(16)
	defer cancel()
	ended := func() string {
		for e := range events {
			switch e := e.(type) {
			case messages.JobCompleted:
				return "completed " + e.ID
			case messages.JobFailed:
				return fmt.Sprintf("failed %s: %v", e.ID, e.Err)
			}
		}
		return "no end"
	}
	var got []string
	// The same id twice: the second Enqueue is refused as a duplicate if
	// the first job's end left it registered.
	for range 2 {
		if err := a.Enqueue(context.Background(), messages.NewJob(work, "x", "", nil)); err != nil {
			t.Fatal(err)
		}
		got = append(got, ended())
	}
	for {
		c := <-st.commits
		got = append(got, c...)
		if c[len(c)-1] == "delete 2" {
			break
		}
	}
	want := []string{"completed x", "completed x", "put 1 attempt 0", "put 2 attempt 0", "delete 2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ends and writes (-want +got):\n%s", diff)
	}
}

// TestEndWrittenOfARunSync: a RunSync's or Submit's job (its record has
// an owner) whose handler returns EndWritten is not deleted again by the
// owner either — its success writes nothing else; a job whose handler
// returns nil still has its record deleted.
func TestEndWrittenOfARunSync(t *testing.T) {
	a, st := startOps(t, true)
	if err := a.RegisterHandlers(map[policy.JobType]messages.Handler{work: func(_ context.Context, j messages.DurableJob) error {
		if j.Owner != "" {
			return machine.EndWritten
		}
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	rec := func(seq uint64, owner string) core.JobRecord {
		return core.JobRecord{Seq: seq, Type: work, ID: fmt.Sprint("j", seq), Owner: owner, State: core.RecordPending, EnqueuedAt: time.Unix(0, 0)}
	}
	events, cancel := a.Subscribe(16)
	defer cancel()
	// One, then the other once the first has completed: a delete of the
	// first would be written before the second's.
	if _, err := a.Adopt(context.Background(), []core.JobRecord{rec(1, "i1")}); err != nil {
		t.Fatal(err)
	}
	for e := range events {
		if c, ok := e.(messages.JobCompleted); ok && c.ID == "j1" {
			break
		}
	}
	if _, err := a.Adopt(context.Background(), []core.JobRecord{rec(2, "")}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for !slices.Contains(got, "delete 2") {
		got = append(got, <-st.commits...)
	}
	if diff := cmp.Diff([]string{"delete 2"}, got); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
}
