package clusterbench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/internal/report"
	"github.com/fairsched/fairsched/pgstore"
)

const (
	insertBatch = 5_000 // River bench's batch
	window      = 2 * time.Second
	domain      = "bench"
	// sampleEvery is how often the cap scenario counts the running rows.
	// The count reads the whole table for both systems (a third of a
	// core at every 10 ms), which a run without a cap does not pay.
	sampleEvery = 50 * time.Millisecond
)

// runSpec is one run of one system in one scenario.
type runSpec struct {
	scenario int
	system   string // "river" or "fairsched"
	procs    int
	workers  int // per process: River MaxWorkers, fairsched Slots
	cap      int // fairsched's cluster-wide cap
	pre      int // jobs 1..pre inserted before the workers start
	// trickle jobs pre+1 … pre+trickle are inserted one at a time, evenly
	// over trickleOver, from the workers' start
	trickle     int
	trickleOver time.Duration
	continuous  time.Duration // continuous mode: run this long, refilling
	minAvail    int
	types       int
	exclude     bool
	work        time.Duration
	faults      bool
	lease       time.Duration
	poll        time.Duration
	sample      bool // sample the running rows every sampleEvery
	leaderFirst bool // fairsched's ClusterConfig.LeaderFirst
	// typeID names job num for fairsched (type index, id); key its tenant
	typeID func(num int) (int, string)
	key    func(num int) string
	res    func(num int32) int // the resource a job needs alone, for overlap counting
	small  func(num int) bool  // the small tenant's jobs
}

func (r runSpec) label() string {
	if r.system == "river" {
		if r.procs == 1 {
			return "River"
		}
		return fmt.Sprintf("River ×%d", r.procs)
	}
	if r.leaderFirst {
		return fmt.Sprintf("fairsched ×%d (leader first)", r.procs)
	}
	return fmt.Sprintf("fairsched ×%d", r.procs)
}

// Result is one run's figures.
type Result struct {
	Via        string // the path to PostgreSQL: ViaDirect or ViaProxy
	Scenario   int
	Mode       string // "burn-down" or "continuous"
	System     string
	Label      string
	Procs      int
	Jobs       int
	Seconds    float64 // workers' start to the last end (the run's length in continuous mode)
	Drained    float64 // workers' start to the database showing every job done
	JobsPerS   float64
	FirstS     float64   // workers' start to the first job's start
	SteadyPerS float64   // jobs over the first start to the last end (burn-down)
	Windows    []float64 // jobs/s per 2 s window
	WaitP50    time.Duration
	WaitP99    time.Duration
	SmallP50   time.Duration
	SmallP99   time.Duration
	Jain       float64
	RowsPerJ   float64
	WALPerJ    float64
	Peak       int            // most running at once (executors' log)
	SampledMx  int            // most running rows seen by sampling
	Overlaps   int            // starts while another job of the same resource ran
	Shares     map[string]int // jobs ended by each instance
	Dups       int            // extra starts
	DupsUnexp  int            // extra starts of jobs no kill interrupted
	Lost       int            // jobs never ended
	Stuck      int            // River: jobs left running after a kill
	Faults     []FaultFigure
	SmallWait  [][2]float64 // (insert time s, wait ms) of the small tenant's jobs
	Notes      []string
	Top        []string // pg_stat_statements, when asked
}

// FaultFigure is what a kill cost.
type FaultFigure struct {
	What        string
	Takeover    time.Duration // the lease held by another (leader kills)
	Resumed     time.Duration // the first start granted after the kill
	FirstStart  time.Duration // the first start of any job after the kill
	Interrupted int
	Restarted   time.Duration // the last interrupted job's restart
}

// child is one worker process.
type child struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	errf  string
	dead  bool
}

// harness is what every run shares.
type harness struct {
	base       string // the server's URL
	dir        string
	out        io.Writer
	profile    string
	statements int
	via        string // the path to PostgreSQL, for the results
}

func (h *harness) spawn(spec childSpec) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	js, _ := json.Marshal(spec)
	c := &child{name: spec.Name, errf: filepath.Join(h.dir, spec.System+"-"+spec.Name+".stderr")}
	errf, err := os.Create(c.errf)
	if err != nil {
		return nil, err
	}
	defer errf.Close()
	c.cmd = exec.Command(exe)
	c.cmd.Env = append(os.Environ(), childEnv+"="+string(js))
	c.cmd.Stderr = errf
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() && sc.Text() == "ready" {
			ready <- nil
		} else {
			ready <- errors.New("exited before it was ready")
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case err := <-ready:
		if err != nil {
			c.kill()
			b, _ := os.ReadFile(c.errf)
			return nil, fmt.Errorf("child %s %v: %s", spec.Name, err, b)
		}
	case <-time.After(60 * time.Second):
		c.kill()
		return nil, fmt.Errorf("child %s not ready in 60 s", spec.Name)
	}
	return c, nil
}

func (c *child) kill() time.Time {
	if c.dead {
		return time.Now()
	}
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	_ = c.cmd.Wait()
	c.dead = true
	return time.Now()
}

// stop closes the child's stdin and waits for it to leave (killing it
// after 40 s).
func (c *child) stop() error {
	if c.dead {
		return nil
	}
	_ = c.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		c.dead = true
		if err != nil {
			b, _ := os.ReadFile(c.errf)
			return fmt.Errorf("child %s: %v: %s", c.name, err, tail(b))
		}
		return nil
	case <-time.After(40 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
		c.dead = true
		return fmt.Errorf("child %s did not leave in 40 s", c.name)
	}
}

func tail(b []byte) []byte {
	if len(b) > 4000 {
		return b[len(b)-4000:]
	}
	return b
}

// inserter inserts jobs into one system's tables and remembers when each
// insert committed. The commit times are held by one goroutine (own): the
// inserting goroutines hand it their marks, times asks it for a copy, and
// close stops it.
type inserter struct {
	spec     runSpec
	river    *river.Client[pgxTx]
	st       *pgstore.Store
	issued   atomic.Int64
	marks    chan insertMark
	timesReq chan chan insertTimes
	stop     chan struct{} // closed by close
	done     chan struct{} // closed by the owner as it leaves
}

// insertMark is jobs nums committed at t (unix nanos).
type insertMark struct {
	nums []int
	t    int64
}

// insertTimes is the commit time per job number (0: not inserted).
type insertTimes []int64

func (ts insertTimes) at(n int) int64 {
	if n < len(ts) {
		return ts[n]
	}
	return 0
}

func newInserter(spec runSpec) *inserter {
	in := &inserter{spec: spec, marks: make(chan insertMark), timesReq: make(chan chan insertTimes),
		stop: make(chan struct{}), done: make(chan struct{})}
	go in.own()
	return in
}

func (in *inserter) own() {
	defer close(in.done)
	var at insertTimes
	for {
		select {
		case m := <-in.marks:
			for _, n := range m.nums {
				if n >= len(at) {
					at = append(at, make([]int64, max(n+1, 2*len(at))-len(at))...)
				}
				at[n] = m.t
			}
		case reply := <-in.timesReq:
			reply <- slices.Clone(at)
		case <-in.stop:
			return
		}
	}
}

// mark records that jobs nums committed at t; it returns once the owner
// has them, so a later times sees them.
func (in *inserter) mark(nums []int, t int64) {
	select {
	case in.marks <- insertMark{nums, t}:
	case <-in.done:
	}
}

// times is a copy of the commit times marked so far.
func (in *inserter) times() insertTimes {
	reply := make(chan insertTimes, 1)
	select {
	case in.timesReq <- reply:
		return <-reply
	case <-in.done:
		return nil
	}
}

// close stops the owner; call it once nothing inserts any more.
func (in *inserter) close() {
	close(in.stop)
	<-in.done
}

func (in *inserter) record(num int) *fairsched.JobRecord {
	typ, id := 0, strconv.Itoa(num)
	if in.spec.typeID != nil {
		typ, id = in.spec.typeID(num)
	}
	rec := &fairsched.JobRecord{Type: fairsched.JobType("t" + strconv.Itoa(typ)), ID: id,
		Payload: []byte(strconv.Itoa(num)), EnqueuedAt: time.Now().UTC()}
	if in.spec.key != nil {
		rec.Key = in.spec.key(num)
	}
	return rec
}

// insert inserts jobs from … to (inclusive) in one statement each system
// (the caller keeps batches at 5 000, as River's bench does): River's
// InsertMany, fairsched's InsertMany (what Scheduler.EnqueueMany does on
// any instance in cluster mode).
func (in *inserter) insert(ctx context.Context, from, to int) error {
	nums := make([]int, 0, to-from+1)
	for n := from; n <= to; n++ {
		nums = append(nums, n)
	}
	if in.river != nil {
		params := make([]river.InsertManyParams, 0, len(nums))
		for _, n := range nums {
			params = append(params, river.InsertManyParams{Args: benchArgs{Num: n}})
		}
		if _, err := in.river.InsertMany(ctx, params); err != nil {
			return err
		}
	} else {
		recs := make([]*fairsched.JobRecord, 0, len(nums))
		for _, n := range nums {
			recs = append(recs, in.record(n))
		}
		errs, err := in.st.ClusterBackend().InsertMany(ctx, recs)
		if err == nil {
			err = errors.Join(errs...)
		}
		if err != nil {
			return err
		}
	}
	in.mark(nums, time.Now().UnixNano())
	in.issued.Add(int64(len(nums)))
	return nil
}

func (in *inserter) insertBatches(ctx context.Context, from, to int) error {
	for lo := from; lo <= to; lo += insertBatch {
		if err := in.insert(ctx, lo, min(lo+insertBatch-1, to)); err != nil {
			return err
		}
	}
	return nil
}

// run does one run: a new database, the jobs pre-inserted, the worker
// processes started, the trickle or the refills, faults, and the figures.
func (h *harness) run(ctx context.Context, spec runSpec) (*Result, error) {
	if err := settle(ctx, h.base); err != nil {
		return nil, err
	}
	url, drop, err := newDatabase(ctx, h.base)
	if err != nil {
		return nil, err
	}
	defer drop()
	res := &Result{Via: h.via, Scenario: spec.scenario, System: spec.system, Label: spec.label(), Procs: spec.procs, Mode: "burn-down"}
	if spec.continuous > 0 {
		res.Mode = "continuous"
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, err
	}
	poolClosed := false
	defer func() {
		if !poolClosed {
			pool.Close()
		}
	}()
	in := newInserter(spec)
	defer in.close() // after stopBackground (deferred below): nothing inserts then
	var st *pgstore.Store
	doneQuery := `SELECT count(*) FROM fairsched_jobs`
	runningQuery := `SELECT count(*) FROM fairsched_jobs WHERE running`
	if spec.system == "river" {
		m, err := rivermigrate.New(riverpgxv5.New(pool), nil)
		if err != nil {
			return nil, err
		}
		if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
			return nil, err
		}
		pool.Reset() // the migrations' rows reach the counters before the run's start is read (readCost)
		if in.river, err = river.NewClient(riverpgxv5.New(pool), &river.Config{}); err != nil {
			return nil, err
		}
		doneQuery = `SELECT count(*) FROM river_job WHERE state NOT IN ('completed', 'discarded', 'cancelled')`
		runningQuery = `SELECT count(*) FROM river_job WHERE state = 'running'`
	} else {
		if st, err = pgstore.Open(ctx, url); err != nil {
			return nil, err
		}
		// Opened again: the first Open's migrations reach the counters
		// when its connections close, before the run's start is read.
		st.Close()
		if st, err = pgstore.Open(ctx, url); err != nil {
			return nil, err
		}
		defer st.Close()
		in.st = st
	}
	if h.statements > 0 {
		if err := enableStatements(ctx, url); err != nil {
			fmt.Fprintf(h.out, "  (pg_stat_statements unavailable: %v)\n", err)
		}
	}
	// The schema's rows (migrations, settings) are not a job's cost: the
	// run's start is read once they are counted.
	before, err := readCost(ctx, url, true)
	if err != nil {
		return nil, err
	}

	// Pre-insert.
	total := spec.pre + spec.trickle
	if spec.continuous > 0 {
		total = spec.minAvail
	}
	if spec.pre > 0 || spec.continuous > 0 {
		if err := in.insertBatches(ctx, 1, max(spec.pre, total*boolInt(spec.continuous > 0))); err != nil {
			return nil, fmt.Errorf("pre-inserting: %w", err)
		}
	}

	// The workers.
	logPath := filepath.Join(h.dir, fmt.Sprintf("s%d-%s-%d.log", spec.scenario, spec.system, time.Now().UnixNano()))
	col := newCollector(logPath)
	children := map[string]*child{}
	var names []string
	t0 := time.Now()
	defer func() {
		for _, c := range children {
			c.kill()
		}
	}()
	for i := range spec.procs {
		name := fmt.Sprintf("%c%d", spec.system[0], i+1)
		profile := ""
		if h.profile != "" {
			profile = filepath.Join(h.profile, fmt.Sprintf("s%d-%s-%s-%s-%s.cpu.pprof", spec.scenario, res.Mode, h.via, spec.system, name))
		}
		c, err := h.spawn(childSpec{System: spec.system, Name: name, URL: url, Log: logPath, Workers: spec.workers,
			Cap: spec.cap, Types: spec.types, Exclude: spec.exclude, Work: spec.work, SyncLog: spec.faults,
			Domain: domain, Lease: spec.lease, Poll: spec.poll, LeaderFirst: spec.leaderFirst, Profile: profile})
		if err != nil {
			return nil, err
		}
		children[name] = c
		names = append(names, name)
	}
	if st != nil { // the first instance's lease: measured from the first spawn, the election included
		for deadline := time.Now().Add(30 * time.Second); ; {
			if _, _, live, err := st.ClusterBackend().Leader(ctx, domain); err == nil && live {
				break
			}
			if time.Now().After(deadline) {
				return nil, errors.New("no leader in 30 s")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	t0ns := t0.UnixNano()

	// Background work during the run: the trickle, the refills, the sampler.
	bg, stopBG := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var bgErr atomic.Value
	if spec.trickle > 0 {
		wg.Go(func() {
			// From the first start on: a system that dispatches nothing
			// for a while after starting (fairsched's first read of the
			// instances) shows it in "first start", not in the small
			// tenant's wait.
			for col.ends() == 0 && bg.Err() == nil {
				time.Sleep(5 * time.Millisecond)
			}
			gap := spec.trickleOver / time.Duration(spec.trickle)
			next := time.Now()
			for n := spec.pre + 1; n <= spec.pre+spec.trickle; n++ {
				select {
				case <-bg.Done():
					return
				case <-time.After(time.Until(next)):
				}
				next = next.Add(gap)
				if err := in.insert(bg, n, n); err != nil && bg.Err() == nil {
					bgErr.Store(err)
					return
				}
			}
		})
	}
	var inserted atomic.Int64
	inserted.Store(int64(total))
	if spec.continuous > 0 {
		wg.Go(func() { // River bench's refill: every 250 ms, batches until minAvail are waiting
			for {
				select {
				case <-bg.Done():
					return
				case <-time.After(250 * time.Millisecond):
				}
				for int(inserted.Load())-col.ends() < spec.minAvail && bg.Err() == nil {
					from := int(inserted.Load()) + 1
					if err := in.insert(bg, from, from+insertBatch-1); err != nil {
						if bg.Err() == nil {
							bgErr.Store(err)
						}
						return
					}
					inserted.Add(insertBatch)
				}
			}
		})
	}
	var sampled atomic.Int64
	if spec.sample {
		wg.Go(func() {
			t := time.NewTicker(sampleEvery)
			defer t.Stop()
			for {
				select {
				case <-bg.Done():
					return
				case <-t.C:
				}
				var n int64
				if err := pool.QueryRow(bg, runningQuery).Scan(&n); err == nil && n > sampled.Load() {
					sampled.Store(n)
				}
			}
		})
	}
	stopBackground := func() {
		stopBG()
		wg.Wait()
	}
	defer stopBackground()

	// Watch the log until done, killing as the fault scenario says.
	type kill struct {
		name            string
		at, reaped      time.Time
		takeover        time.Time
		interrupted     []int32
		granted         []int32
		endsAtKill      int
		leaderKill      bool
		resumeCandidate int64
	}
	var kills []*kill
	phase := 0
	lastProgress, lastEnds := time.Now(), 0
	deadline := time.Now().Add(10*time.Minute + time.Duration(total)*2*time.Millisecond) // a failure guard
	for {
		if err := col.poll(); err != nil {
			return nil, err
		}
		if v := bgErr.Load(); v != nil {
			return nil, v.(error)
		}
		ends := col.ends()
		if spec.continuous > 0 {
			if time.Since(t0) >= spec.continuous {
				break
			}
		} else if spec.faults && spec.system == "river" && phase == 1 {
			// The rest ended; the killed process's jobs (those it ran and
			// those it had fetched) stay running: done when none is
			// available and no end came for a second.
			if time.Since(lastProgress) > time.Second {
				var n int
				if err := pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE state = 'available'`).Scan(&n); err != nil {
					return nil, err
				}
				if n == 0 {
					break
				}
			}
		} else if ends >= total {
			break
		}
		if ends != lastEnds {
			lastProgress, lastEnds = time.Now(), ends
		}
		if time.Now().After(deadline) || time.Since(lastProgress) > 60*time.Second && !(spec.faults && spec.system == "river") {
			return nil, fmt.Errorf("%s: %d of %d jobs ended, none for %v: %s", spec.label(), ends, total,
				time.Since(lastProgress).Round(time.Second), h.diagnose(ctx, pool, spec, col, total))
		}
		if spec.faults {
			live := func(name string) bool { c := children[name]; return c != nil && !c.dead }
			doKill := func(name string, leader bool) error {
				k := &kill{name: name, interrupted: col.openOn(name), endsAtKill: ends, leaderKill: leader}
				k.at = time.Now()
				k.reaped = children[name].kill()
				if st != nil {
					gs, err := grantedTo(ctx, st, domain, name)
					if err != nil {
						return err
					}
					for _, g := range gs {
						n, _ := strconv.Atoi(string(g.Record.Payload))
						k.granted = append(k.granted, int32(n))
					}
				}
				kills = append(kills, k)
				return nil
			}
			switch {
			case spec.system == "river" && phase == 0 && ends >= total/5:
				for _, name := range names {
					if len(col.openOn(name)) > 0 {
						if err := doKill(name, false); err != nil {
							return nil, err
						}
						phase = 1
						break
					}
				}
			case spec.system == "fairsched" && phase == 0 && ends >= total/5:
				holder, _, ok, err := leaderName(ctx, st, domain)
				if err == nil && ok && live(holder) && len(col.openOn(holder)) > 0 {
					if err := doKill(holder, true); err != nil {
						return nil, err
					}
					phase = 1
				}
			case spec.system == "fairsched" && phase == 1:
				holder, _, ok, err := leaderName(ctx, st, domain)
				if err == nil && ok && live(holder) {
					kills[0].takeover = time.Now()
					phase = 2
				}
			case spec.system == "fairsched" && phase == 2 && ends >= kills[0].endsAtKill+total/5:
				holder, _, ok, err := leaderName(ctx, st, domain)
				if err != nil || !ok {
					break
				}
				for _, name := range names {
					if name != holder && live(name) && len(col.openOn(name)) > 0 {
						if err := doKill(name, false); err != nil {
							return nil, err
						}
						phase = 3
						break
					}
				}
			}
		}
		time.Sleep(10 * time.Millisecond) // polling the log
	}
	lastEnd := time.Now()
	stopBackground()
	if spec.continuous == 0 {
		// Until the database shows every job done (the ends reported and applied).
		for {
			var n int
			if err := pool.QueryRow(ctx, doneQuery).Scan(&n); err != nil {
				return nil, err
			}
			if spec.faults && spec.system == "river" {
				if err := pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE state = 'available'`).Scan(&n); err != nil {
					return nil, err
				}
			}
			if n == 0 {
				break
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("%s: %d jobs not done in the database", spec.label(), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
		res.Drained = time.Since(t0).Seconds()
		if spec.faults && spec.system == "river" {
			// Wait a moment for late completions, then count what stays running.
			time.Sleep(time.Second)
			var n int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE state = 'running'`).Scan(&n); err != nil {
				return nil, err
			}
			res.Stuck = n
		}
	}
	for _, name := range names {
		if err := children[name].stop(); err != nil {
			return nil, err
		}
	}
	if err := col.poll(); err != nil {
		return nil, err
	}
	if h.statements > 0 {
		if top, err := topStatements(ctx, url, h.statements); err == nil {
			res.Top = top
		}
	}
	if st != nil {
		st.Close()
	}
	pool.Close()
	poolClosed = true
	after, err := readCost(ctx, url, true)
	if err != nil {
		return nil, err
	}

	// The figures.
	ins := in.times()
	var lastTS int64
	var endTimes []int64
	seenEnd := map[int32]bool{}
	res.Shares = map[string]int{}
	for _, e := range col.events {
		if !e.start && !seenEnd[e.num] {
			seenEnd[e.num] = true
			res.Shares[col.names[e.inst]]++
			endTimes = append(endTimes, e.ts)
			lastTS = max(lastTS, e.ts)
		}
	}
	if spec.continuous > 0 {
		limit := t0ns + int64(spec.continuous)
		endTimes = slices.DeleteFunc(endTimes, func(ts int64) bool { return ts > limit })
		res.Jobs = len(endTimes)
		res.Seconds = spec.continuous.Seconds()
	} else {
		res.Jobs = total
		if spec.faults && spec.system == "river" {
			res.Jobs = len(endTimes) // the stuck ones never ran
		}
		res.Seconds = time.Duration(lastTS - t0ns).Seconds()
	}
	_ = lastEnd
	res.JobsPerS = float64(res.Jobs) / res.Seconds
	if first := firstStartAfter(col, t0ns); first > 0 {
		res.FirstS = time.Duration(int64(first) - t0ns).Seconds()
		if spec.continuous == 0 && res.Seconds > res.FirstS {
			res.SteadyPerS = float64(res.Jobs) / (res.Seconds - res.FirstS)
		}
	}
	for _, ts := range endTimes {
		w := int(time.Duration(ts-t0ns) / window)
		for len(res.Windows) <= w {
			res.Windows = append(res.Windows, 0)
		}
		res.Windows[w] += 1 / window.Seconds()
	}
	if res.Jobs > 0 {
		res.RowsPerJ = float64(after.rows-before.rows) / float64(res.Jobs)
		res.WALPerJ = float64(after.wal-before.wal) / float64(res.Jobs)
	}
	// Waits: from the insert's commit (for a job inserted before the workers
	// started, from their start) to the job's first start.
	var waits, smallWaits []time.Duration
	for n := 1; n < len(col.starts) && n <= int(inserted.Load()); n++ {
		if col.starts[n] == 0 {
			continue
		}
		at := max(ins.at(n), t0ns)
		w := time.Duration(max(col.firstStart[n]-at, 0))
		waits = append(waits, w)
		if spec.small != nil && spec.small(n) {
			smallWaits = append(smallWaits, w)
			res.SmallWait = append(res.SmallWait, [2]float64{time.Duration(at - t0ns).Seconds(), float64(w) / float64(time.Millisecond)})
		}
		if col.starts[n] > 1 {
			res.Dups += int(col.starts[n] - 1)
		}
	}
	if spec.continuous == 0 {
		for n := 1; n <= total; n++ {
			if n >= len(col.ended) || !col.ended[n] {
				res.Lost++
			}
		}
	}
	res.WaitP50, res.WaitP99 = percentile(waits, 50), percentile(waits, 99)
	res.SmallP50, res.SmallP99 = percentile(smallWaits, 50), percentile(smallWaits, 99)
	if spec.small != nil {
		res.Jain = jainOfShares(col, spec, ins, t0ns)
	}
	cut := map[string]int64{}
	for _, k := range kills {
		cut[k.name] = k.reaped.UnixNano()
	}
	res.Peak, res.Overlaps = peakAndOverlaps(col.intervals(cut), spec.res)
	res.SampledMx = int(sampled.Load())
	if spec.faults {
		if len(kills) == 0 { // the jobs all ended before a process could be caught running one
			res.Notes = append(res.Notes, "no process was killed: no kill found a process running a job")
		} else if spec.system == "river" {
			res.Lost = 0
			res.Notes = append(res.Notes, fmt.Sprintf("killed %s with %d jobs running: they stay 'running' until River's rescuer (RescueStuckJobsAfter, 1 h by default) retries them", kills[0].name, len(kills[0].interrupted)))
		}
		interrupted := map[int32]bool{}
		for _, k := range kills {
			for _, n := range k.interrupted {
				interrupted[n] = true
			}
			for _, n := range k.granted {
				interrupted[n] = true
			}
			f := FaultFigure{What: "executor " + k.name, Interrupted: len(k.interrupted)}
			if k.leaderKill {
				f.What = "leader " + k.name
			}
			f.FirstStart = firstStartAfter(col, k.at.UnixNano()) - time.Duration(0)
			f.FirstStart = time.Duration(int64(f.FirstStart) - k.at.UnixNano())
			if !k.takeover.IsZero() {
				f.Takeover = k.takeover.Sub(k.at)
				f.Resumed = time.Duration(int64(firstStartAfter(col, k.takeover.UnixNano())) - k.at.UnixNano())
			} else {
				f.Resumed = f.FirstStart
			}
			// The last restart of a job the kill interrupted.
			for _, e := range col.events {
				if e.start && e.ts > k.at.UnixNano() && (slices.Contains(k.interrupted, e.num) || slices.Contains(k.granted, e.num)) {
					f.Restarted = max(f.Restarted, time.Duration(e.ts-k.at.UnixNano()))
				}
			}
			f.Interrupted = len(uniq(append(slices.Clone(k.interrupted), k.granted...)))
			res.Faults = append(res.Faults, f)
		}
		for n := 1; n < len(col.starts); n++ {
			if col.starts[n] > 1 && !interrupted[int32(n)] {
				res.DupsUnexp += int(col.starts[n] - 1)
			}
		}
	}
	return res, nil
}

func uniq(xs []int32) []int32 {
	slices.Sort(xs)
	return slices.Compact(xs)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// firstStartAfter is the unix-nanos of the first start line after ts.
func firstStartAfter(c *collector, ts int64) time.Duration {
	best := int64(0)
	for _, e := range c.events {
		if e.start && e.ts > ts && (best == 0 || e.ts < best) {
			best = e.ts
		}
	}
	return time.Duration(best)
}

func percentile(xs []time.Duration, p int) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := (p*len(s) + 99) / 100
	return s[max(rank, 1)-1]
}

// jainOfShares is Jain's index over the tenants of each one's service
// divided by its max-min fair share: in each 2 s window, the jobs started
// are the capacity, each tenant's demand is its jobs waiting at some point
// of the window (those waiting at its start and those inserted in it), and
// the fair shares fill the capacity by water-filling (a tenant that wants
// less than an equal split gets what it wants; the rest is split among the
// others). 1.00: every tenant got its fair share; 0.5 with two tenants:
// one got all.
func jainOfShares(c *collector, spec runSpec, ins insertTimes, t0 int64) float64 {
	tenant := func(n int) int { return boolInt(spec.small(n)) }
	var served, fair [2]float64
	type win struct{ demand, started [2]int }
	wins := map[int]*win{}
	get := func(w int) *win {
		if wins[w] == nil {
			wins[w] = &win{}
		}
		return wins[w]
	}
	last := 0
	for n := 1; n < len(c.starts) && n <= spec.pre+spec.trickle; n++ {
		if c.starts[n] == 0 {
			continue
		}
		at := max(ins.at(n), t0)
		from, to := int(time.Duration(at-t0)/window), int(time.Duration(c.firstStart[n]-t0)/window)
		for w := from; w <= to; w++ {
			get(w).demand[tenant(n)]++
		}
		get(to).started[tenant(n)]++
		last = max(last, to)
	}
	for w := 0; w <= last; w++ {
		x := wins[w]
		if x == nil || x.demand[0] == 0 || x.demand[1] == 0 {
			continue // fairness between tenants means something only while both wait
		}
		capacity := float64(x.started[0] + x.started[1])
		d := [2]float64{float64(x.demand[0]), float64(x.demand[1])}
		var f [2]float64
		lo, hi := 0, 1
		if d[1] < d[0] {
			lo, hi = 1, 0
		}
		f[lo] = min(d[lo], capacity/2)
		f[hi] = min(d[hi], capacity-f[lo])
		for t := range 2 {
			served[t] += float64(x.started[t])
			fair[t] += f[t]
		}
	}
	var xs []float64
	for t := range 2 {
		if fair[t] > 0 {
			xs = append(xs, min(served[t]/fair[t], 1))
		}
	}
	return report.Jain(xs)
}

// diagnose describes the jobs that have not ended: what the log and the
// database say of them.
func (h *harness) diagnose(ctx context.Context, pool *pgxpool.Pool, spec runSpec, col *collector, total int) string {
	var missing []string
	for n := 1; n <= total && len(missing) < 10; n++ {
		if n >= len(col.ended) || !col.ended[n] {
			st := int32(0)
			if n < len(col.starts) {
				st = col.starts[n]
			}
			missing = append(missing, fmt.Sprintf("job %d (%d starts)", n, st))
		}
	}
	q := `SELECT seq::text || ' ' || type || '/' || id || ' state ' || state || ' running ' || running || ' on ' || coalesce(instance, '-') ||
		' attempt ' || attempt || ' end ' || coalesce(end_instance, '-') || '/' || coalesce(end_attempt::text, '-') || '/' || coalesce(end_kind::text, '-') ||
		' record attempt ' || coalesce(record->>'attempt', '-') || ' payload ' || coalesce(record->>'payload', '-') FROM fairsched_jobs ORDER BY seq LIMIT 10`
	if spec.system == "river" {
		q = `SELECT id::text || ' ' || state || ' ' || args::text || ' attempt ' || attempt FROM river_job WHERE state <> 'completed' ORDER BY id LIMIT 10`
	}
	rows := queryStrings(ctx, pool, q)
	var inst []string
	if spec.system == "fairsched" {
		inst = append(queryStrings(ctx, pool, `SELECT row_to_json(i)::text FROM fairsched_instances i`),
			queryStrings(ctx, pool, `SELECT row_to_json(l)::text FROM fairsched_leader l`)...)
	}
	return fmt.Sprintf("not ended in the log: %v; in the database: %v; %v", missing, rows, inst)
}

// queryStrings returns the text column q selects, nothing on an error.
func queryStrings(ctx context.Context, pool *pgxpool.Pool, q string) []string {
	rs, err := pool.Query(ctx, q)
	if err != nil {
		return nil
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var s string
		if rs.Scan(&s) == nil {
			out = append(out, s)
		}
	}
	return out
}

// The database knows each process as an incarnation of its instance's
// name: the name, "#" and a random suffix. The children are named.

// nameOf is the instance name of incarnation id.
func nameOf(id string) string {
	if i := strings.LastIndexByte(id, '#'); i >= 0 {
		return id[:i]
	}
	return id
}

// leaderName is Store.Leader with the holder's instance name.
func leaderName(ctx context.Context, st *pgstore.Store, domain string) (string, int64, bool, error) {
	holder, epoch, live, err := st.ClusterBackend().Leader(ctx, domain)
	return nameOf(holder), epoch, live, err
}

// grantedTo returns the grants held by the incarnations of instance name
// (a killed child's stays listed until it is declared lost).
func grantedTo(ctx context.Context, st *pgstore.Store, domain, name string) ([]cluster.Grant, error) {
	ins, err := st.ClusterBackend().Instances(ctx, domain)
	if err != nil {
		return nil, err
	}
	var out []cluster.Grant
	for _, in := range ins {
		if nameOf(in.ID) != name {
			continue
		}
		gs, err := st.ClusterBackend().Granted(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, gs...)
	}
	return out, nil
}
