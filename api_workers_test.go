package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
)

const (
	pdf   fairsched.JobType = "pdf"
	excel fairsched.JobType = "excel"
	index fairsched.JobType = "index"
)

func workerTypes() map[fairsched.JobType]fairsched.JobTypeConfig {
	cfg := fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 5, RequiresWorker: true}
	return map[fairsched.JobType]fairsched.JobTypeConfig{pdf: cfg, excel: cfg, index: cfg, work: workCfg}
}

func slot(types ...fairsched.JobType) fairsched.SlotSpec { return fairsched.SlotSpec{Types: types} }

// TestRegisterWorkerErrors: every bad registration fails with its own
// error and changes nothing.
func TestRegisterWorkerErrors(t *testing.T) {
	s := startScheduler(t, workerTypes())
	if err := s.RegisterWorker(fairsched.WorkerSpec{ID: "w1", Slots: []fairsched.SlotSpec{slot(pdf)}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		spec fairsched.WorkerSpec
		want error
		msg  string
	}{
		{fairsched.WorkerSpec{ID: "w1", Slots: []fairsched.SlotSpec{slot(excel)}}, fairsched.ErrDuplicateWorker,
			`fairsched: worker already registered: "w1"`},
		{fairsched.WorkerSpec{ID: "w2", Slots: []fairsched.SlotSpec{slot(pdf), slot()}}, fairsched.ErrInvalidConfig,
			`fairsched: invalid config: WorkerSpec{ID: "w2"}.Slots[1].Types = []: must name at least one job type`},
		{fairsched.WorkerSpec{ID: "w2"}, fairsched.ErrInvalidConfig,
			`fairsched: invalid config: WorkerSpec{ID: "w2"}.Slots = []: must hold at least one slot`},
		{fairsched.WorkerSpec{ID: "w2", Slots: []fairsched.SlotSpec{slot(pdf, "ocr")}}, fairsched.ErrUnknownJobType,
			`fairsched: unknown job type: "ocr" (worker "w2", slot 0)`},
		{fairsched.WorkerSpec{ID: "w2", Slots: []fairsched.SlotSpec{slot(work)}}, fairsched.ErrInvalidConfig,
			`fairsched: invalid config: WorkerSpec{ID: "w2"}.Slots[0].Types = work: is not a worker type: register it with JobTypeConfig.RequiresWorker`},
		{fairsched.WorkerSpec{Slots: []fairsched.SlotSpec{slot(pdf)}}, fairsched.ErrInvalidConfig,
			`fairsched: invalid config: WorkerSpec.ID = "": must not be empty`},
	} {
		err := s.RegisterWorker(tc.spec)
		if !errors.Is(err, tc.want) || err.Error() != tc.msg {
			t.Errorf("RegisterWorker(%+v) = %v\nwant %s", tc.spec, err, tc.msg)
		}
	}
	if err := s.UnregisterWorker("w9"); !errors.Is(err, fairsched.ErrUnknownWorker) {
		t.Errorf("UnregisterWorker(w9) = %v, want ErrUnknownWorker", err)
	}
	want := []fairsched.WorkerSnapshot{{ID: "w1", Slots: []fairsched.SlotSnapshot{{Types: []fairsched.JobType{pdf}}}}}
	if diff := cmp.Diff(want, snapshot(t, s).Workers); diff != "" {
		t.Errorf("workers after the refusals (-want +got):\n%s", diff)
	}
}

// TestWorkerSlots plays spec 3's specialist example through the scheduler:
// PDF work waits for no_workers until a slot registers, each job takes the
// free slot that supports the fewest types, then work waits for
// worker_busy; an Index job takes the one versatile slot that supports it
// once that frees, and a type without workers runs as before.
func TestWorkerSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startScheduler(t, workerTypes(), fairsched.WithClock(clock.NewMock()))
		var ran []string
		gates := map[string]chan struct{}{}
		submit := func(typ fairsched.JobType, id string) {
			gates[id] = make(chan struct{})
			err := s.Submit(typ, id, func(ctx context.Context) error {
				w, i, ok := fairsched.SlotFromContext(ctx)
				ran = append(ran, fmt.Sprintf("%s on %s/%d (%v)", id, w, i, ok))
				<-gates[id]
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		finish := func(id string) {
			close(gates[id])
			synctest.Wait()
		}
		register := func(w fairsched.WorkerSpec) {
			if err := s.RegisterWorker(w); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		var waits []string
		reasons := func(at string) {
			for _, p := range snapshot(t, s).Pending {
				waits = append(waits, at+": "+p.ID+" "+string(p.Reason))
			}
		}
		submit(work, "plain")
		submit(pdf, "p0")
		reasons("no worker yet")
		register(fairsched.WorkerSpec{ID: "versatile", Slots: []fairsched.SlotSpec{slot(pdf, excel, index), slot(pdf, excel)}})
		register(fairsched.WorkerSpec{ID: "specialist", Slots: []fairsched.SlotSpec{slot(pdf)}})
		submit(pdf, "p1")
		submit(pdf, "p2")
		submit(index, "i1")
		submit(pdf, "p3")
		reasons("all taken")
		want := []fairsched.WorkerSnapshot{
			{ID: "versatile", Slots: []fairsched.SlotSnapshot{
				{Types: []fairsched.JobType{pdf, excel, index}, Type: pdf, ID: "p2"},
				{Types: []fairsched.JobType{pdf, excel}, Type: pdf, ID: "p0"}}},
			{ID: "specialist", Slots: []fairsched.SlotSnapshot{{Types: []fairsched.JobType{pdf}, Type: pdf, ID: "p1"}}},
		}
		if diff := cmp.Diff(want, snapshot(t, s).Workers); diff != "" {
			t.Errorf("Snapshot.Workers (-want +got):\n%s", diff)
		}
		finish("p1") // the specialist frees: p3 takes it; i1 still waits
		reasons("specialist freed")
		finish("p0") // versatile/1 frees: it does not take index
		submit(excel, "e1")
		finish("p2") // versatile/0 frees: i1 at last
		for _, id := range []string{"p3", "e1", "i1", "plain"} {
			finish(id)
		}
		wantRan := []string{
			"plain on /0 (false)",
			"p0 on versatile/1 (true)", // [pdf excel] takes fewer types than [pdf excel index]
			"p1 on specialist/0 (true)",
			"p2 on versatile/0 (true)", // the last free PDF slot
			"p3 on specialist/0 (true)",
			"e1 on versatile/1 (true)",
			"i1 on versatile/0 (true)",
		}
		if diff := cmp.Diff(wantRan, ran); diff != "" {
			t.Errorf("runs (-want +got):\n%s", diff)
		}
		wantWaits := []string{
			"no worker yet: p0 no_workers",
			"all taken: i1 worker_busy", "all taken: p3 worker_busy",
			"specialist freed: i1 worker_busy",
		}
		if diff := cmp.Diff(wantWaits, waits); diff != "" {
			t.Errorf("reasons (-want +got):\n%s", diff)
		}
	})
}

// TestWorkerLost: a worker crashes with two jobs on its slots. Both
// contexts end with ErrWorkerLost as the cause; the RunSync job, which does
// not retry, returns that error; the background job retries after its
// backoff, waits for no_workers (the lost slots came back to nobody when
// the jobs ended) and runs on the worker that registers next.
func TestWorkerLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		s := startScheduler(t, workerTypes(), fairsched.WithClock(mock))
		if err := s.RegisterWorker(fairsched.WorkerSpec{ID: "w1", Slots: []fairsched.SlotSpec{slot(pdf), slot(pdf)}}); err != nil {
			t.Fatal(err)
		}
		// Each job writes its own log: the two run at once.
		logs := map[string]*[]string{"a": new([]string), "b": new([]string)}
		fn := func(id string) func(context.Context) error {
			log := logs[id]
			return func(ctx context.Context) error {
				w, i, _ := fairsched.SlotFromContext(ctx)
				*log = append(*log, fmt.Sprintf("runs on %s/%d", w, i))
				if w == "w2" {
					return nil
				}
				<-ctx.Done()
				*log = append(*log, fmt.Sprintf("cancelled, cause %v", context.Cause(ctx)))
				return ctx.Err()
			}
		}
		result := make(chan error, 1)
		go func() { result <- s.RunSync(context.Background(), pdf, "a", "user", fn("a")) }()
		synctest.Wait()
		retry := fairsched.RetryPolicy{MaxAttempts: 2, MinBackoff: time.Second, MaxBackoff: time.Second}
		if err := s.Submit(pdf, "b", fn("b"), fairsched.WithRetry(retry)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if err := s.UnregisterWorker("w1"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		err := <-result
		if !errors.Is(err, fairsched.ErrWorkerLost) || !errors.Is(err, context.Canceled) {
			t.Errorf("RunSync = %v; want it to match ErrWorkerLost and context.Canceled", err)
		}
		if got, want := err.Error(), `fairsched: worker lost: "w1" slot 0: context canceled`; got != want {
			t.Errorf("RunSync = %q, want %q", got, want)
		}
		if row, ok := pendingRow(snapshot(t, s), "b"); !ok || row.Reason != fairsched.ReasonBackoff {
			t.Errorf("b after the crash: %+v; want pending for backoff", row)
		}
		mock.Add(time.Second)
		synctest.Wait()
		if row, ok := pendingRow(snapshot(t, s), "b"); !ok || row.Reason != fairsched.ReasonNoWorkers {
			t.Errorf("b after its backoff: %+v; want pending for no_workers", row)
		}
		if err := s.RegisterWorker(fairsched.WorkerSpec{ID: "w2", Slots: []fairsched.SlotSpec{slot(pdf)}}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		snap := snapshot(t, s)
		if len(snap.Pending)+len(snap.Running) != 0 {
			t.Errorf("left over: pending %v, running %v", snap.Pending, snap.Running)
		}
		want := map[string][]string{
			"a": {"runs on w1/0", `cancelled, cause fairsched: worker lost: "w1" slot 0`},
			"b": {"runs on w1/1", `cancelled, cause fairsched: worker lost: "w1" slot 1`, "runs on w2/0"},
		}
		got := map[string][]string{"a": *logs["a"], "b": *logs["b"]}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("logs (-want +got):\n%s", diff)
		}
	})
}
