package clusterbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
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
	// LeaderFirst: fairsched's ClusterConfig.LeaderFirst (jobs on the
	// leader's own instance while it has a free slot).
	LeaderFirst bool
	Profile     string // a file: write a CPU profile there
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
// 10 ms, at 32 KiB and at close — unless sync: then one write per line,
// straight from the caller, which a kill -9 cannot lose. Each write(2) of
// whole lines to a file opened with O_APPEND lands whole, so the processes'
// lines never interleave. Buffered, the buffer is held by one goroutine
// (own): the callers hand it their lines, and close stops it once it has
// written all it was handed.
type jobLine struct {
	f     *os.File
	name  string
	sync  bool
	lines chan []byte   // buffered: the callers' lines, to the owner
	stop  chan struct{} // closed by close: the owner writes what it holds and leaves
	done  chan struct{} // closed by the owner as it leaves
}

func newJobLine(f *os.File, name string, sync bool) *jobLine {
	l := &jobLine{f: f, name: name, sync: sync}
	if !sync {
		l.lines = make(chan []byte, 256)
		l.stop = make(chan struct{})
		l.done = make(chan struct{})
		go l.own()
	}
	return l
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
	if l.sync {
		_, _ = l.f.Write(b)
		return
	}
	select {
	case l.lines <- b:
	case <-l.done: // after close: dropped, as a line buffered after the last flush was
	}
}

// own holds the buffer: it appends the lines handed to it and writes them
// every 10 ms, at 32 KiB, and when close stops it.
func (l *jobLine) own() {
	defer close(l.done)
	var buf []byte
	flush := func() {
		if len(buf) > 0 {
			_, _ = l.f.Write(buf)
			buf = buf[:0]
		}
	}
	add := func(b []byte) {
		buf = append(buf, b...)
		if len(buf) >= 32<<10 {
			flush()
		}
	}
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case b := <-l.lines:
			add(b)
		case <-t.C:
			flush()
		case <-l.stop:
			for {
				select {
				case b := <-l.lines:
					add(b)
				default:
					flush()
					return
				}
			}
		}
	}
}

// close stops the owner (buffered) once it has written every line handed to
// it; call it before the file closes.
func (l *jobLine) close() {
	if l.sync {
		return
	}
	close(l.stop)
	<-l.done
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
		f, err := os.Create(spec.Profile)
		if err != nil {
			return fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return fail(err)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
		// And where it allocated (go tool pprof -sample_index=alloc_space).
		defer func() {
			if h, err := os.Create(strings.TrimSuffix(spec.Profile, ".cpu.pprof") + ".heap.pprof"); err == nil {
				_ = pprof.Lookup("allocs").WriteTo(h, 0)
				h.Close()
			}
		}()
	}
	f, err := os.OpenFile(spec.Log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	lg := newJobLine(f, spec.Name, spec.SyncLog)
	defer lg.close()

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
		LeaseTTL: spec.Lease, Poll: spec.Poll, LeaderFirst: spec.LeaderFirst}
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
