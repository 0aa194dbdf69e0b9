package core

import (
	"fmt"
	"testing"
	"time"

	"github.com/fairsched/fairsched/policy"
	"github.com/google/go-cmp/cmp"
)

// TestSchedulesInCore: the core's periodic rules without a goroutine — a
// job that ran recently waits out its interval after a restart, a busy
// schedule skips its occurrence, missed slots are skipped in O(1), and a
// stopped schedule's last run is forgotten once its interval has passed.
func TestSchedulesInCore(t *testing.T) {
	c := New(policy.DefaultLimits())
	c.RestoreLastRuns(map[string]time.Time{"sync/a": t0.Add(-40 * time.Second), "gone/x": t0.Add(-time.Hour)})
	a := c.AddSchedule(t0, "sync/a", "tmpl-a", time.Minute, 0, nil)    // ran 40s ago: due at 20s
	b := c.AddSchedule(t0, "sync/b", "tmpl-b", 30*time.Second, 0, nil) // never ran: due now
	var log []string
	at := func(d time.Duration) {
		due, skipped := c.DueOccurrences(t0.Add(d), nil)
		for _, s := range due {
			log = append(log, fmt.Sprintf("%v due %s", d, s.Key))
			c.Occurred(s, t0.Add(d))
		}
		for _, s := range skipped {
			log = append(log, fmt.Sprintf("%v skipped %s", d, s.Key))
		}
	}
	at(0)
	at(20 * time.Second)
	at(30 * time.Second) // b's previous occurrence still runs
	c.OccurrenceEnded(b)
	at(60 * time.Second)
	c.StopSchedule(a.ID)
	want := []string{"0s due sync/b", "20s due sync/a", "30s skipped sync/b", "1m0s due sync/b"}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("occurrences (-want +got):\n%s", diff)
	}
	if next, ok := c.NextOccurrence(); !ok || !next.Equal(t0.Add(90*time.Second)) {
		t.Errorf("next occurrence %v %v; want b's at 1m30s", next, ok)
	}
	// A 1 ns schedule a day late catches up in one step.
	if got := NextSlot(t0, time.Nanosecond, t0.Add(24*time.Hour)); !got.Equal(t0.Add(24*time.Hour + time.Nanosecond)) {
		t.Errorf("NextSlot: %v", got)
	}
	c.PruneLastRuns(t0.Add(70*time.Second), 10*time.Minute) // a stopped at 20s, every 1m: kept until 1m20s
	if _, ok := c.LastRuns()["sync/a"]; !ok {
		t.Error("a's last run forgotten within its interval")
	}
	c.PruneLastRuns(t0.Add(2*time.Minute), 10*time.Minute)
	runs := c.LastRuns()
	if _, ok := runs["sync/a"]; ok {
		t.Error("a's last run kept past its interval")
	}
	if _, ok := runs["gone/x"]; ok {
		t.Error("a loaded last run of no schedule kept past the TTL")
	}
	if _, ok := runs["sync/b"]; !ok {
		t.Error("a running schedule's last run forgotten")
	}
}
