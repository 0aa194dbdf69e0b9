package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/fairsched/fairsched"
)

// TestConcurrentCallsAndClose hammers every public method from many
// goroutines while Close runs, and checks that nothing is lost: every call
// returns, every RunSync gets its job's result or a typed refusal, and every
// background job that Submit accepted either ran or was reported dropped.
// Bounded in goroutines and operations; goleak (TestMain) checks that
// nothing is left running.
func TestConcurrentCallsAndClose(t *testing.T) {
	for round := range 5 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			logs, records := observer.New(zap.ErrorLevel)
			s := openScheduler(t, fairsched.WithMaxConcurrency(4), fairsched.WithLogger(zap.New(logs)))
			var accepted, ran atomic.Int64
			var wg sync.WaitGroup
			const workers, ops = 32, 100
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range ops {
						id := fmt.Sprintf("r%d", (w*ops+i)%7)
						switch i % 4 {
						case 0:
							if err := s.Submit(repack, id, func(context.Context) error { ran.Add(1); return nil }); err == nil {
								accepted.Add(1)
							} else if !errors.Is(err, fairsched.ErrClosed) {
								t.Errorf("Submit = %v", err)
							}
						case 1, 2:
							ctx, cancel := context.WithCancel(context.Background())
							if i%8 == 1 {
								cancel() // some callers leave at once
							}
							want := errors.New("done")
							err := s.RunSync(ctx, clone, id, fmt.Sprint("k", w%5), func(context.Context) error { return want })
							cancel()
							if err != want && !errors.Is(err, fairsched.ErrClosed) && !errors.Is(err, context.Canceled) {
								t.Errorf("RunSync = %v", err)
							}
						case 3:
							if _, err := s.Snapshot(context.Background()); err != nil && !errors.Is(err, fairsched.ErrClosed) {
								t.Errorf("Snapshot = %v", err)
							}
						}
					}
				}()
			}
			// Close part-way through, once gracefully or with a short deadline.
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(round)*time.Millisecond)
			defer cancel()
			closeErr := s.Close(ctx)
			// A graceful Close reports the submissions that raced it
			// (ErrClosed), one past its deadline what it dropped.
			if closeErr != nil && !errors.Is(closeErr, context.DeadlineExceeded) && !errors.Is(closeErr, fairsched.ErrClosed) {
				t.Errorf("Close = %v", closeErr)
			}
			wg.Wait()
			dropped := int64(records.FilterMessage("background job dropped").Len())
			if ran.Load()+dropped != accepted.Load() {
				t.Errorf("accepted %d background jobs; %d ran and %d were reported dropped", accepted.Load(), ran.Load(), dropped)
			}
		})
	}
}
