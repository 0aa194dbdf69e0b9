package machine_test

import (
	"context"
	"errors"
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

// TestBatchingKeepsEachVerdict: an owner that takes several submissions in
// one batch (one dispatch at its end) gives each the verdict it would have
// had alone. With one slot and one pending place, the first job starts
// and the second waits: a batch must not count the first as pending and
// refuse the second.
func TestBatchingKeepsEachVerdict(t *testing.T) {
	limits := policy.DefaultLimits()
	limits.MaxConcurrency, limits.MaxPending = 1, 1
	var started []string
	m := machine.New(core.New(limits), machine.Config{Clock: clock.NewMock(), Logger: zap.NewNop(), Tick: time.Minute,
		StartLocal: func(j *messages.Job) { started = append(started, j.ID) }})
	defer m.Stop(nil)
	if err := m.Register(work, policy.JobTypeConfig{DefaultCost: time.Second, Priority: 10}); err != nil {
		t.Fatal(err)
	}
	ok := func(context.Context) error { return nil }
	var got []string
	m.BeginBatch()
	for _, id := range []string{"first", "second", "third"} {
		verdict := make(chan error, 1)
		m.Receive(messages.SubmitChecked{Job: messages.NewJob(work, id, "", ok), Verdict: verdict})
		v := <-verdict
		var refusal *policy.RefusalError
		switch {
		case v == nil:
			got = append(got, id+": queued")
		case errors.As(v, &refusal):
			got = append(got, id+": refused "+string(refusal.Reason))
		default:
			t.Fatalf("%s: %v", id, v)
		}
	}
	m.EndBatch()
	m.EndTurn()
	want := []string{"first: queued", "second: queued", "third: refused pool_overloaded"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verdicts in one batch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"first"}, started); diff != "" {
		t.Errorf("started (-want +got):\n%s", diff)
	}
}
