package clusterbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/pgstore"
)

// childEnv, when set, makes the harness binary (the command, or the test
// binary) one worker process of a run instead of the harness: its value is
// the childSpec as JSON.
const childEnv = "FAIRSCHED_BENCH_CHILD"

// childSpec is what a worker process runs: one River client or one
// fairsched cluster instance over URL, appending a line to Log when a job
// starts and when it ends.
type childSpec struct {
	System  string // "river" or "fairsched"
	Name    string // the instance's name, in its log lines
	URL     string
	Log     string
	Workers int           // River: the queue's MaxWorkers; fairsched: Slots
	Cap     int           // fairsched: WithMaxConcurrency (the cluster-wide cap)
	Types   int           // fairsched: the types t0 … t(Types-1), all alike
	Exclude bool          // fairsched: the types share one exclusive conflict group
	Work    time.Duration // how long each job sleeps (0: a no-op)
	SyncLog bool          // write each line at once (a kill -9 loses nothing)
	Domain  string
	Lease   time.Duration // fairsched LeaseTTL (0: the default)
	Poll    time.Duration // fairsched Poll
	Profile string        // a directory: write a CPU profile there
}

// IsChild says whether this process was started as a worker process of
// the harness; then call ChildMain and exit with its code.
func IsChild() bool { return os.Getenv(childEnv) != "" }

// benchArgs is River's job: its number in the run.
type benchArgs struct {
	Num int `json:"n"`
}

func (benchArgs) Kind() string { return "bench" }

// jobLine writes the executors' own log: "s <num> <instance> <unix-nanos>"
// at a start, "e …" at an end. Buffered — whole lines only, written every
// 10 ms, at 32 KiB and at exit — unless sync: then one write per line, which
// a kill -9 cannot lose. Each write(2) of whole lines to a file opened with
// O_APPEND lands whole, so the processes' lines never interleave.
type jobLine struct {
	mu   sync.Mutex
	f    *os.File
	buf  []byte
	name string
	sync bool
}

func (l *jobLine) write(kind byte, num int) {
	b := make([]byte, 0, 48)
	b = append(b, kind, ' ')
	b = strconv.AppendInt(b, int64(num), 10)
	b = append(b, ' ')
	b = append(b, l.name...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, time.Now().UnixNano(), 10)
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sync {
		_, _ = l.f.Write(b)
		return
	}
	l.buf = append(l.buf, b...)
	if len(l.buf) >= 32<<10 {
		l.flushLocked()
	}
}

func (l *jobLine) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked()
}

func (l *jobLine) flushLocked() {
	if len(l.buf) > 0 {
		_, _ = l.f.Write(l.buf)
		l.buf = l.buf[:0]
	}
}

func (l *jobLine) run(num int, work time.Duration, ctx context.Context) error {
	l.write('s', num)
	defer l.write('e', num)
	if work <= 0 {
		return nil
	}
	t := time.NewTimer(work)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// ChildMain runs this process as the worker process its environment
// describes, until its stdin closes (then it stops gracefully) or it is
// killed. It prints "ready" on stdout once it works.
func ChildMain() int {
	var spec childSpec
	if err := json.Unmarshal([]byte(os.Getenv(childEnv)), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "child %s: %v\n", spec.Name, err)
		return 1
	}
	if spec.Profile != "" {
		f, err := os.Create(filepath.Join(spec.Profile, spec.System+"-"+spec.Name+".cpu.pprof"))
		if err != nil {
			return fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return fail(err)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	f, err := os.OpenFile(spec.Log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	lg := &jobLine{f: f, name: spec.Name, sync: spec.SyncLog}
	stopFlush := make(chan struct{})
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				lg.flush()
			case <-stopFlush:
				lg.flush()
				return
			}
		}
	}()
	defer func() { close(stopFlush); <-flushed }()

	ctx := context.Background()
	switch spec.System {
	case "river":
		err = runRiver(ctx, spec, lg)
	case "fairsched":
		err = runFairsched(ctx, spec, lg)
	default:
		err = fmt.Errorf("unknown system %q", spec.System)
	}
	if err != nil {
		return fail(err)
	}
	return 0
}

// waitStdin prints ready and returns when the parent closes stdin.
func waitStdin() {
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// runRiver is a River client configured as `river bench` configures it
// (FetchCooldown 2 ms, FetchPollInterval 20 ms, one queue of Workers).
func runRiver(ctx context.Context, spec childSpec, lg *jobLine) error {
	pool, err := pgxpool.New(ctx, spec.URL)
	if err != nil {
		return err
	}
	defer pool.Close()
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, j *river.Job[benchArgs]) error {
		return lg.run(j.Args.Num, spec.Work, ctx)
	}))
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		FetchCooldown:     2 * time.Millisecond,
		FetchPollInterval: 20 * time.Millisecond,
		Logger:            slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: spec.Workers}},
		Workers:           workers,
	})
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	waitStdin()
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return client.Stop(sctx)
}

// fairschedTypes are the types of a run: t0 … t(n-1), one tier whose cap
// is the global cap (no policy beyond it), retried after a lost worker;
// with exclude, all in one exclusive conflict group.
func fairschedTypes(n, cap int, exclude bool) map[fairsched.JobType]fairsched.JobTypeConfig {
	cfg := fairsched.JobTypeConfig{Priority: fairsched.Priority(cap), DefaultCost: time.Millisecond,
		Retry: fairsched.RetryPolicy{MaxAttempts: 10, MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond}}
	if exclude {
		cfg.ConflictGroup = "res"
	}
	out := map[fairsched.JobType]fairsched.JobTypeConfig{}
	for i := range max(n, 1) {
		out[fairsched.JobType("t"+strconv.Itoa(i))] = cfg
	}
	return out
}

func clusterConfig(spec childSpec) fairsched.ClusterConfig {
	return fairsched.ClusterConfig{Domain: spec.Domain, Instance: spec.Name, Slots: spec.Workers,
		LeaseTTL: spec.Lease, Poll: spec.Poll}
}

// runFairsched is one instance of fairsched's cluster mode.
func runFairsched(ctx context.Context, spec childSpec, lg *jobLine) error {
	st, err := pgstore.Open(ctx, spec.URL)
	if err != nil {
		return err
	}
	defer st.Close()
	s, err := fairsched.New(fairsched.WithCluster(st, clusterConfig(spec)), fairsched.WithMaxConcurrency(spec.Cap))
	if err != nil {
		return err
	}
	handler := func(ctx context.Context, j fairsched.Job) error {
		num, err := strconv.Atoi(string(j.Payload))
		if err != nil {
			return err
		}
		return lg.run(num, spec.Work, ctx)
	}
	for t, c := range fairschedTypes(spec.Types, spec.Cap, spec.Exclude) {
		if err := s.RegisterType(t, c); err != nil {
			return err
		}
		if err := s.RegisterHandler(t, handler); err != nil {
			return err
		}
	}
	waitStdin()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return s.Close(cctx)
}
