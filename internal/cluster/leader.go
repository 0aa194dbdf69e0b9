package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/workers"
)

// The leader: the loop (leader.run) owns the scheduler's machine
// (machine.Machine: the core and the durable records' rules) and calls it in
// its turn — no goroutine of the scheduler's own. Every durable job starts
// remotely (Machine.RegisterRemote). A turn reads what changed, applies
// it to the machine (new jobs, ends, commands, instances), takes the
// starts and revokes it made (Machine.TakeOps), places them and writes
// them with the machine's records (Machine.TakeBatch) in one fenced
// transaction, in flight while the loop goes on (flight.go). No goroutine
// waits for a granted job.

type leader struct {
	n     *Node
	epoch int64
	m     *machine.Machine // the loop's, once it runs
	feed  Feed

	// ops are the machine's starts and revokes of the turn, in order
	// (Machine.TakeOps); the loop's.
	ops []messages.RemoteOp
	// adoptC hands the loop the backlog's records, a chunk at a time; the
	// loader waits for each to be adopted.
	adoptC chan adoptChunkReq
	// turnC asks the loop to run a function on its machine (inTurn).
	turnC chan turnReq
	// conflicts: the conflict group of each type whose jobs run alone on
	// their id (the loop's).
	conflicts map[policy.JobType]string
	// ends reports an attempt's end to the machine (Machine.EndRemote).
	ends    func(*messages.RemoteAttempt, error)
	types   chan typeReg
	infoC   chan chan leaderInfo
	stopC   chan struct{}
	done    chan struct{}
	failed  chan<- int64
	known   map[policy.JobType]bool // the types registered in a (types.go)
	pubDone chan struct{}           // closed when the publisher of a's events has returned (events.go)
	// endCursor: the ends read (endsSince, incremental.go); the loop's.
	endCursor ReadCursor
	// localEnds: the successes of the grants handed to this instance's
	// executor, reported back in process (handoff).
	localEnds chan End
	// subscribed: some instance's last heartbeat said it has subscribers
	// to the domain's events (the loop writes it, the publisher reads it).
	subscribed atomic.Bool
	// subscribers: the instances subscribed as the loop's last read of
	// them says, a new slice at each read (the publisher acknowledges them).
	subscribers atomic.Pointer[[]string]
	// loaded is closed once every pending job of the domain is in the
	// scheduler; loaderDone once the backlog's loader has returned (loaded
	// or not), and stopLoad ends its reads.
	loaded, loaderDone chan struct{}
	stopLoad           context.CancelFunc
	// unanswerable: the commands whose answers the store refused, even
	// one saying so (answerRefused); the loop's.
	unanswerable map[int64]bool
	// reread: this instance's heartbeat now says what its executor
	// handles (ownChanged): the loop reads the instances at once, so
	// that its own instance takes work from the next turn, not from the
	// loop's next beat.
	reread chan struct{}
}

// wait is an admitted job's attempt, from its grant to its end.
type wait struct {
	seq      uint64
	typ      policy.JobType
	id       string
	owner    string // a RunSync or Submit's instance
	attempt  int    // -1: whatever attempt runs on instance (resumed)
	instance string
	conflict string
	// at is the scheduler's attempt: its end goes back with
	// machine.EndRemote, and its context's Err is set once it is cancelled
	// (or its scheduler stops) — then it is granted no more.
	at *messages.RemoteAttempt
	// revoked: Cancel took it back while granted; it ends as cancelled
	// once its instance reports the end.
	revoked bool
	queued  time.Time // when it first waited for its instance
	// written: its grant is committed (or it watches a grant already
	// made); until then its row says nothing about it. flying: its grant
	// is in the write in flight (flight.go).
	written, flying bool
	// worker and slot: the worker slot the leader's scheduler gave it (a
	// job of a worker type).
	worker string
	slot   int
}

// newWait is the wait of attempt at, of a type whose jobs run alone on
// their id in conflict group conflict ("" if none).
func newWait(at *messages.RemoteAttempt, conflict string) *wait {
	job := at.Job
	w := &wait{seq: job.Seq, typ: job.Type, id: job.ID, owner: job.Owner, attempt: job.Attempt, at: at}
	if conflict != "" {
		w.conflict = conflict + "/" + job.ID
	}
	if job.Granted != "" {
		w.instance, w.attempt = job.Granted, -1
	}
	if at.OnSlot {
		w.worker, w.slot = at.Slot.Worker, at.Slot.Slot
	}
	return w
}

// counts reports whether w takes one of its instance's Slots: a durable
// job not on a worker slot (a worker's slots are its own capacity; a
// RunSync's or Submit's function runs in its caller's goroutine).
func (w *wait) counts() bool { return w.owner == "" && w.worker == "" }

type leaderInfo struct {
	instances []InstanceInfo
	running   map[string]string
}

// instance is one instance as the leader counts it.
type instance struct {
	Instance
	types   map[string]bool
	running int // durable jobs granted to it and not ended
}

func startLeader(n *Node, epoch int64, types []typeReg, failed chan<- int64) (*leader, error) {
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.LeaseTTL)
	defer cancel()
	st, recs, feed, err := n.b.Domain(ctx, n.cfg.Domain, epoch)
	if err != nil {
		return nil, err
	}
	m, err := n.factory(st, recs)
	if err != nil {
		feed.Close()
		return nil, err
	}
	l := &leader{n: n, epoch: epoch, m: m, feed: feed, adoptC: make(chan adoptChunkReq), turnC: make(chan turnReq),
		conflicts: map[policy.JobType]string{}, ends: m.EndRemote, types: make(chan typeReg),
		infoC: make(chan chan leaderInfo), stopC: make(chan struct{}), done: make(chan struct{}), failed: failed,
		known: map[policy.JobType]bool{}, pubDone: make(chan struct{}), localEnds: make(chan End, 1024),
		loaded: make(chan struct{}), loaderDone: make(chan struct{}), stopLoad: func() {}, reread: make(chan struct{}, 1)}
	abort := func(err error) (*leader, error) {
		feed.Close()
		close(l.loaderDone)
		go l.run()
		l.stop()
		return nil, err
	}
	// Its events are the domain's: published for every instance.
	evs := m.Subscribe(1 << 14) // closed when the machine stops
	go l.publish(evs, l.pubDone)
	settings, err := n.b.Settings(ctx, n.cfg.Domain)
	if err != nil {
		return abort(err)
	}
	// Every type of the domain first — this instance's configurations
	// over those written before (types.go) — then every type's remote
	// start at once: the jobs a previous leader granted are all counted
	// before any other starts. The loop starts after, so that its first
	// read registers the instances' workers for types the machine knows
	// (the starts wait for it in the machine's outbox).
	regs := domainTypes(settings, n.log)
	for _, r := range types {
		regs[r.t] = r.cfg
	}
	var all []policy.JobType
	for _, t := range sortedKeys(regs) {
		r := typeReg{t, regs[t]}
		if err := l.m.Register(r.t, r.cfg); err != nil && !errors.Is(err, policy.ErrDuplicateType) {
			l.n.log.Error("registering a type in the leader failed", zap.String("type", string(r.t)), zap.Error(err))
			continue
		}
		l.known[r.t] = true
		l.conflicts[r.t] = conflictOf(r.cfg)
		all = append(all, r.t)
	}
	// The domain's weights and pauses apply before the first decision.
	l.applySettings(settings)
	if err := l.m.RegisterRemote(all); err != nil {
		return abort(err)
	}
	go l.run()
	loadCtx, stopLoad := context.WithCancel(context.Background())
	l.stopLoad = stopLoad
	go l.loadBacklog(loadCtx, len(recs))
	return l, nil
}

// loadBacklog hands the scheduler the pending jobs Domain left in the
// feed's backlog, a part at a time, while it already decides over those it
// has: a large backlog holds back neither the first grant nor the node's
// heartbeats. A backlog that cannot be read ends this leadership (as a
// fenced write does): the next leader, maybe this instance again, loads it
// from a new snapshot.
func (l *leader) loadBacklog(ctx context.Context, first int) {
	defer close(l.loaderDone)
	defer l.feed.Close()
	start, n := time.Now(), 0
	for more := true; more; {
		recs, m, err := l.feed.Backlog(ctx)
		if err == nil && len(recs) > 0 {
			err = l.handOverBacklog(ctx, recs) // the loop never waits on this goroutine
			n += len(recs)
		}
		if err != nil {
			if ctx.Err() == nil {
				l.n.log.Error("loading the pending jobs failed; leading stops", zap.Int("loaded", first+n), zap.Error(err))
				select {
				case l.failed <- l.epoch:
				default:
				}
			}
			return
		}
		more = m
	}
	close(l.loaded)
	l.n.log.Info("loaded the pending jobs", zap.Int("records", first+n), zap.Int("afterFirstDecision", n),
		zap.Duration("took", time.Since(start)))
}

// adoptChunk bounds the records handed to the leader's scheduler in one
// message: its owner adopts a message's records in one turn, dispatching
// nothing meanwhile, and a backlog page of 5 000 (about 12 ms) held the
// grants back for as long — a burn-down ran at a quarter of its speed
// while the backlog loaded.
const adoptChunk = 256

// adoptChunkReq is a chunk of the backlog for the loop to adopt; done
// is closed once it is.
type adoptChunkReq struct {
	recs []core.JobRecord
	done chan struct{}
}

// handOverBacklog hands recs to the loop adoptChunk at a time, each
// adopted before the next is sent: the loop's turns decide between them.
func (l *leader) handOverBacklog(ctx context.Context, recs []core.JobRecord) error {
	for len(recs) > 0 {
		n := min(len(recs), adoptChunk)
		req := adoptChunkReq{recs: recs[:n], done: make(chan struct{})}
		select {
		case l.adoptC <- req:
		case <-l.done:
			return machine.ErrClosed
		case <-ctx.Done():
			return ctx.Err()
		}
		<-req.done // the loop answers every chunk it takes
		recs = recs[n:]
	}
	return nil
}

// adopt gives the machine recs, adoptChunk at a time: it decides after
// each chunk. The loop's.
func (l *leader) adopt(recs []core.JobRecord) {
	for len(recs) > 0 {
		n := min(len(recs), adoptChunk)
		l.m.Adopt(recs[:n])
		recs = recs[n:]
	}
}

// turnReq asks the loop to run f on its machine in its turn; done is
// closed once f has returned.
type turnReq struct {
	f    func(*machine.Machine)
	done chan struct{}
}

// inTurn runs f on the leader's machine in its loop's turn and returns
// once f has: machine.ErrClosed when the loop has ended, ctx's error when
// ctx ends first (f may still run; it must only write what it owns).
func (l *leader) inTurn(ctx context.Context, f func(*machine.Machine)) error {
	req := turnReq{f: f, done: make(chan struct{})}
	select {
	case l.turnC <- req:
	case <-l.done:
		return machine.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-req.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// snapshot returns the leader's machine's snapshot, taken in its loop's
// turn.
func (l *leader) snapshot(ctx context.Context, rows int) (core.Snapshot, error) {
	var s core.Snapshot
	var serr error
	if err := l.inTurn(ctx, func(m *machine.Machine) { s, serr = m.Snapshot(rows) }); err != nil {
		return core.Snapshot{}, err
	}
	return s, serr
}

// conflictOf is the conflict group of type cfg's jobs if each runs alone
// on its id (the database guards it), else "".
func conflictOf(cfg policy.JobTypeConfig) string {
	if cfg.ConflictGroup != "" && cfg.ConflictMode == policy.ConflictExclusive {
		return string(cfg.ConflictGroup)
	}
	return ""
}

// ownChanged tells the loop that this instance's heartbeat changed what
// it handles (its types or workers).
func (l *leader) ownChanged() {
	select {
	case l.reread <- struct{}{}:
	default: // a read is due already
	}
}

func (l *leader) registerType(r typeReg) {
	select {
	case l.types <- r:
	case <-l.done:
	}
}

func (l *leader) info() ([]InstanceInfo, map[string]string) {
	reply := make(chan leaderInfo, 1)
	select {
	case l.infoC <- reply:
		in := <-reply
		return in.instances, in.running
	case <-l.done:
		return nil, nil
	}
}

// stop ends leading: the machine is stopped in the loop's last turn
// (its writes would be fenced anyway), the jobs granted run on, and the
// next leader waits for their ends.
func (l *leader) stop() {
	l.stopLoad()
	close(l.stopC)
	<-l.done
	<-l.loaderDone
	<-l.pubDone // the machine's last events published
}

// stopMachine is the loop's last step: the machine stops as an expired
// Close stops a scheduler — it writes nothing of the attempts it ends
// (they stay pending, and the lease may not have expired yet, so that
// write might not be fenced) — and its final save lands (within a beat)
// before the lease is released, not after.
func (l *leader) stopMachine() {
	t := time.NewTimer(l.n.cfg.Heartbeat)
	defer t.Stop()
	saved := l.m.Stop(t.C)
	select {
	case <-saved:
	case <-t.C:
	}
}

// leaderWakes are what wakes the leader's loop besides its timers: new
// jobs and commands, ends reported, instances joining or changed (read at
// once: an instance that joins takes work before this leader's next
// beat), and the successes other instances tell.
type leaderWakes struct {
	jobs, ends, instances *listener[struct{}]
	told                  *listener[[]End]
}

func listenAsLeader(b Backend, id string) leaderWakes {
	return leaderWakes{jobs: wakeUps(b, LeaderReads, id), ends: wakeUps(b, EndReads, id),
		instances: wakeUps(b, InstanceReads, id), told: newListener(b.Successes)}
}

func (w leaderWakes) close() {
	w.jobs.close()
	w.ends.close()
	w.instances.close()
	w.told.close()
}

// again listens anew to those whose connection was lost, and reports
// whether any now listens: what was committed meanwhile is read.
func (w leaderWakes) again() bool {
	return relistened(w.jobs.again(), w.ends.again(), w.instances.again(), w.told.again())
}

func (l *leader) run() {
	defer close(l.done)
	g := newGrantLoop(l)
	defer g.tidyTimer.Stop()
	cfg := l.n.cfg
	w := listenAsLeader(l.n.b, l.n.id)
	defer w.close()
	g.told = w.told
	poll := time.NewTicker(cfg.Poll)
	defer poll.Stop()
	beat := time.NewTicker(cfg.Heartbeat)
	defer beat.Stop()
	g.timed(g.readInstances)
	g.closeTurn() // the starts of the jobs the machine holds already
	for {
		select {
		case <-g.loaded:
			g.loaded = nil // every pending job is in: the commands waiting run
			g.read(true, false)
			g.replace()
		case req := <-l.adoptC:
			l.adopt(req.recs)
			close(req.done)
		case req := <-l.turnC:
			g.settle() // f may ask what waits for the records in flight
			req.f(l.m)
			close(req.done)
		case <-l.m.WakeC():
			l.m.Wake()
		case <-l.m.TickC():
			l.m.Tick()
		case <-l.m.LoadC():
			l.m.ReadLoad()
		case r := <-l.m.CommittedC():
			l.m.Committed(r)
		case e := <-l.localEnds:
			g.localEnded(e)
			g.replace() // slots are free: the jobs waiting for one go in this turn
		case ends, ok := <-g.told.C:
			if !ok {
				// The listening connection is gone: listened to again at
				// the next beat; the successes told meanwhile are reported
				// through their rows (TellSucceeded).
				g.told.lost()
				continue
			}
			g.toldEnded(ends)
			g.replace()
		case <-g.tidyC:
			g.tidyC, g.tidy = nil, true
		case r := <-l.types:
			g.settle()
			l.register(r)
		case reply := <-l.infoC:
			reply <- g.info()
		case _, ok := <-w.jobs.C:
			if !ok {
				w.jobs.lost() // the listener's connection is gone: poll until the next beat
			}
			g.read(true, false)
			g.replace()
		case _, ok := <-w.ends.C:
			if !ok {
				w.ends.lost()
			}
			g.read(false, true)
			g.replace()
		case _, ok := <-w.instances.C:
			if !ok {
				w.instances.lost()
			}
			g.timed(g.readInstances)
			g.replace()
		case <-poll.C:
			g.read(true, true)
			g.replace()
		case <-g.writeRetry.c:
			g.writeRetry.fired()
			g.replace()
		case <-g.retry.c:
			g.retry.fired()
			g.read(true, true)
			g.replace()
		case <-l.reread:
			g.timed(g.readInstances)
			g.replace()
		case <-beat.C:
			// Listening again once a connection was lost: what was
			// committed meanwhile is read now.
			if w.again() {
				g.read(true, true)
			}
			g.timed(g.readInstances)
			g.replace()
		case r := <-g.flightC():
			g.land(r)
		case <-l.stopC:
			g.settle() // the machine's records in flight reported before it stops
			l.stopMachine()
			g.stop()
			return
		}
		g.closeTurn()
	}
}

// The successes' rows wait for a turn with grants (grantLoop.grant) at most
// finishedWait, and up to maxFinished of them: then they are deleted in a
// write of their own. Until then an Enqueue of the same (type, id) finds
// the job unfinished, as while it ran.
const (
	finishedWait = 2 * time.Millisecond
	maxFinished  = 1024
)

// maxGrants bounds the grants of one write. The successes answered while
// a write is in flight are deleted by the next, and an instance that told
// the leader of a success reads its row a Poll later, reporting it
// through the row if it still runs (execLoop.confirm): a write of
// thousands of grants (thousands of slots) outlasted that, and a success
// cost a row more. Past a few hundred rows a write's fixed cost is small.
const maxGrants = 512

// syncWorkers makes the scheduler's worker index the instances' workers:
// a worker gone (unregistered, or its instance lost) is unregistered —
// the jobs on its slots end with ErrWorkerLost —, a new one registered. A
// worker id registered on two instances keeps its first.
func (l *leader) syncWorkers(instances map[string]*instance, home, registered map[string]string) {
	type want struct {
		instance string
		slots    [][]policy.JobType
		sig      string
	}
	wanted := map[string]want{}
	for _, id := range sortedKeys(instances) {
		for wid, slots := range instances[id].Workers {
			if _, dup := wanted[wid]; dup {
				l.n.log.Error("a worker id is registered on two instances", zap.String("worker", wid), zap.String("instance", id))
				continue
			}
			ts := make([][]policy.JobType, len(slots))
			for i, sl := range slots {
				for _, t := range sl {
					ts[i] = append(ts[i], policy.JobType(t))
				}
			}
			wanted[wid] = want{id, ts, fmt.Sprint(slots)}
		}
	}
	for wid, sig := range registered {
		if w, ok := wanted[wid]; !ok || w.sig != sig || home[wid] != w.instance {
			_ = l.m.Worker(wid, nil, true)
			delete(registered, wid)
			delete(home, wid)
		}
	}
	for _, wid := range sortedKeys(wanted) {
		w := wanted[wid]
		if _, ok := registered[wid]; ok {
			continue
		}
		if err := l.m.Worker(wid, w.slots, false); err != nil {
			l.n.log.Error("registering a worker in the leader failed", zap.String("worker", wid), zap.Error(err))
			continue
		}
		registered[wid], home[wid] = w.sig, w.instance
	}
}

// handledBy reports whether an instance of instances has a handler for t.
func handledBy(instances map[string]*instance, t policy.JobType) bool {
	for _, in := range instances {
		if in.types[string(t)] {
			return true
		}
	}
	return false
}

// better reports whether instance a is a better place than b for a job
// both take, self being the leader's own instance: the fewest types (the
// most specialised), then — leaderFirst — the leader's own, then the most
// free slots, then the leader's own (a job there costs the database
// least), then the name.
func better(a, b *instance, self string, leaderFirst bool) bool {
	if len(a.types) != len(b.types) {
		return len(a.types) < len(b.types)
	}
	own := (a.ID == self) != (b.ID == self)
	if leaderFirst && own {
		return a.ID == self
	}
	if fa, fb := a.Slots-a.running, b.Slots-b.running; fa != fb {
		return fa > fb
	}
	if own {
		return a.ID == self
	}
	return a.ID < b.ID
}

// endError is the error an attempt's report stands for in the leader.
func endError(e End) error {
	switch e.Kind {
	case EndOK:
		return nil
	case EndPermanent:
		if e.Error == ErrFunctionGone.Error() { // the leader passes its waiters on (machine.endWaiters)
			return policy.Permanent(ErrFunctionGone)
		}
		return policy.Permanent(errors.New(e.Error))
	case EndPanic:
		return policy.Permanent(errors.New(e.Error))
	}
	// The executor stopped the attempt itself — its worker unregistered,
	// its heartbeats failing, its grant revoked (ErrWorkerLost), or its
	// instance's Close out of time (ErrClosed) — and the handler returned
	// its context's cause: an interruption, not a failure
	// (core.AttemptEnd.Interrupted), which runs again whatever the retry
	// policy. The sentinels cross the database as text.
	if strings.Contains(e.Error, workers.ErrWorkerLost.Error()) || strings.Contains(e.Error, machine.ErrClosed.Error()) {
		return &remoteError{text: e.Error, err: workers.ErrWorkerLost}
	}
	return errors.New(e.Error)
}

// isFenced reports whether err is the backend's refusal of a deposed
// leader's write.
func isFenced(err error) bool { return errors.Is(err, ErrFenced) }
