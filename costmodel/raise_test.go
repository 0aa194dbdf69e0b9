package costmodel

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestLedgerRaise: Raise moves an active key's cost up, never down, and
// leaves an idle or unknown key alone; the floor follows the raised cost.
func TestLedgerRaise(t *testing.T) {
	l := NewLedger()
	l.Join("a", t0)
	l.Join("b", t0)
	l.Charge("a", 5*time.Second)
	got := []time.Duration{
		l.Raise("b", 3*time.Second), // up
		l.Raise("b", time.Second),   // never down
		l.Floor(),                   // b's 3s is the least now
		l.Raise("idle", time.Hour),  // unknown: nothing
	}
	l.Leave("b", at(time.Second))
	got = append(got, l.Raise("b", time.Hour), l.Cost("b")) // idle: nothing
	want := []time.Duration{3 * time.Second, 3 * time.Second, 3 * time.Second, 0, 0, 3 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Raise (-want +got):\n%s", diff)
	}
}
