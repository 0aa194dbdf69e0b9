package core

import (
	"maps"
	"math"
	"time"

	"github.com/fairsched/fairsched/internal/timeheap"
)

// Periodic jobs. The core keeps every schedule in one heap by next
// occurrence, which the owner's one timer covers with deferrals and
// expiry (NextOccurrence), and decides which occurrences are due: a
// schedule whose previous occurrence is still pending or running skips
// one, so a slow job never piles up behind itself; the slots that passed,
// a missed one included, are skipped in O(1) however small the interval.
// After a restart a job that ran recently (LastRuns, kept in the store)
// waits out the rest of its interval instead of running at once with every
// other schedule. The owner makes each occurrence's job from the template.

// Schedule is one periodic job's schedule.
type Schedule struct {
	ID       uint64
	Key      string // "type/id": its last run's name in the store
	Template any    // the owner's: what each occurrence copies
	Every    time.Duration
	Jitter   time.Duration
	next     time.Time // the next occurrence, jitter included
	base     time.Time // the next occurrence's slot, before jitter
	idx      int
	busy     bool // an occurrence is pending or running
}

// When and SetIndex make a Schedule a timeheap.Item, by next occurrence.
func (s *Schedule) When() time.Time { return s.next }
func (s *Schedule) SetIndex(i int)  { s.idx = i }

// periodic is the core's state of periodic jobs.
type periodic struct {
	heap        timeheap.Heap[*Schedule]
	byID        map[uint64]*Schedule
	last        uint64
	lastRuns    map[string]time.Time // by Key: when each last occurred
	lastRunEnds map[string]time.Time // stopped schedules': when their last run stops mattering
}

func (p *periodic) init() {
	if p.byID == nil {
		p.byID, p.lastRuns = map[uint64]*Schedule{}, map[string]time.Time{}
	}
}

// RestoreLastRuns loads the last runs an earlier run saved.
func (c *Core) RestoreLastRuns(runs map[string]time.Time) {
	c.per.init()
	maps.Copy(c.per.lastRuns, runs)
}

// LastRuns returns a copy of the last runs, to save.
func (c *Core) LastRuns() map[string]time.Time {
	c.per.init()
	return maps.Clone(c.per.lastRuns)
}

// AddSchedule starts a schedule of template under key, every every plus a
// jitter drawn by draw (a uniform integer in [0, n)), and returns it. A job
// that last ran less than every ago waits out the rest; a last run in the
// future (the clock stepped back) counts as now.
func (c *Core) AddSchedule(now time.Time, key string, template any, every, jitter time.Duration, draw func(n int64) int64) *Schedule {
	c.per.init()
	c.per.last++
	s := &Schedule{ID: c.per.last, Key: key, Template: template, Every: every, Jitter: jitter, base: now}
	if last, ok := c.per.lastRuns[key]; ok {
		if last.After(now) {
			last = now
		}
		if now.Before(last.Add(every)) {
			s.base = last.Add(every)
		}
	}
	s.next = s.base.Add(s.jitter(draw))
	c.per.heap.Push(s)
	c.per.byID[s.ID] = s
	return s
}

func (s *Schedule) jitter(draw func(n int64) int64) time.Duration {
	if s.Jitter <= 0 || draw == nil {
		return 0
	}
	return time.Duration(draw(int64(s.Jitter)))
}

// StopSchedule ends schedule id; its last run matters for one interval
// more (a restart within it waits out the rest), then PruneLastRuns
// forgets it.
func (c *Core) StopSchedule(id uint64) {
	s := c.per.byID[id]
	if s == nil {
		return
	}
	c.per.heap.Remove(s.idx)
	delete(c.per.byID, id)
	if last, ok := c.per.lastRuns[s.Key]; ok {
		if c.per.lastRunEnds == nil {
			c.per.lastRunEnds = map[string]time.Time{}
		}
		c.per.lastRunEnds[s.Key] = last.Add(s.Every)
	}
}

// StopSchedules ends every schedule (Close).
func (c *Core) StopSchedules() {
	clear(c.per.byID)
	c.per.heap.Clear()
}

// DueOccurrences moves every schedule due at now to its next slot and
// returns those whose occurrence the owner submits now (then Occurred) and
// those that skip one, their previous occurrence still pending or running.
func (c *Core) DueOccurrences(now time.Time, draw func(n int64) int64) (due, skipped []*Schedule) {
	for c.per.heap.Len() > 0 && !c.per.heap.Top().next.After(now) {
		s := c.per.heap.Top()
		s.base = NextSlot(s.base, s.Every, now)
		if s.busy {
			skipped = append(skipped, s)
		} else {
			due = append(due, s)
		}
		s.next = s.base.Add(s.jitter(draw))
		c.per.heap.Fix(s.idx)
	}
	return due, skipped
}

// Occurred records that s's occurrence was submitted at now: it is busy
// until OccurrenceEnded.
func (c *Core) Occurred(s *Schedule, now time.Time) {
	s.busy = true
	c.per.lastRuns[s.Key] = now
}

// OccurrenceEnded records that s's occurrence left for good.
func (c *Core) OccurrenceEnded(s *Schedule) { s.busy = false }

// NextOccurrence returns the next occurrence time, if a schedule runs.
func (c *Core) NextOccurrence() (time.Time, bool) {
	if c.per.heap.Len() == 0 {
		return time.Time{}, false
	}
	return c.per.heap.Top().next, true
}

// NextSlot returns the first base + k·every after now (k ≥ 0), in O(1);
// it saturates far in the future.
func NextSlot(base time.Time, every time.Duration, now time.Time) time.Time {
	if base.After(now) {
		return base
	}
	k := now.Sub(base)/every + 1 // now.Sub saturates; k·every ≤ now−base+every
	if k > math.MaxInt64/every {
		return base.Add(math.MaxInt64)
	}
	return base.Add(k * every)
}

// PruneLastRuns forgets the last runs no schedule needs: a stopped
// schedule's once its interval has passed, and one loaded from the store
// for a schedule not added again within ttl. On the eviction tick.
func (c *Core) PruneLastRuns(now time.Time, ttl time.Duration) {
	p := &c.per
	p.init()
	if len(p.lastRuns) == len(p.byID) && len(p.lastRunEnds) == 0 {
		return // one per schedule: nothing to prune
	}
	active := make(map[string]bool, len(p.byID))
	for _, s := range p.byID {
		active[s.Key] = true
	}
	for k, last := range p.lastRuns {
		if active[k] {
			delete(p.lastRunEnds, k)
			continue
		}
		end, stopped := p.lastRunEnds[k]
		if !stopped {
			end = last.Add(ttl)
		}
		if !now.Before(end) {
			delete(p.lastRuns, k)
			delete(p.lastRunEnds, k)
		}
	}
}
