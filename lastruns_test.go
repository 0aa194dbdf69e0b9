package fairsched_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
)

// memStore is a Store in memory that keeps what was saved last.
type memStore struct {
	mu    sync.Mutex
	state fairsched.StoreState
	saves int
}

func (m *memStore) Load() (fairsched.StoreState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state, nil
}

func (m *memStore) Save(s fairsched.StoreState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state, m.saves = s, m.saves+1
	return nil
}

func (m *memStore) lastRuns() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.state.LastRuns)
}

// TestFutureLastRunIsClampedToNow: a saved last run 10 h in the future (the
// clock stepped back since) counts as now: the hourly job runs one interval
// after start, not 11 hours later.
func TestFutureLastRunIsClampedToNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &memStore{state: fairsched.StoreState{LastRuns: map[string]time.Time{"t/tick": time.Now().Add(10 * time.Hour)}}}
		s, err := fairsched.New(fairsched.WithStore(st))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(context.Background())
		if err := s.RegisterType("t", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		runs := make(chan time.Duration, 10)
		start := time.Now()
		stop, err := s.SubmitPeriodic("t", "tick", time.Hour, func(context.Context) error {
			runs <- time.Since(start)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		time.Sleep(90 * time.Minute)
		synctest.Wait()
		if len(runs) != 1 {
			t.Fatalf("%d runs in the first 90 minutes; want 1", len(runs))
		}
		if at := <-runs; at != time.Hour {
			t.Errorf("first run at %v; want 1h (one interval)", at)
		}
	})
}

// TestStoppedSchedulesAreForgotten: the last runs of 200 stopped schedules
// are saved while a restart within their interval still needs them, and
// are gone from the saved state once their interval has passed.
func TestStoppedSchedulesAreForgotten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &memStore{}
		s, err := fairsched.New(fairsched.WithStore(st), fairsched.WithIdleExpiry(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType("t", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		var stops []func()
		for i := range 200 {
			stop, err := s.SubmitPeriodic("t", fmt.Sprint("s", i), 5*time.Minute, func(context.Context) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			stops = append(stops, stop)
		}
		synctest.Wait()
		for _, stop := range stops {
			stop()
		}
		time.Sleep(time.Minute) // saved on each tick: still within the interval
		synctest.Wait()
		if n := st.lastRuns(); n != 200 {
			t.Errorf("saved last runs within the interval: %d; want 200", n)
		}
		time.Sleep(5 * time.Minute) // the interval has passed
		synctest.Wait()
		if n := st.lastRuns(); n != 0 {
			t.Errorf("saved last runs after the interval: %d; want 0", n)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}
