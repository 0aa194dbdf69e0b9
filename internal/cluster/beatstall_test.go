package cluster_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster/memback"
)

// TestSlowGrantReadsLeaveHeartbeats: while the executor's reads of its
// grants hang (each until its beat-long timeout, then again), the
// instance's heartbeats go on — they do not wait for the executor — so
// it does not fence up: the function running is not stopped, runs once,
// and its caller gets nil.
func TestSlowGrantReadsLeaveHeartbeats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := memback.New()
		defer b.Close()
		core, logs := observer.New(zap.WarnLevel)
		s, err := fairsched.New(fairsched.WithCluster(b, fast("d", "a", 2)), fairsched.WithLogger(zap.New(core)))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = s.Close(context.Background()) }()
		if err := s.RegisterType("fetch", fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		var ran []string
		err = s.RunSync(context.Background(), "fetch", "linux", "", func(ctx context.Context) error {
			releaseFull, releaseSince := b.Stall("Granted"), b.Stall("GrantsSince")
			time.AfterFunc(2*time.Second, func() { releaseFull(); releaseSince() })
			select {
			case <-time.After(3 * time.Second):
				ran = append(ran, "ran to its end")
				return nil
			case <-ctx.Done():
				ran = append(ran, "stopped: "+context.Cause(ctx).Error())
				return context.Cause(ctx)
			}
		})
		if err != nil {
			t.Errorf("RunSync: %v", err)
		}
		if diff := cmp.Diff([]string{"ran to its end"}, ran); diff != "" {
			t.Errorf("the function's runs (-want +got):\n%s", diff)
		}
		var fenced []string
		for _, e := range logs.FilterMessage("heartbeats failing: stopping the jobs running here").All() {
			fenced = append(fenced, e.Time.Format("05.000"))
		}
		if diff := cmp.Diff([]string(nil), fenced); diff != "" {
			t.Errorf("fenced up at (-want +got):\n%s", diff)
		}
	})
}
