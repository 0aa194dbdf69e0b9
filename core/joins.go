package core

// Joins: coalescing across the instances of a cluster. There a RunSync
// or Submit call is a job record whose Owner — the instance holding its
// function — runs it when granted. For a coalescing type the rule is one
// process's: a request that arrives while another of its
// (type, id) is still pending joins that run instead of queueing, and
// ends as the run ends; a run that has started is never joined, so a later
// request becomes the next run. The leader keeps the runs and their
// waiters here and writes each waiter's end when its run's is written.
// Should a run's function be gone (its caller left before it started),
// its first waiter becomes the run — the requests are interchangeable —
// and the others wait on it.
type Joins struct {
	runs    map[jobRef]*JobRecord   // the joinable run of each (type, id)
	waiters map[uint64][]*JobRecord // by their run's Seq
}

// Join makes rec, a request of a coalescing type, a waiter of the run of
// its (type, id) if there is one and pending(run) holds, and returns that
// run; otherwise rec becomes its (type, id)'s run and Join returns nil.
func (js *Joins) Join(rec *JobRecord, pending func(run *JobRecord) bool) *JobRecord {
	if js.runs == nil {
		js.runs, js.waiters = map[jobRef]*JobRecord{}, map[uint64][]*JobRecord{}
	}
	ref := jobRef{rec.Type, rec.ID}
	if run := js.runs[ref]; run != nil && run != rec && pending(run) {
		js.waiters[run.Seq] = append(js.waiters[run.Seq], rec)
		return run
	}
	js.runs[ref] = rec
	return nil
}

// End forgets run, which has ended, and returns its waiters: they end as
// it did.
func (js *Joins) End(run *JobRecord) []*JobRecord {
	ws := js.waiters[run.Seq]
	delete(js.waiters, run.Seq)
	if ref := (jobRef{run.Type, run.ID}); js.runs[ref] == run {
		delete(js.runs, ref)
	}
	return ws
}

// Promote forgets run, whose function is gone, and makes its first waiter
// the run of the others; it returns that waiter, or nil if run had none.
func (js *Joins) Promote(run *JobRecord) *JobRecord {
	ws := js.End(run)
	if len(ws) == 0 {
		return nil
	}
	next := ws[0]
	js.runs[jobRef{next.Type, next.ID}] = next
	if len(ws) > 1 {
		js.waiters[next.Seq] = ws[1:]
	}
	return next
}

// Waiting returns how many requests wait on runs.
func (js *Joins) Waiting() int {
	n := 0
	for _, ws := range js.waiters {
		n += len(ws)
	}
	return n
}
