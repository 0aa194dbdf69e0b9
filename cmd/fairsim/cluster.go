package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/internal/report"
	"github.com/fairsched/fairsched/internal/scenario"
	"github.com/fairsched/fairsched/pgstore"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// The cluster play (-cluster N): one scenario played for real — wall
// clock, durable jobs in PostgreSQL — on N instances of one cluster
// domain in this process. Every instance registers the scenario's types
// and a handler for each; the jobs are enqueued at their arrival, in turn
// from each instance; a handler sleeps the job's duration (one scenario
// second is -step of wall clock) and writes its start and end to a log the
// instances share, from which the play counts the jobs per instance, the
// peak concurrency against the caps and each key's waits. The leader's
// snapshots, sampled while the jobs run, say which instance runs each job.

// clusterConfig is what the flags say of a cluster play.
type clusterConfig struct {
	instances int
	db        string        // a database's URL; "": FAIRSCHED_TEST_DATABASE_URL or a throwaway cluster
	step      time.Duration // one scenario second; 0: chosen from the scenario's length
	slots     int           // each instance's; 0: the scenario's global cap
	heartbeat time.Duration // the instances' heartbeat; 0: defaultHeartbeat
	log       io.Writer     // the instances' records (zap, development), or nil
}

// startDB is where the play gets a database when -db names none; tests
// replace it.
var startDB = pgtest.Start

// Timings of the play's cluster. The heartbeat (-heartbeat) sets the
// others: a lease of 5 heartbeats, an instance lost after 4 silent ones.
// It is also how long the leader gives each database call (a batch of
// grants, a read of the ends), so it is longer than the library's tests
// use: on a loaded machine a batch of grants can take a few hundred
// milliseconds.
const (
	defaultHeartbeat = time.Second
	poll             = 20 * time.Millisecond
	reportEvery      = 5 * time.Millisecond
	// maxPlay bounds the play once the cluster is up; autoPlay is the wall
	// time a step is chosen for (the in-process makespan in scenario
	// seconds times the step).
	maxPlay  = 20 * time.Second
	autoPlay = 6 * time.Second
	autoStep = 200 * time.Millisecond
	minStep  = 20 * time.Millisecond
)

// usageError is a scenario or flag the cluster play cannot take (exit 2).
type usageError struct{ error }

// clusterSupports says why sc cannot be played on a cluster, or nil.
func clusterSupports(sc scenario.Scenario) error {
	var why []string
	if len(sc.Script) > 0 {
		why = append(why, "it changes the scheduler during the run (a script)")
	}
	if len(sc.Workers) > 0 {
		why = append(why, "it registers workers (cluster mode has no worker slots yet)")
	}
	for _, j := range sc.Jobs {
		if j.Refused {
			why = append(why, fmt.Sprintf("job %s is to be refused at once, which a durable job never is", j.Name()))
			break
		}
	}
	if len(why) > 0 {
		return usageError{fmt.Errorf("%s cannot play on a cluster: %s", sc.Name, strings.Join(why, "; "))}
	}
	return nil
}

// clusterPlay plays sc on cfg.instances instances and writes what happened
// to w: status 1 when a check failed. Without a database it writes one line
// saying so and returns 0.
func clusterPlay(ctx context.Context, sc scenario.Scenario, cfg clusterConfig, w io.Writer) (status int, err error) {
	if err := clusterSupports(sc); err != nil {
		return 2, err
	}
	// The same scenario in one process, in virtual time: what the cluster
	// is compared with, and how long the play will be.
	ref, err := report.Play(sc, scenario.Poll, nil)
	if err != nil {
		return 2, fmt.Errorf("%s in one process: %w", sc.Name, err)
	}
	step := cfg.step
	if step == 0 {
		step = autoStep
		if m := time.Duration(max(ref.Makespan, 1)); m*step > autoPlay {
			step = max((autoPlay / m).Truncate(time.Millisecond), minStep)
		}
	}
	if time.Duration(ref.Makespan)*step > maxPlay/2 {
		return 2, usageError{fmt.Errorf("%s lasts %d scenario seconds: at -step %v that is over %v of wall clock; give a shorter -step",
			sc.Name, ref.Makespan, step, maxPlay/2)}
	}
	slots := cfg.slots
	if slots == 0 {
		slots = cmp.Or(sc.MaxConcurrency, 16)
	}

	url, where := cfg.db, "the database -db names"
	if url == "" {
		u, stop, err := startDB()
		if errors.Is(err, pgtest.ErrUnavailable) {
			fmt.Fprintf(w, "fairsim -cluster: skipped %s: %v\n", sc.Name, err)
			return 0, nil
		}
		if err != nil {
			return 1, err
		}
		defer stop()
		url, where = u, "a throwaway PostgreSQL cluster started from the installed binaries"
		if os.Getenv("FAIRSCHED_TEST_DATABASE_URL") != "" {
			where = "a new database in the server FAIRSCHED_TEST_DATABASE_URL names"
		}
	}

	hb := cmp.Or(cfg.heartbeat, defaultHeartbeat)
	plog := newPlayLog(sc)
	go plog.run()
	defer plog.stop() // after the instances have closed (deferred below)
	p := &play{sc: sc, step: step, log: plog, records: cfg.log,
		timing: fairsched.ClusterConfig{LeaseTTL: 5 * hb, Heartbeat: hb, LostAfter: 4 * hb, Poll: poll, ReportEvery: reportEvery}}
	defer func() { err = errors.Join(err, p.close()) }()
	domain := fmt.Sprintf("fairsim-%s-%d", sc.Name, os.Getpid())
	if err := p.join(ctx, url, domain, cfg.instances, slots); err != nil {
		return 1, err
	}
	leader, err := p.waitReady(ctx)
	if err != nil {
		return 1, err
	}
	cluster := leader.snap.Cluster
	fmt.Fprintf(w, "%s on a cluster of %d instances over PostgreSQL (%s)\n", sc.Name, cfg.instances, where)
	fmt.Fprintf(w, "  %s\n", sc.Title)
	fmt.Fprintf(w, "  domain %s: leader %s at epoch %d%s; %d instances, %d slots each, with handlers for %s\n",
		cluster.Domain, cluster.Leader, cluster.Epoch, p.followersAgree(ctx, cluster), len(cluster.Instances), slots,
		strings.Join(cluster.Instances[0].Types, ", "))
	fmt.Fprintf(w, "  one scenario second is %v of wall clock; %d durable jobs, each enqueued at its arrival by the next instance in turn\n",
		step, len(sc.Jobs))

	elapsed, playErr := p.run(ctx, leader.m, ref.Makespan)
	l := p.log
	l.freeze() // read from here on; a handler still running changes nothing
	ran := 0
	for _, n := range l.starts {
		if n > 0 {
			ran++
		}
	}
	fmt.Fprintf(w, "  %d of %d jobs ran in %v; in one process they take %d scenario seconds, %v at this step\n",
		ran, len(sc.Jobs), elapsed.Round(time.Millisecond), ref.Makespan, time.Duration(ref.Makespan)*step)
	if playErr != nil {
		fmt.Fprintf(w, "  the play stopped: %v\n", playErr)
	}

	// Per instance.
	perInstance := map[string]int{}
	for _, in := range l.instanceOf {
		if in != "" {
			perInstance[in]++
		}
	}
	slotsOf := map[string]int{}
	for _, in := range cluster.Instances {
		slotsOf[in.ID] = in.Slots
	}
	fmt.Fprintln(w, "\nPer instance (jobs from the handlers' log; slots and the most running at once from the leader's snapshots):")
	fmt.Fprintln(w, "  instance       jobs  slots  most running  leader")
	for _, m := range p.members {
		lead := ""
		if m.id == cluster.Leader {
			lead = "yes"
		}
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("  %-12s %6d %6d %13d  %s", m.id, perInstance[m.id], slotsOf[m.id], p.mostRunning[m.id], lead), " "))
	}

	// Peaks against the caps.
	var typePeaks []string
	typesOver := []string{}
	for _, t := range sc.Types {
		peak := l.typePeak[t.Name]
		if c := t.Config.MaxConcurrency; c > 0 {
			typePeaks = append(typePeaks, fmt.Sprintf("%s %d of %d", t.Name, peak, c))
			if peak > c {
				typesOver = append(typesOver, fmt.Sprintf("%s ran %d at once, its cap is %d", t.Name, peak, c))
			}
		} else {
			typePeaks = append(typePeaks, fmt.Sprintf("%s %d (no cap)", t.Name, peak))
		}
	}
	capText := "no global cap"
	if sc.MaxConcurrency > 0 {
		capText = fmt.Sprintf("the cap %d", sc.MaxConcurrency)
	}
	fmt.Fprintf(w, "\nPeak concurrency, from the handlers' shared start/end log: %d of %s; per type %s\n",
		l.peak, capText, strings.Join(typePeaks, ", "))

	// Per key, against one process.
	fmt.Fprintf(w, "\nPer key: jobs, how many ran, and their waits from arrival to start in scenario seconds (%v each),\n", step)
	fmt.Fprintln(w, "on the cluster and in one in-process scheduler playing the same scenario in virtual time:")
	fmt.Fprintln(w, "  key             jobs   ran   wait p50  wait p95  wait max  |  one process: p50  p95  max")
	refKeys := map[string]report.Stats{}
	for _, k := range ref.Keys {
		refKeys[k.Name] = k
	}
	for _, key := range l.keys() {
		var waits []float64
		jobs, done := 0, 0
		for i, j := range sc.Jobs {
			if j.Key != key {
				continue
			}
			jobs++
			if l.ended[i] {
				done++
				waits = append(waits, float64(l.startAt[i]-l.arrivalAt[i])/float64(step))
			}
		}
		slices.Sort(waits)
		r := refKeys[report.KeyName(key)]
		fmt.Fprintf(w, "  %-14s %5d %5d %10s %9s %9s  |  %16d %4d %4d\n", report.KeyName(key), jobs, done,
			seconds(percentile(waits, 50)), seconds(percentile(waits, 95)), seconds(percentile(waits, 100)),
			r.WaitP50, r.WaitP95, r.WaitMax)
	}

	fmt.Fprintf(w, "\nWhile the jobs ran, %d snapshots of the leader showed up to %d running at once, %d times a running job with its instance\n",
		p.sightings, p.mostSnapRunning, len(p.seen))

	// Checks.
	var checks []string
	check := func(ok bool, text string) {
		verdict := "ok  "
		if !ok {
			verdict = "FAIL"
			status = 1
		}
		checks = append(checks, verdict+" "+text)
	}
	var twice []string
	for i, n := range l.starts {
		if n > 1 {
			twice = append(twice, fmt.Sprintf("%s %d times", sc.Jobs[i].Name(), n))
		}
	}
	check(ran == len(sc.Jobs) && len(twice) == 0 && playErr == nil, fmt.Sprintf("every job ran exactly once: %d of %d ran%s",
		ran, len(sc.Jobs), listed(", but ", twice)))
	switch {
	case sc.MaxConcurrency > 0:
		check(l.peak <= sc.MaxConcurrency && len(typesOver) == 0,
			fmt.Sprintf("peak concurrency %d ≤ cap %d, and no type above its cap%s%s", l.peak, sc.MaxConcurrency, listed(": ", typesOver),
				listed("; running when over the cap: ", l.overCap)))
	default:
		check(len(typesOver) == 0, fmt.Sprintf("no type above its cap%s", listed(": ", typesOver)))
	}
	check(len(l.overlaps) == 0, "no conflicting jobs ran at once (on one id of a conflict group, an exclusive one beside another)"+listed(": ", l.overlaps))
	var counts, idle []string
	for _, m := range p.members {
		counts = append(counts, fmt.Sprintf("%s %d", m.id, perInstance[m.id]))
		if perInstance[m.id] == 0 {
			idle = append(idle, m.id)
		}
	}
	if l.peak >= len(p.members) {
		// The leader places each job on the instance with the most free
		// slots: once as many run at once as there are instances, they
		// have spread.
		check(len(idle) == 0, "every instance ran some: "+strings.Join(counts, ", "))
	} else {
		checks = append(checks, fmt.Sprintf("(not checked: every instance ran some; at most %d jobs ran at once, fewer than the %d instances: %s)",
			l.peak, len(p.members), strings.Join(counts, ", ")))
	}
	mismatched := 0
	for _, s := range p.seen {
		if i := l.which(s); i < 0 || l.instanceOf[i] != s.instance {
			mismatched++
		}
	}
	check(len(p.seen) > 0 && mismatched == 0, fmt.Sprintf(
		"the leader's snapshots named each running job's instance: %d sightings, %d not matching the handlers' log", len(p.seen), mismatched))
	fmt.Fprintf(w, "\nchecks:\n  %s\n", strings.Join(checks, "\n  "))
	return status, nil
}

// listed is "" for no items, else prefix and the items.
func listed(prefix string, items []string) string {
	if len(items) == 0 {
		return ""
	}
	return prefix + strings.Join(items, "; ")
}

// seconds writes scenario seconds to a tenth, "—" for none.
func seconds(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// percentile is the nearest-rank percentile of sorted, as the report
// takes it; NaN for none.
func percentile(sorted []float64, p int) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := (p*len(sorted) + 99) / 100
	return sorted[max(i, 1)-1]
}

// member is one instance of the play's cluster.
type member struct {
	id string
	s  *fairsched.Scheduler
	st *pgstore.Store
}

// play is one cluster play under way.
type play struct {
	sc      scenario.Scenario
	step    time.Duration
	log     *playLog
	members []*member
	timing  fairsched.ClusterConfig // the instances' timings

	records io.Writer // the instances' records, or nil

	// From the leader's snapshots while the jobs run: how many were taken,
	// the most running at once, overall and per instance, and every
	// running job seen with the instance the snapshot names (written by
	// the sampling goroutine, read once run has returned).
	sightings       int
	mostSnapRunning int
	mostRunning     map[string]int
	seen            []sighting
}

// sighting is a running job in a leader's snapshot, with the instance it
// names and when the snapshot was taken (since the first arrival).
type sighting struct {
	typ      fairsched.JobType
	id, key  string
	instance string
	at       time.Duration
}

// join starts n instances of domain over url, each with the scenario's
// types and a handler for every one.
func (p *play) join(ctx context.Context, url, domain string, n, slots int) error {
	for i := range n {
		id := fmt.Sprintf("fairsim-%d", i+1)
		st, err := pgstore.Open(ctx, url)
		if err != nil {
			return fmt.Errorf("opening the database: %w", err)
		}
		if i == 0 {
			// pgstore keeps one table of jobs per database, whatever the
			// domain: the leader would adopt jobs found there.
			if jobs, err := st.CountJobs(ctx); err != nil || jobs > 0 {
				st.Close()
				return cmp.Or(err, fmt.Errorf("the database holds %d jobs already: give the play an empty database", jobs))
			}
		}
		cfg := p.timing
		cfg.Domain, cfg.Instance, cfg.Slots = domain, id, slots
		opts := []fairsched.Option{fairsched.WithCluster(st, cfg)}
		if p.records != nil {
			opts = append(opts, fairsched.WithLogger(p.logger(id)))
		}
		s, err := fairsched.New(p.sc.SchedulerOptions(opts...)...)
		if err != nil {
			st.Close()
			return fmt.Errorf("starting instance %s: %w", id, err)
		}
		m := &member{id: id, s: s, st: st}
		p.members = append(p.members, m)
		for _, t := range p.sc.Types {
			if err := s.RegisterType(t.Name, t.Config); err != nil {
				return fmt.Errorf("%s: %w", id, err)
			}
			if err := s.RegisterHandler(t.Name, p.handler(id)); err != nil {
				return fmt.Errorf("%s: %w", id, err)
			}
		}
	}
	return nil
}

// logger writes instance id's records to p.records, one line each.
func (p *play) logger(id string) *zap.Logger {
	enc := zap.NewDevelopmentEncoderConfig()
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.Lock(zapcore.AddSync(p.records)), zap.DebugLevel)
	return zap.New(core).Named(id)
}

// handler runs a job on instance id: it logs the start, sleeps the job's
// duration and logs the end.
func (p *play) handler(id string) fairsched.Handler {
	return func(ctx context.Context, j fairsched.Job) error {
		i, err := strconv.Atoi(string(j.Payload))
		if err != nil || i < 0 || i >= len(p.sc.Jobs) {
			return fairsched.Permanent(fmt.Errorf("payload %q names no job of the scenario", j.Payload))
		}
		p.log.start(i, id)
		t := time.NewTimer(time.Duration(p.sc.Jobs[i].Duration) * p.step)
		defer t.Stop()
		select {
		case <-t.C:
			p.log.end(i, true)
			return nil
		case <-ctx.Done():
			p.log.end(i, false)
			return context.Cause(ctx)
		}
	}
}

// leaderState is the leader and its snapshot.
type leaderState struct {
	m    *member
	snap fairsched.Snapshot
}

// waitReady waits until an instance leads and counts every instance with
// a handler for every type, so that the first jobs spread.
func (p *play) waitReady(ctx context.Context) (leaderState, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	for {
		for _, m := range p.members {
			snap, err := m.s.Snapshot(ctx)
			if err != nil || snap.Cluster == nil || !snap.Cluster.Leading || len(snap.Cluster.Instances) != len(p.members) {
				continue
			}
			ready := true
			for _, in := range snap.Cluster.Instances {
				ready = ready && len(in.Types) == len(p.sc.Types)
			}
			if ready {
				return leaderState{m, snap}, nil
			}
		}
		select {
		case <-ctx.Done():
			return leaderState{}, fmt.Errorf("no leader counting all %d instances and their handlers in 15s: %w", len(p.members), ctx.Err())
		case <-time.After(20 * time.Millisecond): // polling the cluster's own state
		}
	}
}

// followersAgree says whether every other instance names the leader and
// epoch of c.
func (p *play) followersAgree(ctx context.Context, c *fairsched.ClusterSnapshot) string {
	var differ []string
	for _, m := range p.members {
		if m.id == c.Instance {
			continue
		}
		snap, err := m.s.Snapshot(ctx)
		switch {
		case err != nil:
			differ = append(differ, fmt.Sprintf("%s: %v", m.id, err))
		case snap.Cluster == nil || snap.Cluster.Leader != c.Leader || snap.Cluster.Epoch != c.Epoch:
			differ = append(differ, fmt.Sprintf("%s sees %+v", m.id, snap.Cluster))
		}
	}
	if len(differ) > 0 {
		return " (" + strings.Join(differ, "; ") + ")"
	}
	if len(p.members) == 1 {
		return ""
	}
	return " (the followers agree)"
}

// run enqueues the jobs at their arrivals and waits for their ends,
// sampling the leader's snapshots meanwhile, for at most twice the
// in-process makespan and 10 s (20 s in all); it returns the wall time
// from the first arrival to the last end.
func (p *play) run(ctx context.Context, leader *member, makespan int) (time.Duration, error) {
	sc, l := p.sc, p.log
	limit := min(maxPlay, 2*time.Duration(makespan)*p.step+10*time.Second)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()

	p.mostRunning = map[string]int{}
	l.t0 = time.Now() // before the sampler and the handlers start: read-only after
	samplerDone := make(chan struct{})
	stopSampling := make(chan struct{})
	go func() {
		defer close(samplerDone)
		p.sample(ctx, leader, stopSampling)
	}()
	defer func() { close(stopSampling); <-samplerDone }()

	t0 := l.t0
	var waiting []int // arrived, not enqueued yet (a duplicate (type, id) still unfinished)
	next := 0         // the next instance to enqueue from
	enqueued := 0
	enqueue := func(i int, arrival time.Duration) error {
		if arrival >= 0 {
			l.arrived(i, arrival)
		}
		j := sc.Jobs[i]
		var opts []fairsched.JobOption
		if j.Key != "" {
			opts = append(opts, fairsched.WithFairnessKey(j.Key))
		}
		if j.Group != "" {
			opts = append(opts, fairsched.InGroup(j.Group))
		}
		err := p.members[next%len(p.members)].s.Enqueue(ctx, j.Type, j.ID, []byte(strconv.Itoa(i)), opts...)
		switch {
		case errors.Is(err, fairsched.ErrDuplicateJob):
			waiting = append(waiting, i) // another run of its (type, id) is unfinished: once it is
			return nil
		case err != nil:
			return fmt.Errorf("enqueueing %s: %w", j.Name(), err)
		}
		next++
		enqueued++
		return nil
	}
	lastArrival := 0
	for _, j := range sc.Jobs {
		if j.After == "" {
			lastArrival = max(lastArrival, j.Arrival)
		}
	}
	byName := map[string][]int{}
	for i, j := range sc.Jobs {
		if j.After != "" {
			byName[j.After] = append(byName[j.After], i)
		}
	}
	retry := time.NewTicker(10 * time.Millisecond)
	defer retry.Stop()
	for s := 0; ; {
		// The arrivals whose time has come (the loop wakes for ends and
		// retries too).
		for ; s <= lastArrival && !time.Now().Before(t0.Add(time.Duration(s)*p.step)); s++ {
			for i, j := range sc.Jobs {
				if j.After == "" && j.Arrival == s {
					if err := enqueue(i, time.Duration(s)*p.step); err != nil {
						return time.Since(t0), err
					}
				}
			}
		}
		if enqueued == len(sc.Jobs) && l.allEnded() {
			return l.lastEnd(), nil
		}
		var tick <-chan time.Time
		if s <= lastArrival {
			tick = time.After(time.Until(t0.Add(time.Duration(s) * p.step)))
		}
		select {
		case <-tick:
		case i := <-l.endedC:
			// Closed-loop jobs arrive as their predecessor ends.
			for _, k := range byName[sc.Jobs[i].Name()] {
				if err := enqueue(k, time.Since(t0)); err != nil {
					return time.Since(t0), err
				}
			}
		case <-retry.C:
			w := waiting
			waiting = nil
			for _, i := range w {
				if err := enqueue(i, -1); err != nil {
					return time.Since(t0), err
				}
			}
		case <-ctx.Done():
			var ended int
			l.do(func() { ended = len(l.ended) - countFalse(l.ended) })
			return time.Since(t0), fmt.Errorf("%d of %d jobs ended within %v: %w", ended, len(sc.Jobs), limit, context.Cause(ctx))
		}
	}
}

func countFalse(bs []bool) int {
	n := 0
	for _, b := range bs {
		if !b {
			n++
		}
	}
	return n
}

// sample reads the leader's snapshot every half step until stop: the
// running jobs it names an instance for, and the most running at once.
func (p *play) sample(ctx context.Context, leader *member, stop <-chan struct{}) {
	t := time.NewTicker(max(p.step/2, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		snap, err := leader.s.Snapshot(ctx)
		if err != nil || snap.Cluster == nil || !snap.Cluster.Leading {
			continue
		}
		p.sightings++
		p.mostSnapRunning = max(p.mostSnapRunning, len(snap.Running))
		for _, in := range snap.Cluster.Instances {
			p.mostRunning[in.ID] = max(p.mostRunning[in.ID], in.Running)
		}
		at := time.Since(p.log.t0)
		for _, r := range snap.Running {
			// A job admitted and not placed yet names no instance.
			if r.Instance != "" {
				p.seen = append(p.seen, sighting{r.Type, r.ID, r.FairnessKey, r.Instance, at})
			}
		}
	}
}

// close leaves the cluster: the followers first, so that no lease is
// handed over needlessly, then the leader.
func (p *play) close() error {
	slices.SortStableFunc(p.members, func(a, b *member) int {
		la, lb := leads(a), leads(b)
		switch {
		case la == lb:
			return 0
		case la:
			return 1
		}
		return -1
	})
	var errs []error
	for _, m := range p.members {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := m.s.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("closing %s: %w", m.id, err))
		}
		cancel()
		m.st.Close()
	}
	p.members = nil
	return errors.Join(errs...)
}

func leads(m *member) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	snap, err := m.s.Snapshot(ctx)
	return err == nil && snap.Cluster != nil && snap.Cluster.Leading
}

// playLog is the handlers' shared log: every instance's handlers write
// their starts and ends here, in one order — one goroutine owns it and runs
// each change (do) — so the running counts are exact.
type playLog struct {
	sc     scenario.Scenario
	t0     time.Time // set before the play starts
	ops    chan func()
	gone   chan struct{} // closed by stop: the owner has returned
	frozen bool          // the report reads it: changes are dropped

	running, peak int
	byType        map[fairsched.JobType]int
	typePeak      map[fairsched.JobType]int
	exclusive     map[string]int // running per "group/id", exclusive jobs
	shared        map[string]int // and shared ones
	overlaps      []string
	overCap       []string // the jobs running when the count first went over the global cap

	starts     []int    // per job: how many times it started
	instanceOf []string // per job: the instance it last started on
	arrivalAt  []time.Duration
	startAt    []time.Duration
	endAt      []time.Duration
	ended      []bool
	endedC     chan int // each job that ended, for the closed-loop arrivals
}

func newPlayLog(sc scenario.Scenario) *playLog {
	n := len(sc.Jobs)
	return &playLog{sc: sc, byType: map[fairsched.JobType]int{}, typePeak: map[fairsched.JobType]int{},
		exclusive: map[string]int{}, shared: map[string]int{},
		starts: make([]int, n), instanceOf: make([]string, n), arrivalAt: make([]time.Duration, n),
		startAt: make([]time.Duration, n), endAt: make([]time.Duration, n), ended: make([]bool, n),
		endedC: make(chan int, n), ops: make(chan func()), gone: make(chan struct{})}
}

// run is the log's owner, until stop.
func (l *playLog) run() {
	for {
		select {
		case f := <-l.ops:
			f()
		case <-l.gone:
			return
		}
	}
}

// stop ends the owner; a late change (a handler outliving the play) is
// dropped.
func (l *playLog) stop() { close(l.gone) }

// do runs f on the log's owner and returns once it ran (at once, f
// unrun, after stop).
func (l *playLog) do(f func()) {
	done := make(chan struct{})
	select {
	case l.ops <- func() { f(); close(done) }:
		<-done
	case <-l.gone:
	}
}

// freeze stops every change to the log, so that its fields may be read
// directly from then on.
func (l *playLog) freeze() { l.do(func() { l.frozen = true }) }

// config is job i's type's configuration.
func (l *playLog) config(i int) fairsched.JobTypeConfig {
	for _, t := range l.sc.Types {
		if t.Name == l.sc.Jobs[i].Type {
			return t.Config
		}
	}
	return fairsched.JobTypeConfig{}
}

func (l *playLog) arrived(i int, at time.Duration) {
	l.do(func() {
		if !l.frozen {
			l.arrivalAt[i] = at
		}
	})
}

func (l *playLog) start(i int, instance string) { l.do(func() { l.started(i, instance) }) }

func (l *playLog) started(i int, instance string) {
	if l.frozen {
		return
	}
	j, cfg := l.sc.Jobs[i], l.config(i)
	l.running++
	l.peak = max(l.peak, l.running)
	if c := l.sc.MaxConcurrency; c > 0 && l.running > c && l.overCap == nil {
		l.overCap = l.runningNow(i, instance)
	}
	l.byType[j.Type]++
	l.typePeak[j.Type] = max(l.typePeak[j.Type], l.byType[j.Type])
	if g := cfg.ConflictGroup; g != "" {
		key := string(g) + "/" + j.ID
		if cfg.ConflictMode == fairsched.ConflictShared {
			if l.exclusive[key] > 0 {
				l.overlaps = append(l.overlaps, j.Name()+" beside an exclusive job on "+key)
			}
			l.shared[key]++
		} else {
			if l.exclusive[key]+l.shared[key] > 0 {
				l.overlaps = append(l.overlaps, j.Name()+" beside another job on "+key)
			}
			l.exclusive[key]++
		}
	}
	l.starts[i]++
	l.instanceOf[i] = instance
	l.startAt[i] = time.Since(l.t0)
}

// runningNow lists the jobs running, job i on instance about to start
// (on the owner).
func (l *playLog) runningNow(i int, instance string) []string {
	var out []string
	for k := range l.sc.Jobs {
		if k == i || l.starts[k] > 0 && !l.ended[k] && l.endAt[k] == 0 {
			in, at := l.instanceOf[k], l.startAt[k]
			if k == i {
				in, at = instance, time.Since(l.t0)
			}
			out = append(out, fmt.Sprintf("%s on %s since %v", l.sc.Jobs[k].Name(), in, at.Round(time.Millisecond)))
		}
	}
	return out
}

func (l *playLog) end(i int, ok bool) {
	first := false
	l.do(func() {
		if l.frozen {
			return
		}
		j, cfg := l.sc.Jobs[i], l.config(i)
		l.running--
		l.byType[j.Type]--
		if g := cfg.ConflictGroup; g != "" {
			key := string(g) + "/" + j.ID
			if cfg.ConflictMode == fairsched.ConflictShared {
				l.shared[key]--
			} else {
				l.exclusive[key]--
			}
		}
		first = ok && !l.ended[i]
		if ok {
			l.ended[i] = true
			l.endAt[i] = time.Since(l.t0)
		}
	})
	if first {
		l.endedC <- i
	}
}

// which is the job a snapshot saw running: of the scenario's jobs of its
// type, id and key that started, the one whose run lies nearest the
// snapshot's time (a snapshot may come just before its handler starts or
// just after it ends); -1 when none started. Once frozen.
func (l *playLog) which(s sighting) int {
	best, bestGap := -1, time.Duration(math.MaxInt64)
	for i, j := range l.sc.Jobs {
		if j.Type != s.typ || j.ID != s.id || j.Key != s.key || l.starts[i] == 0 {
			continue
		}
		gap := time.Duration(0)
		switch end := l.endAt[i]; {
		case s.at < l.startAt[i]:
			gap = l.startAt[i] - s.at
		case l.ended[i] && s.at > end:
			gap = s.at - end
		}
		if gap < bestGap {
			best, bestGap = i, gap
		}
	}
	return best
}

func (l *playLog) allEnded() (all bool) {
	l.do(func() { all = !slices.Contains(l.ended, false) })
	return all
}

func (l *playLog) lastEnd() (last time.Duration) {
	l.do(func() { last = slices.Max(l.endAt) })
	return last
}

// keys are the scenario's fairness keys, background ("") first, then by
// name.
func (l *playLog) keys() []string {
	set := map[string]bool{}
	for _, j := range l.sc.Jobs {
		set[j.Key] = true
	}
	return slices.Sorted(maps.Keys(set))
}
