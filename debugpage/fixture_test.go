package debugpage_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/fairsched/fairsched"
)

// The known state of the scheduler the tests look at, on a mock clock:
//
//   - clone (MaxConcurrency 1, conflict group git, priority 8): "linux" runs
//     for client 10.0.0.7 in group tenants; "git.git" (client 10.0.0.9) and
//     scriptID wait for type_limit; scriptID's client 10.0.0.7 may run one
//     job at a time (WithKeyLimits), so tenant_limit holds it too;
//   - repack (conflict group git, priority 4): "linux" waits for conflict
//     with the running clone of linux, in group batch;
//   - render (needs a worker; render-1 has one slot for it): "report-1"
//     runs there and "report-2" waits for worker_busy.
//
// Jobs arrive 30 s apart so that their waits differ; the snapshot is taken
// 90 s after the first arrival.
const (
	clone  fairsched.JobType = "clone"
	repack fairsched.JobType = "repack"
	render fairsched.JobType = "render"

	// scriptID is a job id that must reach the page escaped.
	scriptID = `<script>alert("x")</script>`
)

// start is the mock clock's time when a test's scheduler starts.
var start = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

type fixture struct {
	s     *fairsched.Scheduler
	clock *advancer
}

// want is what the fixture's pending jobs wait for, by id, in rank order:
// the headline reason, then the others.
var want = []struct {
	typ    fairsched.JobType
	id     string
	reason fairsched.Reason
	also   []fairsched.Reason
}{
	{clone, "git.git", fairsched.ReasonTypeLimit, nil},
	{clone, scriptID, fairsched.ReasonTypeLimit, []fairsched.Reason{fairsched.ReasonTenantLimit}},
	{render, "report-2", fairsched.ReasonWorkerBusy, nil},
	{repack, "linux", fairsched.ReasonConflict, nil},
}

// newScheduler starts a scheduler on a mock clock whose jobs block until
// the test ends; the cleanup releases them and closes the scheduler.
func newScheduler(t *testing.T, opts ...fairsched.Option) (*fairsched.Scheduler, *advancer, func(context.Context) error) {
	t.Helper()
	mock := clock.NewMock()
	mock.Set(start) // in UTC: the page shows the same times whatever the machine's zone
	s, err := fairsched.New(append([]fairsched.Option{fairsched.WithClock(mock)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	sync := func() {
		// Submit only sends: a snapshot, answered after every earlier
		// message, makes sure the submissions are in before the clock moves.
		if _, err := s.Snapshot(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	release := make(chan struct{})
	t.Cleanup(func() {
		close(release)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	block := func(ctx context.Context) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}
	return s, &advancer{mock, sync}, block
}

// advancer moves the mock clock once the scheduler has taken in every
// message sent before.
type advancer struct {
	mock *clock.Mock
	sync func()
}

func (a *advancer) Add(d time.Duration) {
	a.sync()
	a.mock.Add(d)
	a.sync()
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	s, mock, block := newScheduler(t,
		fairsched.WithMaxConcurrency(16),
		fairsched.WithGroupWeight("tenants", 3),
		fairsched.WithGroupWeight("batch", 1),
		fairsched.WithKeyWeight("10.0.0.9", 2),
		fairsched.WithKeyLimits("10.0.0.7", fairsched.TenantLimits{MaxRunning: 1}),
	)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.RegisterType(clone, fairsched.JobTypeConfig{DefaultCost: 10 * time.Second, MaxConcurrency: 1, ConflictGroup: "git", Priority: 8}))
	must(s.RegisterType(repack, fairsched.JobTypeConfig{DefaultCost: 20 * time.Second, MaxConcurrency: 2, ConflictGroup: "git", Priority: 4}))
	must(s.RegisterType(render, fairsched.JobTypeConfig{DefaultCost: 5 * time.Second, Priority: 5, RequiresWorker: true}))
	must(s.RegisterWorker(fairsched.WorkerSpec{ID: "render-1", Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{render}}}}))

	// Submit returns before the owner has taken the job, and the owner
	// takes every message waiting in one turn: two Submits in one turn
	// join their fairness keys before either job is charged, in separate
	// turns after. Each Submit here waits for its turn to end (a Snapshot
	// is answered after every earlier message), so the keys' costs are
	// the same in every run.
	submit := func(t2 fairsched.JobType, id string, opts ...fairsched.JobOption) {
		t.Helper()
		must(s.Submit(t2, id, block, opts...))
		if _, err := s.Snapshot(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	submit(clone, "linux", fairsched.InGroup("tenants"), fairsched.WithFairnessKey("10.0.0.7"))
	submit(render, "report-1")
	mock.Add(30 * time.Second)
	submit(repack, "linux", fairsched.InGroup("batch"))
	submit(clone, "git.git", fairsched.InGroup("tenants"), fairsched.WithFairnessKey("10.0.0.9"))
	mock.Add(30 * time.Second)
	submit(render, "report-2")
	submit(clone, scriptID, fairsched.InGroup("tenants"), fairsched.WithFairnessKey("10.0.0.7"))
	mock.Add(30 * time.Second)
	return fixture{s: s, clock: mock}
}

func (f fixture) snapshot(t *testing.T) fairsched.Snapshot {
	t.Helper()
	snap, err := f.s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// checkFixture fails the test unless the scheduler is in the state the
// tests expect, so that a change of the scheduler's rules shows here first.
func checkFixture(t *testing.T, snap fairsched.Snapshot) {
	t.Helper()
	if len(snap.Pending) != len(want) {
		t.Fatalf("fixture: %d pending jobs, want %d: %+v", len(snap.Pending), len(want), snap.Pending)
	}
	for i, w := range want {
		p := snap.Pending[i]
		reasons := append([]fairsched.Reason{w.reason}, w.also...)
		if p.Type != w.typ || p.ID != w.id || p.Reason != w.reason || !slices.Equal(p.Reasons, reasons) {
			t.Errorf("fixture: pending[%d] = %s %q (%s %q), want %s %q (%s %q)", i, p.Type, p.ID, p.Reason, p.Reasons, w.typ, w.id, w.reason, reasons)
		}
	}
	if len(snap.Running) != 2 || snap.Running[0].ID != "linux" || snap.Running[1].ID != "report-1" || snap.Running[1].Worker != "render-1" {
		t.Errorf("fixture: running = %+v, want clone linux and render report-1 on render-1", snap.Running)
	}
}

// newRichScheduler starts a scheduler whose snapshot sets every duration a
// Snapshot has — a type's default cost, queue timeout and retry backoffs,
// aging's grace period and interval, accumulated and estimated costs, a
// learned cost estimate — and the optional parts that the JSON omits when
// unset: tiers, an adaptive limit, aging, key weights, a paused group and
// a worker. Its
// snapshot is taken 70 s after the start: "fetch-1" runs since 0:10 and
// "fetch-2" waits since 0:10 for the type's cap.
func newRichScheduler(t *testing.T) *fairsched.Scheduler {
	t.Helper()
	s, mock, block := newScheduler(t,
		fairsched.WithMaxConcurrency(4),
		fairsched.WithAdaptiveLimit(fairsched.AdaptiveLimitConfig{Min: 1, Max: 4}),
		fairsched.WithTier(2, fairsched.TierConfig{MinShare: 0.25, BurstShare: 0.5, Preempt: &fairsched.PreemptBudget{Max: 1, Window: time.Minute}}),
		fairsched.WithAging(fairsched.AgingConfig{GracePeriod: 30 * time.Second, Interval: 1500 * time.Millisecond, MaxEffectivePriority: 9}),
		fairsched.WithKeyWeight("tenant-a", 2),
	)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.RegisterType("fetch", fairsched.JobTypeConfig{
		DefaultCost: 2 * time.Second, MaxConcurrency: 1, Priority: 2, QueueTimeout: time.Hour,
		Retry: fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: 250 * time.Millisecond, MaxBackoff: 90 * time.Second, Jitter: 0.5},
	}))
	must(s.RegisterType(render, fairsched.JobTypeConfig{DefaultCost: 5 * time.Second, Priority: 1, RequiresWorker: true, ConflictGroup: "pages", ConflictMode: fairsched.ConflictShared}))
	must(s.RegisterWorker(fairsched.WorkerSpec{ID: "render-1", Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{render}}}}))
	must(s.PauseGroup("held"))

	// A job that runs for 3 s and ends: its cost is learned.
	done := make(chan struct{})
	must(s.Submit("fetch", "warm-up", func(ctx context.Context) error {
		select {
		case <-done:
		case <-ctx.Done():
		}
		return nil
	}, fairsched.WithFairnessKey("tenant-a")))
	mock.Add(3 * time.Second)
	close(done)
	mock.Add(7 * time.Second)

	must(s.Submit("fetch", "fetch-1", block, fairsched.WithFairnessKey("tenant-a")))
	must(s.Submit("fetch", "fetch-2", block, fairsched.WithFairnessKey("tenant-b")))
	must(s.Submit(render, "page-1", block, fairsched.InGroup("held")))
	mock.Add(time.Minute)
	return s
}
