package core

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestJoins: requests join the pending run of their (type, id); a run
// that started is not joined (the next request is the next run); the
// waiters end with their run; a run whose function is gone hands its
// waiters to the first of them.
func TestJoins(t *testing.T) {
	var js Joins
	rec := func(seq uint64, id string) *JobRecord { return &JobRecord{Seq: seq, Type: "fetch", ID: id} }
	started := map[uint64]bool{}
	pending := func(run *JobRecord) bool { return !started[run.Seq] }
	seqs := func(rs []*JobRecord) []uint64 {
		var out []uint64
		for _, r := range rs {
			out = append(out, r.Seq)
		}
		return out
	}
	r1, r2, r3, other := rec(1, "linux"), rec(2, "linux"), rec(3, "linux"), rec(4, "git")
	if js.Join(r1, pending) != nil || js.Join(other, pending) != nil {
		t.Fatal("the first request of an id is its run")
	}
	if js.Join(r2, pending) != r1 || js.Join(r3, pending) != r1 {
		t.Fatal("later requests join the pending run")
	}
	if js.Waiting() != 2 {
		t.Errorf("waiting %d, want 2", js.Waiting())
	}
	// r1's function is gone: r2 runs for r3.
	if next := js.Promote(r1); next != r2 {
		t.Fatalf("promoted %v, want r2", next)
	}
	started[2] = true
	r5 := rec(5, "linux")
	if js.Join(r5, pending) != nil {
		t.Error("a request joined a run that had started")
	}
	if diff := cmp.Diff([]uint64{3}, seqs(js.End(r2))); diff != "" {
		t.Errorf("r2's waiters (-want +got):\n%s", diff)
	}
	r6 := rec(6, "linux")
	if js.Join(r6, pending) != r5 {
		t.Error("r5, still pending, is the run of linux")
	}
	if diff := cmp.Diff([]uint64{6}, seqs(js.End(r5))); diff != "" {
		t.Errorf("r5's waiters (-want +got):\n%s", diff)
	}
	if js.End(other) != nil || js.Waiting() != 0 || len(js.runs) != 0 {
		t.Errorf("left: %d waiting, runs %v", js.Waiting(), js.runs)
	}
}
