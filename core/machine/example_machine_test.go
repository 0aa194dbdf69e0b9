package machine_test

import (
	"fmt"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/zap"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/policy"
)

// A Machine is called in its owner's turn: the owner applies what changed
// (here three durable jobs, then each start's end), takes the starts the
// machine decided (TakeOps) and carries them out — no goroutine of the
// scheduler's own runs meanwhile.
func ExampleMachine() {
	m := machine.New(core.New(policy.DefaultLimits()), machine.Config{Clock: clock.NewMock(), Logger: zap.NewNop(),
		Tick: time.Minute, Store: nopStore{}, GrantRecordsAttempt: true})
	defer m.Stop(nil)
	_ = m.Register("report", policy.JobTypeConfig{Priority: 10, DefaultCost: time.Second, MaxConcurrency: 1})
	_ = m.RegisterRemote([]policy.JobType{"report"})
	m.Adopt([]core.JobRecord{
		{Seq: 1, Type: "report", ID: "a", State: core.RecordPending},
		{Seq: 2, Type: "report", ID: "b", State: core.RecordPending},
		{Seq: 3, Type: "report", ID: "c", State: core.RecordPending},
	})
	for turn := 1; ; turn++ {
		ops := m.TakeOps(nil)
		if len(ops) == 0 {
			break
		}
		for _, op := range ops {
			fmt.Printf("turn %d: start %s\n", turn, op.Attempt.Job.ID)
			m.EndRemote(op.Attempt, nil) // its instance reported success
		}
	}
	// Output:
	// turn 1: start a
	// turn 2: start b
	// turn 3: start c
}
