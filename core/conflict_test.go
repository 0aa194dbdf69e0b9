package core

import (
	"testing"

	"github.com/fairsched/fairsched/policy"
)

// TestSharedTypeRegisteredLate: writer preference covers the exclusive jobs
// already pending when a conflict group's first shared type registers: a
// shared job that arrives after such a job waits behind it.
func TestSharedTypeRegisteredLate(t *testing.T) {
	excl := typeDef{"repack", policy.JobTypeConfig{DefaultCost: ms(10), ConflictGroup: "git", Priority: 3}}
	c := newCore(t, 0, excl)
	first := submit(t, c, t0, "repack", "r", "")
	wantDispatch(t, c, t0, "repack/r@")
	submit(t, c, t0, "repack", "r", "") // waits: the first runs
	wantDispatch(t, c, t0)
	shared := policy.JobTypeConfig{DefaultCost: ms(10), ConflictGroup: "git", ConflictMode: policy.ConflictShared, Priority: 4}
	if err := c.RegisterType("clone", shared); err != nil {
		t.Fatal(err)
	}
	submit(t, c, t0, "clone", "r", "a")
	c.Finish(t0.Add(ms(10)), first)
	// The waiting repack arrived first: it runs, and the clone — of a
	// higher tier, dispatched first otherwise — waits behind it.
	wantDispatch(t, c, t0.Add(ms(10)), "repack/r@")
	wantDispatch(t, c, t0.Add(ms(10)))
}
