package machine_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
)

// The machine starts its store writer: none may outlive Stop.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// nopStore is a JobStore that keeps nothing and commits at once.
type nopStore struct{}

func (nopStore) Load() (core.State, error)                 { return core.State{}, nil }
func (nopStore) Save(core.State) error                     { return nil }
func (nopStore) LoadJobs(func(core.JobRecord) error) error { return nil }
func (nopStore) ApplyJobs([]machine.JobOp) error           { return nil }
