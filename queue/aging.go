package queue

import (
	"time"

	"github.com/fairsched/fairsched/policy"
)

// Aging. A job's effective priority grows with the time it waits (see
// policy.AgingConfig). Jobs of one lane share a type, hence a base priority,
// and wait in arrival order, so the head is the most aged job of its lane
// and the lane sits in the band of its head: band k holds effective priority
// min(base + k·step, ceiling). A lane moves up a band when its head has
// waited long enough; one heap of lanes ordered by that moment (promos)
// finds the lanes due, so no job is ever scanned and no timer runs per job.

// promotion is a lane's entry in the promotion heap.
type promotion struct {
	lane *lane
	at   int64 // Queue.Nanos: cheaper to compare than a time.Time
	idx  int   // in Queue.promos; -1 when not scheduled
}

func (p *promotion) before(o *promotion) bool { return p.at < o.at }
func (p *promotion) setIndex(i int)           { p.idx = i }

// SetAging turns aging on (cfg not nil) before any type is added.
func (q *Queue) SetAging(cfg *policy.AgingConfig) {
	if len(q.types) > 0 {
		panic("queue: SetAging after AddType")
	}
	q.aging = cfg
}

// OnAged, when set, is told each time a lane's head job reaches an aging
// band higher than any reported for it before, with its new effective
// priority: at most once per step of each job.
func (q *Queue) OnAged(fn func(j *Job, effective policy.Priority)) { q.onAged = fn }

// At sets the time the queue computes ages for and moves up every lane whose
// head has aged into a higher band since. Call it before Best whenever time
// has passed.
func (q *Queue) At(now time.Time) {
	q.now, q.nowNs = now, q.Nanos(now) // the first time given is the epoch
	q.wake(q.nowNs)
	for t := q.nowNs; len(q.promos) > 0 && q.promos[0].at <= t; {
		l := q.promos[0].lane
		if l.held == holdPaused {
			q.unschedule(l) // paused: its clock stands still
			continue
		}
		// Held lanes age all the same; a lane held for its group's
		// allocation is offered to ReleaseUrgent once urgent.
		q.woken = true
		q.update(l)
	}
}

// TakeWoken reports whether an At since the last TakeWoken brought a
// deferred job back or moved a lane up a band — what only a dispatch acts
// on, and whose wake-up time NextWake and NextPromotion no longer hold —
// and clears it.
func (q *Queue) TakeWoken() bool {
	w := q.woken
	q.woken = false
	return w
}

// Waited returns how long pending job j has waited for aging purposes at
// the time set by At: since its submission, less its group's pauses.
func (q *Queue) Waited(j *Job) time.Duration { return q.waited(j) }

// waited returns how long j has waited for aging purposes: since its
// submission, less the time its group was paused since then.
func (q *Queue) waited(j *Job) time.Duration {
	end := q.nowNs
	var paused time.Duration
	if g := j.Group; g != nil {
		paused = g.pausedTotal - j.pauseBase
		if g.paused {
			end = q.Nanos(g.pausedAt)
		}
	}
	return policy.AddSat(time.Duration(satSub(end, j.Submitted)), -paused)
}

// bandsOf returns the number of aging bands of base priority p.
func (q *Queue) bandsOf(p policy.Priority) int {
	if q.aging == nil || p >= q.aging.MaxEffectivePriority {
		return 1
	}
	step := max(q.aging.Step, 1)
	return int((q.aging.MaxEffectivePriority-p+step-1)/step) + 1
}

// effective returns the effective priority of band b of base priority p.
func (q *Queue) effective(p policy.Priority, b int) policy.Priority {
	if b == 0 || q.aging == nil {
		return p
	}
	return min(p+policy.Priority(b)*max(q.aging.Step, 1), q.aging.MaxEffectivePriority)
}

// Effective returns the effective priority of a pending job at the time set
// by At.
func (q *Queue) Effective(j *Job, base policy.Priority) policy.Priority {
	e := base
	if q.aging != nil {
		e = q.aging.Effective(base, q.waited(j))
	}
	if j.Floored && j.Floor > e {
		return j.Floor
	}
	return e
}

// bandOfLane returns the band of lane l's head, and reports the head's rise
// to OnAged.
func (q *Queue) bandOfLane(l *lane) int {
	if q.aging == nil {
		return 0
	}
	head, lv := l.front(), l.tq.level
	e := q.aging.Effective(lv.p, q.waited(head))
	b := 0
	if e > lv.p {
		b = min(int((e-lv.p+max(q.aging.Step, 1)-1)/max(q.aging.Step, 1)), lv.bands-1)
	}
	if l.tq.floored {
		b = max(b, l.tq.floorBand)
	}
	if b > int(head.aged) {
		head.aged = int32(b)
		// Under a floor the effective priority rises only once the aged
		// one passes it.
		// A job whose deadline has come expires in this same step: it
		// is not reported as risen, since it may have passed its deadline
		// before the rise.
		d := q.deadlineOf(head)
		expiring := d != 0 && d <= q.nowNs
		if q.onAged != nil && !(l.tq.floored && e <= l.tq.floor) && !expiring {
			q.onAged(head, e)
		}
	}
	return b
}

// schedule (re)arms lane l's promotion for when its head next rises a band.
func (q *Queue) schedule(l *lane) {
	if q.aging == nil {
		return
	}
	head := l.front()
	waited := q.waited(head)
	next, ok := q.aging.NextRise(l.tq.level.p, waited)
	if !ok {
		q.unschedule(l)
		return
	}
	l.promo.lane, l.promo.at = l, satAdd(q.nowNs, int64(next-waited))
	if l.promo.idx >= 0 {
		q.promos.fix(l.promo.idx)
	} else {
		q.promos.push(&l.promo)
	}
}

// NextPromotion returns when the next lane's head rises an aging band.
func (q *Queue) NextPromotion() (time.Time, bool) {
	if len(q.promos) == 0 {
		return time.Time{}, false
	}
	return q.TimeOf(q.promos[0].at), true
}

func (q *Queue) unschedule(l *lane) {
	if l.promo.idx >= 0 {
		q.promos.remove(l.promo.idx)
	}
}
