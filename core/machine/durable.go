package machine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/records"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// Durable jobs. A durable job is a record in a JobStore as well as a job in
// the core. The owner is the only writer of both: it keeps each unfinished
// job's record (messages.Job.Record) and queues copies of what changed as
// operations; one batch at a time goes to the writer goroutine, which
// commits it in one transaction (one fsync) and hands the result back. So
// the Enqueues that arrive while a batch commits share the next commit,
// and the owner never waits on the disk.
//
// An Enqueue is answered once its record is committed; only then does the
// job enter the core, so a job runs only if its Enqueue returned nil — or
// ErrOutcomeUnknown, whose record is written again until it is known
// stored (committed's resolving). An attempt's start (its Attempt counted)
// is committed before its handler runs: the job holds its slot meanwhile,
// and its handler starts when the batch that carries the start commits —
// so a re-run after a crash always sees a larger Attempt than the run it
// replaces, and a restart tells an interrupted attempt (started, never
// ended: core.Restored) from one that never began. The other writes — a
// retry's error, an interruption, success (the record goes), a dead job —
// ride along in the next batch without anyone waiting: a crash loses at
// most those, and the job runs again (at least once); a commit of them
// that fails for a transient reason is made again (unwritten).
//
// The store holds each record under its sequence number, so a restart
// reads them in order and nothing ever scans for one.

// JobStore is a Store that also keeps durable jobs.
type JobStore interface {
	Store
	// LoadJobs calls fn with every job record, in sequence order.
	LoadJobs(fn func(core.JobRecord) error) error
	// ApplyJobs commits ops in one transaction, durably (synced), or none
	// of them. Its error wraps ErrRecordRefused when a record's content is
	// at fault (the scheduler then commits the ops in parts, in order, to
	// find it), ErrDuplicateJob when the store holds an unfinished job of a
	// record's (type, id), ErrOutcomeUnknown when the commit may have
	// happened (its ops are written again: a put or delete written twice
	// must leave what one leaves).
	ApplyJobs(ops []JobOp) error
}

// JobOp writes a record (Put) or deletes the one of sequence Delete.
type JobOp struct {
	Put    *core.JobRecord
	Delete uint64
}

// Errors of durable jobs.
var (
	// ErrDuplicateJob: an unfinished durable job of the (type, id) exists.
	ErrDuplicateJob = errors.New("fairsched: duplicate durable job")
	// ErrNoJobStore: Enqueue, RegisterHandler or a dead-job call without a
	// store that keeps jobs.
	ErrNoJobStore = errors.New("fairsched: no store for durable jobs (WithStore with a JobStore, such as boltstore's)")
	// EndWritten is what a durable job's handler returns when the job
	// succeeded and the handler's own write already deleted its record:
	// cluster mode's leader, whose delete of a success checks the instance
	// and attempt that ran it. The scheduler counts a success and writes
	// nothing more of the job — a second delete would cost a transaction a
	// batch for no row. (A job whose record outlives its end — kept
	// WithRetention, a RunSync's cancelled or with joined waiters — is
	// written as on any success.)
	EndWritten = errors.New("fairsched: succeeded, its record deleted by its handler")
)

// DefaultMaxPayload bounds a durable job's payload unless WithMaxPayload
// changes it.
const DefaultMaxPayload = 1 << 20

// durable is the owner's state of durable jobs.
type durable struct {
	store JobStore
	// jobs are the unfinished durable jobs — committing, waiting for a
	// handler, pending, running — by (type, id).
	jobs map[jobRef]*messages.Job
	// waiting are the committed jobs not in the core: their type has no
	// handler yet (reason no_handler), by type, in arrival order.
	waiting  map[policy.JobType][]*messages.Job
	nWaiting int
	handlers map[policy.JobType]messages.Handler
	// table holds the rules of records and the records that outlive their
	// jobs here (dead, retained); the owner carries out its ops.
	table *records.Table
	// ops and acks are the next batch; flight the batch being committed.
	ops    []JobOp
	acks   []ack
	flight *jobBatch
	// ownerCommits: the owner writes each batch itself (TakeBatch,
	// BatchWritten); taken: it has taken the batch in flight.
	ownerCommits, taken bool
	// writing counts, by sequence, the ops queued or in flight and not
	// yet known written (or given up): a job with some is not started
	// before they are (startingDurable).
	writing map[uint64]int
	// batches hands batches to the writer, which answers on committed.
	batches   chan *jobBatch
	committed chan Commit
	// joins are the coalesced RunSync and Submit jobs of cluster mode
	// (core.Joins; joins.go).
	joins core.Joins
	// parked are adopted records whose (type, id) an unfinished job here
	// still holds: in cluster mode the database accepts a new job of the
	// (type, id) once the old one's row is gone, which may be before this
	// owner has seen the old one end. Each is adopted when the (type, id)
	// is free (adoptParked); the database's index allows one at a time.
	parked map[jobRef][]core.JobRecord
}

// ack is an answer owed once a batch commits: to an Enqueue (j, whose
// record is in the batch, replacing replaced's if set), to an attempt's
// start (start: j's handler starts once its start is committed) or, with
// j nil, to a dead-job operation.
type ack struct {
	j        *messages.Job
	replaced *messages.Job
	start    bool
	reply    chan error
	// dead, with j nil, answers a dead-job operation of n jobs.
	dead chan messages.DeadResult
	n    int
	// from and to delimit the ops of the batch the answer depends on. An
	// Enqueue's (its put, and the delete of the record it replaces) are
	// committed together or not at all, never split (unit).
	from, to int
	// revive, with j, is the dead record a RequeueDead took j's place of:
	// dead again if j's record is not committed.
	revive *core.JobRecord
	// resolving, with j: a commit of j's ops had its reply lost, and its
	// caller was told (ErrOutcomeUnknown); they are written again until
	// that is known to have worked, and j then runs.
	resolving bool
}

type jobBatch struct {
	ops  []JobOp
	acks []ack
}

// Commit is the writer's answer for batch b: err, the failure of the
// batch as a whole, when opErrs is nil; else opErrs says, op by op, what
// failed (nil: committed) and err is the transient failure that stopped
// the commit in parts, if one did.
type Commit struct {
	b      *jobBatch
	err    error
	opErrs []error
}

// startDurable sets up durable jobs over st with the records it held.
func (a *Machine) startDurable(st JobStore, recs []core.JobRecord, retention time.Duration) {
	d := newDurable()
	d.store, d.table = st, records.New(retention, ErrCancelled.Error())
	d.batches, d.committed = make(chan *jobBatch, 1), make(chan Commit, 1)
	a.dur = d
	for _, rec := range d.table.Restore(recs) {
		j := fromRecord(rec)
		ref := durableRef(j)
		if d.jobs[ref] == nil {
			d.jobs[ref] = j
		}
		d.waiting[j.Type] = append(d.waiting[j.Type], j)
		d.nWaiting++
	}
}

// newDurable returns an empty state of durable jobs, without a store.
func newDurable() *durable {
	return &durable{jobs: map[jobRef]*messages.Job{}, waiting: map[policy.JobType][]*messages.Job{},
		handlers: map[policy.JobType]messages.Handler{}, table: records.New(0, ErrCancelled.Error())}
}

// fromRecord returns the job rec describes, not yet queued; its attempts
// so far count against its retry policy.
func fromRecord(rec *core.JobRecord) *messages.Job {
	j := messages.NewJob(rec.Type, rec.ID, rec.Key, nil)
	j.Group, j.Floor, j.Floored = rec.Group, rec.Floor, rec.Floored
	j.SetTokens(rec.Tokens)
	j.SetTTL(rec.TTL)
	j.SetLabels(rec.Labels)
	if rec.RetrySet {
		j.OwnRetry, j.RetrySet = rec.Retry, true
	}
	// Its failed attempts count against its retry policy; the interrupted
	// ones do not (Valid: Interruptions ≤ Attempt).
	j.Runs = int32(min(rec.Attempt-rec.Interruptions, math.MaxInt32))
	j.OnDemand = rec.OnDemand
	j.Record = rec
	return j
}

// NewRecord returns the record of job j, made now, without a sequence:
// cluster mode's instances insert it, the database numbering it.
func NewRecord(j *messages.Job, now time.Time) *core.JobRecord {
	if j.Delay > 0 {
		j.RunAt = now.Add(j.Delay)
	}
	return record(j, 0, now)
}

// record returns the record of durable job j, enqueued now as seq.
func record(j *messages.Job, seq uint64, now time.Time) *core.JobRecord {
	return &core.JobRecord{
		Seq: seq, Type: j.Type, ID: j.ID, Payload: j.Data, Key: j.Key, Group: j.Group,
		Tokens: j.Tokens(), TTL: j.TTL(), Retry: j.Retry(), RetrySet: j.RetrySet, Floor: j.Floor, Floored: j.Floored,
		Labels: j.Labels(), EnqueuedAt: now, RunAt: j.RunAt, State: core.RecordPending,
	}
}

// write queues the ops of the rules of records for the next batch (their
// puts are copies: the writer reads them while the owner changes the
// records).
func (d *durable) write(ops []records.Op) {
	for _, op := range ops {
		d.ops = append(d.ops, JobOp(op))
	}
	d.track(d.ops[len(d.ops)-len(ops):], 1)
}

// track counts ops (delta 1) or forgets them (-1) in d.writing.
func (d *durable) track(ops []JobOp, delta int) {
	if d.writing == nil {
		d.writing = map[uint64]int{}
	}
	for _, op := range ops {
		seq := op.Delete
		if op.Put != nil {
			seq = op.Put.Seq
		}
		if n := d.writing[seq] + delta; n > 0 {
			d.writing[seq] = n
		} else {
			delete(d.writing, seq)
		}
	}
}

// enqueue reserves j's (type, id), queues its record for the next commit
// and answers once it is committed (committed).
func (a *Machine) enqueue(m messages.Enqueue) {
	j, d := m.Job, a.dur
	switch {
	case a.aborted || a.closing:
		m.Reply <- ErrClosed
		return
	case d == nil || d.store == nil:
		m.Reply <- ErrNoJobStore
		return
	}
	ref := durableRef(j)
	var replaced *messages.Job
	if old := d.jobs[ref]; old != nil {
		held := records.Held{Committing: old.Committing, Replaced: old.Replaced}
		held.Pending = j.Supersede && !old.Committing && !old.Replaced && a.durablePending(old) // asked only when it matters
		switch records.Admit(held, j.Supersede, a.coalescing[j.Type]) {
		case records.Coalesced:
			m.Reply <- nil // one run for both
			return
		case records.Supersedes:
			replaced = old
			old.Replaced = true
		default:
			m.Reply <- fmt.Errorf("%w: %s/%s is pending or running", ErrDuplicateJob, j.Type, j.ID)
			return
		}
	}
	now := a.now()
	if j.Delay > 0 {
		j.RunAt = now.Add(j.Delay) // time.Time holds centuries past int64 nanoseconds
	}
	j.Record = record(j, d.table.Next(), now)
	j.Committing = true
	d.jobs[ref] = j
	from := len(d.ops)
	var old uint64
	if replaced != nil {
		old = replaced.Record.Seq
	}
	d.write(records.Enqueue(j.Record, old))
	d.acks = append(d.acks, ack{j: j, replaced: replaced, reply: m.Reply, from: from, to: len(d.ops)})
}

// durablePending reports whether durable job j waits: for a handler, or
// in the core. A running job is not replaced.
func (a *Machine) durablePending(j *messages.Job) bool {
	return slices.Contains(a.dur.waiting[j.Type], j) || a.core.IsPending(&j.Job)
}

// flushDurable hands the next batch to the writer if none is being
// committed. After each message the owner handles.
func (a *Machine) flushDurable() {
	d := a.dur
	if d == nil || d.flight != nil || len(d.ops) == 0 && len(d.acks) == 0 {
		return
	}
	d.flight = &jobBatch{ops: d.ops, acks: d.acks}
	d.ops, d.acks = nil, nil
	if d.ownerCommits {
		return // it waits for TakeBatch
	}
	d.batches <- d.flight // the writer has taken the last one: the slot is free
}

// committedC is the writer's answer channel; nil (never ready) without
// durable jobs.
func (a *Machine) committedC() <-chan Commit {
	if a.dur == nil {
		return nil
	}
	return a.dur.committed
}

// durableIdle reports whether no durable write is queued or under way.
func (a *Machine) durableIdle() bool {
	d := a.dur
	return d == nil || d.flight == nil && len(d.ops) == 0 && len(d.acks) == 0
}

// committed handles the writer's answer for the batch in flight: the
// enqueued jobs enter the queue and their callers learn it, or learn why
// not. When the store took the batch in parts (a record refused), each
// answer depends on its own ops only; the ops no caller waits on that
// were not written are handled by unwritten.
func (a *Machine) committed(r Commit) {
	d := a.dur
	d.flight = nil
	d.track(r.b.ops, -1) // those not written and made again are counted again (unwritten)
	now := a.now()
	var resolving []ack
	for _, k := range r.b.acks {
		err := r.errOf(k)
		if k.start {
			a.startCommitted(k.j, err, k.from == k.to)
			continue
		}
		if k.j == nil {
			k.dead <- messages.DeadResult{N: k.n, Err: err}
			continue
		}
		j := k.j
		if err != nil && (k.resolving || errors.Is(err, ErrOutcomeUnknown)) && !refused(err) && !a.aborted {
			// Its record may be stored. Writing the same ops again is
			// harmless if it is, so they are, until one commit is known
			// to have worked: then the job runs here, as stored. Meanwhile
			// an Enqueue of its (type, id) is ErrDuplicateJob.
			if !k.resolving {
				k.reply <- err
				k.reply, k.resolving = make(chan error, 1), true // nobody waits on it any more
			}
			resolving = append(resolving, k)
			continue
		}
		j.Committing = false
		if err != nil {
			if k.resolving {
				a.log.Error("a durable job whose commit's outcome was unknown could not be written again: it may or may not be stored",
					zap.Uint64("seq", j.Record.Seq), zap.Error(err))
			}
			delete(d.jobs, durableRef(j))
			if k.replaced != nil {
				k.replaced.Replaced = false
				d.jobs[durableRef(j)] = k.replaced
			}
			if k.revive != nil {
				d.table.Unrevive(k.revive) // its delete went with j's put
			}
			if errors.Is(err, ErrDuplicateJob) {
				// The store holds an unfinished job of the (type, id) this
				// owner does not know of: one whose Enqueue's outcome was
				// unknown. Not a failure of the store.
				err = fmt.Errorf("%w: %s/%s is pending or running (stored)", ErrDuplicateJob, j.Type, j.ID)
			}
			k.reply <- err
			continue
		}
		if k.replaced != nil {
			a.supersedeDurable(now, k.replaced)
		}
		if a.closing { // committed: it stays in the store for the next start
			delete(d.jobs, durableRef(j))
			k.reply <- nil
			continue
		}
		k.reply <- a.queueDurable(now, j)
	}
	if r.err != nil || r.opErrs != nil {
		a.unwritten(r, resolving)
	}
	if !a.aborted {
		a.dispatch(now)
	}
}

// errOf returns the error of ack k's ops in r (nil: written). A SyncDead,
// with no op, fails with a transient failure of the batch.
func (r *Commit) errOf(k ack) error {
	if r.opErrs == nil || k.from == k.to {
		return r.err
	}
	for _, err := range r.opErrs[k.from:k.to] {
		if err != nil {
			return err
		}
	}
	return nil
}

// unwritten handles the ops of failed batch r that no Enqueue waits on —
// an attempt's start, a retry's error, a success's delete, a dead record,
// the deletes of dead jobs —, which its failure must not lose silently:
//
//   - one the store refused alone, for its data, is replaced by what can be
//     written (refusedOp) or logged with its sequence and given up; never
//     written again as it is, so that nothing retries it for ever;
//   - one not written for a transient reason (the connection, the reply
//     lost) is queued again, before the ops queued since, so that order
//     holds: rewriting a record or a delete that did commit changes
//     nothing. The writer waits a little before a batch of such ops alone
//     (startWriter). Once Close has given up (aborted) they are dropped,
//     logged: the jobs they concern run again after the restart.
//
// The ops of the Enqueues being resolved (committed) go again too, in
// place, with their acks.
func (a *Machine) unwritten(r Commit, resolving []ack) {
	d := a.dur
	waited := make([]bool, len(r.b.ops)) // an Enqueue's own ops: its caller has the answer
	for _, k := range r.b.acks {
		if k.j != nil {
			for i := k.from; i < k.to; i++ {
				waited[i] = true
			}
		}
	}
	var again []JobOp
	var acks []ack
	dropped := 0
	for i, op := range r.b.ops {
		if len(resolving) > 0 && resolving[0].from == i {
			k := resolving[0]
			resolving = resolving[1:]
			from := len(again)
			again = append(again, r.b.ops[k.from:k.to]...)
			k.from, k.to = from, len(again)
			acks = append(acks, k)
			continue // its other ops are waited: skipped below
		}
		err := r.err
		if r.opErrs != nil {
			err = r.opErrs[i]
		}
		switch {
		case err == nil || waited[i]:
		case errors.Is(err, ErrRecordRefused) || errors.Is(err, ErrDuplicateJob):
			if rep, ok := a.refusedOp(op, err); ok {
				again = append(again, rep)
			}
		case a.aborted:
			dropped++
		default:
			again = append(again, op)
		}
	}
	if dropped > 0 {
		a.log.Error("durable writes dropped: the store failed while Close was giving up; their jobs run again after a restart",
			zap.Int("ops", dropped), zap.Error(r.err))
	}
	if len(again) == 0 {
		return
	}
	d.track(again, 1)
	d.ops = append(again, d.ops...)
	for i := range d.acks {
		d.acks[i].from += len(again)
		d.acks[i].to += len(again)
	}
	d.acks = append(acks, d.acks...)
}

// refusedOp returns what to write instead of op, which no caller waits on
// and which the store refused alone for its data, if anything
// (records.Table.Refused), and logs what became of it.
func (a *Machine) refusedOp(op JobOp, err error) (JobOp, bool) {
	rep, ok, why := a.dur.table.Refused(records.Op(op))
	switch why {
	case records.RefusedDelete:
		a.log.Error("the store refused a delete of a durable job; its record stays", zap.Uint64("seq", op.Delete), zap.Error(err))
	case records.RefusedCleaned:
		a.log.Warn("the store refused a durable job's record: written again with its error text cleaned",
			zap.Uint64("seq", op.Put.Seq), zap.Error(err))
	case records.RefusedEndDeleted:
		a.log.Error("the store refused the record of a durable job that ended: deleted, so that it does not run again",
			zap.Uint64("seq", op.Put.Seq), zap.String("type", policy.CleanTextN(string(op.Put.Type), 64)), zap.Error(err))
	default:
		a.log.Error("the store refused a durable job's record: the stored one stays", zap.Uint64("seq", op.Put.Seq), zap.Error(err))
	}
	return JobOp(rep), ok
}

// supersedeDurable takes pending durable job old out: a newer Enqueue with
// Supersede replaced its record.
func (a *Machine) supersedeDurable(now time.Time, old *messages.Job) {
	d := a.dur
	if w := d.waiting[old.Type]; slices.Contains(w, old) {
		d.waiting[old.Type] = slices.DeleteFunc(w, func(x *messages.Job) bool { return x == old })
		d.nWaiting--
	} else if !a.core.Withdraw(now, &old.Job) {
		return // it started meanwhile: it runs, its record gone
	}
	a.core.Record(now, &old.Job, core.DecisionDeny, core.CodeSuperseded)
	a.logDecisions()
	if len(a.subs) > 0 {
		a.emit(messages.JobSuperseded{Time: now, Type: old.Type, ID: old.ID, FairnessKey: old.Key})
	}
	old.Record = nil // its record is gone: nothing more to write
}

// queueDurable puts committed job j in the core, or with the jobs waiting
// for their type's handler. A refusal of the core (a tenant's or the
// queue's bound) deletes its record and is returned.
func (a *Machine) queueDurable(now time.Time, j *messages.Job) error {
	d := a.dur
	if d.handlers[j.Type] == nil {
		d.waiting[j.Type] = append(d.waiting[j.Type], j)
		d.nWaiting++
		return nil
	}
	if a.restoredDurable(now, j) {
		return nil
	}
	if a.joined(now, j) {
		return nil
	}
	j.Arrived, j.NotBefore = j.Record.EnqueuedAt, j.Record.RunAt
	granted := j.Record.Granted != ""
	if granted {
		j.NotBefore = time.Time{} // it runs already
	}
	if err := a.core.Submit(now, &j.Job); err != nil {
		a.logRefusal(&j.Job, err)
		d.write([]records.Op{records.Delete(j.Record.Seq)})
		delete(d.jobs, durableRef(j))
		return err
	}
	a.queued(now, j)
	if granted {
		a.resume(now, j)
	}
	return nil
}

// resume starts durable job j, which a previous leader granted and which
// still runs on an instance (cluster mode): it counts against every limit
// at once, and its handler waits for the end of the attempt under way.
func (a *Machine) resume(now time.Time, j *messages.Job) {
	if !a.core.Resume(now, &j.Job) {
		return // queued: its handler finds it running, and waits for that end
	}
	a.reportDecisions(now)
	a.attempt(j)
	if a.startingDurable(j) {
		a.startBackground(j)
	}
}

// restoredDurable applies the rule of attempts that never ended
// (core.Restored) to durable job j, read back from its store, before it
// is queued: an attempt that started and never ended was interrupted. The
// count is written; past its retry policy's MaxInterruptions the job is
// dead instead, and restoredDurable reports true (it is not queued).
func (a *Machine) restoredDurable(now time.Time, j *messages.Job) bool {
	rec := j.Record
	retry := a.core.RetryOf(j.Type)
	if j.OwnRetry != (policy.RetryPolicy{}) {
		retry = j.OwnRetry
	}
	ops, interrupted, err := records.Restored(rec, retry)
	if !interrupted {
		return false
	}
	j.Runs = int32(min(rec.Attempt-rec.Interruptions, math.MaxInt32))
	if err == nil {
		a.dur.write(ops)
		return false
	}
	a.log.Error("durable job interrupted too often: it is dead", zap.String("type", string(j.Type)), zap.String("id", j.ID),
		zap.Int("interruptions", rec.Interruptions), zap.Error(err))
	if len(a.subs) > 0 {
		a.emit(messages.JobFailed{Time: now, Type: j.Type, ID: j.ID, FairnessKey: j.Key, Err: err})
	}
	a.durableEnded(j, err)
	return true
}

// adopt queues the durable jobs another instance committed.
func (a *Machine) adopt(m messages.Adopt) {
	d, n := a.dur, 0
	if d == nil || a.aborted || a.closing {
		m.Reply <- 0
		return
	}
	now := a.now()
	for i := range m.Records {
		rec := m.Records[i]
		ref := recordRef(&rec)
		if rec.State != core.RecordPending {
			continue
		}
		if old := d.jobs[ref]; old != nil {
			if old.Record == nil || old.Record.Seq != rec.Seq {
				if d.parked == nil {
					d.parked = map[jobRef][]core.JobRecord{}
				}
				d.parked[ref] = append(d.parked[ref], rec)
			}
			continue
		}
		if a.adoptOne(now, rec) {
			n++
		}
	}
	m.Reply <- n
	a.dispatch(now)
}

// adoptOne makes rec, pending and free of any job of its (type, id) here,
// a job of this owner.
func (a *Machine) adoptOne(now time.Time, rec core.JobRecord) bool {
	d := a.dur
	d.table.Saw(rec.Seq)
	j := fromRecord(&rec)
	d.jobs[recordRef(&rec)] = j
	if err := a.queueDurable(now, j); err != nil {
		a.log.Warn("an adopted durable job was refused: its record is deleted", zap.Error(err))
		return false
	}
	return true
}

// adoptParked adopts the parked records whose (type, id) is free now.
// At the end of each turn; parked is empty but for the moments after a
// job of a (type, id) ended and before this owner saw it.
func (a *Machine) adoptParked() {
	d := a.dur
	if d == nil || len(d.parked) == 0 || a.aborted || a.closing {
		return
	}
	now, adopted := a.now(), false
	for ref, recs := range d.parked {
		if d.jobs[ref] != nil {
			continue
		}
		a.adoptOne(now, recs[0])
		adopted = true
		if len(recs) == 1 {
			delete(d.parked, ref)
		} else {
			d.parked[ref] = recs[1:]
		}
	}
	if adopted {
		a.dispatch(now)
	}
}

// replacePending takes out the pending durable job of (m.Type, m.ID) for
// a Supersede another instance made, and answers once its delete commits.
func (a *Machine) replacePending(m messages.ReplacePending) {
	d := a.dur
	if d == nil || a.aborted || a.closing {
		m.Reply <- messages.DeadResult{Err: ErrClosed}
		return
	}
	old := d.jobs[jobRef{m.Type, m.ID}]
	if old == nil || old.Committing || old.Replaced || !a.durablePending(old) {
		m.Reply <- messages.DeadResult{} // runs, or gone: nothing replaced
		return
	}
	seq := old.Record.Seq
	a.supersedeDurable(a.now(), old)
	delete(d.jobs, jobRef{m.Type, m.ID})
	d.write([]records.Op{records.Delete(seq)})
	d.acks = append(d.acks, ack{dead: m.Reply, n: 1, from: len(d.ops) - 1, to: len(d.ops)}) // answered with the batch's commit
}

// registerHandler runs t's durable jobs with h from now on (or those of
// every type of m.All); those waiting for it enter the queue, oldest
// first — after the jobs of those types still running elsewhere (cluster
// mode), so that no job starts before every running one is counted.
func (a *Machine) registerHandler(m messages.RegisterHandler) {
	all := m.All
	if all == nil {
		all = map[policy.JobType]messages.Handler{m.Type: m.Handler}
	}
	types := a.core.Types()
	for t := range all {
		if _, ok := types[t]; !ok {
			m.Reply <- fmt.Errorf("%w: %q: RegisterType first", policy.ErrUnknownJobType, t)
			return
		}
	}
	d := a.dur
	if d == nil || d.store == nil {
		// No store keeps durable jobs: none could ever be enqueued for
		// the handler to run, which its caller would learn only then.
		m.Reply <- ErrNoJobStore
		return
	}
	if m.Remote {
		a.registerRemote(m) // its handlers: never called
	} else if a.remote != nil {
		for t := range all {
			delete(a.remote.types, t)
		}
	}
	var w []*messages.Job
	for t, h := range all {
		d.handlers[t] = h
		w = append(w, d.waiting[t]...)
		d.nWaiting -= len(d.waiting[t])
		delete(d.waiting, t)
	}
	m.Reply <- nil
	if a.closing || len(w) == 0 {
		for _, j := range w {
			delete(d.jobs, durableRef(j)) // they stay in the store
		}
		return
	}
	slices.SortStableFunc(w, func(x, y *messages.Job) int {
		gx, gy := x.Record.Granted == "", y.Record.Granted == "" // running ones first
		return cmp.Or(cmpBool(gx, gy), x.Record.EnqueuedAt.Compare(y.Record.EnqueuedAt), cmp.Compare(x.Record.Seq, y.Record.Seq))
	})
	now := a.now()
	for _, j := range w {
		if err := a.queueDurable(now, j); err != nil {
			a.log.Error("a restored durable job was refused: its record is deleted")
		}
	}
	a.dispatch(now)
}

func cmpBool(x, y bool) int {
	switch {
	case x == y:
		return 0
	case !x:
		return -1
	}
	return 1
}

// startingDurable prepares durable job j, admitted now: its attempt is
// counted in its record and its function calls its type's handler. It
// reports whether j starts now on a runner; if not, it has started
// remotely (RegisterRemote), or its start joins the next batch and j
// starts once that commits (startCommitted), holding its slot meanwhile.
// A resumed attempt (cluster mode: running already) was counted by the
// leader that granted it, and the leader's grant writes the count of each
// attempt (grantRecords): those start at once.
func (a *Machine) startingDurable(j *messages.Job) bool {
	d := a.dur
	rec := j.Record
	ops, deferred, granted := records.Start(rec, a.grantRecords)
	if deferred {
		from := len(d.ops)
		d.write(ops)
		d.acks = append(d.acks, ack{j: j, start: true, from: from, to: len(d.ops)})
	} else if granted == "" && d.writing[rec.Seq] > 0 {
		// The grant writes the count (cluster mode's leader), but a write
		// of the record is still under way (its last attempt's end, say):
		// the grant's is another writer's, and were it granted now, that
		// write could land after its success's delete and bring the job
		// back. It starts once the next batch commits, after every write
		// of it before.
		d.acks = append(d.acks, ack{j: j, start: true, from: len(d.ops), to: len(d.ops)})
		deferred = true
	}
	h := d.handlers[j.Type]
	view := durableView(j, granted)
	if a.startsRemotely(j) {
		if !deferred {
			a.startRemote(j, view)
			return false
		}
		a.remote.deferred[j] = view // started once its start commits
	}
	if !deferred {
		j.Fn = func(ctx context.Context) error { return h(ctx, view) }
		return true
	}
	j.Fn = func(ctx context.Context) error {
		if ctx.Err() != nil {
			// Cancelled, or Close gave up, or its worker went, while its
			// start committed: the handler is not called.
			return context.Cause(ctx)
		}
		return h(ctx, view)
	}
	return false
}

// durableView is durable job j as its handler sees it; granted names the
// instance it runs on already (a resumed attempt).
func durableView(j *messages.Job, granted string) messages.DurableJob {
	rec := j.Record
	return messages.DurableJob{Type: j.Type, ID: j.ID, Payload: rec.Payload, Attempt: rec.Attempt,
		FairnessKey: j.Key, Group: j.Group, EnqueuedAt: rec.EnqueuedAt, Seq: rec.Seq, Owner: rec.Owner, Granted: granted}
}

// errStartUnwritten is the end of an attempt whose start could not be
// committed: its handler did not run (core.StepRequeue).
var errStartUnwritten = errors.New("fairsched: the start of a durable job's attempt could not be written")

// startCommitted starts durable job j, whose start was in the batch that
// committed with err. A start that was not written is not run: the attempt
// ends at once (errStartUnwritten), and its number is used again by the
// next start.
func (a *Machine) startCommitted(j *messages.Job, err error, waitOnly bool) {
	view, remote := a.takeDeferred(j)
	if waitOnly && refused(err) {
		err = nil // another op's refusal: the batch is done all the same
	}
	if refused(err) {
		// The store refuses the record itself: writing it again would be
		// refused again, so the job fails for good, without running.
		j.Fn = func(context.Context) error {
			return policy.Permanent(fmt.Errorf("fairsched: the store refuses the record of this durable job's attempt: %w", err))
		}
	} else if err != nil {
		if j.Record != nil {
			records.Unstarted(j.Record)
		}
		j.Fn = func(context.Context) error { return fmt.Errorf("%w: %w", errStartUnwritten, err) }
	} else if remote && j.Run().Err() == nil {
		a.startRemote(j, view)
		return
	}
	if remote {
		// It ends without starting (cancelled, or its worker gone, while
		// its start waited; or its start not written), here and now: the
		// owner of a machine hears no runner's end.
		a.endUnstarted(j)
		return
	}
	a.startBackground(j) // it ends with its context's cause, on a runner
}

// endUnstarted ends remote job j's attempt, which never started, in the
// owner's turn: as a runner would, its function (which returns why it did
// not start, calling no handler) gives the end.
func (a *Machine) endUnstarted(j *messages.Job) {
	ctx := j.Run()
	err := j.Fn(ctx)
	ctx.End()
	a.finish(messages.Done{Job: j, Err: err})
}

// interruptedAgain queues durable job j again after an attempt that was
// interrupted (core.StepRerun: at once, the interruption counted and
// written) or whose start could not be written (core.StepRequeue: after
// delay, nothing counted). While Close drains, it waits in the store.
func (a *Machine) interruptedAgain(now time.Time, j *messages.Job, err error, interrupted bool, delay time.Duration) {
	rec := j.Record
	if interrupted {
		a.dur.write(records.Interrupted(rec))
	}
	if a.closing {
		delete(a.dur.jobs, durableRef(j))
		j.Record = nil
		return
	}
	if interrupted {
		j.More().LastErr = err
	}
	a.core.Retry(now, &j.Job, delay)
	a.logDecisions(zap.Int("interruptions", rec.Interruptions), zap.Error(err))
	if interrupted && len(a.subs) > 0 {
		a.emit(messages.JobFailed{Time: now, Type: j.Type, ID: j.ID, FairnessKey: j.Key, Err: err, Retrying: true})
	}
	a.queued(now, j)
	a.dispatch(now)
}

// retryingDurable records the failed attempt of durable job j, which
// retries.
func (a *Machine) retryingDurable(j *messages.Job, err error) {
	a.dur.write(records.Retrying(j.Record, err))
}

// durableEnded writes the end of durable job j, which left for good with
// err: a success deletes its record (or keeps it, WithRetention), a
// failure makes it a dead job, a cancellation deletes it; a job Close
// interrupted or dropped stays pending for the next start.
func (a *Machine) durableEnded(j *messages.Job, err error) {
	d, rec := a.dur, j.Record
	if d.jobs[durableRef(j)] == j {
		delete(d.jobs, durableRef(j))
	}
	if rec == nil {
		return // superseded: its record is gone already
	}
	end := records.End{Err: err, Cancelled: errors.Is(err, ErrCancelled) || j.Cancelled(), Dropped: errors.Is(err, ErrClosed)}
	now := a.now()
	d.write(d.table.Ended(rec, end, now))
	if rec.Owner != "" && a.coalescing[j.Type] {
		a.endWaiters(now, rec, end)
	}
	j.Record = nil
}

// endWritten forgets durable job j, which succeeded and whose handler
// deleted its record (EndWritten), when nothing more is to be written of
// it: ended then finds no record to write. Otherwise — a success kept
// WithRetention, a RunSync's cancelled or with joined waiters (its
// instance reads why; they end with it) — the success is written as any
// other.
func (a *Machine) endWritten(j *messages.Job) {
	d, rec := a.dur, j.Record
	if d == nil || rec == nil || j.Coalescing {
		return
	}
	if !d.table.EndWritten(rec, j.Cancelled(), a.coalescing[j.Type]) {
		return
	}
	if d.jobs[durableRef(j)] == j {
		delete(d.jobs, durableRef(j))
	}
	j.Record = nil
}

// interruptedDurable forgets durable job j, whose attempt a Close that
// gave up interrupted (core.StepKeep): its record stays pending, its
// attempt counted as started and not ended, which the next start counts
// as an interruption (core.Restored).
func (a *Machine) interruptedDurable(j *messages.Job) {
	if a.dur.jobs[durableRef(j)] == j {
		delete(a.dur.jobs, durableRef(j))
	}
	j.Record = nil
}

// withdrawDurable takes the pending durable jobs out of the core when
// Close begins: they stay in the store, unreported, for the next start.
func (a *Machine) withdrawDurable(now time.Time) {
	d := a.dur
	if d == nil {
		return
	}
	for ref, j := range d.jobs {
		if j.Committing {
			continue // answered when its batch commits
		}
		if a.core.Withdraw(now, &j.Job) || slices.Contains(d.waiting[j.Type], j) {
			delete(d.jobs, ref)
		}
	}
	d.waiting, d.nWaiting = map[policy.JobType][]*messages.Job{}, 0
}

// pruneRetained deletes the succeeded records kept past the retention.
func (a *Machine) pruneRetained(now time.Time) {
	d := a.dur
	if d == nil {
		return
	}
	d.write(d.table.Prune(now))
}

// deadOp lists, requeues or deletes dead jobs.
func (a *Machine) deadOp(m messages.DeadOp) {
	d := a.dur
	switch {
	case d == nil || d.store == nil:
		m.Reply <- messages.DeadResult{Err: ErrNoJobStore}
		return
	case a.aborted && m.Op != messages.ListDead: // stopping: no more commits
		m.Reply <- messages.DeadResult{Err: ErrClosed}
		return
	}
	if m.Op == messages.SyncDead {
		d.acks = append(d.acks, ack{dead: m.Reply}) // answered with the next batch's commit
		return
	}
	recs := d.table.Dead(m.Type, m.ID)
	start := len(d.ops)
	switch m.Op {
	case messages.ListDead:
		if m.Limit > 0 && len(recs) > m.Limit {
			recs = recs[:m.Limit]
		}
		out := make([]core.JobRecord, len(recs))
		for i, r := range recs {
			out[i] = *r
		}
		m.Reply <- messages.DeadResult{Jobs: out, N: len(out)}
		return
	case messages.DeleteDead:
		for _, r := range recs {
			d.write(d.table.DeleteDead(r))
		}
	case messages.RequeueDead:
		if a.aborted || a.closing {
			m.Reply <- messages.DeadResult{Err: ErrClosed}
			return
		}
		now := a.now()
		n := 0
		for _, r := range recs {
			if d.jobs[recordRef(r)] != nil {
				continue // an unfinished job of the (type, id) exists
			}
			from := len(d.ops)
			fresh, ops := d.table.Revive(r, now)
			j := fromRecord(fresh)
			j.Committing = true
			d.jobs[recordRef(fresh)] = j
			d.write(ops)
			// Queued on commit; nobody waits on it. The delete of the dead
			// record and the put of the fresh one commit together.
			d.acks = append(d.acks, ack{j: j, reply: make(chan error, 1), from: from, to: len(d.ops), revive: r})
			n++
		}
		recs = recs[:n]
	}
	d.acks = append(d.acks, ack{dead: m.Reply, n: len(recs), from: start, to: len(d.ops)}) // answered with the batch's commit
}

// waitingRows adds the jobs waiting for a handler to a snapshot: in its
// total, and as rows (reason no_handler) while it lists fewer than rows
// (0: all).
func (a *Machine) waitingRows(s *core.Snapshot, rows int) {
	d := a.dur
	if d == nil || d.nWaiting == 0 {
		return
	}
	s.PendingTotal += d.nWaiting
	types := make([]policy.JobType, 0, len(d.waiting))
	for t := range d.waiting {
		types = append(types, t)
	}
	slices.Sort(types)
	for _, t := range types {
		for _, j := range d.waiting[t] {
			if rows > 0 && len(s.Pending) >= rows {
				return
			}
			s.Pending = append(s.Pending, core.PendingJob{Type: j.Type, ID: j.ID, FairnessKey: j.Key, Group: j.Group,
				Submitted: j.Record.EnqueuedAt, Reasons: []policy.Reason{policy.ReasonNoHandler}, Reason: policy.ReasonNoHandler})
		}
	}
}

// durableRef is durable job j's key among the unfinished ones: its (type,
// id) — one unfinished job each — except for a RunSync's or Submit's job
// in cluster mode (Owner set), of which several may share a (type, id), as
// RunSync calls do in one process: those are keyed by their sequence.
func durableRef(j *messages.Job) jobRef {
	if j.Record != nil {
		return recordRef(j.Record)
	}
	return jobRef{j.Type, j.ID}
}

func recordRef(rec *core.JobRecord) jobRef {
	if rec.Owner != "" {
		return jobRef{rec.Type, "\x00" + strconv.FormatUint(rec.Seq, 10)}
	}
	return jobRef{rec.Type, rec.ID}
}
