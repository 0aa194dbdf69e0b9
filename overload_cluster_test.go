package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster/memback"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// TestOverloadRefuseInCluster: with OverloadRefuse in cluster mode the
// leader's verdict reaches every instance: on the in-memory backend, in
// virtual time, the signal turns overloaded at 3.1 s and clear at 8.1 s;
// each instance's Enqueue, tried every second, is refused with
// ErrOverloaded from within one period and two heartbeats of the first
// flip to within as much of the second, and accepted otherwise. No two
// events share an instant: the leader ("one") beats on the second and
// reads every 250 ms, the other beats 300 ms later, the calls come at
// 600 ms.
func TestOverloadRefuseInCluster(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := memback.New()
		defer b.Close()
		var load atomic.Uint64 // the signal's value, in thousandths
		sig := fairsched.LoadFunc(func(fairsched.LoadState) (float64, error) { return float64(load.Load()) / 1000, nil })
		var scheds []*fairsched.Scheduler
		for _, name := range []string{"one", "two"} {
			s, err := fairsched.New(fairsched.WithCluster(b, fairsched.ClusterConfig{Domain: "ov", Instance: name, Slots: 1,
				LeaseTTL: 3 * time.Second, Heartbeat: time.Second}),
				fairsched.WithLoadSignal(fairsched.LoadConfig{Signal: sig, Every: 250 * time.Millisecond, Action: fairsched.OverloadRefuse}))
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := s.Close(context.Background()); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			if err := s.RegisterType(work, workCfg); err != nil {
				t.Fatal(err)
			}
			if err := s.RegisterHandler(work, func(context.Context, fairsched.Job) error { return nil }); err != nil {
				t.Fatal(err)
			}
			scheds = append(scheds, s)
			time.Sleep(300 * time.Millisecond)
		}
		time.Sleep(400 * time.Millisecond)
		// Each second sec: the signal changes at sec.1, the calls come at
		// sec.6.
		got := map[string][]string{}
		for sec := 1; sec <= 12; sec++ {
			time.Sleep(100 * time.Millisecond)
			switch sec {
			case 3:
				load.Store(1000)
			case 8:
				load.Store(0)
			}
			time.Sleep(500 * time.Millisecond)
			for i, s := range scheds {
				err := s.Enqueue(context.Background(), work, fmt.Sprintf("j%d-%d", i, sec), nil)
				got[fmt.Sprint(i)] = append(got[fmt.Sprint(i)], overloadOutcome(t, err))
			}
			time.Sleep(400 * time.Millisecond)
		}
		// The reading at 3.25 is overloaded, the leader publishes it at
		// 4.0 and reads it back, the other reads it at 4.3; likewise the
		// clear reading at 8.25 is read at 9.0 and 9.3 — well within the
		// bound of 250 ms and two heartbeats.
		want := []string{"ok", "ok", "ok", "refused", "refused", "refused", "refused", "refused", "ok", "ok", "ok", "ok"}
		if diff := cmp.Diff(map[string][]string{"0": want, "1": want}, got); diff != "" {
			t.Errorf("outcomes by second (-want +got):\n%s", diff)
		}
	})
}

func overloadOutcome(t *testing.T, err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, fairsched.ErrOverloaded):
		var re *fairsched.RefusalError
		if !errors.As(err, &re) || re.Reason != fairsched.ReasonOverloaded {
			t.Errorf("refusal %v: want a RefusalError of reason overloaded", err)
		}
		return "refused"
	default:
		return err.Error()
	}
}

// TestOverloadRefuseInClusterOnPostgres: the same on PostgreSQL, in real
// time: each instance's Enqueues, tried until their outcome turns, are
// accepted, refused once the signal reads overloaded, and accepted again
// once it reads clear — on the leader and on the other instance alike.
func TestOverloadRefuseInClusterOnPostgres(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	ctx := context.Background()
	var over atomic.Bool
	sig := fairsched.LoadFunc(func(fairsched.LoadState) (float64, error) {
		if over.Load() {
			return 1, nil
		}
		return 0, nil
	})
	var scheds []*fairsched.Scheduler
	for _, name := range []string{"ovr-a", "ovr-b"} {
		st, err := pgstore.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		s, err := fairsched.New(fairsched.WithCluster(st, fairsched.ClusterConfig{Domain: "overload-refuse", Instance: name, Slots: 2,
			LeaseTTL: 3 * time.Second, Heartbeat: 200 * time.Millisecond}),
			fairsched.WithLoadSignal(fairsched.LoadConfig{Signal: sig, Every: 20 * time.Millisecond, Action: fairsched.OverloadRefuse}))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(context.Background())
		if err := s.RegisterType(work, workCfg); err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterHandler(work, func(context.Context, fairsched.Job) error { return nil }); err != nil {
			t.Fatal(err)
		}
		scheds = append(scheds, s)
	}
	got := map[string][]string{}
	n := 0
	// until enqueues on every instance until each has had outcome want,
	// noting each instance's outcomes as they change.
	until := func(want string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for i, s := range scheds {
			name := fmt.Sprint(i)
			for {
				n++
				out := overloadOutcome(t, s.Enqueue(ctx, work, fmt.Sprintf("p%d", n), nil))
				if h := got[name]; len(h) == 0 || h[len(h)-1] != out {
					got[name] = append(h, out)
				}
				if out == want {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("instance %s never answered %s: %v", name, want, got[name])
				}
				time.Sleep(20 * time.Millisecond) // a poll of the outcome, not a synchronisation
			}
		}
	}
	until("ok")
	over.Store(true)
	until("refused")
	over.Store(false)
	until("ok")
	want := []string{"ok", "refused", "ok"}
	if diff := cmp.Diff(map[string][]string{"0": want, "1": want}, got); diff != "" {
		t.Errorf("outcomes as they changed (-want +got):\n%s", diff)
	}
}
