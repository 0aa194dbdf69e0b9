package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/workers"
)

// grantLoop is the state the leader's loop (leader.run) owns, and its
// steps: read what changed, answer the ends, place the admitted jobs, write
// the turn. Only the loop's goroutine touches it.
type grantLoop struct {
	l           *leader
	cfg         Config
	instances   map[string]*instance
	outstanding map[uint64]*wait // placed and not answered
	batch       []*wait          // to grant
	flying      *flight          // the turn's write in flight (flight.go), or nil
	deposed     bool             // a write was fenced: another leader holds the lease
	queued      []*wait          // waiting for a free slot (or an instance)
	finished    []End            // successes answered: their rows go with the next grants
	told        *listener[[]End] // the successes other instances tell (Backend.Successes)
	// tidy: write finished even with no grant to go with; tidyTimer sets
	// it finishedWait after the first success waits (tidyC: its channel
	// while armed, else nil).
	tidy      bool
	tidyTimer *time.Timer
	tidyC     <-chan time.Time
	lost      map[string]time.Time // instances this leader declared lost, and when
	// retry: a read of the jobs, commands or ends failed — all are read
	// again soon, not only at the next poll.
	retry retryTimer
	// writeRetry: a turn's write failed (the database out of reach); the
	// next waits for its timer, backing off to Poll, not for the next
	// wake-up — a success waiting to be deleted arms one every 2 ms.
	writeRetry retryTimer
	// workerHome: worker → the instance it is registered on; registered:
	// worker → its slots, as registered in the scheduler.
	workerHome, registered map[string]string
	refresh                bool          // an owner unknown yet: read the instances
	loaded                 chan struct{} // nil once the backlog is loaded
	instancesRead          time.Time     // the last readInstances
	lastEnds               time.Time     // the last read of every outstanding row
}

func newGrantLoop(l *leader) *grantLoop {
	g := &grantLoop{l: l, cfg: l.n.cfg, instances: map[string]*instance{}, outstanding: map[uint64]*wait{},
		tidyTimer: time.NewTimer(finishedWait), lost: map[string]time.Time{}, workerHome: map[string]string{},
		registered: map[string]string{}, loaded: l.loaded, lastEnds: time.Now()}
	g.tidyTimer.Stop()
	return g
}

// timed runs step under a heartbeat's timeout.
func (g *grantLoop) timed(step func(ctx context.Context)) {
	ctx, cancel := context.WithTimeout(context.Background(), g.cfg.Heartbeat)
	defer cancel()
	step(ctx)
}

// fenced reports whether err is a fenced write's, and ends leading if so:
// the loop writes no more turns (deposed) until its node stops it.
func (g *grantLoop) fenced(err error) bool {
	if err == nil || !isFenced(err) {
		return false
	}
	g.deposed = true
	select {
	case g.l.failed <- g.l.epoch:
	default:
	}
	return true
}

// unplace takes w's slot back on its instance.
func (g *grantLoop) unplace(w *wait) {
	if in := g.instances[w.instance]; in != nil && w.counts() {
		in.running--
	}
}

func (g *grantLoop) answer(w *wait, err error) {
	delete(g.outstanding, w.seq)
	g.unplace(w)
	g.end(w, err)
}

// end sends the scheduler the end of w's attempt: err, or — Cancel took
// it back — a cancellation, however the instance ended it.
func (g *grantLoop) end(w *wait, err error) {
	if w.revoked {
		err = machine.ErrCancelled
	}
	g.l.ends(w.at, err)
}

// takeOps takes the starts and revokes the machine made in the turn and
// carries them out; an attempt cancelled meanwhile is ended at once
// (gone), which may let others start: taken too, until none is left.
func (g *grantLoop) takeOps() (took bool) {
	if g.l.m == nil {
		return false
	}
	for {
		g.l.m.SetFreeSlots(g.freeSlots())
		g.l.ops = g.l.m.TakeOps(g.l.ops[:0])
		if len(g.l.ops) == 0 {
			return took
		}
		took = true
		for i, op := range g.l.ops {
			g.take(op)
			g.l.ops[i] = messages.RemoteOp{}
		}
	}
}

// freeSlots is how many more jobs the machine may admit to instances'
// Slots (Machine.SetFreeSlots): the slots free on the instances that
// handle a type. A job decided ahead of a free slot would wait here, in
// the order of its decision, and a job of another key that arrives later
// would wait behind it; left in the machine, it waits in the fair order,
// decided when a slot is free.
func (g *grantLoop) freeSlots() int {
	free := 0
	for _, in := range g.instances {
		if len(in.types) > 0 && in.running < in.Slots {
			free += in.Slots - in.running
		}
	}
	return free
}

// closeTurn takes the turn's ops and grants them; what the grants' write
// and the instances' read changed in the machine meanwhile (ends of
// cancelled waits, workers gone) is settled by one more TakeOps — its
// timer armed, its new starts granted — until a pass takes nothing.
func (g *grantLoop) closeTurn() {
	g.takeOps()
	for {
		g.endTurn()
		if !g.takeOps() {
			return
		}
	}
}

// take carries out op, the scheduler's: a start becomes a wait placed on an
// instance, a revoke takes its attempt back.
func (g *grantLoop) take(op messages.RemoteOp) {
	if op.Revoke {
		g.revoke(op.Attempt)
		return
	}
	g.place(newWait(op.Attempt, g.l.conflicts[op.Attempt.Job.Type]))
}

// ended answers w's attempt as e, its end, says. A success is answered at
// once, and its row deleted with the next grants, in one transaction,
// deletes first (grant, Backend.Grant): a slot it frees is taken in the
// database only by a write that also ends the success holding it, so the
// running rows never exceed a cap, and the scheduler writes nothing more
// of the job (machine.EndWritten) — not a transaction of its own a batch of
// successes.
func (g *grantLoop) ended(w *wait, e End) {
	if e.Kind != EndOK {
		g.answer(w, endError(e))
		return
	}
	g.answer(w, machine.EndWritten)
	g.finished = append(g.finished, e)
}

// gone reports whether w's attempt is cancelled (a Cancel, or the
// scheduler stopping), and answers it if so: a job not granted yet is
// granted no more — its revoke may still be on its way to the loop,
// behind the ends that free the slot it waits for.
func (g *grantLoop) gone(w *wait) bool {
	if w.at.Ctx.Err() == nil {
		return false
	}
	g.end(w, machine.ErrCancelled)
	return true
}

// place puts w in the turn's batch on the instance placement chooses, or
// queues it until one can take it.
func (g *grantLoop) place(w *wait) {
	if w.attempt == -1 { // resumed: it runs already
		w.written = true
		g.outstanding[w.seq] = w
		if in := g.instances[w.instance]; in != nil && w.counts() {
			in.running++
		}
		return
	}
	if g.gone(w) {
		return
	}
	if prev := g.outstanding[w.seq]; prev != nil && prev.at != w.at {
		// The job's previous attempt has not ended on its instance yet (the
		// scheduler ended it early: its worker went): one attempt of a job
		// runs at a time, so this one waits for that end (rowsRead, replace).
		g.queued = append(g.queued, w)
		return
	}
	c := g.view().choose(w.typ, w.owner, w.worker)
	switch {
	case c.ownerUnknown:
		g.ownerUnknown(w)
		return
	case c.instance == "":
		g.refresh = g.refresh || c.refresh
		g.queued = append(g.queued, w)
		return
	}
	w.instance = c.instance
	if w.counts() {
		g.instances[c.instance].running++
	}
	g.outstanding[w.seq] = w
	g.batch = append(g.batch, w)
}

// ownerUnknown deals with a RunSync or Submit whose instance the leader
// does not know: just joined (the next read of the instances shows it),
// or gone — declared lost, or silent for as long as that takes.
func (g *grantLoop) ownerUnknown(w *wait) {
	if w.queued.IsZero() {
		w.queued = time.Now()
	}
	if _, lost := g.lost[w.owner]; !lost && time.Since(w.queued) < g.cfg.LostAfter {
		g.refresh = true
		g.queued = append(g.queued, w)
		return
	}
	g.end(w, policy.Permanent(fmt.Errorf("%w: instance %s, which made the job, is gone", workers.ErrWorkerLost, w.owner)))
}

func (g *grantLoop) view() placeView {
	return placeView{instances: g.instances, workerHome: g.workerHome, self: g.l.n.id, leaderFirst: g.cfg.LeaderFirst}
}

// replace places again the jobs waiting.
func (g *grantLoop) replace() {
	q := g.queued
	g.queued = nil
	for _, w := range q {
		g.place(w)
	}
}

// endTurn closes a turn of the loop: the instances read if a placement
// asked for them, the placed jobs granted — a turn that freed slots placed
// the jobs waiting for them: they are granted now, not at the next
// wake-up — and the successes' timer armed.
func (g *grantLoop) endTurn() {
	if g.refresh && time.Since(g.instancesRead) >= g.cfg.Poll {
		g.refresh = false
		g.timed(g.readInstances)
		g.replace()
	}
	for g.grant() && (len(g.batch) > 0 || g.recordsWaiting()) {
	}
	if len(g.finished) > 0 && g.tidyC == nil && g.writeRetry.c == nil && g.flying == nil {
		g.tidyTimer.Reset(finishedWait)
		g.tidyC = g.tidyTimer.C
	}
}

// recordsWaiting reports whether the machine has records to write.
func (g *grantLoop) recordsWaiting() bool {
	return g.l.m != nil && g.l.m.RecordsWaiting()
}

// localEnded answers this instance's executor's successes, in process (e
// and those queued behind it), their rows deleted with the next grants. A
// fenced write leaves the rows running: the executor reports them through
// their rows at its next full read, to the next leader.
func (g *grantLoop) localEnded(e End) {
	for more := true; more; {
		if w := g.outstanding[e.Seq]; w != nil && w.written && w.instance == e.Instance && w.attempt == e.Attempt {
			g.ended(w, e)
		}
		select {
		case e = <-g.l.localEnds:
		default:
			more = false
		}
	}
}

// toldEnded answers the successes other instances told (ends, and those
// queued behind it: Backend.TellSucceeded) as localEnded does its own
// instance's.
func (g *grantLoop) toldEnded(ends []End) {
	for more := true; more; {
		for _, e := range ends {
			if w := g.current(e.Seq); w != nil && w.written && w.attempt != -1 && w.instance == e.Instance && w.attempt == e.Attempt {
				g.ended(w, e)
			}
		}
		select {
		case ends, more = <-g.told.C:
		default:
			more = false
		}
	}
}

// revoke deals with attempt at, which Cancel took back. Not granted yet:
// it never starts. Granted: its executor stops it and reports the end
// (readEnds answers), and it holds its place under the caps until then
// (as a cancelled job in one process holds its slot until its function
// returns).
func (g *grantLoop) revoke(at *messages.RemoteAttempt) {
	seq := at.Job.Seq
	w := g.current(seq) // granted or not, as its write went
	if w != nil && w.at == at && !w.written {
		g.batch = slices.DeleteFunc(g.batch, func(b *wait) bool { return b == w })
		g.answer(w, machine.ErrCancelled)
		return
	}
	if i := slices.IndexFunc(g.queued, func(q *wait) bool { return q.at == at }); i >= 0 {
		w := g.queued[i]
		g.queued = slices.Delete(g.queued, i, i+1)
		g.end(w, machine.ErrCancelled)
		return
	}
	if w == nil || w.at != at {
		return // answered already: never granted (gone), or its end read
	}
	w.revoked = true
	why := revokeCause(at)
	g.timed(func(ctx context.Context) {
		if err := g.l.n.b.RevokeJob(ctx, g.cfg.Domain, g.l.epoch, seq, why); err != nil && !g.fenced(err) {
			g.l.n.log.Warn("taking a cancelled job's grant back failed", zap.Error(err))
		}
	})
}

// revokeCause is why the scheduler took attempt at back: the cause its
// context was cancelled with, which its executor gives the handler's.
func revokeCause(at *messages.RemoteAttempt) RevokeCause {
	if errors.Is(context.Cause(at.Ctx), policy.ErrPreempted) {
		return RevokePreempt
	}
	return RevokeCancel
}

// info is what the leader knows of the instances and the jobs running.
func (g *grantLoop) info() leaderInfo {
	in := leaderInfo{running: map[string]string{}}
	for _, id := range sortedKeys(g.instances) {
		c := g.instances[id]
		in.instances = append(in.instances, InstanceInfo{ID: nameOf(c.ID), Incarnation: c.ID, Slots: c.Slots, Types: c.Types,
			Running: c.running, Subscribed: c.Subscribed})
	}
	for _, w := range g.outstanding {
		in.running[string(w.typ)+"/"+w.id] = nameOf(w.instance)
	}
	return in
}

// stop answers every job outstanding ErrLeaderLost and deletes the rows of
// the successes answered: they would wait for the next leader (which
// resumes each and reads its end) — while the lease holds, delete them now.
func (g *grantLoop) stop() {
	for _, w := range g.outstanding {
		g.end(w, ErrLeaderLost) // stale: the aborted scheduler ended them
	}
	if len(g.finished) > 0 {
		g.timed(func(ctx context.Context) {
			_, _, _ = g.l.n.b.Grant(ctx, g.cfg.Domain, g.l.epoch, nil, g.finished, nil)
		})
	}
}

// read reads what changed: the commands and new jobs (jobs), the ends
// reported (ends); each wake-up says which.
func (g *grantLoop) read(jobs, ends bool) {
	g.timed(func(ctx context.Context) {
		if !jobs {
			g.readEnds(ctx, g.fullRead())
			return
		}
		// The commands first, the new jobs after: a command sees every job
		// committed before it was (a Supersede finds the job it replaces)
		// — so none runs before the backlog is loaded.
		var cmds []Command
		if g.loaded == nil {
			var err error
			if cmds, err = g.l.n.b.Commands(ctx, g.cfg.Domain); err != nil {
				g.l.n.log.Warn("reading commands failed", zap.Error(err))
				g.retry.failed(g.cfg.Poll)
			}
		}
		g.readJobs(ctx)
		if ends {
			g.readEnds(ctx, g.fullRead())
		}
		if len(cmds) > 0 {
			g.settle() // a command's answer may wait for the machine's records in flight
		}
		g.l.runCommands(ctx, cmds)
	})
}

// fullRead reports whether the ends' read is due to read every outstanding
// row (once a heartbeat), and counts it done.
func (g *grantLoop) fullRead() bool {
	full := time.Since(g.lastEnds) >= g.cfg.Heartbeat
	if full {
		g.lastEnds = time.Now()
	}
	return full
}

// readJobs hands the new jobs to the scheduler. Its owner never waits on
// this loop, so waiting on it is safe.
func (g *grantLoop) readJobs(ctx context.Context) {
	recs, err := g.l.feed.Next(ctx)
	if err != nil {
		g.l.n.log.Warn("reading new jobs failed", zap.Error(err))
		g.retry.failed(g.cfg.Poll)
		return
	}
	g.retry.ok()
	g.l.adopt(recs)
}

// readEnds answers the outstanding jobs whose ends were reported: those
// since the last read (endsSince), and — full, or when that read failed —
// those read from their rows.
func (g *grantLoop) readEnds(ctx context.Context, full bool) {
	if !full {
		full = !g.l.endsSince(ctx, g.current, g.ended)
	}
	if len(g.outstanding) == 0 {
		return
	}
	seqs := make([]uint64, 0, len(g.outstanding))
	for s, w := range g.outstanding {
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
	rows, err := g.l.n.b.Rows(ctx, seqs)
	if err != nil {
		g.l.n.log.Warn("reading ends failed", zap.Error(err))
		g.retry.failed(g.cfg.Poll)
		return
	}
	g.rowsRead(seqs, rows)
}

// rowsRead answers the jobs of seqs as their rows say.
func (g *grantLoop) rowsRead(seqs []uint64, rows []Row) {
	there := map[uint64]bool{}
	for _, r := range rows {
		there[r.Seq] = true
		w := g.outstanding[r.Seq]
		if w.attempt == -1 {
			g.resumedRow(w, r)
			continue
		}
		switch {
		case r.Running && r.Instance == w.instance && r.Attempt == w.attempt:
			// runs on
		case r.Ended && r.End.Instance == w.instance && r.End.Attempt == w.attempt:
			g.ended(w, r.End)
		default:
			g.answer(w, fmt.Errorf("%w: instance %s lost the grant", workers.ErrWorkerLost, w.instance))
		}
	}
	for _, s := range seqs {
		if !there[s] {
			// Gone: it ended elsewhere (cancelled, or deleted by its
			// RunSync's instance). Not an interruption: running it again
			// would write its row back.
			g.answer(g.outstanding[s], policy.Permanent(fmt.Errorf("%w: the job's row is gone", workers.ErrWorkerLost)))
		}
	}
}

// resumedRow learns from r where w, a job a previous leader granted, runs,
// or how it ended.
func (g *grantLoop) resumedRow(w *wait, r Row) {
	switch {
	case r.Running:
		w.instance, w.attempt = r.Instance, r.Attempt
		if in := g.instances[w.instance]; in != nil && w.counts() {
			in.running++
		}
	case r.Ended:
		g.ended(w, r.End)
	default:
		// Revoked (its instance lost) before this leader read it: an
		// interruption (core.AttemptEnd.Interrupted), run again whatever
		// the retry policy.
		g.answer(w, fmt.Errorf("%w: its grant was taken back", workers.ErrWorkerLost))
	}
}

// readInstances takes the grants of the instances lost back, and reads the
// instances alive: their slots, types and workers.
func (g *grantLoop) readInstances(ctx context.Context) {
	g.settle() // its revokes and deletes follow the turn's write; the machine's workers change
	g.instancesRead = time.Now()
	gone, err := g.l.n.b.Lost(ctx, g.cfg.Domain, g.l.epoch, g.cfg.LostAfter)
	if g.fenced(err) {
		return
	}
	for id, at := range g.lost { // long enough for the jobs that named them
		if time.Since(at) > 2*g.cfg.LostAfter {
			delete(g.lost, id)
		}
	}
	for _, id := range gone {
		if !g.instanceLost(ctx, id) {
			return
		}
	}
	ins, err := g.l.n.b.Instances(ctx, g.cfg.Domain)
	if err != nil {
		g.l.n.log.Warn("reading the instances failed", zap.Error(err))
		return
	}
	g.instancesAre(ctx, ins)
}

// instanceLost takes the grants of id, an instance lost, back and answers
// its jobs; false: a write was fenced or failed (the instances are read
// again later).
func (g *grantLoop) instanceLost(ctx context.Context, id string) bool {
	g.lost[id] = time.Now()
	g.l.n.log.Warn("instance lost", zap.String("lost", id))
	if slices.ContainsFunc(g.finished, func(e End) bool { return e.Instance == id }) {
		// The rows of this instance's successes (handed back in process,
		// or told) still run: deleted first, or the revoke would take
		// them back as work to do.
		_, _, err := g.l.n.b.Grant(ctx, g.cfg.Domain, g.l.epoch, nil, g.finished, nil)
		if g.fenced(err) {
			return false
		}
		if err != nil {
			// Not revoked now: the revoke would take this instance's
			// successes back as work to do, and a job that succeeded would
			// run again. Every success stays for the next write (answered
			// already, their rows are read no more: a row left running
			// would hold its RunSync's caller for ever), and Lost names
			// the instance again at the next read of the instances — it
			// holds running rows and has no row —, which tries again.
			g.l.n.log.Warn("deleting successes before a revoke failed; the revoke waits", zap.String("lost", id), zap.Int("jobs", len(g.finished)), zap.Error(err))
			return false
		}
		g.finished = g.finished[:0]
	}
	if _, err := g.l.n.b.Revoke(ctx, g.cfg.Domain, g.l.epoch, id); g.fenced(err) {
		return false
	}
	for _, w := range g.outstanding {
		// A resumed job whose row is not read yet (attempt -1) is answered
		// by that read (readEnds): its end may be reported there already —
		// a success must not run again because the instance that reported
		// it has gone since.
		if w.instance == id && w.attempt != -1 {
			err := fmt.Errorf("%w: instance %s went silent", workers.ErrWorkerLost, id)
			if w.owner != "" {
				err = policy.Permanent(err) // its function went with it
			}
			g.answer(w, err)
		}
	}
	return true
}

// instancesAre makes ins the instances the loop places on.
func (g *grantLoop) instancesAre(ctx context.Context, ins []Instance) {
	next := map[string]*instance{}
	subscribed := false
	var subscribers []string
	handled := map[string]bool{}
	for _, in := range ins {
		c := &instance{Instance: in, types: map[string]bool{}}
		for _, t := range in.Types {
			c.types[t] = true
			handled[t] = true
		}
		next[in.ID] = c
		subscribed = subscribed || in.Subscribed
		if in.Subscribed {
			subscribers = append(subscribers, in.ID)
		}
	}
	for _, w := range g.outstanding {
		if in := next[w.instance]; in != nil && w.counts() && w.attempt != -1 {
			in.running++
		}
	}
	g.instances = next
	g.l.subscribed.Store(subscribed)
	g.l.subscribers.Store(&subscribers) // after subscribed: what the publisher acknowledges, it publishes
	g.l.learnTypes(ctx, handled)
	g.l.syncWorkers(next, g.workerHome, g.registered)
	// The finished RunSync and Submit jobs of instances gone — lost, or
	// closed before reading how their jobs ended — have nobody left to
	// read them: forget them, once finished for long enough that an
	// instance declared lost but alive has read them. (Whoever declared
	// the instance lost, even a previous leader, this sweep finds them.)
	live := make([]string, 0, len(next))
	for id := range next {
		live = append(live, id)
	}
	if _, err := g.l.n.b.ForgetOrphans(ctx, g.cfg.Domain, g.l.epoch, live, 2*g.cfg.LostAfter); err != nil && !g.fenced(err) {
		g.l.n.log.Warn("forgetting the jobs of gone instances failed", zap.Error(err))
	}
}

// grant launches the turn's write, one transaction (Backend.Grant): the
// records the machine wrote (a retry, a dead job), the rows of the
// successes answered deleted, then the batch granted. With no grant and no
// record to write, the successes' rows wait a little — the jobs their
// slots go to are on their way from the scheduler, and one write serves
// both — unless they pile up. It writes nothing while a write is in
// flight (flight.go) or after one failed, until its retry.
func (g *grantLoop) grant() (launched bool) {
	if g.writeRetry.c != nil || g.flying != nil || g.deposed {
		return false
	}
	g.batch = slices.DeleteFunc(g.batch, func(w *wait) bool {
		if g.outstanding[w.seq] != w {
			return true // answered since it was placed (its instance lost)
		}
		if !g.gone(w) { // placed since it was cancelled
			return false
		}
		delete(g.outstanding, w.seq)
		g.unplace(w)
		return true
	})
	ops, records := g.takeRecords()
	if !records && len(g.batch) == 0 && (len(g.finished) == 0 || len(g.finished) < maxFinished && !g.tidy) {
		return false
	}
	g.tidy = false
	n := min(len(g.batch), maxGrants)
	gs := make([]Grant, n)
	for i, w := range g.batch[:n] {
		gs[i] = Grant{Seq: w.seq, Instance: w.instance, Attempt: w.attempt, ConflictKey: w.conflict, Worker: w.worker, Slot: w.slot,
			Handed: w.instance == g.l.n.id}
	}
	f := &flight{batch: g.batch[:n:n], gs: gs, records: records, ends: len(g.finished), done: make(chan flightResult, 1)}
	g.batch = g.batch[n:] // the next write's: f holds this one's
	g.launch(f, ops)
	return true
}

// land deals with the result of the write in flight: the records
// reported to the machine, the successes written taken off finished, the
// grants marked written and handed over. A write the store refused for a
// record is written again in parts; one that failed leaves its grants
// first in the next turn's batch.
func (g *grantLoop) land(r flightResult) {
	f := g.flying
	g.flying = nil
	for _, w := range f.batch {
		w.flying = false
	}
	next := g.batch // placed while f was in flight: after f's grants not written
	g.batch = f.batch
	defer func() { g.batch = append(g.batch, next...) }()
	records, took, err, gs := f.records, r.took, r.err, f.gs
	ctx, cancel := context.WithTimeout(context.Background(), g.cfg.Heartbeat)
	defer cancel()
	succeeded := g.finished[:f.ends]
	if records && isRefused(err) {
		// The records are written through the store in parts, so that
		// only a refused one fails; the grants go on their own.
		g.l.m.BatchWritten(err)
		records = false
		_, took, err = g.l.n.b.Grant(ctx, g.cfg.Domain, g.l.epoch, nil, succeeded, gs)
	}
	defer g.recordsWritten(records, err)
	ends := f.ends    // the successes written
	var rest []*wait  // grants not written: the next turn's
	var stopped error // what stopped a turn written in parts
	if isRefused(err) {
		// A record the database refuses: the turn is written in parts,
		// each refused grant's job failing alone (grantApart).
		var p grantParts
		p, rest, gs = g.inParts(ctx, succeeded, gs, err)
		ends, stopped, took, err = p.ends, p.err, p.took, nil
	}
	if !g.granted(err) {
		return
	}
	// A row not deleted is gone already (a RunSync's, its scheduler's
	// delete first) or was written since (a success kept WithRetention):
	// it runs no more either way.
	g.finished = append(g.finished[:0], g.finished[ends:]...)
	if g.tidyC != nil && len(g.finished) == 0 {
		g.tidyTimer.Stop()
		g.tidyC = nil
	}
	g.written(gs, took, f.launched)
	g.batch = append(g.batch[:0], rest...)
	if stopped != nil && !g.fenced(stopped) {
		g.l.n.log.Warn("granting failed; trying again", zap.Error(stopped))
		g.writeRetry.failed(g.cfg.Poll)
	}
}

// takeRecords takes the machine's batch of records to write with the
// turn's grants, if one waits.
func (g *grantLoop) takeRecords() ([]machine.JobOp, bool) {
	if g.l.m == nil {
		return nil, false
	}
	return g.l.m.TakeBatch()
}

// recordsWritten tells the machine how the write of its records went (err
// nil: committed), once the turn's grants are dealt with: the answers and
// starts it then makes are the next pass's (closeTurn).
func (g *grantLoop) recordsWritten(records bool, err error) {
	if records {
		g.l.m.BatchWritten(err)
	}
}

// inParts writes the turn the database refused as one in parts (grantApart):
// each refused grant's job fails alone. It returns how the parts went, the
// grants not dealt with (the next turn's), and the grants of the batch
// left, which it leaves to the written ones and those not refused.
func (g *grantLoop) inParts(ctx context.Context, succeeded []End, gs []Grant, refusal error) (grantParts, []*wait, []Grant) {
	p := grantApart(ctx, g.l.n.b, g.l.n.log, g.cfg.Domain, g.l.epoch, succeeded, gs, refusal)
	rest := slices.Clone(g.batch[p.n:])
	kept, keptGs := g.batch[:0], gs[:0]
	for i, w := range g.batch[:p.n] {
		if e, bad := p.refused[i]; bad {
			g.answer(w, e)
			continue
		}
		kept, keptGs = append(kept, w), append(keptGs, gs[i])
	}
	g.batch = kept
	return p, rest, keptGs
}

// granted reports whether the turn's write went through, and deals with
// the batch if it did not.
func (g *grantLoop) granted(err error) bool {
	if g.fenced(err) {
		return false
	}
	if errors.Is(err, ErrDoubleAdmission) {
		// Never from a sound leader: the database's own guard held. The
		// successes' rows go with the next turn.
		g.l.n.log.Error("the database refused a double admission; the attempts fail", zap.Error(err))
		for _, w := range g.batch {
			g.answer(w, err)
		}
		g.batch = g.batch[:0]
		return false
	}
	if err != nil {
		// The database is out of reach: the turn is written at the next, or
		// the lease is lost and the next leader decides (the executor
		// reports the successes through their rows).
		g.l.n.log.Warn("granting failed; trying again", zap.Error(err))
		g.writeRetry.failed(g.cfg.Poll)
		return false
	}
	g.writeRetry.ok()
	return true
}

// written marks the batch's grants committed — those that did not take
// run already (a previous leader's grant): they wait for that end — and
// hands the grants to this instance to its executor, with their records.
func (g *grantLoop) written(gs []Grant, took []uint64, launched time.Time) {
	ok := make(map[uint64]bool, len(took))
	for _, s := range took {
		ok[s] = true
	}
	// One allocation each for the batch, not one a job.
	var handed []Grant
	var records []core.JobRecord
	for i, w := range g.batch {
		w.written = true
		if !ok[w.seq] {
			g.unplace(w)
			w.attempt, w.instance = -1, ""
			continue
		}
		if gs[i].Handed {
			if handed == nil {
				handed, records = make([]Grant, 0, len(g.batch)-i), make([]core.JobRecord, 0, len(g.batch)-i)
			}
			j := w.at.Job
			records = append(records, core.JobRecord{Seq: j.Seq, Type: j.Type, ID: j.ID, Payload: j.Payload, Key: j.FairnessKey,
				Group: j.Group, EnqueuedAt: j.EnqueuedAt, Owner: j.Owner, Attempt: w.attempt})
			gr := gs[i]
			gr.Record = &records[len(records)-1] // records never grows past its capacity: no pointer moves
			handed = append(handed, gr)
		}
	}
	if len(handed) > 0 {
		g.l.n.x.handOver(handoff{grants: handed, ends: g.l.localEnds, leaderDone: g.l.done, launched: launched})
	}
}
