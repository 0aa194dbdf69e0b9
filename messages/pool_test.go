package messages

import (
	"context"
	"testing"

	"github.com/fairsched/fairsched/core"
)

// TestFlagsAndRunAcrossRecycle: a record's flags live in core.Job.Flags
// and its attempt's context in core.Running; Of finds the record from its
// core.Job; a recycled record keeps only what its allocation is (full or
// not), never a cancellation or a pool mark of the job before.
func TestFlagsAndRunAcrossRecycle(t *testing.T) {
	fn := func(context.Context) error { return nil }
	for _, full := range []bool{false, true} {
		j := NewPooledJob("t", "id", "", fn)
		if full {
			j = NewPooledFull("t", "id", "", fn)
		}
		if !j.Pooled() || j.inline() != full || j.Cancelled() || Of(&j.Job) != j {
			t.Fatalf("full=%v: Pooled %v inline %v Cancelled %v, Of finds itself %v", full, j.Pooled(), j.inline(), j.Cancelled(), Of(&j.Job) == j)
		}
		if j.Run() != nil {
			t.Fatalf("full=%v: a job never admitted has a Run", full)
		}
		j.Running = new(core.Running) // as the core's admission does
		rc := new(Attempts).Attempt(j, context.Background(), nil, 1, SlotRef{}, false)
		j.SetRun(rc)
		j.SetCancelled()
		if j.Run() != rc || !j.Cancelled() {
			t.Fatalf("full=%v: Run %p (set %p), Cancelled %v", full, j.Run(), rc, j.Cancelled())
		}
		j.SetRun(nil)
		if j.Run() != nil {
			t.Fatalf("full=%v: Run after the attempt ended: %p", full, j.Run())
		}
		j.Running = nil
		Recycle(j)
		if j.Cancelled() || j.Pooled() || j.inline() != full || (j.Extra != nil) != full {
			t.Fatalf("full=%v: recycled: Cancelled %v Pooled %v inline %v Extra %v", full, j.Cancelled(), j.Pooled(), j.inline(), j.Extra != nil)
		}
	}
	if j := NewJob("t", "id", "", fn); j.Pooled() || !j.inline() {
		t.Fatalf("NewJob: Pooled %v inline %v; want a full record not from the pool", j.Pooled(), j.inline())
	}
}
