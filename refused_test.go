package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/fairschedtest"
)

// TestBoltRefusedRecordFailsOnlyItself: bbolt keeps what it is given, but
// boltstore encodes records as JSON, which cannot hold a time past year
// 9999: an Enqueue due then is refused by the store (ErrRecordRefused,
// with ErrStore) while the 31 others committed with it succeed and run.
func TestBoltRefusedRecordFailsOnlyItself(t *testing.T) {
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		st := durableStore(t, filepath.Join(t.TempDir(), "jobs.db"))
		s := fairschedtest.New(t, fairsched.WithClock(env.Clock), fairsched.WithStore(st))
		if err := s.RegisterType("mail", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
			t.Fatal(err)
		}
		ran := map[string]int{}
		if err := s.RegisterHandler("mail", func(_ context.Context, j fairsched.Job) error { ran[j.ID]++; return nil }); err != nil {
			t.Fatal(err)
		}
		var jobs []fairsched.Enqueueing
		want, wantRan := make([]string, 32), map[string]int{}
		for i := range want {
			j := fairsched.Enqueueing{Type: "mail", ID: fmt.Sprintf("j%02d", i)}
			want[i] = "ok"
			if i == 20 {
				j.Options = []fairsched.JobOption{fairsched.RunAt(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))}
				want[i] = "refused"
			} else {
				wantRan[j.ID] = 1
			}
			jobs = append(jobs, j)
		}
		err := s.EnqueueMany(context.Background(), jobs)
		var many *fairsched.ManyError
		if !errors.As(err, &many) {
			t.Fatalf("EnqueueMany: %v; want a ManyError", err)
		}
		got := make([]string, len(many.Errs))
		for i, err := range many.Errs {
			switch {
			case err == nil:
				got[i] = "ok"
			case errors.Is(err, fairsched.ErrStore) && errors.Is(err, fairsched.ErrRecordRefused):
				got[i] = "refused"
			default:
				got[i] = err.Error()
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("answers (-want +got):\n%s", diff)
		}
		fairschedtest.WaitIdle(t, s)
		if diff := cmp.Diff(wantRan, ran); diff != "" {
			t.Errorf("runs (-want +got):\n%s", diff)
		}
	})
}
