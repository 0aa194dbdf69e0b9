package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/fairsched/fairsched/actor"
	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/workers"
)

// The leader: an ordinary scheduler (actor and core) over the domain's
// jobs, whose handler for every type is "grant it to an instance and wait
// for the end". The leader loop owns the grants: where each goes, the
// batches it writes, the ends it reads back, the instances it knows.

type leader struct {
	n     *Node
	epoch int64
	a     *actor.Actor
	feed  Feed

	requests chan *wait
	revokes  chan uint64 // jobs cancelled while they run: take their grants back
	types    chan typeReg
	infoC    chan chan leaderInfo
	stopC    chan struct{}
	done     chan struct{}
	failed   chan<- int64
	known    map[policy.JobType]bool // the types registered in a (types.go)
	pubDone  chan struct{}           // closed when the publisher of a's events has returned (events.go)
	// endCursor: the ends read (endsSince, incremental.go); the loop's.
	endCursor ReadCursor
	// localEnds: the successes of the grants handed to this instance's
	// executor, reported back in process (handoff).
	localEnds chan End
	// subscribed: some instance's last heartbeat said it has subscribers
	// to the domain's events (the loop writes it, the publisher reads it).
	subscribed atomic.Bool
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
	done     chan error
	// cancelled is the handler's context's end: closed once the job is
	// cancelled (or its scheduler stops) — then it is granted no more.
	cancelled <-chan struct{}
	queued    time.Time // when it first waited for its instance
	// written: its grant is committed (or it watches a grant already
	// made); until then its row says nothing about it.
	written bool
	// worker and slot: the worker slot the leader's scheduler gave it (a
	// job of a worker type).
	worker string
	slot   int
	// job is what the handler was given: the record handed to this
	// instance's executor with a grant to it.
	job messages.DurableJob
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
	a, err := n.factory(st, recs)
	if err != nil {
		feed.Close()
		return nil, err
	}
	l := &leader{n: n, epoch: epoch, a: a, feed: feed, requests: make(chan *wait, 64), revokes: make(chan uint64, 64), types: make(chan typeReg),
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
	evs, _ := a.Subscribe(1 << 14) // closed when a stops
	go l.publish(evs, l.pubDone)
	settings, err := n.b.Settings(ctx, n.cfg.Domain)
	if err != nil {
		return abort(err)
	}
	// Every type of the domain first — this instance's configurations
	// over those written before (types.go) — then every handler at once:
	// the jobs a previous leader granted are all counted before any other
	// starts. The loop starts after, so that its first read registers the
	// instances' workers for types the scheduler knows (handlers wait for
	// it).
	regs := domainTypes(settings, n.log)
	for _, r := range types {
		regs[r.t] = r.cfg
	}
	all := map[policy.JobType]messages.Handler{}
	for _, t := range sortedKeys(regs) {
		r := typeReg{t, regs[t]}
		if err := l.a.Register(r.t, r.cfg); err != nil && !errors.Is(err, policy.ErrDuplicateType) {
			l.n.log.Error("registering a type in the leader failed", zap.String("type", string(r.t)), zap.Error(err))
			continue
		}
		l.known[r.t] = true
		all[r.t] = l.handler(r)
	}
	// The domain's weights and pauses apply before the first decision.
	l.applySettings(settings)
	if err := l.a.RegisterHandlers(all); err != nil {
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
			err = l.adopt(ctx, recs) // the owner never waits on this goroutine
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

// adopt hands recs to the scheduler adoptChunk at a time, each message
// answered before the next is sent: the owner decides between them.
func (l *leader) adopt(ctx context.Context, recs []core.JobRecord) error {
	for len(recs) > 0 {
		n := min(len(recs), adoptChunk)
		if _, err := l.a.Adopt(ctx, recs[:n]); err != nil {
			return err
		}
		recs = recs[n:]
	}
	return nil
}

// handler is type r's handler in the leader's scheduler: grant the
// attempt to an instance, return how it ended there.
func (l *leader) handler(r typeReg) messages.Handler {
	conflict := ""
	if r.cfg.ConflictGroup != "" && r.cfg.ConflictMode == policy.ConflictExclusive {
		conflict = string(r.cfg.ConflictGroup)
	}
	return func(ctx context.Context, job messages.DurableJob) error {
		w := &wait{seq: job.Seq, typ: job.Type, id: job.ID, owner: job.Owner, attempt: job.Attempt, done: make(chan error, 1), job: job,
			cancelled: ctx.Done()}
		if conflict != "" {
			w.conflict = conflict + "/" + job.ID
		}
		if job.Granted != "" {
			w.instance, w.attempt = job.Granted, -1
		}
		if ref, ok := messages.SlotOf(ctx); ok {
			w.worker, w.slot = ref.Worker, ref.Slot
		}
		select {
		case l.requests <- w:
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-l.done:
			return ErrLeaderLost
		}
		select {
		case err := <-w.done:
			return err
		case <-ctx.Done():
			if !errors.Is(context.Cause(ctx), actor.ErrCancelled) {
				return context.Cause(ctx) // the scheduler stops
			}
			// Cancel: the executor stops it, and it holds its place under
			// the caps until it has (as a cancelled job in one process
			// holds its slot until its function returns).
			select {
			case l.revokes <- job.Seq:
			case <-l.done:
				return ErrLeaderLost
			}
			select {
			case <-w.done:
			case <-l.done:
				return ErrLeaderLost
			}
			return context.Cause(ctx)
		}
	}
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

// stop ends leading: the scheduler is aborted (its writes would be
// fenced anyway), the jobs granted run on, and the next leader waits for
// their ends.
func (l *leader) stop() {
	// The scheduler first: aborted, it writes nothing of the attempts it
	// interrupts (they stay pending), whereas a handler answered by a
	// stopped loop would fail its attempt — and the lease may not have
	// expired yet, so that write might not be fenced.
	l.stopLoad()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = l.a.Close(ctx)
	// Then wait for its final save (within a beat), so that a graceful
	// handover's save lands before the lease is released, not after.
	ctx, cancel = context.WithTimeout(context.Background(), l.n.cfg.Heartbeat)
	_ = l.a.Close(ctx)
	cancel()
	close(l.stopC)
	<-l.done
	<-l.loaderDone
	<-l.pubDone // a's last events published
}

func (l *leader) run() {
	defer close(l.done)
	cfg := l.n.cfg
	instances := map[string]*instance{}
	outstanding := map[uint64]*wait{}
	var batch, queued []*wait // to grant; waiting for a free slot
	var finished []End        // successes answered: their rows go with the next grants
	// tidy: write finished even with no grant to go with; tidyTimer sets
	// it finishedWait after the first success waits (tidyC: its channel
	// while armed, else nil).
	tidy, tidyTimer := false, time.NewTimer(finishedWait)
	tidyTimer.Stop()
	defer tidyTimer.Stop()
	var tidyC <-chan time.Time
	lost := map[string]time.Time{}    // instances this leader declared lost, and when
	workerHome := map[string]string{} // worker → the instance it is registered on
	registered := map[string]string{} // worker → its slots, as registered in the scheduler
	refresh := false                  // an owner unknown yet: read the instances
	loaded := l.loaded                // nil once the backlog is loaded
	wake, stopWake := l.n.b.Wake(context.Background(), LeaderReads, l.n.id)
	defer stopWake()
	endsWake, stopEndsWake := l.n.b.Wake(context.Background(), EndReads, l.n.id)
	defer stopEndsWake()
	poll := time.NewTicker(cfg.Poll)
	defer poll.Stop()
	beat := time.NewTicker(cfg.Heartbeat)
	defer beat.Stop()
	fenced := func(err error) bool {
		if err == nil || !isFenced(err) {
			return false
		}
		select {
		case l.failed <- l.epoch:
		default:
		}
		return true
	}
	answer := func(w *wait, err error) {
		delete(outstanding, w.seq)
		if in := instances[w.instance]; in != nil && w.counts() {
			in.running--
		}
		w.done <- err
	}
	// ended answers w's attempt as e, its end, says. A success is
	// answered at once, and its row deleted with the next grants, in one
	// transaction, deletes first (grant, Backend.Grant): a slot it frees is
	// taken in the database only by a write that also ends the success
	// holding it, so the running rows never exceed a cap, and the
	// scheduler writes nothing more of the job (actor.EndWritten) — not a
	// transaction of its own a batch of successes.
	ended := func(w *wait, e End) {
		if e.Kind != EndOK {
			answer(w, endError(e))
			return
		}
		answer(w, actor.EndWritten)
		finished = append(finished, e)
	}
	// gone reports whether w's handler has given up on it (a Cancel, or
	// the scheduler stopping), and answers it if so: a job not granted
	// yet is granted no more — its handler's revoke may still be on its
	// way to the loop, behind the ends that free the slot it waits for.
	gone := func(w *wait) bool {
		select {
		case <-w.cancelled:
			w.done <- actor.ErrCancelled
			return true
		default:
			return false
		}
	}
	var place func(w *wait)
	place = func(w *wait) {
		if w.attempt != -1 && gone(w) {
			return
		}
		switch {
		case w.attempt == -1: // resumed: it runs already
			w.written = true
			outstanding[w.seq] = w
			if in := instances[w.instance]; in != nil && w.counts() {
				in.running++
			}
			return
		case w.owner != "":
			if instances[w.owner] == nil {
				// Unknown: just joined (the next read of the instances
				// shows it), or gone — declared lost, or silent for as
				// long as that takes.
				if w.queued.IsZero() {
					w.queued = time.Now()
				}
				if _, gone := lost[w.owner]; !gone && time.Since(w.queued) < cfg.LostAfter {
					refresh = true
					queued = append(queued, w)
					return
				}
				w.done <- policy.Permanent(fmt.Errorf("%w: instance %s, which made the job, is gone", workers.ErrWorkerLost, w.owner))
				return
			}
			w.instance = w.owner
		case w.worker != "":
			// On the instance its worker slot is registered on.
			home := workerHome[w.worker]
			if home == "" || instances[home] == nil {
				refresh = true // a worker unregistered meanwhile ends the attempt (ErrWorkerLost)
				queued = append(queued, w)
				return
			}
			w.instance = home
		default:
			// The most specialised instance with a free slot (spec 3's
			// rule for worker slots): the one with the fewest types, so
			// that those taking more stay free for types only they
			// take; then the most free slots (or the leader's own first:
			// LeaderFirst), then the name (better).
			var best *instance
			for _, in := range instances {
				if in.types[string(w.typ)] && in.running < in.Slots && (best == nil || better(in, best, l.n.id, cfg.LeaderFirst)) {
					best = in
				}
			}
			if best == nil {
				if !handledBy(instances, w.typ) {
					refresh = true // an instance may have a handler since the last read
				}
				queued = append(queued, w)
				return
			}
			w.instance = best.ID
			best.running++
		}
		outstanding[w.seq] = w
		batch = append(batch, w)
	}
	replace := func() {
		q := queued
		queued = nil
		for _, w := range q {
			place(w)
		}
	}
	// grant writes the turn: the rows of the successes answered deleted,
	// then the batch granted, in one transaction (Backend.Grant). With no
	// grant to write, the successes' rows wait a little — the jobs their
	// slots go to are on their way from the scheduler, and one write
	// serves both — unless they pile up.
	grant := func() (wrote bool) {
		batch = slices.DeleteFunc(batch, func(w *wait) bool {
			if !gone(w) { // placed since its handler gave up
				return false
			}
			delete(outstanding, w.seq)
			if in := instances[w.instance]; in != nil && w.counts() {
				in.running--
			}
			return true
		})
		if len(batch) == 0 && (len(finished) == 0 || len(finished) < maxFinished && !tidy) {
			return false
		}
		tidy = false
		ctx, cancel := context.WithTimeout(context.Background(), cfg.Heartbeat)
		defer cancel()
		gs := make([]Grant, len(batch))
		for i, w := range batch {
			gs[i] = Grant{Seq: w.seq, Instance: w.instance, Attempt: w.attempt, ConflictKey: w.conflict, Worker: w.worker, Slot: w.slot,
				Handed: w.instance == l.n.id}
		}
		_, took, err := l.n.b.Grant(ctx, cfg.Domain, l.epoch, finished, gs)
		ends := len(finished) // the successes written
		var rest []*wait      // grants not written: the next turn's
		var stopped error     // what stopped a turn written in parts
		if isRefused(err) {
			// A record the database refuses: the turn is written in parts,
			// each refused grant's job failing alone (grantApart).
			p := grantApart(ctx, l.n.b, l.n.log, cfg.Domain, l.epoch, finished, gs, err)
			ends, rest, stopped = p.ends, slices.Clone(batch[p.n:]), p.err
			kept, keptGs := batch[:0], gs[:0]
			for i, w := range batch[:p.n] {
				if e, bad := p.refused[i]; bad {
					answer(w, e)
					continue
				}
				kept, keptGs = append(kept, w), append(keptGs, gs[i])
			}
			batch, gs, took, err = kept, keptGs, p.took, nil
		}
		if fenced(err) {
			return false
		}
		if errors.Is(err, ErrDoubleAdmission) {
			// Never from a sound leader: the database's own guard held.
			// The successes' rows go with the next turn.
			l.n.log.Error("the database refused a double admission; the attempts fail", zap.Error(err))
			for _, w := range batch {
				answer(w, err)
			}
			batch = batch[:0]
			return false
		}
		if err != nil {
			// The database is out of reach: the turn is written at the
			// next, or the lease is lost and the next leader decides (the
			// executor reports the successes through their rows).
			l.n.log.Warn("granting failed; trying again", zap.Error(err))
			return false
		}
		// A row not deleted is gone already (a RunSync's, its scheduler's
		// delete first) or was written since (a success kept
		// WithRetention): it runs no more either way.
		finished = append(finished[:0], finished[ends:]...)
		if tidyC != nil && len(finished) == 0 {
			tidyTimer.Stop()
			tidyC = nil
		}
		ok := make(map[uint64]bool, len(took))
		for _, s := range took {
			ok[s] = true
		}
		// The grants handed to this instance's executor, and their records:
		// one allocation each for the batch, not one a job.
		var handed []Grant
		var records []core.JobRecord
		for i, w := range batch {
			w.written = true
			if !ok[w.seq] { // running already (a previous leader's grant): wait for that end
				if in := instances[w.instance]; in != nil && w.counts() {
					in.running--
				}
				w.attempt, w.instance = -1, ""
				continue
			}
			if gs[i].Handed {
				if handed == nil {
					handed, records = make([]Grant, 0, len(batch)-i), make([]core.JobRecord, 0, len(batch)-i)
				}
				j := w.job
				records = append(records, core.JobRecord{Seq: j.Seq, Type: j.Type, ID: j.ID, Payload: j.Payload, Key: j.FairnessKey,
					Group: j.Group, EnqueuedAt: j.EnqueuedAt, Owner: j.Owner, Attempt: w.attempt})
				g := gs[i]
				g.Record = &records[len(records)-1] // records never grows past its capacity: no pointer moves
				handed = append(handed, g)
			}
		}
		batch = append(batch[:0], rest...)
		if len(handed) > 0 {
			l.n.x.handOver(handoff{grants: handed, ends: l.localEnds, leaderDone: l.done})
		}
		if stopped != nil && !fenced(stopped) {
			l.n.log.Warn("granting failed; trying again", zap.Error(stopped))
		}
		return stopped == nil
	}
	readEnds := func(ctx context.Context, full bool) {
		if !full {
			full = !l.endsSince(ctx, outstanding, ended)
		}
		if len(outstanding) == 0 {
			return
		}
		seqs := make([]uint64, 0, len(outstanding))
		for s, w := range outstanding {
			// A grant not committed yet has no end to read; between full
			// reads, only a resumed job's row is read (to learn where it
			// runs): the others' ends came by endsSince.
			if w.written && (full || w.attempt == -1) {
				seqs = append(seqs, s)
			}
		}
		if len(seqs) == 0 {
			return
		}
		rows, err := l.n.b.Rows(ctx, seqs)
		if err != nil {
			l.n.log.Warn("reading ends failed", zap.Error(err))
			return
		}
		there := map[uint64]bool{}
		for _, r := range rows {
			there[r.Seq] = true
			w := outstanding[r.Seq]
			if w.attempt == -1 {
				switch {
				case r.Running:
					w.instance, w.attempt = r.Instance, r.Attempt
					if in := instances[w.instance]; in != nil && w.counts() {
						in.running++
					}
					continue
				case r.Ended:
					ended(w, r.End)
				default:
					// Revoked (its instance lost) before this leader read
					// it: an interruption (core.AttemptEnd.Interrupted), run
					// again whatever the retry policy.
					answer(w, fmt.Errorf("%w: its grant was taken back", workers.ErrWorkerLost))
				}
				continue
			}
			switch {
			case r.Running && r.Instance == w.instance && r.Attempt == w.attempt:
				// runs on
			case r.Ended && r.End.Instance == w.instance && r.End.Attempt == w.attempt:
				ended(w, r.End)
			default:
				answer(w, fmt.Errorf("%w: instance %s lost the grant", workers.ErrWorkerLost, w.instance))
			}
		}
		for _, s := range seqs {
			if !there[s] {
				// Gone: it ended elsewhere (cancelled, or deleted by its
				// RunSync's instance). Not an interruption: running it again
				// would write its row back.
				answer(outstanding[s], policy.Permanent(fmt.Errorf("%w: the job's row is gone", workers.ErrWorkerLost)))
			}
		}
	}
	var instancesRead time.Time // the last readInstances
	readInstances := func(ctx context.Context) {
		instancesRead = time.Now()
		gone, err := l.n.b.Lost(ctx, cfg.Domain, l.epoch, cfg.LostAfter)
		if fenced(err) {
			return
		}
		for id, at := range lost { // long enough for the jobs that named them
			if time.Since(at) > 2*cfg.LostAfter {
				delete(lost, id)
			}
		}
		for _, id := range gone {
			lost[id] = time.Now()
			l.n.log.Warn("instance lost", zap.String("lost", id))
			if id == l.n.id && len(finished) > 0 {
				// The rows of this instance's successes still run: deleted
				// first, or the revoke would take them back as work to do.
				_, _, err := l.n.b.Grant(ctx, cfg.Domain, l.epoch, finished, nil)
				if fenced(err) {
					return
				}
				if err != nil {
					// Revoked all the same (Lost has forgotten the
					// instance): those jobs run again under the next leader.
					l.n.log.Warn("deleting successes before a revoke failed", zap.Int("jobs", len(finished)), zap.Error(err))
				}
				finished = finished[:0]
			}
			if _, err := l.n.b.Revoke(ctx, cfg.Domain, l.epoch, id); fenced(err) {
				return
			}
			for _, w := range outstanding {
				// A resumed job whose row is not read yet (attempt -1) is
				// answered by that read (readEnds): its end may be reported
				// there already — a success must not run again because the
				// instance that reported it has gone since.
				if w.instance == id && w.attempt != -1 {
					err := fmt.Errorf("%w: instance %s went silent", workers.ErrWorkerLost, id)
					if w.owner != "" {
						err = policy.Permanent(err) // its function went with it
					}
					answer(w, err)
				}
			}
		}
		ins, err := l.n.b.Instances(ctx, cfg.Domain)
		if err != nil {
			return
		}
		next := map[string]*instance{}
		for _, in := range ins {
			c := &instance{Instance: in, types: map[string]bool{}}
			for _, t := range in.Types {
				c.types[t] = true
			}
			next[in.ID] = c
		}
		for _, w := range outstanding {
			if in := next[w.instance]; in != nil && w.counts() && w.attempt != -1 {
				in.running++
			}
		}
		instances = next
		subscribed := false
		for _, in := range next {
			subscribed = subscribed || in.Subscribed
		}
		l.subscribed.Store(subscribed)
		handled := map[string]bool{}
		for _, in := range next {
			for t := range in.types {
				handled[t] = true
			}
		}
		l.learnTypes(ctx, handled)
		l.syncWorkers(next, workerHome, registered)
		// The finished RunSync and Submit jobs of instances gone — lost,
		// or closed before reading how their jobs ended — have nobody
		// left to read them: forget them, once finished for long enough
		// that an instance declared lost but alive has read them. (Whoever
		// declared the instance lost, even a previous leader, this sweep
		// finds them.)
		live := make([]string, 0, len(next))
		for id := range next {
			live = append(live, id)
		}
		if _, err := l.n.b.ForgetOrphans(ctx, cfg.Domain, l.epoch, live, 2*cfg.LostAfter); err != nil && !fenced(err) {
			l.n.log.Warn("forgetting the jobs of gone instances failed", zap.Error(err))
		}
	}
	lastEnds := time.Now() // the last read of every outstanding row
	// read reads what changed: the commands and new jobs (jobs), the ends
	// reported (ends); each wake-up says which.
	read := func(jobs, ends bool) {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.Heartbeat)
		defer cancel()
		if !jobs {
			full := time.Since(lastEnds) >= cfg.Heartbeat
			if full {
				lastEnds = time.Now()
			}
			readEnds(ctx, full)
			return
		}
		// The commands first, the new jobs after: a command sees every job
		// committed before it was (a Supersede finds the job it replaces)
		// — so none runs before the backlog is loaded.
		var cmds []Command
		if loaded == nil {
			var err error
			if cmds, err = l.n.b.Commands(ctx, cfg.Domain); err != nil {
				l.n.log.Warn("reading commands failed", zap.Error(err))
			}
		}
		recs, err := l.feed.Next(ctx)
		if err != nil {
			l.n.log.Warn("reading new jobs failed", zap.Error(err))
		} else if len(recs) > 0 {
			// The owner never waits on this loop, so waiting on it is safe.
			if err := l.adopt(ctx, recs); err != nil {
				l.n.log.Warn("adopting new jobs failed", zap.Error(err))
			}
		}
		if ends {
			full := time.Since(lastEnds) >= cfg.Heartbeat
			if full {
				lastEnds = time.Now()
			}
			readEnds(ctx, full)
		}
		l.runCommands(ctx, cmds)
	}

	func() {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.Heartbeat)
		defer cancel()
		readInstances(ctx)
	}()
	for {
		select {
		case <-loaded:
			loaded = nil // every pending job is in: the commands waiting run
			read(true, false)
			replace()
		case w := <-l.requests:
			place(w)
		drain:
			for {
				select {
				case w := <-l.requests:
					place(w)
				default:
					break drain
				}
			}
		case e := <-l.localEnds:
			// This instance's executor's successes, in process: answered
			// now (ended), their rows deleted with the next grants. A
			// fenced write leaves the rows running: the executor reports
			// them through their rows at its next full read, to the next
			// leader.
			for more := true; more; {
				if w := outstanding[e.Seq]; w != nil && w.written && w.instance == e.Instance && w.attempt == e.Attempt {
					ended(w, e)
				}
				select {
				case e = <-l.localEnds:
				default:
					more = false
				}
			}
			replace() // slots are free: the jobs waiting for one go in this turn
		case <-tidyC:
			tidyC, tidy = nil, true
		case r := <-l.types:
			l.register(r)
		case seq := <-l.revokes:
			// Not granted yet: it never starts. Granted: its executor
			// stops it and reports the end (readEnds answers).
			if w := outstanding[seq]; w != nil && !w.written {
				batch = slices.DeleteFunc(batch, func(b *wait) bool { return b == w })
				answer(w, actor.ErrCancelled)
				break
			}
			if i := slices.IndexFunc(queued, func(q *wait) bool { return q.seq == seq }); i >= 0 {
				w := queued[i]
				queued = slices.Delete(queued, i, i+1)
				w.done <- actor.ErrCancelled
				break
			}
			if outstanding[seq] == nil {
				break // answered already: never granted (gone), or its end read
			}
			func() {
				ctx, cancel := context.WithTimeout(context.Background(), cfg.Heartbeat)
				defer cancel()
				if err := l.n.b.RevokeJob(ctx, cfg.Domain, l.epoch, seq); err != nil && !fenced(err) {
					l.n.log.Warn("taking a cancelled job's grant back failed", zap.Error(err))
				}
			}()
		case reply := <-l.infoC:
			in := leaderInfo{running: map[string]string{}}
			for _, id := range sortedKeys(instances) {
				c := instances[id]
				in.instances = append(in.instances, InstanceInfo{ID: nameOf(c.ID), Incarnation: c.ID, Slots: c.Slots, Types: c.Types,
					Running: c.running, Subscribed: c.Subscribed})
			}
			for _, w := range outstanding {
				in.running[string(w.typ)+"/"+w.id] = nameOf(w.instance)
			}
			reply <- in
		case _, ok := <-wake:
			if !ok {
				wake = nil // the listener's connection is gone: poll
			}
			read(true, false)
			replace()
		case _, ok := <-endsWake:
			if !ok {
				endsWake = nil
			}
			read(false, true)
			replace()
		case <-poll.C:
			read(true, true)
			replace()
		case <-l.reread:
			func() {
				ctx, cancel := context.WithTimeout(context.Background(), cfg.Heartbeat)
				defer cancel()
				readInstances(ctx)
			}()
			replace()
		case <-beat.C:
			func() {
				ctx, cancel := context.WithTimeout(context.Background(), cfg.Heartbeat)
				defer cancel()
				readInstances(ctx)
			}()
			replace()
		case <-l.stopC:
			for _, w := range outstanding {
				w.done <- ErrLeaderLost
			}
			if len(finished) > 0 {
				// Their rows would wait for the next leader (which resumes
				// each and reads its end): while the lease holds, delete
				// them now.
				ctx, cancel := context.WithTimeout(context.Background(), cfg.Heartbeat)
				_, _, _ = l.n.b.Grant(ctx, cfg.Domain, l.epoch, finished, nil)
				cancel()
			}
			return
		}
		if refresh && time.Since(instancesRead) >= cfg.Poll {
			refresh = false
			func() {
				ctx, cancel := context.WithTimeout(context.Background(), cfg.Heartbeat)
				defer cancel()
				readInstances(ctx)
			}()
			replace()
		}
		// A turn that freed slots placed the jobs waiting for them: they
		// are granted now, not at the next wake-up.
		for grant() && len(batch) > 0 {
		}
		if len(finished) > 0 && tidyC == nil {
			tidyTimer.Reset(finishedWait)
			tidyC = tidyTimer.C
		}
	}
}

// The successes' rows wait for a turn with grants (leader.run) at most
// finishedWait, and up to maxFinished of them: then they are deleted in a
// write of their own. Until then an Enqueue of the same (type, id) finds
// the job unfinished, as while it ran.
const (
	finishedWait = 2 * time.Millisecond
	maxFinished  = 1024
)

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
			_ = l.a.Worker(wid, nil, true)
			delete(registered, wid)
			delete(home, wid)
		}
	}
	for _, wid := range sortedKeys(wanted) {
		w := wanted[wid]
		if _, ok := registered[wid]; ok {
			continue
		}
		if err := l.a.Worker(wid, w.slots, false); err != nil {
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
		if e.Error == ErrFunctionGone.Error() { // the leader passes its waiters on (actor.endWaiters)
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
	if strings.Contains(e.Error, workers.ErrWorkerLost.Error()) || strings.Contains(e.Error, actor.ErrClosed.Error()) {
		return &remoteError{text: e.Error, err: workers.ErrWorkerLost}
	}
	return errors.New(e.Error)
}

// isFenced reports whether err is the backend's refusal of a deposed
// leader's write.
func isFenced(err error) bool { return errors.Is(err, ErrFenced) }
