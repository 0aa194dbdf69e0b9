package metrics

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/fairsched/fairsched"
)

// TestLoadSignal: the load signal's last good reading, whether it is
// overloaded and the skipped readings are reported, on the mock clock's
// readings.
func TestLoadSignal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		readings := []float64{0.95, -1, 0.25} // -1: the signal fails
		n := 0
		sig := fairsched.LoadFunc(func(fairsched.LoadState) (float64, error) {
			v := readings[min(n, len(readings)-1)]
			n++
			if v < 0 {
				return 0, errors.New("unreadable")
			}
			return v, nil
		})
		s := newScheduler(t, fairsched.WithClock(mock), fairsched.WithLoadSignal(fairsched.LoadConfig{Signal: sig, Every: time.Second}))
		c := collectorOf(t, s)
		names := []string{"fairsched_load_signal", "fairsched_overloaded", "fairsched_load_readings_skipped_total"}
		step := func() {
			synctest.Wait()
			mock.Add(time.Second)
			synctest.Wait()
		}
		step()
		compare(t, c, `
fairsched_load_signal 0.95
fairsched_overloaded 1
fairsched_load_readings_skipped_total 0
`, names...)
		step()
		compare(t, c, `
fairsched_load_signal 0.95
fairsched_overloaded 1
fairsched_load_readings_skipped_total 1
`, names...)
		step()
		compare(t, c, `
fairsched_load_signal 0.25
fairsched_overloaded 0
fairsched_load_readings_skipped_total 1
`, names...)
	})
}
