package core

import (
	"slices"
	"time"

	"github.com/fairsched/fairsched/internal/shrink"
	"github.com/fairsched/fairsched/policy"
)

// Coalescing. For a type with JobTypeConfig.Coalesce, the requests for one
// (type, id) that arrive while it is pending share one run. The core keeps
// the pending runs by (type, id), each run's waiters (the requests whose
// callers wait for its result) and whether a background request wants it,
// and decides: a request joins the pending run, which then waits as long as
// the request that allows the longest wait; a waiter that leaves is let go,
// and the run is withdrawn only when no waiter is left and nobody else
// wants it; a run that starts is never joined again (later requests queue
// a run of their own), its waiters wait for its result. The owner answers
// the waiters.

// Joinable returns the pending run of (t, id), or nil.
func (c *Core) Joinable(t policy.JobType, id string) *Job { return c.joinable[jobRef{t, id}] }

// StartRun makes run, just submitted, the run of its (type, id) that later
// requests join.
func (c *Core) StartRun(run *Job) {
	if c.joinable == nil {
		c.joinable = map[jobRef]*Job{}
	}
	run.isRun = true
	c.joinable[jobRef{run.Type, run.ID}] = run
	shrink.Note(c.joinable, &c.joinPeak)
}

// Join makes w, a request whose caller waits, a waiter of pending run: the
// run waits at least w's queue timeout, and w leaves at its own
// (TakeExpiredWaiters) if that comes first.
func (c *Core) Join(now time.Time, run, w *Job) {
	ttl := w.TTL()
	c.Extend(now, run, ttl)
	w.more().leader = run
	r := run.more()
	r.waiters = append(r.waiters, w)
	if ttl > 0 {
		c.Watch(now, w, run, ttl)
	}
}

// Want marks pending run as wanted by a background request with queue
// timeout ttl: no waiter's leaving withdraws it.
func (c *Core) Want(now time.Time, run *Job, ttl time.Duration) {
	c.Extend(now, run, ttl)
	run.wanted = true
}

// Leader returns the run waiter w waits for, or nil.
func (c *Core) Leader(w *Job) *Job {
	if w.Rare == nil {
		return nil
	}
	return w.leader
}

// Leave lets waiter w go (its caller left, or its own queue timeout ran out
// while the run was pending), and withdraws the run if nobody wants it any
// more and it is still pending. It returns the run, whether it was
// withdrawn, and whether it was left unwanted (a running run's owner then
// cancels it).
func (c *Core) Leave(now time.Time, w *Job) (run *Job, withdrawn, unwanted bool) {
	run = c.Leader(w)
	if run == nil { // a run with a waiter has its Rare
		return nil, false, false
	}
	if i := slices.Index(run.waiters, w); i >= 0 {
		run.waiters = slices.Delete(run.waiters, i, i+1)
	}
	w.leader = nil
	c.Unwatch(w)
	if len(run.waiters) > 0 || run.wanted {
		return run, false, false
	}
	withdrawn = c.Withdraw(now, run)
	if withdrawn {
		c.unjoin(run)
	}
	return run, withdrawn, true
}

// EndRun returns the waiters of run, which left for good (ran, or was
// dropped), and forgets them: the owner answers them with its result.
func (c *Core) EndRun(run *Job) []*Job {
	c.unjoin(run)
	if run.Rare == nil {
		return nil
	}
	ws := run.waiters
	for _, w := range ws {
		w.leader = nil
		c.Unwatch(w)
	}
	run.waiters = nil
	return ws
}

// unjoin takes run out of the joinable runs, if it is there.
func (c *Core) unjoin(run *Job) {
	if ref := (jobRef{run.Type, run.ID}); c.joinable[ref] == run {
		delete(c.joinable, ref)
	}
}

// started is admit's part: a run that starts is never joined; its waiters
// wait for its result, their own queue timeouts no longer count.
func (c *Core) started(j *Job) {
	if !j.isRun {
		return
	}
	c.unjoin(j)
	for _, w := range j.waiterList() {
		c.Unwatch(w)
	}
}

// waiterList returns the waiters of run j.
func (j *Job) waiterList() []*Job { return j.rare().waiters }
