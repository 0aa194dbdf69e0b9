package actor

import (
	"context"
	"math"
	"time"

	"go.uber.org/zap"

	"github.com/fairsched/fairsched/messages"
)

// Periodic jobs. The owner keeps every schedule in one heap by next
// occurrence, on the same one timer as deferrals and expiry. An occurrence
// is a fresh background job (a fresh aging clock); it is not submitted
// while the schedule's previous occurrence is still pending or running, so
// a slow job never piles up behind itself.

type schedule struct {
	id     uint64
	tmpl   *messages.Job // what each occurrence copies
	every  time.Duration
	jitter time.Duration
	next   time.Time // the next occurrence, jitter included
	base   time.Time // the next occurrence's slot, before jitter
	idx    int
	busy   bool // an occurrence is pending or running
}

// When and SetIndex make a schedule a timeheap.Item, by next occurrence.
func (s *schedule) When() time.Time { return s.next }
func (s *schedule) SetIndex(i int)  { s.idx = i }

// AddPeriodic starts a schedule; it returns its id for StopPeriodic.
func (a *Actor) AddPeriodic(tmpl *messages.Job, every, jitter time.Duration) (uint64, error) {
	if a.closed.Load() {
		return 0, ErrClosed
	}
	m := messages.AddPeriodic{Job: tmpl, Every: every, Jitter: jitter, Reply: make(chan uint64, 1)}
	if err := a.send(context.Background(), m); err != nil {
		return 0, err
	}
	id := <-m.Reply
	if id == 0 {
		return 0, ErrClosed
	}
	return id, nil
}

// StopPeriodic ends schedule id: no occurrence is submitted after it
// returns (one under way runs to its end).
func (a *Actor) StopPeriodic(id uint64) {
	m := messages.StopPeriodic{ID: id, Reply: make(chan struct{}, 1)}
	if a.send(context.Background(), m) == nil {
		<-m.Reply
	}
}

func (a *Actor) addPeriodic(m messages.AddPeriodic) {
	if a.closing {
		m.Reply <- 0
		return
	}
	a.lastSchedule++
	now := a.clock.Now()
	s := &schedule{id: a.lastSchedule, tmpl: m.Job, every: m.Every, jitter: m.Jitter, base: now}
	// After a restart, a job that ran recently waits out the rest of its
	// interval instead of running at once with every other schedule.
	if last, ok := a.lastRuns[runKey(m.Job)]; ok {
		// A last run in the future (the clock stepped back) counts as now:
		// the job waits one interval, not that much more.
		if last.After(now) {
			last = now
		}
		if now.Before(last.Add(m.Every)) {
			s.base = last.Add(m.Every)
		}
	}
	s.next = s.base.Add(a.jitterOf(s))
	a.schedules.Push(s)
	a.byID[s.id] = s
	m.Reply <- s.id
	a.runSchedules(now)
}

func (a *Actor) stopPeriodic(m messages.StopPeriodic) {
	if s := a.byID[m.ID]; s != nil {
		a.schedules.Remove(s.idx)
		delete(a.byID, m.ID)
		// Its last run matters for one interval more (a restart within it
		// waits out the rest), then pruneLastRuns forgets it.
		if last, ok := a.lastRuns[runKey(s.tmpl)]; ok {
			if a.lastRunEnds == nil {
				a.lastRunEnds = map[string]time.Time{}
			}
			a.lastRunEnds[runKey(s.tmpl)] = last.Add(s.every)
		}
	}
	m.Reply <- struct{}{}
}

// stopSchedules ends every schedule: Close stops new occurrences.
func (a *Actor) stopSchedules() {
	clear(a.byID)
	a.schedules.Clear()
}

func (a *Actor) jitterOf(s *schedule) time.Duration {
	if s.jitter <= 0 {
		return 0
	}
	return time.Duration(a.rand.Int64N(int64(s.jitter)))
}

// runSchedules submits the occurrences due at now, skipping a schedule
// whose previous occurrence is still pending or running.
func (a *Actor) runSchedules(now time.Time) {
	for a.schedules.Len() > 0 && !a.schedules.Top().next.After(now) {
		s := a.schedules.Top()
		s.base = nextSlot(s.base, s.every, now)
		if s.busy {
			a.log.Info("periodic occurrence skipped", zap.String("type", string(s.tmpl.Type)), zap.String("id", s.tmpl.ID),
				zap.String("reason", "previous occurrence still pending or running"))
		} else {
			a.occur(now, s)
		}
		s.next = s.base.Add(a.jitterOf(s))
		a.schedules.Fix(s.idx)
	}
}

// occur submits one occurrence of schedule s.
func (a *Actor) occur(now time.Time, s *schedule) {
	j := s.tmpl.Fresh()
	j.OnEnd = func() { s.busy = false }
	if err := a.core.Submit(now, &j.Job); err != nil {
		a.logDecisions()
		a.log.Error("periodic occurrence refused", zap.String("type", string(j.Type)), zap.String("id", j.ID), zap.Error(err))
		return
	}
	s.busy = true
	a.lastRuns[runKey(j)] = now
	a.queued(now, j)
	a.dispatch(now)
}

// nextSchedule returns the next occurrence time, if any schedule runs.
func (a *Actor) nextSchedule() (time.Time, bool) {
	if a.schedules.Len() == 0 {
		return time.Time{}, false
	}
	return a.schedules.Top().next, true
}

// ended tells whoever waits that j left the scheduler for good (ran, was
// dropped, superseded, expired or denied).
func (a *Actor) ended(j *messages.Job, err error) {
	if j.Record != nil {
		a.durableEnded(j, err)
	}
	if j.Coalescing {
		a.answerWaiters(j, err)
	}
	if j.OnEnd != nil {
		j.OnEnd()
	}
}

// runKey names a periodic job in the store: "type/id".
func runKey(j *messages.Job) string { return string(j.Type) + "/" + j.ID }

// nextSlot returns the first base + k·every after now (k ≥ 0): the slots
// that passed, a missed one included, are skipped in O(1) however small the
// interval. It saturates far in the future.
func nextSlot(base time.Time, every time.Duration, now time.Time) time.Time {
	if base.After(now) {
		return base
	}
	k := now.Sub(base)/every + 1 // now.Sub saturates; k·every ≤ now−base+every
	if k > math.MaxInt64/every {
		return base.Add(math.MaxInt64)
	}
	return base.Add(k * every)
}

// pruneLastRuns forgets the last runs no schedule needs: a stopped
// schedule's once its interval has passed, and one loaded from the store
// for a schedule not added again within the key TTL. On the eviction tick.
func (a *Actor) pruneLastRuns(now time.Time, ttl time.Duration) {
	if len(a.lastRuns) == len(a.byID) && len(a.lastRunEnds) == 0 {
		return // one per schedule: nothing to prune
	}
	active := make(map[string]bool, len(a.byID))
	for _, s := range a.byID {
		active[runKey(s.tmpl)] = true
	}
	for k, last := range a.lastRuns {
		if active[k] {
			delete(a.lastRunEnds, k)
			continue
		}
		end, stopped := a.lastRunEnds[k]
		if !stopped {
			end = last.Add(ttl)
		}
		if !now.Before(end) {
			delete(a.lastRuns, k)
			delete(a.lastRunEnds, k)
		}
	}
}
