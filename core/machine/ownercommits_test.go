package machine_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// logStore logs each ApplyJobs, refusing a put whose record's LastError
// is "refuse me" (as a database refuses a value it cannot keep).
type logStore struct {
	nopStore
	log *[]string
}

func (s logStore) ApplyJobs(ops []machine.JobOp) error {
	for _, op := range ops {
		if op.Put != nil && op.Put.LastError == "refuse me" {
			*s.log = append(*s.log, fmt.Sprintf("store refuses %d", op.Put.Seq))
			return fmt.Errorf("%w: test", machine.ErrRecordRefused)
		}
	}
	*s.log = append(*s.log, "store writes "+opsText(ops))
	return nil
}

func opsText(ops []machine.JobOp) string {
	out := ""
	for _, op := range ops {
		if op.Put != nil {
			out += fmt.Sprintf("[put %d state %d]", op.Put.Seq, op.Put.State)
		} else {
			out += fmt.Sprintf("[delete %d]", op.Delete)
		}
	}
	return out
}

// TestOwnerCommitsTheRecords: with OwnerCommits, the records a turn
// writes wait for the owner (TakeBatch) — nothing goes through the store
// on its own —; the owner's write reported committed answers them; a
// write refused for a record is done again through the store in parts,
// so that only the refused record fails; and an answer that waits for a
// commit (a dead job's deletion) is written through the store in the
// owner's call, not left waiting for a turn.
func TestOwnerCommitsTheRecords(t *testing.T) {
	var log []string
	m := machine.New(core.New(policy.DefaultLimits()), machine.Config{Clock: clock.NewMock(), Logger: zap.NewNop(),
		Tick: time.Minute, Store: logStore{log: &log}, GrantRecordsAttempt: true, OwnerCommits: true})
	defer func() { <-m.Stop(nil) }()
	if err := m.Register("t", policy.JobTypeConfig{Priority: 10, DefaultCost: time.Second, MaxConcurrency: 2}); err != nil {
		t.Fatal(err)
	}
	if err := m.RegisterRemote([]policy.JobType{"t"}); err != nil {
		t.Fatal(err)
	}
	m.Adopt([]core.JobRecord{
		{Seq: 1, Type: "t", ID: "a", State: core.RecordPending},
		{Seq: 2, Type: "t", ID: "b", State: core.RecordPending},
	})
	ops := m.TakeOps(nil)
	if len(ops) != 2 {
		t.Fatalf("%d starts, want 2", len(ops))
	}
	take := func(what string) {
		batch, ok := m.TakeBatch()
		log = append(log, fmt.Sprintf("%s: batch %v %s", what, ok, opsText(batch)))
	}
	// a fails for good: its dead record waits for the owner.
	m.EndRemote(ops[0].Attempt, policy.Permanent(errors.New("no")))
	m.TakeOps(nil)
	take("a dead")
	m.BatchWritten(nil)
	take("after the write")
	// b fails for good with an error text the store refuses: the owner's
	// write is refused, and the machine writes the records in parts.
	m.EndRemote(ops[1].Attempt, policy.Permanent(errors.New("refuse me")))
	m.TakeOps(nil)
	take("b dead")
	m.BatchWritten(fmt.Errorf("%w: the turn's write", machine.ErrRecordRefused))
	// Deleting the dead jobs waits for a commit: it is written now.
	r, err := m.Dead(messages.DeadOp{Op: messages.DeleteDead, Type: "t", ID: "a"})
	log = append(log, fmt.Sprintf("deleted %d %v", r.N, err))
	want := []string{
		fmt.Sprintf("a dead: batch true [put 1 state %d]", core.RecordDead),
		"after the write: batch false ",
		fmt.Sprintf("b dead: batch true [put 2 state %d]", core.RecordDead),
		"store refuses 2",
		"store writes [delete 2]", // a refused end's record is deleted, so that the job does not run again (records.Table.Refused)
		"store writes [delete 1]",
		"deleted 1 <nil>",
	}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

// TestOwnerCommitsAgainAfterAFailure: a write of the owner's that failed
// for a reason other than the records (the connection, the lease) leaves
// them unwritten: the next batch carries them again, and nothing went
// through the store on its own.
func TestOwnerCommitsAgainAfterAFailure(t *testing.T) {
	var log []string
	m := machine.New(core.New(policy.DefaultLimits()), machine.Config{Clock: clock.NewMock(), Logger: zap.NewNop(),
		Tick: time.Minute, Store: logStore{log: &log}, GrantRecordsAttempt: true, OwnerCommits: true})
	defer func() { <-m.Stop(nil) }()
	if err := m.Register("t", policy.JobTypeConfig{Priority: 10, DefaultCost: time.Second, MaxConcurrency: 1}); err != nil {
		t.Fatal(err)
	}
	if err := m.RegisterRemote([]policy.JobType{"t"}); err != nil {
		t.Fatal(err)
	}
	m.Adopt([]core.JobRecord{{Seq: 1, Type: "t", ID: "a", State: core.RecordPending}})
	ops := m.TakeOps(nil)
	m.EndRemote(ops[0].Attempt, policy.Permanent(errors.New("no")))
	m.TakeOps(nil)
	for _, written := range []error{errors.New("connection reset"), nil} {
		batch, ok := m.TakeBatch()
		log = append(log, fmt.Sprintf("batch %v %s, written: %v", ok, opsText(batch), written))
		m.BatchWritten(written)
	}
	_, ok := m.TakeBatch()
	log = append(log, fmt.Sprintf("then: batch %v", ok))
	dead := core.RecordDead
	want := []string{
		fmt.Sprintf("batch true [put 1 state %d], written: connection reset", dead),
		fmt.Sprintf("batch true [put 1 state %d], written: <nil>", dead),
		"then: batch false",
	}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}
