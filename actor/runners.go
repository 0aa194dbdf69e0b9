package actor

import "github.com/fairsched/fairsched/messages"

// The owner hands background jobs to runner goroutines that park between
// jobs, instead of starting a goroutine per job: a parked runner's stack is
// warm and waking it costs less than a new goroutine. At most
// maxIdleRunners stay parked; the others exit when their job ends.
const maxIdleRunners = 256

// maxBatch bounds the messages the owner takes in one batch (drain), so a
// steady stream of them cannot hold dispatch back for long.
const maxBatch = 256

// startBackground runs background job j on a parked runner, or on a new one
// when none is parked.
func (a *Actor) startBackground(j *messages.Job) {
	select {
	case a.work <- j:
	default:
		a.runners.Add(1)
		go a.runner(j)
	}
}

// runner runs j, then each job the owner hands it, until too many runners
// are parked or the owner stops.
func (a *Actor) runner(j *messages.Job) {
	defer a.runners.Done() // also when a job's function calls runtime.Goexit
	for {
		a.execute(j)
		if a.idle.Add(1) > maxIdleRunners {
			a.idle.Add(-1)
			return
		}
		next, ok := <-a.work
		a.idle.Add(-1)
		if !ok {
			return
		}
		j = next
	}
}

// stopRunners ends the parked runners once no job runs, and waits for them:
// nothing the scheduler started outlives its owner.
func (a *Actor) stopRunners() {
	close(a.work)
	a.runners.Wait()
}

// drain takes every completion and request waiting, up to maxBatch, with
// single-case receives (far cheaper than the full select), one of each
// kind in turn so neither starves the other. The dispatches they ask for
// are made once, at the end (flush). It reports whether it took any.
//
// A read of the state (a snapshot, an explanation) ends the batch: every
// message of a batch is stamped with the time read at its first use, and
// the reader may act on what it saw — move a mock clock, end a job — before
// its next message; that message must not carry the batch's older time.
func (a *Actor) drain() bool {
	took := false
	a.m.BeginBatch()
	for range maxBatch {
		n, read := 0, false
		select {
		case d := <-a.done:
			a.m.Finish(d)
			n++
		default:
		}
		select {
		case r := <-a.requests:
			a.receive(r)
			read = isRead(r)
			n++
		default:
		}
		if n == 0 {
			break
		}
		took = true
		if read {
			break
		}
	}
	a.m.EndBatch()
	return took
}

// isRead reports whether r only reads the state: its caller may act on
// the answer before it sends again (drain).
func isRead(r messages.Request) bool {
	switch r.(type) {
	case messages.SnapshotRequest, messages.ExplainRequest:
		return true
	}
	return false
}
