package cluster

import (
	"context"
	"time"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
)

// Backend is the database a cluster stands on: pgstore.Store's
// ClusterBackend returns one, and package memback keeps one in memory.
// Every write the leader makes is fenced by its epoch: a deposed leader's
// write changes nothing and returns an error. A write the
// database refuses for the data it carries — not for the state of a
// connection — returns an error matching machine.ErrRecordRefused, so that
// the loop splits its batch instead of sending it again.
type Backend interface {
	// Insert writes a new pending job, its sequence from the database
	// (rec.Seq is set), and returns once committed; a second unfinished
	// job of one (type, id) is machine.ErrDuplicateJob.
	Insert(ctx context.Context, rec *core.JobRecord) error

	// Acquire takes domain's lease for holder when it is free or
	// expired, and returns the new, higher epoch; Renew extends it (false:
	// it is lost); Release ends it at once.
	Acquire(ctx context.Context, domain, holder string, ttl time.Duration) (int64, bool, error)
	Renew(ctx context.Context, domain, holder string, epoch int64, ttl time.Duration) (bool, error)
	Release(ctx context.Context, domain, holder string, epoch int64) error
	// Leader returns domain's holder and epoch, and whether its lease is
	// unexpired ("" when nobody ever held it).
	Leader(ctx context.Context, domain string) (holder string, epoch int64, live bool, err error)

	// Heartbeat says instance in.ID is alive, runs in.Slots jobs of
	// in.Types at once and has in.Workers registered (Silent is ignored),
	// and reports whether it listed the instance anew (its first beat, or
	// the first since Lost removed it); one that lists it anew or changes
	// what it says of it wakes InstanceReads. Instances lists domain's instances; Lost (fenced) removes and
	// returns those silent past deadline — and returns again each one
	// removed whose grants were not taken back yet —, and Revoke (fenced)
	// takes back the grants of one.
	Heartbeat(ctx context.Context, domain string, in Instance) (listed bool, err error)
	Instances(ctx context.Context, domain string) ([]Instance, error)
	Lost(ctx context.Context, domain string, epoch int64, deadline time.Duration) ([]string, error)
	Revoke(ctx context.Context, domain string, epoch int64, instance string) ([]uint64, error)

	// Domain opens the leader's view under epoch, from one snapshot: a
	// JobStore whose writes are fenced; the records as they stand — every
	// running one (Granted set) and every finished one, with as many of
	// the other pending ones as it likes —; and the feed, which returns
	// the rest of the snapshot's pending records (Backlog), then the jobs
	// inserted after it (Next).
	Domain(ctx context.Context, domain string, epoch int64) (machine.JobStore, []core.JobRecord, Feed, error)
	// Grant is the leader's write of one turn, fenced, in one
	// transaction: first the records of ops, its scheduler's (a retry, a
	// dead job), are written as the JobStore's ApplyJobs writes them — a
	// record refused fails the whole write with ErrRecordRefused —; then
	// the rows of the successes of succeeded — the ends
	// the leader's own executor handed back in process, and those the
	// executors reported (ReportEnds), whose slots it frees only once
	// their rows are gone — are deleted if they still match that attempt
	// (a running grant on that instance, or that attempt's reported
	// success) and returned as gone; then grants are written, and the
	// sequences that took returned: a job already running is not granted
	// again. Each
	// grant also records its attempt in the job's record (the leader's
	// scheduler writes nothing when an attempt starts).
	Grant(ctx context.Context, domain string, epoch int64, ops []machine.JobOp, succeeded []End, grants []Grant) (gone, took []uint64, err error)
	// Rows returns the grant state of the jobs of seqs that exist.
	Rows(ctx context.Context, seqs []uint64) ([]Row, error)

	// Granted returns the jobs running on instance with their records;
	// ReportEnds ends those still granted as reported; Finals returns the
	// jobs of seqs that are finished (dead or succeeded) or gone, and
	// Forget deletes the finished ones.
	Granted(ctx context.Context, instance string) ([]Grant, error)
	ReportEnds(ctx context.Context, ends []End) (int, error)
	Finals(ctx context.Context, seqs []uint64) ([]Final, error)
	Forget(ctx context.Context, seqs []uint64) error

	// Command inserts a command for domain's leader; Reply returns its
	// reply once written (and deletes it). The leader reads the open
	// Commands, runs them and writes each Answer (fenced) with the
	// settings it changed; Settings are what a new leader applies first.
	// RevokeJob (fenced) asks the executor of one running job to stop
	// it (Grant.Cancelled), for why (Grant.Preempted when a higher tier
	// preempts it); the grant stays until it reports the end.
	Command(ctx context.Context, domain string, c Command) (int64, error)
	Reply(ctx context.Context, id int64) ([]byte, bool, error)
	Commands(ctx context.Context, domain string) ([]Command, error)
	Answer(ctx context.Context, domain string, epoch, id int64, reply []byte, reset string, settings map[string][]byte) error
	Settings(ctx context.Context, domain string) (map[string][]byte, error)
	// DefineTypes writes settings (the domain's type configurations), by
	// any instance, unfenced: each replaces the value of its name.
	DefineTypes(ctx context.Context, domain string, settings map[string][]byte) error
	RevokeJob(ctx context.Context, domain string, epoch int64, seq uint64, why RevokeCause) error
	// ClaimSlot claims a periodic schedule's occurrence slot for the
	// caller: true for exactly one caller per (name, slot), and only for a
	// slot after the last claimed.
	ClaimSlot(ctx context.Context, domain, name string, slot int64) (bool, error)
	// ForgetOrphans (fenced) deletes the RunSync and Submit jobs finished
	// longer than after ago of instances not in live, and returns how many.
	ForgetOrphans(ctx context.Context, domain string, epoch int64, live []string, after time.Duration) (int, error)

	// TellSucceeded tells the leader, by a notification that writes no row,
	// that the attempts of ends (each EndOK) succeeded: the leader deletes
	// their rows with its next turn, as it does its own instance's
	// (Grant's succeeded), so a success on another instance costs its
	// row no write of its own. At most once, and only to a leader
	// listening: the executor confirms each success's row gone a Poll
	// later, or a Heartbeat if that is shorter (Rows), and reports one
	// still running by ReportEnds.
	// Successes returns the successes told from now on, and a function
	// that stops it (nil channel: it cannot listen).
	TellSucceeded(ctx context.Context, ends []End) error
	Successes(ctx context.Context) (<-chan []End, func())

	// Wake returns a channel that receives after commits of what r reads
	// (a hint: every loop polls as well), and a function that stops it. A
	// backend that cannot listen returns nil. instance is the reader's
	// own: an executor (ExecutorReads) need not be woken by grants to the
	// other instances.
	Wake(ctx context.Context, r Reader, instance string) (<-chan struct{}, func())
	// Publish sends payload (a batch of the leader's events) to every
	// instance listening on Events; Events returns a channel of the
	// payloads published from now on, and a function that stops it (nil
	// channel: it cannot listen). At most once: nothing is stored.
	Publish(ctx context.Context, payload []byte) error
	Events(ctx context.Context) (<-chan []byte, func())

	IncrementalReads // GrantsSince, EndsSince
	BulkInserter     // InsertMany
	OverloadVerdicts // SetOverload, Overload
}

// Feed is what a leader reads of the pending jobs beyond Domain's
// records. One goroutine may call Backlog while another calls Next.
type Feed interface {
	// Backlog returns the next part of the pending records of Domain's
	// snapshot that Domain did not return, and whether more remain; each
	// record once. Once it has said none remain, it returns nothing.
	Backlog(ctx context.Context) (recs []core.JobRecord, more bool, err error)
	// Next returns the jobs inserted since Domain's snapshot, or since
	// its last call, each once.
	Next(ctx context.Context) ([]core.JobRecord, error)
	// Close releases what the feed holds (the snapshot of a backlog not
	// read to its end). Backlog is not called after it.
	Close()
}

// Instance is one instance of a cluster as its heartbeats describe it.
type Instance struct {
	ID    string
	Slots int
	Types []string
	// Workers are the worker slots registered on it (RegisterWorker): by
	// worker id, each slot's job types.
	Workers map[string][][]string
	// Subscribed: it has subscribers to the domain's events (the leader
	// publishes them only while some instance has).
	Subscribed bool
	// Silent is how long ago, by the database's clock, it last beat.
	Silent time.Duration
}

// Grant admits job Seq's attempt Attempt on Instance. ConflictKey, for a
// job that runs alone on its resource, is "group/id": the database refuses
// a second running grant of one. Record, read by Granted, is the job's.
type Grant struct {
	Seq         uint64
	Instance    string
	Attempt     int
	ConflictKey string
	// Worker and Slot, for a job of a worker type, name the worker slot it
	// runs on (SlotFromContext in the job).
	Worker string
	Slot   int
	Record *core.JobRecord
	// Cancelled: the leader cancelled the attempt (Cancel). Its executor
	// stops it — or never starts it — and reports the end; the grant
	// holds its place under the caps until then.
	Cancelled bool
	// Preempted: the attempt was cancelled because a higher tier preempts
	// it (RevokePreempt); its handler's context ends with cause
	// ErrPreempted rather than ErrCancelled.
	Preempted bool
	// Handed: the leader hands the grant to its executor in process (the
	// job runs on the leader's own instance), so the backend need not
	// wake the executors for it, and the executor's incremental reads
	// (GrantsSince) do not return it; its full reads (Granted) do.
	Handed bool
}

// EndKind is how an attempt ended on its executor.
type EndKind int8

const (
	EndOK        EndKind = iota // returned nil
	EndError                    // returned an error: retried by policy
	EndPermanent                // Permanent(err), or its caller left: never retried
	EndPanic                    // panicked: never retried
)

// End is an executor's report that an attempt ended.
type End struct {
	Seq      uint64
	Instance string
	Attempt  int
	Kind     EndKind
	Error    string
}

// Row is a job's grant state as the leader reads it.
type Row struct {
	Seq      uint64
	Running  bool
	Instance string // running on
	Attempt  int
	// Ended, when set, is the last attempt reported ended: by whom, which,
	// how.
	Ended bool
	End   End
}

// Final is a finished job of a RunSync or Submit: Gone (succeeded and
// deleted), or its record's state and last error.
type Final struct {
	Seq       uint64
	Gone      bool
	State     core.RecordState
	LastError string
}

// Command is a request for the leader's scheduler: its kind and its
// arguments as JSON.
type Command struct {
	ID   int64
	Kind string
	Args []byte
}

// Reader names whose wake-ups Backend.Wake delivers: each loop is woken
// by the commits it reads, and not by the others' (a leader is not woken
// by its own grants, nor an executor by another's ends).
type Reader int

const (
	// LeaderReads: new jobs and commands.
	LeaderReads Reader = iota
	// EndReads: the executors' reports of ends, which the leader reads.
	EndReads
	// ExecutorReads: grants to the reader's instance, and cancellations
	// of running jobs.
	ExecutorReads
	// OwnerReads: the leader's writes of job records, where an instance
	// reads how its RunSync and Submit jobs ended.
	OwnerReads
	// InstanceReads: heartbeats that list an instance anew or change what
	// it says of itself (Heartbeat), which the leader reads: an instance
	// that joins takes work at once, not from the leader's next beat on.
	InstanceReads
)

// RevokeCause is why the leader takes a running job's grant back
// (RevokeJob): its executor cancels the attempt's context with the
// matching cause.
type RevokeCause uint8

// The causes of a revoke.
const (
	RevokeCancel  RevokeCause = iota // Cancel: cause ErrCancelled
	RevokePreempt                    // a higher tier preempts it: cause ErrPreempted
)
