package fairsched_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster/memback"
)

// TestShedInCluster: in cluster mode the leader sheds as one process does
// (TestShedQuietKeysAccepted): on the in-memory backend, in virtual time,
// a noisy key fills WithMaxPending with RunSyncs; a quiet key's RunSync
// runs in place of the noisy key's newest, which ends with reason shed.
func TestShedInCluster(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := memback.New()
		defer b.Close()
		s, err := fairsched.New(fairsched.WithCluster(b, fairsched.ClusterConfig{Domain: "shed", Instance: "one", Slots: 1}),
			fairsched.WithMaxConcurrency(1), fairsched.WithMaxPending(2), fairsched.WithShedding())
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
		var mu sync.Mutex
		got := map[string]string{}
		var wg sync.WaitGroup
		send := func(id, key string) {
			wg.Go(func() {
				err := s.RunSync(context.Background(), work, id, key, func(context.Context) error {
					time.Sleep(time.Second)
					return nil
				})
				mu.Lock()
				got[id] = shedOutcome(err)
				mu.Unlock()
			})
			synctest.Wait()
		}
		for i := range 3 {
			send(fmt.Sprintf("noisy%d", i), "noisy")
		}
		send("a0", "a")
		wg.Wait()
		want := map[string]string{"noisy0": "ran", "noisy1": "ran", "noisy2": "shed", "a0": "ran"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("outcomes (-want +got):\n%s", diff)
		}
	})
}
