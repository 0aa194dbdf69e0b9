package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
)

// TestWorkerSlotsAcrossInstances: a worker registered on one instance
// joins the leader's worker index. Until it registers, a job of its type
// waits with reason no_workers cluster-wide; on its one slot a job runs on
// the worker's instance and knows its slot (SlotFromContext); a second
// waits with worker_busy; a RunSync from the other instance runs there, on
// the same slot; unregistering the worker cancels the job on it
// (ErrWorkerLost).
func TestWorkerSlotsAcrossInstances(t *testing.T) {
	url := pgtest.URL(t)
	lead := joinLeader(t, url, fast("d", "lead", 2))
	host := join(t, url, fast("d", "host", 2))
	cfg := fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond, RequiresWorker: true}
	for _, m := range []*member{lead, host} {
		if err := m.s.RegisterType("compile", cfg); err != nil {
			t.Fatal(err)
		}
	}
	type run struct {
		id, where string
		cause     error
	}
	started := make(chan string, 4)
	ended := make(chan run, 4)
	release := make(chan struct{}, 4)
	if err := host.s.RegisterHandler("compile", func(ctx context.Context, j fairsched.Job) error {
		w, slot, ok := fairsched.SlotFromContext(ctx)
		started <- fmt.Sprintf("%s on host, slot %s/%d %v", j.ID, w, slot, ok)
		select {
		case <-release:
			ended <- run{j.ID, "host", nil}
			return nil
		case <-ctx.Done():
			ended <- run{j.ID, "host", context.Cause(ctx)}
			return context.Cause(ctx)
		}
	}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// waitReason polls the leader's snapshot until id waits for reason.
	waitReason := func(id string, reason fairsched.Reason) {
		t.Helper()
		waitFor(t, func() bool {
			snap, err := lead.s.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range snap.Pending {
				if p.ID == id && p.Reason == reason {
					return true
				}
			}
			return false
		})
	}
	if err := lead.s.Enqueue(ctx, "compile", "c1", nil); err != nil {
		t.Fatal(err)
	}
	waitReason("c1", fairsched.ReasonNoWorkers)
	if err := host.s.RegisterWorker(fairsched.WorkerSpec{ID: "gpu", Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{"compile"}}}}); err != nil {
		t.Fatal(err)
	}
	if got := <-started; got != "c1 on host, slot gpu/0 true" {
		t.Errorf("started %q", got)
	}
	if err := lead.s.Enqueue(ctx, "compile", "c2", nil); err != nil {
		t.Fatal(err)
	}
	waitReason("c2", fairsched.ReasonWorkerBusy)
	release <- struct{}{}
	if r := <-ended; r.cause != nil {
		t.Errorf("c1 ended with %v", r.cause)
	}
	if got := <-started; got != "c2 on host, slot gpu/0 true" {
		t.Errorf("started %q", got)
	}
	// A RunSync from the other instance queues for the same slot and runs
	// where it was asked.
	syncDone := make(chan error, 1)
	go func() {
		syncDone <- lead.s.RunSync(ctx, "compile", "c3", "alice", func(ctx context.Context) error {
			w, slot, ok := fairsched.SlotFromContext(ctx)
			started <- fmt.Sprintf("c3 on lead, slot %s/%d %v", w, slot, ok)
			return nil
		})
	}()
	waitReason("c3", fairsched.ReasonWorkerBusy)
	release <- struct{}{}
	if r := <-ended; r.cause != nil {
		t.Errorf("c2 ended with %v", r.cause)
	}
	if got := <-started; got != "c3 on lead, slot gpu/0 true" {
		t.Errorf("started %q", got)
	}
	if err := <-syncDone; err != nil {
		t.Errorf("RunSync: %v", err)
	}
	// A job on the worker when it leaves is cancelled.
	if err := lead.s.Enqueue(ctx, "compile", "c4", nil); err != nil {
		t.Fatal(err)
	}
	if got := <-started; got != "c4 on host, slot gpu/0 true" {
		t.Errorf("started %q", got)
	}
	if err := host.s.UnregisterWorker("gpu"); err != nil {
		t.Fatal(err)
	}
	if r := <-ended; !errors.Is(r.cause, fairsched.ErrWorkerLost) {
		t.Errorf("c4 on a worker unregistered ended with %v, want ErrWorkerLost", r.cause)
	}
	if err := host.s.UnregisterWorker("gpu"); !errors.Is(err, fairsched.ErrUnknownWorker) {
		t.Errorf("unregistering twice: %v", err)
	}
}
