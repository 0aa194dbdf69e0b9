package actor

import (
	"time"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/internal/shrink"
	"github.com/fairsched/fairsched/messages"
)

// pendingSet holds the pending background jobs of one (type, id), those in
// a retry's backoff included: jobs that left stay in jobs (their Indexed
// cleared) until the set is compacted, which happens once they outnumber
// the live ones, so adding and removing cost O(1) amortised.
type pendingSet struct {
	jobs []*messages.Job
	live int
}

// index adds background job j, pending, to the index Supersede looks up.
func (a *Actor) index(j *messages.Job) {
	if j.Indexed {
		return
	}
	ref := jobRef{j.Type, j.ID}
	set := a.pendingBG[ref]
	if set == nil {
		set = &pendingSet{}
		a.pendingBG[ref] = set
		shrink.Note(a.pendingBG, &a.peaks.pendingBG)
	}
	if len(set.jobs) >= 2*set.live+4 {
		set.jobs = compactSet(set.jobs)
	}
	set.jobs = append(set.jobs, j)
	set.live++
	j.Indexed = true
}

// compactSet keeps the jobs that are still indexed.
func compactSet(jobs []*messages.Job) []*messages.Job {
	kept := jobs[:0]
	for _, j := range jobs {
		if j.Indexed {
			kept = append(kept, j)
		}
	}
	clear(jobs[len(kept):])
	return kept
}

// unindex removes j from the index: it was admitted or ended.
func (a *Actor) unindex(j *messages.Job) {
	if !j.Indexed {
		return
	}
	j.Indexed = false
	ref := jobRef{j.Type, j.ID}
	if set := a.pendingBG[ref]; set != nil {
		if set.live--; set.live <= 0 {
			delete(a.pendingBG, ref)
		}
	}
}

// supersede withdraws every pending background job of j's (type, id) —
// waiting, deferred or in a retry's backoff: j replaces them, with its own
// function and a fresh aging clock. Each leaves unrun (again), uncharged,
// with a decision record and a JobSuperseded event.
func (a *Actor) supersede(now time.Time, j *messages.Job) {
	set := a.pendingBG[jobRef{j.Type, j.ID}]
	if set == nil {
		return
	}
	for _, old := range set.jobs {
		if !old.Indexed || !a.core.Withdraw(now, &old.Job) {
			continue
		}
		a.core.Record(now, &old.Job, core.DecisionDeny, core.CodeSuperseded)
		a.logDecisions()
		if len(a.subs) > 0 {
			a.emit(messages.JobSuperseded{Time: now, Type: old.Type, ID: old.ID, FairnessKey: old.Key})
		}
		a.ended(old, ErrSuperseded) // unindexes it
	}
}
