package replay_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/replay"
	"github.com/fairsched/fairsched/trace"
)

// FuzzReplay: any trace Read accepts replays to an end, a run per record,
// or fails with an error; never a panic or a hang.
func FuzzReplay(f *testing.F) {
	f.Add([]byte(`{"fairsched_trace":1}
{"type":"t","id":"1","key":"a","arrival":"2026-11-28T10:00:00Z","run_ns":1000}
{"type":"t","id":"1","key":"a","arrival":"2026-11-28T10:00:00Z","run_ns":0}
{"type":"u","id":"2","key":"b","group":"g","arrival":"2026-11-28T09:00:00Z","run_ns":60000000000}
{"type":"t","id":"3","arrival":"2026-12-30T09:00:00Z"}
`))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := trace.Read(bytes.NewReader(data))
		if err != nil || len(recs) > 50 {
			return
		}
		// Virtual time costs real time (the mock clock yields at each
		// move, and the scheduler's tick fires along it): keep each input
		// to an hour.
		var work, span time.Duration
		for _, r := range replay.Recorded(recs) {
			work, span = work+r.Run, max(span, r.Arrival)
		}
		if work > time.Hour || span > time.Hour {
			return
		}
		runs, err := replay.Play(recs, fairsched.WithMaxConcurrency(1))
		if err == nil && len(runs) != len(recs) {
			t.Fatalf("%d runs of %d records", len(runs), len(recs))
		}
		_ = replay.Measure(runs)
	})
}
