package fairsched_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
)

// blockingStore's Save blocks until release is closed.
type blockingStore struct {
	started chan struct{} // closed by the first Save
	release chan struct{}
	saves   int
}

func (b *blockingStore) Load() (fairsched.StoreState, error) { return fairsched.StoreState{}, nil }
func (b *blockingStore) Save(fairsched.StoreState) error {
	if b.saves == 0 {
		close(b.started)
	}
	b.saves++
	<-b.release
	return nil
}

// TestSlowStoreNeverStallsTheOwner: while a save blocks on a slow disk, an
// idle scheduler still runs a RunSync at once, and Close with a deadline
// returns at the deadline with its error (it waited a second past it, and
// a RunSync 250 ms, when the owner saved itself).
func TestSlowStoreNeverStallsTheOwner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &blockingStore{started: make(chan struct{}), release: make(chan struct{})}
		s, err := fairsched.New(fairsched.WithStore(st), fairsched.WithIdleExpiry(4*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType("t", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		<-st.started // the first tick's save blocks
		start := time.Now()
		if err := s.RunSync(context.Background(), "t", "x", "", func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("RunSync took %v of virtual time behind a blocked save; want 0", d)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start = time.Now()
		err = s.Close(ctx)
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Second {
			t.Errorf("Close = %v after %v; want DeadlineExceeded after 1s", err, time.Since(start))
		}
		close(st.release) // the writer finishes its saves and returns
		synctest.Wait()
	})
}

// panickyStore panics in whatever it is asked.
type panickyStore struct{ load bool }

func (p panickyStore) Load() (fairsched.StoreState, error) {
	if p.load {
		panic("corrupt page")
	}
	return fairsched.StoreState{}, nil
}
func (panickyStore) Save(fairsched.StoreState) error { panic("page already freed") }

// TestPanickingStoreIsAnError: a Store whose Load panics makes New fail with
// ErrStore; one whose Save panics is logged, and the process goes on.
func TestPanickingStoreIsAnError(t *testing.T) {
	if _, err := fairsched.New(fairsched.WithStore(panickyStore{load: true})); !errors.Is(err, fairsched.ErrStore) {
		t.Errorf("New with a Load that panics = %v; want ErrStore", err)
	}
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New(fairsched.WithStore(panickyStore{}), fairsched.WithIdleExpiry(4*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second) // two ticks, two saves that panic
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("Close = %v", err)
		}
	})
}
