package trace_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster/memback"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/trace"
)

// TestMain stops the throwaway PostgreSQL, if a test started one, then
// checks that no test left a goroutine behind.
func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// sleepFor is a job that runs for d of virtual time.
func sleepFor(d time.Duration) func(context.Context) error {
	return func(context.Context) error { time.Sleep(d); return nil }
}

type job struct {
	id, key string
	run     time.Duration
}

// play submits jobs at once on a scheduler of one slot recorded to w, runs
// them all, and returns the recorder's stats and Close error.
func play(t *testing.T, w interface{ Write([]byte) (int, error) }, jobs []job, opts ...trace.Option) (*trace.Recorder, error) {
	t.Helper()
	s := newScheduler(t)
	rec, err := trace.NewRecorder(s, w, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if err := s.Submit("render", j.id, sleepFor(j.run), fairsched.WithFairnessKey(j.key)); err != nil {
			t.Fatal(err)
		}
	}
	synctest.Wait()
	var total time.Duration
	for _, j := range jobs {
		total += j.run
	}
	time.Sleep(total) // every job has run: the scheduler never waited for the writer
	synctest.Wait()
	snap, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Running)+len(snap.Pending) != 0 {
		t.Errorf("jobs left after their run time: %d running, %d pending", len(snap.Running), len(snap.Pending))
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return rec, rec.Close(ctx)
}

// newScheduler starts a scheduler of one slot with the type "render".
func newScheduler(t *testing.T) *fairsched.Scheduler {
	t.Helper()
	s, err := fairsched.New(fairsched.WithMaxConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	if err := s.RegisterType("render", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 10}); err != nil {
		t.Fatal(err)
	}
	return s
}

var threeJobs = []job{{"a1", "acme/u1", 2 * time.Second}, {"b1", "bolt/u1", time.Second}, {"a2", "acme/u2", time.Second}}

// TestRecordRuns: each run is a line, in the order the runs ended, with
// its arrival, wait and run time; the tenant is what WithTenant says.
func TestRecordRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		start := time.Now()
		tenant := func(key string) string { return key[:4] }
		rec, err := play(t, &out, threeJobs, trace.WithTenant(tenant))
		if err != nil {
			t.Fatal(err)
		}
		stats := rec.Stats()
		got, err := trace.Read(&out)
		if err != nil {
			t.Fatal(err)
		}
		want := []trace.Record{
			{Type: "render", ID: "a1", Key: "acme/u1", Tenant: "acme", Arrival: start, Run: 2 * time.Second},
			{Type: "render", ID: "b1", Key: "bolt/u1", Tenant: "bolt", Arrival: start, Wait: 2 * time.Second, Run: time.Second},
			{Type: "render", ID: "a2", Key: "acme/u2", Tenant: "acme", Arrival: start, Wait: 3 * time.Second, Run: time.Second},
		}
		if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(trace.Record{}, "Cost")); diff != "" {
			t.Errorf("records (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(trace.Stats{Written: 3}, stats); diff != "" {
			t.Errorf("stats (-want +got):\n%s", diff)
		}
	})
}

type failingWriter struct{ calls int }

var errDiskFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) { w.calls++; return 0, errDiskFull }

// TestRecorderWriterFails: a writer that fails costs the records, counted,
// and nothing else: every job runs, Close returns the writer's error.
func TestRecorderWriterFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &failingWriter{}
		rec, err := play(t, w, threeJobs)
		stats := rec.Stats()
		if !errors.Is(err, errDiskFull) {
			t.Errorf("Close: %v, want %v", err, errDiskFull)
		}
		reg := prometheus.NewRegistry()
		reg.MustRegister(rec)
		want := fmt.Sprintf(`# HELP fairsched_trace_records_dropped_total Trace records dropped: the writer slow or failing, or the run's admission unseen (trace.Stats.Dropped).
# TYPE fairsched_trace_records_dropped_total counter
fairsched_trace_records_dropped_total 3
# HELP fairsched_trace_write_errors_total Calls to the trace writer that returned an error (trace.Stats.WriteErrors).
# TYPE fairsched_trace_write_errors_total counter
fairsched_trace_write_errors_total %d
`, w.calls)
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "fairsched_trace_records_dropped_total", "fairsched_trace_write_errors_total"); err != nil {
			t.Error(err)
		}
		if stats.Written != 0 || stats.Dropped != 3 || stats.WriteErrors != uint64(w.calls) || w.calls == 0 {
			t.Errorf("stats %+v after %d writes, want 3 dropped, none written, an error per write", stats, w.calls)
		}
	})
}

// stallingWriter blocks every Write until release is closed.
type stallingWriter struct {
	release chan struct{}
	buf     bytes.Buffer
}

func (w *stallingWriter) Write(p []byte) (int, error) {
	<-w.release
	return w.buf.Write(p)
}

// TestRecorderWriterStalls: a writer that never returns stalls no job:
// every job runs in its time, the lines beyond the pending bound are
// dropped and counted, and Close returns when its context ends.
func TestRecorderWriterStalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &stallingWriter{release: make(chan struct{})}
		s := newScheduler(t)
		rec, err := trace.NewRecorder(s, w, trace.WithMaxPendingBytes(1))
		if err != nil {
			t.Fatal(err)
		}
		const n = 50
		for i := range n {
			if err := s.Submit("render", string(rune('a'+i%26))+string(rune('a'+i/26)), sleepFor(time.Second), fairsched.WithFairnessKey("k")); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(n * time.Second)
		synctest.Wait()
		snap, err := s.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Running)+len(snap.Pending) != 0 {
			t.Errorf("a stalled writer held jobs up: %d running, %d pending after their run time", len(snap.Running), len(snap.Pending))
		}
		// The first run's line went to the stalled Write, the second's
		// waits, the bound of 1 byte full; the others were dropped as they
		// came.
		if diff := cmp.Diff(trace.Stats{Dropped: n - 2}, rec.Stats()); diff != "" {
			t.Errorf("stats while the writer stalls (-want +got):\n%s", diff)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := rec.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Close with the writer stalled: %v, want %v", err, context.DeadlineExceeded)
		}
		synctest.Wait()
		// The line that waited is dropped when Close gives up.
		if diff := cmp.Diff(trace.Stats{Dropped: n - 1}, rec.Stats()); diff != "" {
			t.Errorf("stats (-want +got):\n%s", diff)
		}
		close(w.release)
		synctest.Wait()
		if got, err := trace.Read(&w.buf); err != nil || len(got) != 1 {
			t.Errorf("the trace once the writer returned: %v records, %v; want the first run's", len(got), err)
		}
		if diff := cmp.Diff(trace.Stats{Written: 1, Dropped: n - 1}, rec.Stats()); diff != "" {
			t.Errorf("stats once the writer returned (-want +got):\n%s", diff)
		}
	})
}

// TestRecordInCluster: on a cluster instance (the in-memory backend, in
// virtual time) the recorder records the leader's runs of durable jobs,
// each with its key, tenant and run time, as in one process.
func TestRecordInCluster(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := memback.New()
		defer b.Close()
		cfg := fairsched.ClusterConfig{Domain: "trace", Instance: "one", Slots: 1, LeaseTTL: 2 * time.Second,
			Heartbeat: 200 * time.Millisecond, LostAfter: time.Second, Poll: 20 * time.Millisecond, ReportEvery: 5 * time.Millisecond}
		s, err := fairsched.New(fairsched.WithCluster(b, cfg), fairsched.WithMaxConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType("render", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 10}); err != nil {
			t.Fatal(err)
		}
		runFor := map[string]time.Duration{"a1": 2 * time.Second, "b1": time.Second}
		if err := s.RegisterHandler("render", func(ctx context.Context, j fairsched.Job) error {
			time.Sleep(runFor[j.ID])
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		rec, err := trace.NewRecorder(s, &out, trace.WithTenant(func(key string) string { return key[:4] }))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for _, j := range []struct{ id, key string }{{"a1", "acme/u1"}, {"b1", "bolt/u1"}} {
			if err := s.Enqueue(ctx, "render", j.id, nil, fairsched.WithFairnessKey(j.key)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Minute) // virtual: both have run
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if err := rec.Close(ctx); err != nil {
			t.Fatal(err)
		}
		got, err := trace.Read(&out)
		if err != nil {
			t.Fatal(err)
		}
		want := []trace.Record{
			{Type: "render", ID: "a1", Key: "acme/u1", Tenant: "acme", Run: 2 * time.Second},
			{Type: "render", ID: "b1", Key: "bolt/u1", Tenant: "bolt", Run: time.Second},
		}
		ignore := cmpopts.IgnoreFields(trace.Record{}, "Arrival", "Wait", "Cost")
		if diff := cmp.Diff(want, got, ignore); diff != "" {
			t.Errorf("records (-want +got):\n%s", diff)
		}
		if len(got) == 2 && got[1].Arrival.Add(got[1].Wait).Before(got[0].Arrival.Add(got[0].Wait+got[0].Run)) {
			t.Errorf("b1 admitted at %v, before a1 ended on the one slot: %+v", got[1].Arrival.Add(got[1].Wait), got)
		}
	})
}

// failOnce fails its first Write and takes the others.
type failOnce struct {
	failed bool
	buf    bytes.Buffer
}

func (w *failOnce) Write(p []byte) (int, error) {
	if !w.failed {
		w.failed = true
		return 0, errDiskFull
	}
	return w.buf.Write(p)
}

// TestRecorderWriterRecovers: a write that fails loses its batch only: the
// trace written after it still reads, header first, with every line the
// stats count as written.
func TestRecorderWriterRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &failOnce{}
		rec, err := play(t, w, threeJobs)
		if !errors.Is(err, errDiskFull) {
			t.Errorf("Close: %v, want %v", err, errDiskFull)
		}
		got, err := trace.Read(&w.buf)
		st := rec.Stats()
		if err != nil || uint64(len(got)) != st.Written || st.Written+st.Dropped != 3 || st.WriteErrors != 1 || st.Written == 0 {
			t.Errorf("read %d records (%v), stats %+v; want the written ones, 3 in all, one error", len(got), err, st)
		}
	})
}
