package cluster_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/cluster/memback"
)

var (
	memsimRSSeeds = flag.Int("memsimrs.seeds", 3, "seeds of TestMemSimRunSync (make memsim runs thousands)")
	memsimRSFirst = flag.Int("memsimrs.first", 0, "the first seed of TestMemSimRunSync")
	memsimRSLog   = flag.Bool("memsimrs.log", false, "TestMemSimRunSync: log the instances' warnings (shown with a failure, or with -v)")
)

// TestMemSimRunSync runs RunSync calls on 3 instances of one in-memory
// backend in virtual time (testing/synctest) under a global cap: calls
// of an ordinary type and of a coalescing one on a few shared ids (so that
// callers on different instances join one run), functions that succeed or
// fail, callers that leave. Faults come while they run: an instance's
// heartbeats failing (long enough, in some seeds, for its executor to
// fence up, or for it to be declared lost), the leader's grants failing,
// the reads of grants, finals and the reports of ends stalled.
// Invariants (rsWorkload.check): every call is answered; a caller gets nil
// only if a function for its (type, id) returned nil, and a function's
// error only from a run of its (type, id) — its own for the ordinary type;
// a function runs twice for one call only if an attempt was interrupted;
// never more running than the cap.
func TestMemSimRunSync(t *testing.T) {
	for seed := *memsimRSFirst; seed < *memsimRSFirst+*memsimRSSeeds; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { memsimRunSync(t, uint64(seed)) })
		})
	}
}

// The workload's sizes and times (virtual). A correct scheduler answers
// every call within seconds; a call still open at rsDeadline is a hang.
const (
	rsCalls    = 30
	rsCap      = 2
	rsIDs      = 3 // the shared ids of the coalescing type
	rsDeadline = 2 * time.Minute
)

// rsCall is one RunSync call of the workload and what became of it.
type rsCall struct {
	i     int
	inst  int // the instance it is made on
	typ   fairsched.JobType
	id    string
	fails bool          // its function returns an error (rsCall.errText)
	work  time.Duration // how long its function runs
	deaf  bool          // its function runs on when its context ends
	leave time.Duration // its caller cancels after this; 0: never

	// Filled in as it goes (under rsWorkload.mu).
	answered    bool
	err         error   // what RunSync returned
	starts      int     // attempts of its function
	interrupted int     // attempts stopped by their context
	results     []error // what its attempts that ran to the end returned
}

// errText is the error call c's function fails with: it names the call,
// so that a caller's error says whose function it came from.
func (c *rsCall) errText() string { return fmt.Sprintf("remote: not found (call %d)", c.i) }

// rsWorkload is the calls and the shared record of the functions running.
type rsWorkload struct {
	mu      sync.Mutex
	calls   []*rsCall
	running int
	peak    int
}

// fn is call c's function: it runs for c.work unless its context ends
// first (c.deaf: even then), and fails or not as c says.
func (w *rsWorkload) fn(c *rsCall) func(context.Context) error {
	return func(ctx context.Context) error {
		w.mu.Lock()
		c.starts++
		w.running++
		w.peak = max(w.peak, w.running)
		w.mu.Unlock()
		// It counts against the cap until it returns or is stopped: a
		// deaf one runs on, but its slot is free once its instance is
		// declared lost.
		var once sync.Once
		leave := func() {
			once.Do(func() {
				w.mu.Lock()
				w.running--
				w.mu.Unlock()
			})
		}
		defer leave()
		defer context.AfterFunc(ctx, leave)()
		stopped := ctx.Done()
		if c.deaf {
			stopped = nil
		}
		select {
		case <-time.After(c.work):
			var err error
			if c.fails {
				err = errors.New(c.errText())
			}
			w.mu.Lock()
			c.results = append(c.results, err)
			if ctx.Err() != nil {
				c.interrupted++ // stopped, though it ran to its end
			}
			w.mu.Unlock()
			return err
		case <-stopped:
			w.mu.Lock()
			c.interrupted++
			w.mu.Unlock()
			return context.Cause(ctx)
		}
	}
}

// plan draws the calls of a seed: instance, type, id, outcome, duration,
// and whether and when the caller leaves.
func (w *rsWorkload) plan(rng *rand.Rand, instances int) {
	for i := range rsCalls {
		c := &rsCall{i: i, inst: rng.IntN(instances), fails: rng.IntN(3) == 0,
			work: time.Duration(rng.IntN(150)) * time.Millisecond, deaf: rng.IntN(3) == 0}
		if rng.IntN(3) == 0 {
			c.typ, c.id = "plain", fmt.Sprint("p", i)
		} else {
			c.typ, c.id = "fetch", fmt.Sprint("f", rng.IntN(rsIDs))
		}
		if rng.IntN(6) == 0 {
			c.leave = time.Duration(1+rng.IntN(300)) * time.Millisecond
		}
		w.calls = append(w.calls, c)
	}
}

// call makes RunSync call c on s and records its answer.
func (w *rsWorkload) call(s *fairsched.Scheduler, c *rsCall) {
	ctx, cancel := context.WithTimeout(context.Background(), rsDeadline)
	defer cancel()
	if c.leave > 0 {
		stop := time.AfterFunc(c.leave, cancel)
		defer stop.Stop()
	}
	err := s.RunSync(ctx, c.typ, c.id, "", w.fn(c))
	w.mu.Lock()
	c.answered, c.err = true, err
	w.mu.Unlock()
}

// check tests the invariants over the calls, all answered. lost: an
// instance was silent long enough to be declared lost, so its calls and
// the waiters of its runs may end with ErrWorkerLost.
func (w *rsWorkload) check(t *testing.T, lost bool) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.peak > rsCap {
		t.Errorf("peak %d running, cap %d", w.peak, rsCap)
	}
	// returned: the (type, id)s whose function returned nil at least once,
	// and each error text a function returned, with its call.
	returned := map[string]bool{}
	failedWith := map[string]*rsCall{}
	left := map[string]bool{} // the (type, id)s with a caller that left
	for _, c := range w.calls {
		if c.leave > 0 {
			left[string(c.typ)+"/"+c.id] = true
		}
		for _, err := range c.results {
			if err == nil {
				returned[string(c.typ)+"/"+c.id] = true
			} else {
				failedWith[err.Error()] = c
			}
		}
	}
	for _, c := range w.calls {
		what := fmt.Sprintf("call %d (%s %s on n%d, fails %v, leaves %v)", c.i, c.typ, c.id, c.inst, c.fails, c.leave)
		if c.starts > 1 && c.interrupted == 0 {
			t.Errorf("%s: its function ran %d times, never interrupted", what, c.starts)
		}
		switch {
		case !c.answered:
			t.Errorf("%s: not answered", what)
		case errors.Is(c.err, context.DeadlineExceeded):
			t.Errorf("%s: never answered (a hang)", what)
		case errors.Is(c.err, context.Canceled):
			if c.leave == 0 {
				t.Errorf("%s: %v, its caller never left", what, c.err)
			}
		case c.err == nil:
			if !returned[string(c.typ)+"/"+c.id] {
				t.Errorf("%s: nil, but no function of %s %s returned nil", what, c.typ, c.id)
			}
		case lost && errors.Is(c.err, fairsched.ErrWorkerLost):
		case c.typ == "fetch" && left["fetch/"+c.id] && c.err.Error() == context.Canceled.Error():
			// The run's caller left after its function started: the run
			// ends so, and its waiters with it.
		default:
			from := failedWith[rsNamed(c.err)]
			switch {
			case from == nil:
				t.Errorf("%s: %v, which no function returned", what, c.err)
			case from.typ != c.typ || from.id != c.id:
				t.Errorf("%s: %v, of another (type, id)", what, c.err)
			case c.typ == "plain" && from != c:
				t.Errorf("%s: %v, another call's", what, c.err)
			}
		}
	}
}

// rsNamed is the function's own error text in err: the leader's words
// around it cut off.
func rsNamed(err error) string {
	s := err.Error()
	if i := strings.Index(s, "remote: not found (call "); i >= 0 {
		return s[i:]
	}
	return s
}

func memsimRunSync(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 77))
	b := memback.New()
	defer b.Close()
	// The leaders' word that an instance was lost: its calls, and the
	// waiters of its runs, may end with ErrWorkerLost then.
	seen, losses := observer.New(zap.WarnLevel)
	log := zap.New(seen)
	if *memsimRSLog {
		log = zap.New(zapcore.NewTee(seen, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)).Core()))
	}
	var nodes []*fairsched.Scheduler
	var links []*faulty
	for i := range 3 {
		f := &faulty{b: b}
		links = append(links, f)
		s, err := fairsched.New(fairsched.WithCluster(link{f}, fast("rs", fmt.Sprint("n", i), 3)),
			fairsched.WithMaxConcurrency(rsCap), fairsched.WithLogger(log.With(zap.String("node", fmt.Sprint("n", i)))))
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, s)
		for typ, coalesce := range map[fairsched.JobType]bool{"plain": false, "fetch": true} {
			if err := s.RegisterType(typ, fairsched.JobTypeConfig{Priority: 8, DefaultCost: time.Millisecond, Coalesce: coalesce}); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer func() {
		for _, s := range nodes {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_ = s.Close(ctx)
			cancel()
		}
	}()
	w := &rsWorkload{}
	w.plan(rng, len(nodes))
	faults := rsFaults(rng, b, links)
	var wg sync.WaitGroup
	for _, c := range w.calls {
		wg.Go(func() { w.call(nodes[c.inst], c) })
		time.Sleep(time.Duration(rng.IntN(100)) * time.Millisecond) // virtual: the callers' pace
	}
	wg.Wait()
	faults()
	w.check(t, losses.FilterMessage("instance lost").Len() > 0)
}

// rsFaults starts a seed's faults, each at a random time in the first
// seconds of the workload, each ending itself, and returns a func that
// cancels those not started yet.
//   - an instance's heartbeats hang (faulty.slow) for 0.3 s (no fence),
//     0.9 s (its executor fences up: LostAfter − 2 beats is 0.6 s; with
//     the beats on either side it may be silent past LostAfter, 1 s) or
//     3 s (the leader declares it lost);
//   - the leader's grants fail a few times;
//   - the reads of grants or of finals, or the reports of ends, stall for
//     up to a second.
func rsFaults(rng *rand.Rand, b *memback.Backend, links []*faulty) (end func()) {
	var timers []*time.Timer
	at := func() time.Duration { return time.Duration(rng.IntN(3000)) * time.Millisecond }
	for range 1 + rng.IntN(2) {
		f := links[rng.IntN(len(links))]
		d := []time.Duration{300 * time.Millisecond, 900 * time.Millisecond, 3 * time.Second}[rng.IntN(3)]
		timers = append(timers, time.AfterFunc(at(), func() {
			f.slow.Store(true)
			time.AfterFunc(d, func() { f.slow.Store(false) })
		}))
	}
	n := 1 + rng.IntN(5)
	timers = append(timers, time.AfterFunc(at(), func() { b.Fail("Grant", n, nil) }))
	for _, m := range []string{"Granted", "GrantsSince", "Finals", "ReportEnds"} {
		if rng.IntN(2) == 0 {
			continue
		}
		d := time.Duration(rng.IntN(1000)) * time.Millisecond
		timers = append(timers, time.AfterFunc(at(), func() { time.AfterFunc(d, b.Stall(m)) }))
	}
	return func() {
		for _, tm := range timers {
			tm.Stop()
		}
	}
}
