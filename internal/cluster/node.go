// Package cluster runs a fairsched scheduler as one instance of several
// over one database (cluster mode), keeping the single owner: the instance
// that holds the domain's lease owns the scheduler's machine — the same
// core and durable-record rules as in one process (core/machine) — over
// the whole domain's jobs in its own loop, and "running" a job there
// means granting it to an instance and waiting for its end, told or
// reported by that instance. Every instance executes what it is granted.
//
// Three loops per instance, each the only owner of its state:
//
//   - the lease loop beats the instance's heartbeat, takes the lease when
//     it is free and renews it every beat; it starts the leader when it
//     wins the lease and stops it when a renewal fails or the lease would
//     expire before the next one could succeed;
//   - the leader (while leading) feeds the jobs other instances insert
//     into its scheduler, places each admitted job on an instance (the
//     owner of a RunSync or Submit; a job on a worker slot on the
//     worker's instance; else, among the instances with a handler and a
//     free slot, the most specialised — handlers for the fewest types —
//     then the one with the most free slots, or the leader's own first
//     with LeaderFirst),
//     writes the grants in batches fenced by its epoch — each with the
//     deletes of the successes answered since —, hears the successes the
//     executors tell and reads the other ends back, declaring silent
//     instances lost;
//   - the executor runs the grants it finds for its instance — a durable
//     job's handler, or the function of its own RunSync or Submit — tells
//     the leader their successes and reports their other ends, in
//     batches, its calls to the database off its loop.
//
// The database (a Backend: the one pgstore.Store.ClusterBackend returns)
// holds every job as a row and fences a stale leader: its grants and
// writes change nothing once another epoch holds the lease. Decisions are
// the core's, so caps, conflicts, tenant limits, rate limits and fairness
// hold across the cluster as they hold in one process, exact at decision
// time.
//
// Programs use cluster mode through the root package,
// github.com/fairsched/fairsched (WithCluster, ClusterConfig, and the
// cluster's part of a Snapshot); this package is its machinery.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// Config is one instance's part in a cluster.
type Config struct {
	// Domain names the cluster: instances of one domain share its jobs
	// and one leader. Domain and Instance are required names: valid UTF-8
	// without NUL, at most 1 024 bytes (policy.MaxNameLen), else
	// ErrInvalidConfig.
	Domain string
	// Instance names this instance: unique among the instances running
	// at once, and best stable across restarts (a Kubernetes pod's name,
	// a host's name), so that logs and snapshots read well. Each process
	// joins as an incarnation of its own (a Snapshot's
	// Cluster.Incarnation: the name, "#" and a random suffix), and the
	// database knows it by that: a process restarted under the same name
	// takes nothing of the one before it. It waits out that one's lease
	// like any other instance's (LeaseTTL), never runs its grants, and
	// that one's jobs end with ErrWorkerLost once the leader declares it
	// lost (LostAfter after its last heartbeat) — only then are they
	// granted again. Valid UTF-8, no NUL, at most policy.MaxNameLen
	// bytes, as Domain.
	Instance string
	// Slots is how many durable jobs this instance runs at once (default
	// 16; RunSync and Submit functions run on their own instance and take
	// none).
	Slots int
	// LeaseTTL is how long a lease lasts unrenewed (default 10 s);
	// Heartbeat how often instances beat and the leader renews (default
	// LeaseTTL/3); LostAfter how long an instance may stay silent before
	// the leader declares it lost (default LeaseTTL + 2 Heartbeats, at
	// least 3 Heartbeats). An instance whose beats fail for LostAfter
	// less 2 Heartbeats stops its jobs and starts none until a beat
	// succeeds, so that none runs on beside its retry.
	LeaseTTL, Heartbeat, LostAfter time.Duration
	// Poll is how often the loops read the database without a wake-up
	// (default 200 ms; LISTEN wakes them at once when it works);
	// ReportEvery how often an executor retries a report of ends that
	// failed, and how long the leader gathers events into one publication
	// (default 25 ms). Ends are reported as soon as they come: those that
	// come while a report is written go into the next.
	Poll, ReportEvery time.Duration
	// LeaderFirst places each durable job on the leader's own instance
	// while it has a free slot, on the others only beyond (among the
	// instances as specialised for the job's type). A job there is handed
	// over in process: no read of its grant, no report of its end through
	// the database — a transaction and two reads a job fewer, and a
	// shorter way from one job's end to the next one's start, which is
	// what bounds a global cap's throughput (its size over that way's
	// time). For short jobs, where that way is most of a job's time; the
	// leader's instance then runs most of the work beside its
	// scheduling. The leader's own setting applies. Default: among the
	// instances as specialised, the one with the most free slots (ties:
	// the leader's own, then by name), the work spread.
	LeaderFirst bool

	// Logger receives the instance's logs (lease, heartbeats, lost
	// instances). WithCluster gives it the scheduler's logger when nil.
	Logger *zap.Logger
}

// Errors of cluster mode.
var (
	// ErrInvalidConfig: a Config field is out of range.
	ErrInvalidConfig = errors.New("fairsched/cluster: invalid config")
	// ErrLeaderLost: the leader that granted an attempt lost its lease
	// while waiting for the end; the next leader waits for it instead.
	ErrLeaderLost = errors.New("fairsched/cluster: the leader lost its lease")
	// ErrFunctionGone: an instance was granted a RunSync or Submit job
	// whose function it no longer holds (its caller left, or it restarted).
	ErrFunctionGone = machine.ErrFunctionGone
	// ErrDoubleAdmission: the database refused a grant that would run a
	// second job on an exclusive conflict key a running grant holds.
	ErrDoubleAdmission = errors.New("fairsched/cluster: double admission on an exclusive conflict key refused")
	// ErrFenced: a write made under an epoch that is no longer the
	// domain's current lease, or under an expired lease; it changed
	// nothing.
	ErrFenced = errors.New("fairsched/cluster: fenced: the lease is held by another epoch or expired")
)

func (c *Config) defaults() error {
	if c.Domain == "" || c.Instance == "" {
		return fmt.Errorf("%w: Domain and Instance are required", ErrInvalidConfig)
	}
	if err := policy.InvalidName(ErrInvalidConfig, "ClusterConfig.Domain", c.Domain); err != nil {
		return err
	}
	if err := policy.InvalidName(ErrInvalidConfig, "ClusterConfig.Instance", c.Instance); err != nil {
		return err
	}
	if c.Slots < 0 {
		return fmt.Errorf("%w: Slots %d is negative", ErrInvalidConfig, c.Slots)
	}
	if c.Slots == 0 {
		c.Slots = 16
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = 10 * time.Second
	}
	if c.Heartbeat == 0 {
		c.Heartbeat = c.LeaseTTL / 3
	}
	if c.LostAfter == 0 {
		c.LostAfter = c.LeaseTTL + 2*c.Heartbeat
	}
	if c.Poll == 0 {
		c.Poll = 200 * time.Millisecond
	}
	if c.ReportEvery == 0 {
		c.ReportEvery = 25 * time.Millisecond
	}
	if c.LeaseTTL < 0 || c.Heartbeat <= 0 || c.Heartbeat >= c.LeaseTTL || c.LostAfter < 3*c.Heartbeat || c.Poll < 0 || c.ReportEvery < 0 {
		return fmt.Errorf("%w: need 0 < Heartbeat < LeaseTTL and LostAfter >= 3 Heartbeats (got %v, %v, %v)",
			ErrInvalidConfig, c.Heartbeat, c.LeaseTTL, c.LostAfter)
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	return nil
}

// Factory builds the leader's scheduler over the domain's store and
// records, with the options every instance was given.
type Factory func(st machine.JobStore, recs []core.JobRecord) (*machine.Machine, error)

// Node is this instance's part in a cluster: its loops and their channels.
type Node struct {
	cfg     Config
	id      string // this process's incarnation: what the database knows it by (identity.go)
	b       Backend
	factory Factory
	sink    *relay // the domain's events, for this instance's subscribers
	log     *zap.Logger
	// registry holds the types registered here, published by the lease
	// loop (their owner) for the checks of calls (Registry).
	registry atomic.Pointer[policy.Registry]
	// overloadRefuse: refusal on overload is on; verdict is the leader's
	// last verdict read (overload.go).
	overloadRefuse atomic.Bool
	verdict        atomic.Pointer[Overload]

	// To the lease loop.
	types   chan typeReq
	info    chan chan Info
	closing chan closeReq
	// To the executor.
	x *executor
	// subsChanged: this instance's subscriptions changed; its heartbeat
	// tells the leader (SubscriptionsChanged).
	subsChanged chan struct{}

	stopped chan struct{} // closed when every loop has returned
}

type typeReg struct {
	t   policy.JobType
	cfg policy.JobTypeConfig
}

// typeReq asks the lease loop to register a type, and waits for its answer.
type typeReq struct {
	typeReg
	reply chan error
}

type closeReq struct {
	ctx   context.Context
	reply chan error
}

// Info is what an instance knows of its cluster (a Snapshot's part).
type Info struct {
	// Instance is this instance's configured name, Incarnation this
	// process's identity in the domain: the name, "#" and a random
	// suffix, new at each Start.
	Domain, Instance, Incarnation string
	// Leader is the name of the instance that holds the lease as this one
	// last read it ("" when it does not know), LeaderIncarnation which
	// incarnation of it, Epoch its epoch; Leading whether it is this one.
	Leader, LeaderIncarnation string
	Epoch                     int64
	Leading                   bool
	// Instances, as the leader sees them (only the leader fills them):
	// each with its slots, types and the jobs it runs.
	Instances []InstanceInfo
	// Running maps "type/id" of each running job to its instance (leader
	// only).
	Running map[string]string
	// snapshot takes the leader's machine's snapshot in its loop's turn
	// (nil off the leader).
	snapshot func(ctx context.Context, rows int) (core.Snapshot, error)
	// inTurn runs a function on the leader's machine in its loop's turn
	// (leader.inTurn); nil on another instance.
	inTurn func(ctx context.Context, f func(*machine.Machine)) error
}

// InstanceInfo is one instance as the leader sees it.
type InstanceInfo struct {
	// ID is its configured name, Incarnation its process's identity (two
	// incarnations of one name are listed while the leader has not yet
	// declared the earlier one lost).
	ID          string   `json:"id"`
	Incarnation string   `json:"incarnation"`
	Slots       int      `json:"slots"`
	Types       []string `json:"types"`
	Running     int      `json:"running"`
	// Subscribed: its last heartbeat said it has subscribers to the
	// domain's events.
	Subscribed bool `json:"subscribed"`
}

// SubscriptionsChanged tells the node that this instance's subscribers to
// the domain's events came or went: its next heartbeat, sent now, says
// whether it has any, and the leader publishes its events only while some
// instance has.
func (n *Node) SubscriptionsChanged() {
	select {
	case n.subsChanged <- struct{}{}:
	default: // a beat is due already
	}
}

// Start joins the cluster: the loops start, and this instance runs for
// the lease at once. Its subscribers (Subscribe) receive the domain's
// events: its leader's scheduler's, whichever instance leads.
func Start(b Backend, cfg Config, f Factory) (*Node, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	id := newIncarnation(cfg.Instance)
	n := &Node{cfg: cfg, id: id, b: b, factory: f, sink: newRelay(), log: cfg.Logger.With(zap.String("instance", id)),
		types: make(chan typeReq), info: make(chan chan Info), closing: make(chan closeReq), subsChanged: make(chan struct{}, 1),
		stopped: make(chan struct{})}
	n.x = newExecutor(n)
	go n.x.run()
	go n.run()
	return n, nil
}

// RegisterType records t for the leader's scheduler (every instance
// registers the same types, as the leader registers them in its own). A
// type registered here already is ErrDuplicateType; cfg is the caller's
// to check (JobTypeConfig.ValidateFor, against the scheduler's limits).
func (n *Node) RegisterType(t policy.JobType, cfg policy.JobTypeConfig) error {
	r := typeReq{typeReg{t, cfg}, make(chan error, 1)}
	select {
	case n.types <- r:
		return <-r.reply
	case <-n.stopped:
		return machine.ErrClosed
	}
}

// Registry returns the types registered on this instance, for the checks
// of calls made here (package policy's Registry).
func (n *Node) Registry() *policy.Registry { return n.registry.Load() }

// RegisterHandler makes this instance run t's durable jobs with h: its
// heartbeat says so, and the leader grants it t's jobs.
func (n *Node) RegisterHandler(t policy.JobType, h messages.Handler) error {
	reply := make(chan struct{}, 1)
	select {
	case n.x.handlers <- handlerReg{t, h, reply}:
		<-reply
		return nil
	case <-n.stopped:
		return machine.ErrClosed
	}
}

// RegisterWorker registers worker id with its slots' types on this
// instance; the leader's worker index takes it at its next read of the
// instances (a heartbeat). Jobs of worker types run on its slots, a
// durable one on this instance, a RunSync's or Submit's on its own.
func (n *Node) RegisterWorker(id string, slots [][]policy.JobType) error {
	return n.x.workerOp(workerReg{id: id, slots: slots})
}

// UnregisterWorker removes worker id from this instance: the jobs running
// here on its slots are cancelled (ErrWorkerLost), and the leader
// unregisters it at its next read of the instances.
func (n *Node) UnregisterWorker(id string) error {
	return n.x.workerOp(workerReg{id: id, remove: true})
}

// Enqueue inserts durable job rec; any instance with a handler runs it.
func (n *Node) Enqueue(ctx context.Context, rec *core.JobRecord) error {
	if err := n.overloadRefusal(rec); err != nil {
		return err
	}
	return n.b.Insert(ctx, rec)
}

// RunSync inserts rec as a job of this instance and runs fn when the
// leader grants it here; it returns fn's error once the job has ended
// (after its retries), or ctx's if ctx ends first.
func (n *Node) RunSync(ctx context.Context, rec *core.JobRecord, fn func(context.Context) error) error {
	rec.OnDemand = true // a caller waits: on-demand work for scoring
	if err := n.checkStart(ctx, rec); err != nil {
		return err
	}
	done := make(chan error, 1)
	if err := n.own(ctx, rec, fn, done); err != nil {
		return err
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err() // the job runs, if granted, with this ended context: it ends at once
	}
}

// Submit inserts rec as a background job of this instance, run with fn.
func (n *Node) Submit(ctx context.Context, rec *core.JobRecord, fn func(context.Context) error) error {
	return n.own(ctx, rec, fn, nil)
}

func (n *Node) own(ctx context.Context, rec *core.JobRecord, fn func(context.Context) error, done chan error) error {
	rec.Owner = n.id
	if err := n.overloadRefusal(rec); err != nil {
		return err
	}
	losses := n.x.losses.Load() // before the row exists
	if err := n.b.Insert(ctx, rec); err != nil {
		return err
	}
	c := &closure{seq: rec.Seq, fn: fn, ctx: ctx, done: done, losses: losses}
	if done == nil {
		c.ctx = context.Background()
	}
	select {
	case n.x.closures <- c:
		return nil
	case <-n.stopped:
		return machine.ErrClosed
	}
}

// Info returns what this instance knows of its cluster.
func (n *Node) Info(ctx context.Context) (Info, error) {
	reply := make(chan Info, 1)
	select {
	case n.info <- reply:
	case <-ctx.Done():
		return Info{}, ctx.Err()
	case <-n.stopped:
		return Info{}, machine.ErrClosed
	}
	select {
	case in := <-reply:
		return in, nil
	case <-ctx.Done():
		return Info{}, ctx.Err()
	}
}

// Snapshot returns the leader's snapshot of the domain with the cluster's
// state, or, on another instance, only the cluster's state as it knows it.
func (n *Node) Snapshot(ctx context.Context, rows int) (core.Snapshot, error) {
	in, err := n.Info(ctx)
	if err != nil {
		return core.Snapshot{}, err
	}
	var s core.Snapshot
	if in.snapshot != nil {
		if s, err = in.snapshot(ctx, rows); err != nil && !errors.Is(err, machine.ErrClosed) {
			return core.Snapshot{}, err
		}
		for i := range s.Running {
			s.Running[i].Instance = in.Running[string(s.Running[i].Type)+"/"+s.Running[i].ID]
		}
	}
	cs := &core.ClusterSnapshot{Domain: in.Domain, Instance: in.Instance, Incarnation: in.Incarnation, Leader: in.Leader,
		LeaderIncarnation: in.LeaderIncarnation, Epoch: in.Epoch, Leading: in.Leading}
	for _, i := range in.Instances {
		cs.Instances = append(cs.Instances, core.InstanceSnapshot{ID: i.ID, Incarnation: i.Incarnation, Slots: i.Slots, Types: i.Types,
			Running: i.Running, Subscribed: i.Subscribed})
	}
	s.Cluster = cs
	s.EventsLost += n.EventsLost()
	return s, nil
}

// Close leaves the cluster: a leader hands its lease over at once (its
// granted jobs run on, and the next leader waits for their ends); the
// executor waits for its running jobs within ctx (after that their
// contexts are cancelled), reports their ends, and the loops stop.
func (n *Node) Close(ctx context.Context) error {
	reply := make(chan error, 1)
	select {
	case n.closing <- closeReq{ctx, reply}:
		return <-reply
	case <-n.stopped:
		return nil
	}
}

// run is the lease loop.
func (n *Node) run() {
	defer close(n.stopped)
	quit := make(chan struct{})
	go n.relayEvents(quit)
	s := &leaseLoop{n: n, failed: make(chan int64, 1)}
	tick := time.NewTicker(n.cfg.Heartbeat)
	defer tick.Stop()
	s.beat()
	n.noticeEarlier()
	for {
		select {
		case <-tick.C:
			s.beat()
		case <-n.x.typesChanged:
			s.beat()
			if s.l != nil { // the leader reads what its own instance now handles at once
				s.l.ownChanged()
			}
		case <-n.subsChanged:
			s.beat()
		case e := <-s.failed:
			if s.l != nil && e == s.epoch {
				s.stopLeading(false)
			}
		case r := <-n.types:
			if s.register(r) {
				s.define()
			}
		case reply := <-n.info:
			reply <- s.info()
		case r := <-n.closing:
			graceful := r.ctx.Err() == nil
			s.stopLeading(graceful)
			err := n.x.stop(r.ctx)
			n.closeRelay(quit) // the subscribers' channels closed before Close returns, as in one process
			r.reply <- err
			return
		}
	}
}

// leaseLoop is the state the lease loop (Node.run) owns: the types written
// in the domain, the lease, and the leader while this instance leads.
type leaseLoop struct {
	n         *Node
	types     []typeReg // written in the domain (types.go)
	undefined []typeReg // not yet: the leader waits for them
	l         *leader
	epoch     int64
	leaderID  string
	lastRenew time.Time
	failed    chan int64 // a leader whose write was fenced
	pub       published  // the leader's last overload verdict written
	// beatenOnce: a heartbeat succeeded; one that lists the instance anew
	// after it finds that a leader declared the instance lost.
	beatenOnce bool
}

// stopLeading stops the leader, if any, and — release — its lease.
func (s *leaseLoop) stopLeading(release bool) {
	if s.l == nil {
		return
	}
	s.l.stop()
	if release {
		s.release(s.epoch)
	}
	s.n.log.Info("stopped leading", zap.Int64("epoch", s.epoch))
	s.l, s.leaderID = nil, ""
}

func (s *leaseLoop) release(epoch int64) {
	ctx, cancel := context.WithTimeout(context.Background(), s.n.cfg.Heartbeat)
	defer cancel()
	_ = s.n.b.Release(ctx, s.n.cfg.Domain, s.n.id, epoch)
}

// register adds r's type to the node's registry, unless it is there
// already, and answers r; the type waits to be written in the domain.
func (s *leaseLoop) register(r typeReq) bool {
	reg := s.n.registry.Load()
	err := reg.CheckNewType(r.t)
	if err == nil {
		s.n.registry.Store(reg.With(r.t, r.cfg))
		s.undefined = append(s.undefined, r.typeReg)
	}
	r.reply <- err
	return err == nil
}

// define writes the types registered here in the domain, then gives them
// to the leader: a type's jobs are granted only once a next leader can
// read it. Retried at every beat until written.
func (s *leaseLoop) define() {
	n := s.n
	if len(s.undefined) == 0 {
		return
	}
	settings, err := typeSettings(s.undefined)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), n.cfg.Heartbeat)
		err = n.b.DefineTypes(ctx, n.cfg.Domain, settings)
		cancel()
	}
	if isRefused(err) { // one type the store refuses: the others are written (defineApart)
		var written []typeReg
		var dealt int
		written, dealt, err = n.defineApart(s.undefined)
		s.defined(written)
		s.undefined = s.undefined[dealt:]
	}
	if err != nil {
		n.log.Warn("writing the types in the domain failed; retrying", zap.Error(err))
		return
	}
	s.defined(s.undefined)
	s.undefined = nil
}

// defined counts rs written in the domain, and gives them to the leader.
func (s *leaseLoop) defined(rs []typeReg) {
	for _, r := range rs {
		s.types = append(s.types, r)
		if s.l != nil {
			s.l.registerType(r)
		}
	}
}

// beat writes this instance's heartbeat, then renews the lease while it
// leads, or tries to take it.
func (s *leaseLoop) beat() {
	n := s.n
	s.define()
	now := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.Heartbeat)
	handled, ws := n.x.self()
	listed, err := n.b.Heartbeat(ctx, n.cfg.Domain, Instance{ID: n.id, Slots: n.cfg.Slots, Types: handled, Workers: ws,
		Subscribed: n.sink.Subscribed()})
	cancel()
	// The lease's calls have a beat of their own: a slow heartbeat must
	// not leave the renewal no time.
	ctx, cancel = context.WithTimeout(context.Background(), n.cfg.Heartbeat)
	defer cancel()
	if err == nil {
		// Listed again after its first beat: Lost removed it meanwhile.
		n.x.beaten(now, listed && s.beatenOnce) // its fence moves on (beaten)
		s.beatenOnce = true
	}
	if s.l != nil {
		s.renew(ctx, now)
	} else {
		s.acquire(ctx, now)
	}
	s.overloadBeat(ctx)
}

func (s *leaseLoop) renew(ctx context.Context, now time.Time) {
	n := s.n
	ok, err := n.b.Renew(ctx, n.cfg.Domain, n.id, s.epoch, n.cfg.LeaseTTL)
	switch {
	case err == nil && ok:
		s.lastRenew = now
	case err == nil || now.Sub(s.lastRenew) > n.cfg.LeaseTTL-2*n.cfg.Heartbeat:
		// Lost, or it might expire before the next beat renews it.
		s.stopLeading(false)
	}
}

// acquire takes the lease if it is free, and starts leading.
func (s *leaseLoop) acquire(ctx context.Context, now time.Time) {
	n := s.n
	e, ok, err := n.b.Acquire(ctx, n.cfg.Domain, n.id, n.cfg.LeaseTTL)
	if err != nil || !ok {
		return
	}
	s.epoch, s.lastRenew = e, now
	l, err := startLeader(n, e, s.types, s.failed)
	if err != nil {
		n.log.Error("could not start leading", zap.Error(err))
		s.release(e)
		return
	}
	s.l, s.leaderID = l, n.id
	n.log.Info("leading", zap.Int64("epoch", e))
}

// info is what Node.Info says: of the leader in this process, or of the
// lease as the database has it.
func (s *leaseLoop) info() Info {
	n := s.n
	in := Info{Domain: n.cfg.Domain, Instance: n.cfg.Instance, Incarnation: n.id, Leading: s.l != nil}
	if s.leaderID != "" {
		in.Leader, in.LeaderIncarnation = nameOf(s.leaderID), s.leaderID
	}
	if s.l != nil {
		in.Epoch, in.snapshot, in.inTurn = s.epoch, s.l.snapshot, s.l.inTurn
		in.Instances, in.Running = s.l.info()
		return in
	}
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.Heartbeat)
	holder, e, live, err := n.b.Leader(ctx, n.cfg.Domain)
	cancel()
	if err == nil && live {
		in.Leader, in.LeaderIncarnation, in.Epoch = nameOf(holder), holder, e
	}
	return in
}

// noticeEarlier warns, once at the start, when an earlier incarnation of
// this instance's name still holds the lease or jobs — a restart under a
// stable name after a crash: until its lease expires this one does not
// lead, and its jobs run again only once the leader has declared it lost.
func (n *Node) noticeEarlier() {
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.Heartbeat)
	defer cancel()
	if holder, _, live, err := n.b.Leader(ctx, n.cfg.Domain); err == nil && live && holder != n.id && nameOf(holder) == n.cfg.Instance {
		n.log.Warn("an earlier incarnation of this instance holds the lease: this one waits for it to expire",
			zap.String("earlier", holder), zap.Duration("leaseTTL", n.cfg.LeaseTTL))
	}
	ins, err := n.b.Instances(ctx, n.cfg.Domain)
	if err != nil {
		return
	}
	for _, in := range ins {
		if in.ID == n.id || nameOf(in.ID) != n.cfg.Instance {
			continue
		}
		// After a graceful Close it holds nothing: its row only waits to
		// be declared lost.
		if gs, err := n.b.Granted(ctx, in.ID); err == nil && len(gs) > 0 {
			n.log.Warn("an earlier incarnation of this instance still holds jobs: they end as lost once it has been silent for LostAfter, then run again",
				zap.String("earlier", in.ID), zap.Int("jobs", len(gs)), zap.Duration("silent", in.Silent), zap.Duration("lostAfter", n.cfg.LostAfter))
		}
	}
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
