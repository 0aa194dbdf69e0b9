package actor

import (
	"reflect"
	"runtime"
)

// executeName is the name of the function that runs every job's function
// (Execute), as stack frames show it.
var executeName = runtime.FuncForPC(reflect.ValueOf((*Actor).Execute).Pointer()).Name()

// insideJob reports whether the calling goroutine runs a job's function, of
// any scheduler: whether Execute is on its stack. Only Close asks, so a job
// pays nothing for it.
func insideJob() bool {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(2, pcs)
	for n == len(pcs) { // the stack may be deeper: look at all of it
		pcs = make([]uintptr, 2*len(pcs))
		n = runtime.Callers(2, pcs)
	}
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if f.Function == executeName {
			return true
		}
		if !more {
			return false
		}
	}
}

// releaseJobClosers answers the Close calls made from inside jobs once the
// running jobs are no more than they: each may be waiting for its own job,
// which cannot end while it waits, so waiting on would be for ever. The
// scheduler stays closed and drains on its own: it stops when the jobs
// return. (With no job running, no such call waits for its own job: it
// waits for the drain like any Close.)
func (a *Actor) releaseJobClosers() {
	if len(a.jobClosers) == 0 {
		return
	}
	if n := a.core.RunningCount(); n == 0 || n > len(a.jobClosers) {
		return
	}
	for _, c := range a.jobClosers {
		c <- ErrCloseInJob
	}
	a.jobClosers = nil
}
