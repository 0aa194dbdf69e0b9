package queue

import (
	"math"
	"time"

	"github.com/fairsched/fairsched/internal/shrink"
	"github.com/fairsched/fairsched/policy"
)

type place uint8

const (
	placeNone     place = iota // not in the queue
	placeFIFO                  // in its lane's FIFO
	placeReturned              // in its lane's heap of returned jobs
	placeParked                // parked on a conflict key
	placeDeferred              // deferred by the caller until a time
)

// Job is one pending job. The caller fills the exported fields before Push;
// Seq must grow with arrival so that it orders jobs of equal cost. It holds
// no reference to the caller's record: a caller embeds Job in its record
// and finds the record from it (core.jobOf), a pointer less for every
// pending job.
type Job struct {
	Type policy.JobType
	ID   string
	Key  string // fairness key; "" for background work
	Seq  uint64
	// Submitted starts the job's aging clock: when the job arrived. Times
	// in a Job are nanoseconds since the queue's epoch (Queue.Nanos makes
	// one), not time.Time: 8 B instead of 24 in every pending job.
	Submitted int64
	// Group is the job's group (Queue.Group), nil for none: jobs of a group
	// can be held together (its allocation reached) or paused.
	Group *Group
	// Floor, when Floored, is a priority the job's effective priority never
	// falls below (inherited from the job that submitted it). Only a floor
	// above the job's base priority changes anything.
	Floor   policy.Priority
	Floored bool
	// OnDemand: a caller waits for the job (RunSync). It matters only with
	// scoring, where on-demand work has its own bonus and slope.
	OnDemand bool
	// Small fields together, and positions as int32 (no queue holds 2³¹
	// jobs): a pending job is most of the scheduler's memory.
	where   place
	backoff bool // deferred for a retry's backoff (not by the caller's policy)
	// idx is the job's position where it waits: in its lane's FIFO
	// (placeFIFO), else in the returned, parked or deferred heap. One
	// field: a job is in one of them at a time.
	idx  int32
	eidx int32 // position in its group's expiry heap; -1 when not there
	aged int32 // the highest aging band reported for the job
	// Deadline, when not 0, is when the job expires if still pending
	// (see TakeExpired), in nanoseconds since the queue's epoch:
	// Queue.DeadlineAt makes one. Its group's pauses after the job's
	// arrival move it back (Queue.Deadline is the effective one); Extend
	// sets it so too.
	Deadline int64

	lane     *lane
	key      *keyRec
	parkedOn *parkedSet // while parked
	// pauseBase is the group's paused time when the job arrived: the
	// pauses after it are taken off the job's aging clock and move its
	// deadline back. A deferred job's return time is kept in the deferred
	// heap, not here: few jobs are deferred.
	pauseBase time.Duration
}

// Times. A Job and the queue's heaps keep instants as int64 nanoseconds
// since the queue's epoch — the first time it is given (At, or Nanos before
// any At), rounded down to its second — not as Unix nanoseconds: an offset
// from one time.Time is taken with Time.Sub, which reads the monotonic clock
// when both times carry it, so a step of the wall clock (NTP, an operator,
// a VM resumed) moves no job's wait, deadline, deferral or promotion; and
// any year works, not only 1678–2262. Rounding to a second keeps the offsets'
// whole seconds those of the wall clock (scoring counts ages in seconds).
// Offsets saturate: one beyond ±292 years of the epoch is the first or the
// last instant, and the last never comes.

// Nanos returns t as nanoseconds since the queue's epoch, saturated.
func (q *Queue) Nanos(t time.Time) int64 {
	if q.based && t == q.now { // the same reading as the last At: a job's arrival, the next At of a turn
		return q.nowNs
	}
	if !q.based {
		if t.IsZero() {
			return math.MinInt64
		}
		q.setEpoch(t)
	}
	return int64(t.Sub(q.epoch)) // Sub saturates
}

// setEpoch makes t, rounded down to its second, the queue's epoch. Add, not
// Truncate: Truncate drops the monotonic reading that Nanos relies on.
func (q *Queue) setEpoch(t time.Time) {
	q.epoch, q.based = t.Add(-time.Duration(t.Nanosecond())), true
}

// DeadlineAt returns t as a Job's Deadline: 0 (none) for the zero time; the
// epoch itself becomes 1 ns later, not "none".
func (q *Queue) DeadlineAt(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	if n := q.Nanos(t); n != 0 {
		return n
	}
	return 1
}

// WaitedAt returns how long from j's arrival to now (its group's pauses
// not taken off: Waited does), saturated.
func (q *Queue) WaitedAt(j *Job, now time.Time) time.Duration {
	return time.Duration(satSub(q.Nanos(now), j.Submitted))
}

// TimeOf returns n, an instant as Nanos gives it, as a time.Time.
func (q *Queue) TimeOf(n int64) time.Time { return q.epoch.Add(time.Duration(n)) }

// satSub returns a - b (nanoseconds), saturated to the int64 range.
func satSub(a, b int64) int64 {
	d := a - b
	if (a < 0) != (b < 0) && (d < 0) != (a < 0) { // wrapped
		if a < 0 {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return d
}

// secOf returns n (Queue.Nanos) in whole seconds, rounded down as
// time.Time.Unix does: the epoch is a whole second, so these are the wall
// clock's seconds less a constant.
func secOf(n int64) int64 {
	s := n / 1e9
	if n%1e9 < 0 {
		s--
	}
	return s
}

func (j *Job) before(o *Job) bool { return j.Seq < o.Seq }
func (j *Job) setIndex(i int)     { j.idx = int32(i) }

// Parked reports whether the job waits on a conflict key.
func (j *Job) Parked() bool { return j.where == placeParked }

// Queued reports whether the job is in the queue at all.
func (j *Job) Queued() bool { return j.where != placeNone }

// keyRec is what the queue knows of one fairness key. It outlives the key's
// pending jobs, lanes included, so a key that comes and goes costs no
// allocation; ForgetKey drops it when the key expires.
type keyRec struct {
	name  string
	cost  time.Duration
	jobs  int              // pending jobs of the key, parked ones included
	lanes []*lane          // the lanes that hold jobs
	all   map[laneID]*lane // every lane the key has used, empty ones included
	held  []*lane          // its lanes held while it runs its limit
}

// laneID names a lane within its key: its type and its group.
type laneID struct {
	tq    *typeQueue
	group *Group
}

// lane holds the pending jobs of one (type, fairness key) in arrival order.
type lane struct {
	tq       *typeQueue
	key      *keyRec
	fifo     []*Job // arrival order; entries whose job left are skipped
	head     int
	stale    int          // entries in fifo[head:] whose job left
	returned ixheap[*Job] // jobs back from parking, out of FIFO order
	live     int
	idx      int
	// cost and headSeq order the lane: its key's cost (copied here so that
	// heap comparisons stay within the lanes) and its head's arrival.
	cost    time.Duration
	headSeq uint64
	headSec int64     // with scoring: the second the head arrived in
	band    int       // aging band of the head, which holds the lane's best job
	promo   promotion // when the head next rises a band
	group   *Group
	held    hold // why the lane is out of dispatch though it holds jobs
	heldIdx int  // position in its group's heldSet while held for the allocation
	tidx    int  // position in its key's held lanes while held for the key
	// urgentListed: the lane is in Queue.urgent.
	urgentListed bool
	gidx         int // position in group.lanes while the lane holds jobs
}

// hold says why a lane that holds jobs is out of dispatch.
type hold uint8

const (
	holdNone   hold = iota
	holdLimit       // its group is at its allocation
	holdPaused      // its group is paused
	holdTenant      // its fairness key runs its limit
)

func (l *lane) before(o *lane) bool {
	if l.headSec != o.headSec { // with scoring only: 0 otherwise
		return l.headSec < o.headSec
	}
	if l.cost != o.cost {
		return l.cost < o.cost
	}
	return l.headSeq < o.headSeq
}
func (l *lane) setIndex(i int) { l.idx = i }

// holds reports whether fifo[i] is a job still waiting there.
func (l *lane) holds(i int) bool {
	j := l.fifo[i]
	return j != nil && j.where == placeFIFO && j.lane == l && int(j.idx) == i
}

// front returns the lane's earliest job.
func (l *lane) front() *Job {
	for l.head < len(l.fifo) && !l.holds(l.head) {
		l.fifo[l.head] = nil
		l.head++
		l.stale--
	}
	var f *Job
	if l.head < len(l.fifo) {
		f = l.fifo[l.head]
	}
	if len(l.returned) > 0 && (f == nil || l.returned[0].Seq < f.Seq) {
		f = l.returned[0]
	}
	return f
}

func (l *lane) refresh() {
	if f := l.front(); f != nil {
		l.headSeq = f.Seq
		if l.tq.q.score != nil {
			l.headSec = secOf(f.Submitted)
		}
	}
	if l.head > 64 && l.head*2 > len(l.fifo) || l.stale > 64 && l.stale*2 > l.live {
		l.compact()
	}
}

// compact drops the entries of jobs that left and the consumed prefix.
func (l *lane) compact() {
	kept := l.fifo[:0]
	for i := l.head; i < len(l.fifo); i++ {
		if l.holds(i) {
			j := l.fifo[i]
			j.idx = int32(len(kept))
			kept = append(kept, j)
		}
	}
	clear(l.fifo[len(kept):])
	l.fifo, l.head, l.stale = kept, 0, 0
}

// typeQueue holds the lanes of one job type, by aging band: a lane sits in
// the band of its head. Without aging there is one band. Jobs of the type
// with a priority floor above the base wait in a variant of the type queue
// per floor, in the same level (they count against the same tier) and
// blocked with the type.
type typeQueue struct {
	q       *Queue
	t       policy.JobType
	floor   policy.Priority // effective priorities never fall below it
	floored bool
	// floorBand is the highest band whose aged priority does not pass the
	// floor: lanes of lower bands sit there, as their effective priority is
	// the same.
	floorBand int
	// onDemand: with scoring, the variant holds RunSync work.
	onDemand bool
	// variants are the floored and on-demand type queues of the base type
	// queue.
	variants map[variant]*typeQueue
	level    *level
	bands    []ixheap[*lane]
	top      int // highest non-empty band, -1 when the type has no lane
	blocked  bool
	idx      int // in level.types; -1 when out
}

func (q *typeQueue) topLane() *lane { return q.bands[q.top][0] }

// effective returns the effective priority of band b of the type queue.
func (q *typeQueue) effective(b int) policy.Priority {
	e := q.q.effective(q.level.p, b)
	if q.floored && q.floor > e {
		return q.floor
	}
	return e
}

// before orders the types of one level: the higher effective priority of
// the head first (the more aged one, or the higher floor), then the core
// order of the two best lanes.
func (q *typeQueue) before(o *typeQueue) bool {
	if q.top != o.top || q.floored || o.floored {
		if pq, po := q.effective(q.top), o.effective(o.top); pq != po {
			return pq > po
		}
	}
	return q.topLane().before(o.topLane())
}
func (q *typeQueue) setIndex(i int) { q.idx = i }

// eligible reports whether the type belongs in its level's heap.
func (q *typeQueue) eligible() bool { return !q.blocked && q.top >= 0 }

// put adds lane l in band b.
func (q *typeQueue) put(l *lane, b int) {
	l.band = b
	q.bands[b].push(l)
	q.top = max(q.top, b)
}

// take removes lane l from its band.
func (q *typeQueue) take(l *lane) {
	q.bands[l.band].remove(l.idx)
	for q.top >= 0 && len(q.bands[q.top]) == 0 {
		q.top--
	}
}

// settle puts the type queue where its state says: in its level's heap at the
// right place, or out of it.
func (q *typeQueue) settle() {
	switch in := q.idx >= 0; {
	case q.eligible() && in:
		q.level.types.fix(q.idx)
	case q.eligible():
		q.level.types.push(q)
	case in:
		q.level.types.remove(q.idx)
	}
}

// level holds the types of one (base) priority.
type level struct {
	p       policy.Priority
	types   ixheap[*typeQueue]
	blocked bool
	bands   int // aging bands of its jobs: 1 without aging
}

// Queue is the pending-job index. It is not safe for concurrent use.
type Queue struct {
	aging *policy.AgingConfig // nil: no aging
	now   time.Time           // set by At: the time aging is computed for
	nowNs int64               // now as Nanos gives it
	// epoch is what Nanos counts from, once based (see Nanos).
	epoch time.Time
	based bool
	// woken: At brought a deferred job back or moved a lane since the
	// last TakeWoken.
	woken  bool
	promos ixheap[*promotion] // lanes by the time their head next ages
	onAged func(*Job, policy.Priority)
	tierOf func(*Job) policy.Priority // nil: every job in its type's tier
	levels []*level                   // by priority, highest first
	byPrio map[policy.Priority]*level
	types  map[policy.JobType]*typeQueue
	keys   map[string]*keyRec
	kpeak  shrink.Peak // keys' largest length since it was rebuilt
	gpeak  shrink.Peak // groups' likewise
	parked map[parkKey]*parkedSet
	groups map[string]*Group
	urgent []*lane  // held lanes whose head was urgent when last placed
	open   []*Group // groups that may run more and hold lanes (see bestOpen)
	// deferred holds the deferred jobs by the time they return.
	deferred ixheap[deferral]
	// expiring holds the groups that are not paused and have pending jobs
	// with a deadline, by their first one (expiry.go); ungrouped stands in
	// for the group of jobs without one.
	expiring  ixheap[*expiringGroup]
	ungrouped *Group
	// hasRoom is the caller's check that a group may start one more job.
	hasRoom func(*Group) bool
	floors  bool // a job with a floor was ever pushed: levels may cross
	// score, when not nil, orders dispatch (see scoring.go); freeSlots
	// counts the free worker slots of a type for its rarity bonus.
	score     *policy.ScoreConfig
	freeSlots func(policy.JobType) int
	n         int
}

// New returns an empty queue.
func New() *Queue {
	return &Queue{
		byPrio: map[policy.Priority]*level{},
		types:  map[policy.JobType]*typeQueue{},
		keys:   map[string]*keyRec{},
		parked: map[parkKey]*parkedSet{},
		groups: map[string]*Group{},
		nowNs:  math.MinInt64, // the zero now's
	}
}

// AddType declares job type t at priority p. Jobs of t may be pushed after.
func (q *Queue) AddType(t policy.JobType, p policy.Priority) {
	q.types[t] = q.newTypeQueue(t, q.levelOf(p))
}

// AddTier declares the level of priority p, if new: a tier no type has,
// which jobs put there by TierOf wait in.
func (q *Queue) AddTier(p policy.Priority) { q.levelOf(p) }

// HasTier reports whether the level of priority p is declared.
func (q *Queue) HasTier(p policy.Priority) bool { return q.byPrio[p] != nil }

// levelOf returns the level of priority p, made the first time.
func (q *Queue) levelOf(p policy.Priority) *level {
	lv := q.byPrio[p]
	if lv == nil {
		lv = &level{p: p, bands: q.bandsOf(p)}
		q.byPrio[p] = lv
		i := 0
		for i < len(q.levels) && q.levels[i].p > p {
			i++
		}
		q.levels = append(q.levels, nil)
		copy(q.levels[i+1:], q.levels[i:])
		q.levels[i] = lv
	}
	return lv
}

// TierOf sets how the queue learns a job's tier (its base priority) when
// it may differ from its type's — a workload rule's priority, whose
// level the caller declared (AddTier). Nil: every job is in its type's.
func (q *Queue) TierOf(fn func(*Job) policy.Priority) { q.tierOf = fn }

func (q *Queue) newTypeQueue(t policy.JobType, lv *level) *typeQueue {
	return &typeQueue{q: q, t: t, level: lv, idx: -1, top: -1, bands: make([]ixheap[*lane], lv.bands)}
}

// variant names a variant of a type queue: a priority floor (0 for none),
// with scoring on-demand work, and the tier of jobs a workload rule put in
// another tier than their type's (tiered).
type variant struct {
	floor    policy.Priority
	onDemand bool
	tiered   bool
	tier     policy.Priority
}

// typeOf returns the type queue of job j: its type's, or the variant of its
// floor and mode, created the first time.
func (q *Queue) typeOf(j *Job) *typeQueue {
	tq := q.types[j.Type]
	var key variant
	lv := tq.level
	if q.tierOf != nil {
		if p := q.tierOf(j); p != lv.p {
			key.tiered, key.tier, lv = true, p, q.levelOf(p)
		}
	}
	if j.Floored && j.Floor > lv.p {
		key.floor = j.Floor
	}
	key.onDemand = j.OnDemand && q.score != nil
	if key == (variant{}) {
		return tq
	}
	v := tq.variants[key]
	if v == nil {
		v = q.newTypeQueue(j.Type, lv)
		v.blocked, v.onDemand = tq.blocked, key.onDemand
		if key.floor > 0 {
			v.floor, v.floored = key.floor, true
			v.floorBand = len(v.bands) - 1
			for b := range len(v.bands) {
				if v.q.effective(lv.p, b) > key.floor {
					v.floorBand = b - 1
					break
				}
			}
			q.floors = true
		}
		if tq.variants == nil {
			tq.variants = map[variant]*typeQueue{}
		}
		tq.variants[key] = v
	}
	return v
}

// Len returns the number of pending jobs, parked ones included.
func (q *Queue) Len() int { return q.n }

// Push adds a job; keyCost is the current accumulated cost of its key.
func (q *Queue) Push(j *Job, keyCost time.Duration) {
	q.count(j, keyCost)
	j.pauseBase = q.pausedNow(j.Group) // a pause under way counts from now on only
	l := q.laneOf(j, q.typeOf(j))
	j.idx = int32(len(l.fifo)) // compact keeps the FIFO within twice its live jobs
	l.fifo = append(l.fifo, j)
	j.where = placeFIFO
	q.n++
	q.expireAt(j)
	q.enter(l)
}

// count records one more pending job of j's key, whose accumulated cost
// is keyCost, creating the key's record the first time.
func (q *Queue) count(j *Job, keyCost time.Duration) {
	k := q.keys[j.Key]
	if k == nil {
		k = &keyRec{name: j.Key, cost: keyCost}
		q.keys[j.Key] = k
		shrink.Note(q.keys, &q.kpeak)
	} else {
		q.setCost(k, keyCost)
	}
	k.jobs++
	j.key = k
}

// laneOf returns the job's lane in type queue tq, creating it the first
// time the job's key uses the type.
func (q *Queue) laneOf(j *Job, tq *typeQueue) *lane {
	k := j.key
	id := laneID{tq, j.Group}
	l := k.all[id]
	if l == nil {
		l = &lane{tq: tq, key: k, idx: -1, group: j.Group, gidx: -1, heldIdx: -1, tidx: -1}
		l.promo.idx = -1
		if k.all == nil {
			k.all = map[laneID]*lane{}
		}
		k.all[id] = l
	}
	if l.live == 0 {
		k.lanes = append(k.lanes, l)
		l.cost = k.cost
		if g := l.group; g != nil {
			l.gidx = len(g.lanes)
			g.lanes = append(g.lanes, l)
			if g.paused {
				l.held = holdPaused
			}
		}
	}
	j.lane = l
	return l
}

// enter accounts for a job that just joined lane l.
func (q *Queue) enter(l *lane) {
	l.live++
	head := l.headSeq
	l.refresh()
	if l.live > 1 && l.headSeq == head {
		// Joined behind the head: the lane's order, band and next promotion
		// are the head's, so nothing moves. (Its stored cost may lag its
		// key's; a lower bound is all the heaps need, see setCost.)
		return
	}
	q.update(l) // its head changed; held or not, it ages
}

// place puts lane l, which holds jobs, where its head says: in the band of
// the head's age, at the position of its cost and arrival, with its next
// promotion scheduled; then its type where the type's best lane says.
func (q *Queue) place(l *lane) {
	l.cost = l.key.cost
	b := q.bandOfLane(l)
	switch {
	case l.idx >= 0 && l.band == b:
		l.tq.bands[b].fix(l.idx)
	case l.idx >= 0:
		l.tq.take(l)
		l.tq.put(l, b)
	default:
		l.tq.put(l, b)
	}
	q.schedule(l)
	l.tq.settle()
}

// Best returns the next job to admit, or nil when every pending job waits on
// a full tier, a full type or a conflict. It does not remove the job: the
// caller either takes it with Remove or parks it with Park.
//
// Without aging (or priority floors) the first level with an eligible type
// holds the answer. With aging a lower level's head may have aged past a
// higher level's, so every level's best candidate is compared by (effective
// priority, key cost, arrival): O(levels). The best held lane of every group
// that may run more competes too (see ReleaseGroup).
func (q *Queue) Best() *Job {
	if q.score != nil {
		return q.bestScored()
	}
	var best *lane
	var bestPrio policy.Priority
	for _, lv := range q.levels {
		if lv.blocked || len(lv.types) == 0 {
			continue
		}
		tq := lv.types[0]
		l := tq.topLane()
		for !l.fresh() { // stale cost: move it down, look again
			tq.bands[l.band].fix(l.idx)
			tq.settle()
			tq = lv.types[0]
			l = tq.topLane()
		}
		if q.aging == nil && !q.floors && len(q.open) == 0 {
			return l.front()
		}
		p := tq.effective(tq.top)
		if best == nil || p > bestPrio || p == bestPrio && l.before(best) {
			best, bestPrio = l, p
		}
	}
	if h := q.bestOpen(best); h != nil {
		return h.front()
	}
	if best == nil {
		return nil
	}
	return best.front()
}

// Remove takes a job out of the queue, wherever it waits.
func (q *Queue) Remove(j *Job) {
	switch j.where {
	case placeNone:
		return
	case placeParked:
		h := j.parkedOn
		h.remove(int(j.idx))
		if len(h.ixheap) == 0 {
			delete(q.parked, h.key)
		}
		j.parkedOn = nil
	case placeDeferred:
		q.deferred.remove(int(j.idx))
	default:
		q.leaveLane(j)
	}
	q.unexpire(j)
	j.where, j.lane = placeNone, nil
	q.n--
	j.key.jobs--
	j.key = nil
}

// KeyPending returns the number of pending jobs of fairness key key,
// parked ones included.
func (q *Queue) KeyPending(key string) int {
	if k := q.keys[key]; k != nil {
		return k.jobs
	}
	return 0
}

// ForgetKey drops what the queue keeps of a fairness key that has no pending
// job; the caller does it when the key expires. It reports whether the key
// was dropped.
func (q *Queue) ForgetKey(key string) bool {
	k := q.keys[key]
	if k == nil || k.jobs > 0 {
		return false
	}
	delete(q.keys, key)
	return true
}

// compact gives back the arrays of tq's band heaps that shrank.
func (tq *typeQueue) compact() {
	for b := range tq.bands {
		tq.bands[b] = shrink.Slice(tq.bands[b])
	}
}

// Compact gives back the memory of the queue's maps once they shrank to a
// quarter of their peak (after ForgetKey and ForgetGroup passes).
func (q *Queue) Compact() {
	q.keys = shrink.Map(q.keys, &q.kpeak)
	q.groups = shrink.Map(q.groups, &q.gpeak)
	// The heaps and lists of lanes keep their peak's arrays: O(types ·
	// bands + groups), on the eviction tick.
	for _, tq := range q.types {
		tq.compact()
		for _, v := range tq.variants {
			v.compact()
		}
	}
	for _, g := range q.groups {
		g.lanes = shrink.Slice(g.lanes)
	}
}

// KeyCost returns the accumulated cost of pending job j's fairness key, as
// the queue orders it: O(1), no map lookup.
func (q *Queue) KeyCost(j *Job) time.Duration { return j.key.cost }

// GroupCount returns the number of group records the queue holds.
func (q *Queue) GroupCount() int { return len(q.groups) }

// ForgetGroup drops the record of group g, which has no pending job and is
// not paused, and reports whether it did: a group name is not kept for ever.
// A later job of the same name gets a new record.
func (q *Queue) ForgetGroup(g *Group) bool {
	if g.paused || len(g.lanes) > 0 || len(g.expiring) > 0 || q.groups[g.Name] != g {
		return false
	}
	delete(q.groups, g.Name)
	return true
}

// leaveLane takes j out of its lane (FIFO or returned heap).
func (q *Queue) leaveLane(j *Job) {
	l := j.lane
	if j.where == placeReturned {
		l.returned.remove(int(j.idx))
	} else {
		l.stale++
	}
	j.where = placeNone
	l.live--
	if l.live == 0 {
		q.dropLane(l)
		return
	}
	l.refresh()
	q.update(l)
}

// dropLane takes an emptied lane out of dispatch; a lane outside groups
// stays with its key for the key's next job of the type.
func (q *Queue) dropLane(l *lane) {
	if l.idx >= 0 {
		l.tq.take(l)
	}
	q.unschedule(l)
	l.tq.settle()
	if g := l.group; g != nil {
		last := len(g.lanes) - 1
		g.lanes[l.gidx] = g.lanes[last]
		g.lanes[l.gidx].gidx = l.gidx
		g.lanes[last] = nil
		g.lanes = g.lanes[:last]
		l.gidx = -1
	}
	q.unlist(l)
	l.held = holdNone
	clear(l.fifo)
	l.fifo, l.head, l.stale = l.fifo[:0], 0, 0
	k := l.key
	for i, x := range k.lanes {
		if x == l {
			last := len(k.lanes) - 1
			k.lanes[i] = k.lanes[last]
			k.lanes[last] = nil
			k.lanes = k.lanes[:last]
			break
		}
	}
	if l.group != nil && l.group.Name != "" {
		// Group names are callers' strings: a key that stays busy must not
		// keep a lane for every group it ever used (a lane of a type alone,
		// or of the group "" of jobs in none, stays: one per type).
		delete(k.all, laneID{l.tq, l.group})
	}
}

// parkKey is where a job waits for a conflict key: shared jobs apart from
// exclusive ones, since they are woken by different events.
type parkKey struct {
	key    policy.ConflictKey
	shared bool
}

// parkedSet is the heap of the jobs parked on one parkKey. A parked job
// points to it rather than holding the key: a pointer, not two strings.
type parkedSet struct {
	ixheap[*Job]
	key parkKey
}

// Park moves a job that may not start because of its conflict key onto it,
// among the shared or the exclusive jobs, where Release and ReleaseShared
// find it.
func (q *Queue) Park(j *Job, on policy.ConflictKey, shared bool) {
	q.leaveLane(j)
	j.lane = nil
	pk := parkKey{on, shared}
	h := q.parked[pk]
	if h == nil {
		h = &parkedSet{key: pk}
		q.parked[pk] = h
	}
	j.where, j.parkedOn = placeParked, h
	h.push(j)
}

// Release returns every exclusive job parked on key to its lane.
func (q *Queue) Release(key policy.ConflictKey) {
	pk := parkKey{key, false}
	h := q.parked[pk]
	if h == nil {
		return
	}
	delete(q.parked, pk)
	for _, j := range h.ixheap {
		q.unpark(j)
	}
}

// ReleaseShared returns the shared jobs parked on key that arrived before
// seq (Seq below it) to their lanes, earliest first: O(log n) each.
func (q *Queue) ReleaseShared(key policy.ConflictKey, seq uint64) {
	pk := parkKey{key, true}
	h := q.parked[pk]
	for h != nil && len(h.ixheap) > 0 && h.ixheap[0].Seq < seq {
		q.unpark(h.remove(0))
	}
	if h != nil && len(h.ixheap) == 0 {
		delete(q.parked, pk)
	}
}

// unpark returns j, just taken off its parking heap, to its lane.
func (q *Queue) unpark(j *Job) {
	j.parkedOn = nil
	l := q.laneOf(j, q.typeOf(j))
	j.where = placeReturned
	l.returned.push(j)
	q.enter(l)
}

// Rebase lowers every key's accumulated cost, and every lane's copy, by
// shift (to 0 below it), as the ledger did (costmodel.Ledger.Rebase): a
// monotone map, so every heap's order holds. O(keys + lanes).
func (q *Queue) Rebase(shift time.Duration) {
	lower := func(c time.Duration) time.Duration { return max(c-shift, 0) }
	for _, k := range q.keys {
		k.cost = lower(k.cost)
		for _, l := range k.all {
			l.cost = lower(l.cost)
		}
	}
}

// KeyRef is the record of the admitted job's fairness key, as Admit
// leaves it: SetKeyCostOf reaches it without a lookup. A key's record
// stays until ForgetKey, which the caller only calls for an idle key.
type KeyRef struct{ k *keyRec }

// SetKeyCostOf records the accumulated cost of the key r refers to: the
// cost its admission charged. While the key has pending jobs its cost must
// not decrease (accumulated costs only grow while a key is active).
func (q *Queue) SetKeyCostOf(r KeyRef, cost time.Duration) {
	if r.k != nil {
		q.setCost(r.k, cost)
	}
}

// The key's lanes keep their old cost in the heaps: a key's cost only grows
// while it has pending jobs, so a lane's stored cost is a lower bound of its
// real one, and Best refreshes a lane only when it reaches the top (see
// fresh). A charge costs O(1) however many lanes the key has.
func (q *Queue) setCost(k *keyRec, cost time.Duration) { k.cost = cost }

// fresh brings the stored cost of lane l, at the top of its heap, up to its
// key's and reports whether it was so already. Once the top lane is fresh it
// is the true minimum: every other stored cost is at most its lane's real
// cost, and at least the top's.
func (l *lane) fresh() bool {
	if l.cost == l.key.cost {
		return true
	}
	l.cost = l.key.cost
	return false
}

// BlockTier switches the level of priority p off (blocked) or on.
func (q *Queue) BlockTier(p policy.Priority, blocked bool) {
	if lv := q.byPrio[p]; lv != nil {
		lv.blocked = blocked
	}
}

// BlockType takes type t out of dispatch (blocked) or puts it back.
func (q *Queue) BlockType(t policy.JobType, blocked bool) {
	if tq := q.types[t]; tq != nil {
		tq.blocked = blocked
		tq.settle()
		for _, v := range tq.variants {
			v.blocked = blocked
			v.settle()
		}
	}
}

// Each calls fn for every pending job, parked ones included, in no
// particular order.
func (q *Queue) Each(fn func(*Job)) {
	for _, k := range q.keys {
		for _, l := range k.lanes {
			for i := l.head; i < len(l.fifo); i++ {
				if l.holds(i) {
					fn(l.fifo[i])
				}
			}
			for _, j := range l.returned {
				fn(j)
			}
		}
	}
	for _, h := range q.parked {
		for _, j := range h.ixheap {
			fn(j)
		}
	}
	for _, d := range q.deferred {
		fn(d.j)
	}
}
