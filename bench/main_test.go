package bench_test

import (
	"context"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/fairsched/fairsched/bench/peers"
)

// The peers start goroutines (fairsched's owner and runners, ants' workers):
// none may outlive its Close. (ants starts its default pool's two at init:
// those are ignored.)
func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.IgnoreCurrent()) }

// TestPeersRun: every peer runs what it is given, for every flow.
func TestPeersRun(t *testing.T) {
	apf, err := peers.NewAPF(2, 3)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := peers.NewFairsched(2, 3)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]peers.Sync{"apf": apf, "fairsched": fs} {
		ran := 0
		for flow := range 3 {
			if err := s.Do(context.Background(), flow, func() { ran++ }); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if ran != 3 {
			t.Fatalf("%s ran %d of 3 requests", name, ran)
		}
	}
	pool, err := peers.NewAnts(2)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]peers.Async{"ants": pool, "fairsched": fs} {
		var wg sync.WaitGroup
		wg.Add(3)
		for range 3 {
			if err := s.Go(wg.Done); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		wg.Wait()
		s.Close()
	}
}
