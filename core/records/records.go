// Package records holds the rules of durable job records: what is written
// when a job is enqueued, starts an attempt, ends it (success, a retry, an
// interruption, dead), is cancelled, superseded, revived from dead, and
// what a restart reads back. It is a synchronous state machine with no
// goroutines and no IO: each rule takes the record and the time as data
// and returns the operations to write, which its owner commits (grouped,
// acknowledged) through its store writer.
//
// A Table keeps what outlives a job in the scheduler: the dead records,
// the succeeded ones kept for retention, and the last sequence number.
// The records of unfinished jobs belong to their jobs; the rules change
// them in place and write copies.
//
// It is a part of the scheduler's inside: programs use the root package,
// github.com/fairsched/fairsched, and a store (boltstore, pgstore).
package records

import (
	"cmp"
	"slices"
	"time"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/policy"
)

// Op writes a record (Put, a copy the owner may hand to another goroutine)
// or deletes the one of sequence Delete.
type Op struct {
	Put    *core.JobRecord
	Delete uint64
}

// Put returns the write of a copy of rec.
func Put(rec *core.JobRecord) Op {
	c := *rec
	return Op{Put: &c}
}

// Delete returns the delete of the record of sequence seq.
func Delete(seq uint64) Op { return Op{Delete: seq} }

// Table is the record state that outlives the jobs in the scheduler.
type Table struct {
	retention time.Duration
	// cancelled is the text written for a cancelled job whose caller
	// reads why it ended (Owner set).
	cancelled string
	seq       uint64
	dead      map[uint64]*core.JobRecord // by sequence
	retained  []*core.JobRecord          // succeeded, by finish
}

// New returns an empty table: succeeded records are kept for retention
// (0: deleted at once); cancelled is the error text a cancelled job's
// owner reads.
func New(retention time.Duration, cancelled string) *Table {
	return &Table{retention: retention, cancelled: cancelled, dead: map[uint64]*core.JobRecord{}}
}

// Retention is how long succeeded records are kept.
func (t *Table) Retention() time.Duration { return t.retention }

// Restore takes the records a store held at a start, in sequence order:
// it keeps the dead and retained ones and returns the pending ones, to be
// queued (Restored applies to each when it is).
func (t *Table) Restore(recs []core.JobRecord) []*core.JobRecord {
	var pending []*core.JobRecord
	for i := range recs {
		rec := recs[i]
		t.seq = max(t.seq, rec.Seq)
		switch rec.State {
		case core.RecordPending:
			pending = append(pending, &rec)
		case core.RecordDead:
			t.dead[rec.Seq] = &rec
		case core.RecordSucceeded:
			t.retained = append(t.retained, &rec)
		}
	}
	slices.SortFunc(t.retained, func(x, y *core.JobRecord) int { return x.FinishedAt.Compare(y.FinishedAt) })
	return pending
}

// Next returns a new sequence number, larger than every one seen.
func (t *Table) Next() uint64 {
	t.seq++
	return t.seq
}

// Saw notes seq, numbered elsewhere (an adopted record).
func (t *Table) Saw(seq uint64) { t.seq = max(t.seq, seq) }

// Enqueue returns the writes of a new job's record rec, replacing (when
// replaced is not 0) the pending record of that sequence: they commit
// together or not at all.
func Enqueue(rec *core.JobRecord, replaced uint64) []Op {
	ops := []Op{Put(rec)}
	if replaced != 0 {
		ops = append(ops, Delete(replaced))
	}
	return ops
}

// Start counts the attempt of rec that starts now and returns what its
// handler sees as granted (cluster mode). Its count is written before its
// handler runs (ops, deferred: the handler starts once they commit), so a
// re-run after a crash sees a larger Attempt than the run it replaces. An
// attempt resumed (granted: it runs already) was counted by the leader
// that granted it; with grantWrites, the leader's grant writes each count,
// and nothing is written here.
func Start(rec *core.JobRecord, grantWrites bool) (ops []Op, deferred bool, granted string) {
	granted, rec.Granted = rec.Granted, ""
	if granted != "" {
		return nil, false, granted
	}
	rec.Attempt++
	if grantWrites {
		return nil, false, ""
	}
	return []Op{Put(rec)}, true, ""
}

// Unstarted takes back the count of an attempt whose start could not be
// written: the next start uses its number again.
func Unstarted(rec *core.JobRecord) { rec.Attempt-- }

// Retrying returns the write of rec's failed attempt, which retries.
func Retrying(rec *core.JobRecord, err error) []Op {
	rec.LastError, rec.EndedAttempt = policy.CleanText(err.Error()), rec.Attempt
	return []Op{Put(rec)}
}

// Interrupted counts rec's interrupted attempt and returns its write; the
// job runs again (core.StepRerun).
func Interrupted(rec *core.JobRecord) []Op {
	countInterruption(rec)
	return []Op{Put(rec)}
}

// InterruptedTooOften counts rec's interrupted attempt, past its retry
// policy's MaxInterruptions, and returns the error it ends with (dead:
// Ended writes it).
func InterruptedTooOften(rec *core.JobRecord, err error) error {
	countInterruption(rec)
	return core.InterruptedError(rec.Interruptions, err)
}

func countInterruption(rec *core.JobRecord) {
	rec.Interruptions++
	rec.EndedAttempt = rec.Attempt
}

// Restored applies the rule of attempts that never ended (core.Restored)
// to rec, read back from a store, before it is queued: an attempt started
// and never ended was interrupted, and its count is written so that it
// survives another crash. dead is the error the job ends with past retry's
// MaxInterruptions (then nothing is written here: Ended writes its end).
func Restored(rec *core.JobRecord, retry policy.RetryPolicy) (ops []Op, interrupted bool, dead error) {
	interrupted, step := core.Restored(rec, retry)
	switch {
	case !interrupted:
		return nil, false, nil
	case step == core.StepFail:
		return nil, true, core.InterruptedError(rec.Interruptions, core.ErrInterrupted)
	}
	return []Op{Put(rec)}, true, nil
}

// End is how a job left the scheduler for good.
type End struct {
	Err error // nil: it succeeded
	// Cancelled: Cancel cancelled it (however its last attempt ended).
	Cancelled bool
	// Dropped: Close dropped it unrun; it runs after the restart.
	Dropped bool
}

// Ended returns the writes of rec's end at now: a success deletes its
// record (or keeps it, with retention), a failure makes it dead, a
// cancellation deletes it, a drop writes nothing (it stays pending). A
// record with an Owner (a RunSync's or Submit's job in cluster mode) is
// written for its instance to read how it ended (OwnerEnded).
func (t *Table) Ended(rec *core.JobRecord, e End, now time.Time) []Op {
	switch {
	case rec.Owner != "":
		return t.OwnerEnded(rec, e, now)
	case e.Err == nil && t.retention > 0:
		rec.State, rec.FinishedAt = core.RecordSucceeded, now
		t.retained = append(t.retained, rec)
		return []Op{Put(rec)}
	case e.Err == nil:
		return []Op{Delete(rec.Seq)}
	case e.Dropped:
		return nil
	case e.Cancelled:
		return []Op{Delete(rec.Seq)}
	}
	rec.State, rec.LastError, rec.FinishedAt = core.RecordDead, policy.CleanText(e.Err.Error()), now
	t.dead[rec.Seq] = rec
	return []Op{Put(rec)}
}

// OwnerEnded returns the writes of the end of rec, a RunSync's or
// Submit's job of cluster mode, for its instance to read: a success is
// deleted (gone: its instance reads a success); any other end — a
// cancellation too — is written dead, with why; one that Close dropped
// stays pending for the next leader. Such a record is not listed dead.
func (t *Table) OwnerEnded(rec *core.JobRecord, e End, now time.Time) []Op {
	switch {
	case e.Cancelled && e.Err == nil:
		rec.State, rec.LastError, rec.FinishedAt = core.RecordDead, t.cancelled, now
	case e.Err == nil:
		return []Op{Delete(rec.Seq)}
	case e.Dropped:
		return nil
	default:
		rec.State, rec.LastError, rec.FinishedAt = core.RecordDead, policy.CleanText(e.Err.Error()), now
	}
	return []Op{Put(rec)}
}

// Prune returns the deletes of the succeeded records kept past the
// retention at now.
func (t *Table) Prune(now time.Time) []Op {
	if t.retention <= 0 {
		return nil
	}
	var ops []Op
	n := 0
	for n < len(t.retained) && !now.Before(t.retained[n].FinishedAt.Add(t.retention)) {
		ops = append(ops, Delete(t.retained[n].Seq))
		n++
	}
	t.retained = slices.Delete(t.retained, 0, n)
	return ops
}

// Dead returns the dead records of type typ and id (id "": all of typ;
// typ "" too: all), in sequence order. They are the table's: read them.
func (t *Table) Dead(typ policy.JobType, id string) []*core.JobRecord {
	var recs []*core.JobRecord
	for _, rec := range t.dead {
		if id == "" && (typ == "" || rec.Type == typ) || rec.Type == typ && rec.ID == id {
			recs = append(recs, rec)
		}
	}
	slices.SortFunc(recs, func(x, y *core.JobRecord) int { return cmp.Compare(x.Seq, y.Seq) })
	return recs
}

// DeleteDead forgets dead record rec and returns its delete.
func (t *Table) DeleteDead(rec *core.JobRecord) []Op {
	delete(t.dead, rec.Seq)
	return []Op{Delete(rec.Seq)}
}

// Revive makes dead record rec a fresh pending job at now, with a new
// sequence and no attempts, and returns its record and writes: the delete
// of the dead one and the put of the fresh one commit together. If they
// do not commit, Unrevive makes rec dead again.
func (t *Table) Revive(rec *core.JobRecord, now time.Time) (*core.JobRecord, []Op) {
	delete(t.dead, rec.Seq)
	fresh := *rec
	fresh.Seq, fresh.State, fresh.Attempt, fresh.LastError = t.Next(), core.RecordPending, 0, ""
	fresh.Interruptions, fresh.EndedAttempt = 0, 0
	fresh.EnqueuedAt, fresh.RunAt, fresh.FinishedAt = now, time.Time{}, time.Time{}
	return &fresh, []Op{Delete(rec.Seq), Put(&fresh)}
}

// Unrevive makes rec, whose Revive was not committed, dead again.
func (t *Table) Unrevive(rec *core.JobRecord) { t.dead[rec.Seq] = rec }

// Refusal says what Refused made of an op the store refused for its data.
type Refusal uint8

const (
	// RefusedCleaned: its error text is cleaned and it is written again.
	RefusedCleaned Refusal = iota + 1
	// RefusedEndDeleted: the record of a job that ended is deleted instead,
	// so that the job does not run again because its end could not be kept
	// (a dead job is then no more listed).
	RefusedEndDeleted
	// RefusedDelete: a delete is given up; the stored record stays.
	RefusedDelete
	// RefusedKept: a pending record's write (a start, a retry) is given
	// up; the stored record stays, and its job runs again after a restart.
	RefusedKept
)

// Refused returns what to write instead of op, which no caller waits on
// and which the store refused alone for its data — never op again as it
// is, so that nothing retries it for ever — if anything (ok), and why.
func (t *Table) Refused(op Op) (rep Op, ok bool, why Refusal) {
	rec := op.Put
	if rec == nil {
		return Op{}, false, RefusedDelete
	}
	if clean := policy.CleanText(rec.LastError); clean != rec.LastError {
		c := *rec
		c.LastError = clean
		if live := t.dead[rec.Seq]; live != nil {
			live.LastError = clean // listed as stored
		}
		return Op{Put: &c}, true, RefusedCleaned
	}
	if rec.State != core.RecordPending {
		delete(t.dead, rec.Seq)
		return Delete(rec.Seq), true, RefusedEndDeleted
	}
	return Op{}, false, RefusedKept
}

// Held is what the owner knows of the unfinished job that holds the
// (type, id) of a new Enqueue.
type Held struct {
	// Committing: its own record is not committed yet; Replaced: a
	// Supersede already replaces it; Pending: it waits (for a handler or
	// in the core) rather than runs.
	Committing, Replaced, Pending bool
}

// Verdict is what becomes of an Enqueue whose (type, id) is held.
type Verdict uint8

const (
	// Duplicate: refused; one unfinished job per (type, id).
	Duplicate Verdict = iota
	// Coalesced: accepted, nothing written: one run for both.
	Coalesced
	// Supersedes: its record replaces the held job's (Enqueue with the
	// held sequence), which leaves unrun.
	Supersedes
)

// Admit decides an Enqueue whose (type, id) h holds: a coalescing type
// runs once for both; a Supersede replaces a job that waits and is not
// already being replaced; anything else is a duplicate.
func Admit(h Held, supersede, coalescing bool) Verdict {
	switch {
	case coalescing:
		return Coalesced
	case supersede && !h.Committing && !h.Replaced && h.Pending:
		return Supersedes
	}
	return Duplicate
}

// Preempted takes back the attempt of rec that a higher tier preempted
// and returns its write: a preempted attempt counts neither as a failure
// nor as an interruption, and the next start uses its number again. With
// grantWrites (cluster mode's leader) an attempt's number names its grant,
// which the instance that ran it has seen end: the number stays, and the
// re-run is granted as the next one (still no failure, no retry).
func Preempted(rec *core.JobRecord, grantWrites bool) []Op {
	if !grantWrites {
		rec.Attempt--
	}
	return []Op{Put(rec)}
}
