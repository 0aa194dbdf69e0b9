// Package core is the scheduler as a synchronous state machine: every
// decision the scheduler makes is made here, from the current time passed in
// as data. It starts no goroutine and reads no clock, so tests drive it step
// by step; the actor package wraps it in the owner goroutine.
//
// One step is: feed an event (Submit, Finish, Withdraw, Evict), then call
// Dispatch, which admits every job the limits allow, in order. The caller
// starts the admitted jobs and reports each end with Finish.
//
// It is a part of the scheduler's inside: programs use the root package,
// github.com/fairsched/fairsched.
package core

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"
	"unsafe"

	"github.com/fairsched/fairsched/costmodel"
	"github.com/fairsched/fairsched/internal/shrink"
	"github.com/fairsched/fairsched/internal/timeheap"
	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/queue"
	"github.com/fairsched/fairsched/workers"
)

// Job is one job from submission to completion. The caller fills Type, ID
// and Key; the core fills the rest. A caller that needs more per job embeds
// Job first in its own record and finds the record from the Job (as
// messages.Of does): a field leading back costs every pending job 16 B.
//
// A pending job is most of the scheduler's memory, so a Job keeps only what
// most pending jobs use: what few use is in Rare (the job's TTL, Tokens,
// admission deferrals), what its type or group knows is read from there
// (Priority, its group's record), and what only a running job uses is in
// Running. A pending background job of the messages package is 224 B.
type Job struct {
	// queue.Job is the job's entry in the pending index, and holds what
	// the two share: Type, ID, Key (fairness key; "" for background
	// work), Seq (arrival order), Submitted (when Submit accepted it),
	// Floor, Floored, OnDemand, Deadline and Group (the queue's record of
	// the job's group, whose Ref is the core's). One copy of them a job.
	// Floor, when Floored, is set by the caller before Submit: the job's
	// effective priority never falls below it. A job submitted by a
	// running job inherits that job's effective priority this way.
	// OnDemand: a caller waits for the job (RunSync); with scoring it has
	// the on-demand bonus and slope.
	queue.Job

	Group string // "" for none

	// Runs counts its attempts so far (its owner keeps it). The job's
	// retry policy is its owner's (its own, else TypeRetry). An int32 that
	// stops at math.MaxInt32.
	Runs int32
	// ageIdx is its position in Core.aging while pending with aging on:
	// the rises sweep's data is kept there (rises.go), not in every job.
	ageIdx int32
	// widx is its position in its key's writers; -1 when not there
	// (conflict.go). The int32s and the flags below share two words.
	widx int32
	// refListed: the job is in its (type, id)'s list of pending background
	// jobs, linked by refPrev and refNext (supersede.go).
	refListed bool
	// isRun: the shared run of a coalescing type's requests; waiters are
	// the requests waiting for its result, wanted says a background request
	// wants it too; leader is, for a waiter, its run (coalesce.go).
	isRun, wanted bool
	// Flags belong to the caller: the flags of the record that embeds the
	// Job (messages.Job's), in the word that the core's own leave free.
	Flags            uint8
	refPrev, refNext *Job
	// Rare holds what few jobs use (more): nil until then.
	*Rare
	// Running holds what only an admitted job uses, nil until its first
	// admission: a pending job is most of the scheduler's memory. It stays
	// after Finish (its events read it) until Core.Release.
	*Running
	slot *policy.Slot // the type's counters and registration
}

// Priority is the job's base priority, its type's: the tier the job counts
// against. Read from the type once submitted (0 before): a type's priority
// never changes.
func (j *Job) Priority() policy.Priority {
	if j.slot == nil {
		return 0
	}
	return j.slot.Config.Priority
}

// grp is the core's record of j's group, once submitted: its queue
// record's Ref, rather than a pointer more in every pending job.
func (j *Job) grp() *group { return j.Job.Group.Ref.(*group) }

// Waited returns how long j has waited at now since it arrived (pauses of
// its group included), saturated.
func (c *Core) Waited(j *Job, now time.Time) time.Duration { return c.queue.WaitedAt(&j.Job, now) }

// jobOf is the Job whose queue entry qj is. The core pushes only the
// queue.Job embedded first in a Job, so qj's address is its Job's: the
// queue keeps no pointer back, which would cost every pending job 16 B.
func jobOf(qj *queue.Job) *Job { return (*Job)(unsafe.Pointer(qj)) }

// queue.Job must stay Job's first field for jobOf.
var _ = [1]struct{}{}[unsafe.Offsetof(Job{}.Job)]

// Running holds the fields of a Job set at its admission. The Core keeps
// them on a free list: admitting a job allocates nothing.
type Running struct {
	Started time.Time // when Dispatch admitted it
	// Effective is the priority it was admitted at (aging, floor).
	Effective policy.Priority
	// Cost is the job's cost at admission — its Tokens, or else the learned
	// estimate — and KeyCost the key's accumulated cost right after charging
	// it (Cost divided by the key's weight).
	Cost, KeyCost time.Duration
	estimate      time.Duration // the learned estimate at admission
	// Where admission found the estimate and charged the key: Finish
	// takes both back without a lookup.
	estRef  costmodel.EstimateRef
	account costmodel.AccountRef
	// Worker is the worker slot the job runs on (types with
	// RequiresWorker), set by Dispatch; nil otherwise. It stays set after
	// Finish: Worker.Lost() tells whether the worker was unregistered
	// while the job ran.
	Worker *workers.Slot
	// Caller belongs to the caller: what the current attempt runs under
	// (a *messages.RunContext), nil between attempts. Here, it costs only
	// the jobs that run, not every pending one.
	Caller   any
	runIdx   int    // position in Core.running, -1 when not running
	admitted uint64 // admission order, set by Dispatch
	// preemptBy is the tier that chose the job for preemption, until the
	// job ends (preempt.go).
	preemptBy *preemptor
}

// Rare holds the fields of a Job that most pending jobs never use, apart:
// a pending job is most of the scheduler's memory.
type Rare struct {
	// Arrived, when set and not after now, is when the job first arrived,
	// before a restart: Submit uses it as the job's arrival (aging, queue
	// timeout). NotBefore, when after now, holds the job out of dispatch
	// until then (reason scheduled).
	Arrived, NotBefore time.Time
	// ttl and tokens are the job's TTL and Tokens (SetTTL, SetTokens).
	ttl, tokens time.Duration
	buckets     []*bucket // the rate limits of its type, group and key
	// waitingOn is the reason the job last started to wait on, as
	// recorded in a defer decision; "" once admitted.
	waitingOn policy.Reason
	// waiters, of a coalesced run, are the requests waiting for its
	// result; leader is, for a waiter, its run (coalesce.go).
	waiters []*Job
	leader  *Job
	// deferrals counts the admission policy's deferrals of the job
	// (Deferrals); it stops at math.MaxInt32.
	deferrals int32
	// labels are the job's labels, matched by the workload rules at Submit.
	labels policy.Labels
	// waits is the job's wait history while pending (history.go);
	// startBy its caller's deadline, for deadline-aware admission.
	waits   *waitHistory
	startBy time.Time
}

// TTL is how long the job may stay pending when positive (else its type's
// QueueTimeout): Submit sets Deadline from it. Time its group spends
// paused does not count: Core.Deadline is the deadline moved back by the
// pauses.
func (j *Job) TTL() time.Duration { return j.rare().ttl }

// SetTTL sets TTL, before Submit.
func (j *Job) SetTTL(d time.Duration) {
	if j.Rare != nil || d != 0 {
		j.more().ttl = d
	}
}

// Tokens, when positive, is the job's cost as its submitter states it:
// charged instead of the learned estimate.
func (j *Job) Tokens() time.Duration { return j.rare().tokens }

// SetTokens sets Tokens, before Submit.
func (j *Job) SetTokens(d time.Duration) {
	if j.Rare != nil || d != 0 {
		j.more().tokens = d
	}
}

// Deferrals counts the admission policy's deferrals of the job (its
// policy.JobInfo.Attempt).
func (j *Job) Deferrals() int32 { return j.rare().deferrals }

// TypeRetry is the retry policy of j's type once j is submitted, none
// before: read from the type, not copied into every pending job.
func (j *Job) TypeRetry() policy.RetryPolicy {
	if j.slot == nil {
		return policy.RetryPolicy{}
	}
	return j.slot.Config.Retry
}

// noRare is what a job without a Rare reads (rare): every field zero. It
// is never written.
var noRare Rare

// rare returns j's Rare to read from: the zero one when j has none, so a
// getter of a rare field needs no case of its own.
func (j *Job) rare() *Rare {
	if j.Rare != nil {
		return j.Rare
	}
	return &noRare
}

// more returns j's Rare, allocating it if j has none yet.
func (j *Job) more() *Rare {
	if j.Rare == nil {
		j.Rare = new(Rare)
	}
	return j.Rare
}

// waiting is the reason j last started to wait on.
func (j *Job) waiting() policy.Reason { return j.rare().waitingOn }

// setWaiting records r as the reason j last started to wait on.
func (j *Job) setWaiting(r policy.Reason) {
	if j.Rare != nil || r != "" {
		j.more().waitingOn = r
	}
}

// Aged reports a pending job whose effective priority rose: what the
// report says of it is copied when it rises, since by TakeAged the job may
// have left the core (ended, expired, its record reused by its owner). Job
// is for identity only.
type Aged struct {
	Job       *Job
	Effective policy.Priority
	Type      policy.JobType
	ID, Key   string
	Priority  policy.Priority
	Submitted time.Time
}

// Completion describes a finished job's effect on the cost model.
type Completion struct {
	Elapsed  time.Duration // wall time from admission to Finish
	Estimate time.Duration // the (type, id) estimate after folding Elapsed in
	// Preempted: a higher tier preempted the attempt (TakePreempted); its
	// time was not folded into the estimate.
	Preempted bool
}

// Core holds all scheduling state. It is not safe for concurrent use.
type Core struct {
	owned        *ownerSlots // the owner's free slots (ownerslots.go); nil: no bound
	denied       []Denied    // jobs the admission policy denied, for TakeDenied
	shed         *shedIndex  // fair shedding (shed.go); nil when off
	expired      []*Job      // jobs that expired pending, for TakeExpired
	expiredTotal uint64

	// expiredWaiters are the watched jobs whose deadline came (waiters.go).
	expiredWaiters []*Job

	buckets      map[policy.RateScope]*bucket
	refills      timeheap.Heap[*bucket] // the blocked buckets, by refill time
	deferred     []Deferral             // and deferred, for TakeDeferred
	keyRunning   map[string]int         // running jobs per fairness key, with tenant limits
	limits       policy.Limits
	queue        *queue.Queue
	usage        *policy.Usage
	ledger       *costmodel.Ledger
	estimates    *costmodel.Estimates
	running      []*Job
	runFree      []*Running // Running records of released jobs, for the next admissions
	groups       map[string]*group
	pool         *workers.Pool
	aged         []Aged             // since the last TakeAged
	allocChanges []AllocationChange // since the last TakeAllocationChanges
	seq          uint64
	admits       uint64 // admissions so far: orders Running
	// decisions are the decision records since the last TakeDecisions,
	// kept while logDecisions is on (see decision.go).
	decisions    []Decision
	logDecisions bool
	// writers are the pending exclusive jobs by conflict key, kept for the
	// conflict groups with shared types (sharedGroups; conflict.go).
	writers      map[policy.ConflictKey]*writerQueue
	sharedGroups map[policy.ConflictGroup]bool
	// lending: in this Dispatch nothing could start within the groups'
	// allocations, and slots are free: groups may run past theirs (lend).
	lending bool
	// busy are the groups with demand or slots: reallocation walks them.
	busy                map[*group]struct{}
	gpeak, kpeak, bpeak shrink.Peak // groups', keyRunning's and busy's largest lengths since rebuilt
	// risen counts, by type, the aging rises of jobs that have left the
	// queue (see AgingRises).
	risen map[policy.JobType]uint64
	// per holds the periodic schedules (periodic.go).
	per periodic
	// joinable are the pending coalesced runs by (type, id) (coalesce.go).
	joinable map[jobRef]*Job
	joinPeak shrink.Peak
	// byRef are the pending background jobs by (type, id) (supersede.go).
	byRef map[uint64]*Job // the head of each list, by refHash
	// refsMade: the lists are kept; false until something first reads
	// them (PendingBackground).
	refsMade bool
	refPeak  shrink.Peak
	// aging lists the pending jobs, with aging on, for the rises sweep.
	aging agingTable
	// load is the load signal's last reading (signal.go).
	load loadState
	// pol is what the core keeps of the applied policy (policy.go).
	pol livePolicy
	// rules are the tiers' preemption and starvation windows; nil when no
	// tier has any (preempt.go).
	rules *tierRules
	// hier is hierarchical fair share; nil with one level (hier.go).
	hier *hier
	// waitNotes counts the wait-history notes of all pending jobs
	// (history.go).
	waitNotes int
}

// New returns an empty core. The limits must be valid.
func New(limits policy.Limits) *Core {
	q := queue.New()
	if limits.Groups != nil {
		groups := *limits.Groups
		groups.Groups = make(map[string]policy.GroupConfig, len(limits.Groups.Groups))
		for k, v := range limits.Groups.Groups {
			groups.Groups[k] = v
		}
		limits.Groups = &groups
	}
	limits.KeyWeights = maps.Clone(limits.KeyWeights) // the core's own
	limits.Tiers = maps.Clone(limits.Tiers)
	if limits.Adaptive != nil {
		a := limits.Adaptive.WithDefaults()
		limits.Adaptive = &a
	}
	if limits.Load != nil {
		l := limits.Load.WithDefaults()
		limits.Load = &l
	}
	if limits.Aging != nil {
		aging := *limits.Aging // the core's own: callers and snapshots get copies
		limits.Aging = &aging
		q.SetAging(&aging)
	}
	c := &Core{
		groups:     map[string]*group{},
		pool:       workers.New(),
		keyRunning: map[string]int{},
		limits:     limits,
		queue:      q,
		usage:      newUsage(limits),
		ledger:     costmodel.NewLedger(),
		estimates:  costmodel.NewEstimates(limits.CostSmoothing, cmp.Or(limits.MaxCostEstimates, policy.DefaultMaxCostEstimates)),
		rules:      newTierRules(limits.Tiers),
	}
	// A key pushed out of the idle keys is forgotten as an expired one is.
	c.ledger.BoundIdle(cmp.Or(limits.MaxIdleKeys, policy.DefaultMaxIdleKeys), func(key string) { q.ForgetKey(key) })
	q.OnAged(func(qj *queue.Job, effective policy.Priority) {
		j := jobOf(qj)
		c.aged = append(c.aged, Aged{Job: j, Effective: effective, Type: j.Type, ID: j.ID, Key: j.Key,
			Priority: j.Priority(), Submitted: q.TimeOf(j.Submitted)})
	})
	q.SetRoom(c.hasRoom)
	if limits.Scoring != nil {
		sc := *limits.Scoring
		c.limits.Scoring = &sc
		q.SetScoring(&sc, c.freeSlots)
	}
	c.initRates()
	if limits.Shed != nil && limits.MaxPending > 0 {
		c.shed = newShedIndex()
	}
	return c
}

// RegisterType adds a job type.
func (c *Core) RegisterType(t policy.JobType, cfg policy.JobTypeConfig) error {
	if err := cfg.ValidateFor(t, c.limits); err != nil {
		return err
	}
	if _, dup := c.usage.Lookup(t); dup {
		return fmt.Errorf("%w: %q", policy.ErrDuplicateType, t)
	}
	c.usage.Slot(t, cfg)
	if c.rules != nil && cfg.Preemptible {
		c.rules.preemptible++
	}
	c.queue.AddType(t, cfg.Priority)
	if cfg.ConflictMode == policy.ConflictShared {
		c.sharedTypeRegistered(cfg.ConflictGroup)
	}
	if cfg.RequiresWorker {
		c.queue.BlockType(t, true) // until a slot that takes it registers
	}
	if c.usage.Shares() {
		c.syncTiers()
	} else if c.usage.TierFull(cfg.Priority) {
		c.queue.BlockTier(cfg.Priority, true)
	}
	return nil
}

// Types returns a copy of the registered types.
func (c *Core) Types() map[policy.JobType]policy.JobTypeConfig { return c.usage.Configs() }

// RetryOf is type t's retry policy (the zero policy for a type not
// registered).
func (c *Core) RetryOf(t policy.JobType) policy.RetryPolicy {
	if slot, ok := c.usage.Lookup(t); ok {
		return slot.Config.Retry
	}
	return policy.RetryPolicy{}
}

// Submit queues a job. It admits nothing: call Dispatch next.
func (c *Core) Submit(now time.Time, j *Job) error {
	slot, ok := c.usage.Lookup(j.Type)
	if !ok {
		return fmt.Errorf("%w: %q", policy.ErrUnknownJobType, j.Type)
	}
	j.slot = slot // its Priority, for the refusal's record too
	c.applyWorkload(j)
	if err := c.refusal(j); err != nil && !c.shedFor(now, j, err) {
		c.record(now, j, DecisionRefuse, string(err.(*policy.RefusalError).Reason), 0)
		return err
	}
	if err := c.lateStart(now, j); err != nil {
		c.record(now, j, DecisionRefuse, string(policy.ReasonStartAfterDeadline), 0)
		return err
	}
	c.seq++
	since := now
	if r := j.Rare; r != nil && !r.Arrived.IsZero() && r.Arrived.Before(now) {
		since = r.Arrived
	}
	j.Seq = c.seq
	g := c.groupOf(j.Group)
	if c.buckets != nil {
		c.bucketsOf(j)
	}
	ttl := j.TTL()
	if ttl <= 0 {
		ttl = slot.Config.QueueTimeout
	}
	c.queue.At(now) // first: the queue's epoch is a time of the clock
	deadline := int64(0)
	if ttl > 0 {
		deadline = c.queue.DeadlineAt(since.Add(ttl))
	}
	j.Job = queue.Job{Type: j.Type, ID: j.ID, Key: j.Key, Seq: j.Seq, Submitted: c.queue.Nanos(since), Group: g.q, Floor: j.Floor, Floored: j.Floored, OnDemand: j.OnDemand, Deadline: deadline}
	c.queue.Push(&j.Job, c.joinKey(j, now))
	if r := j.Rare; r != nil && r.NotBefore.After(now) {
		c.queue.Defer(&j.Job, r.NotBefore) // one heap, one timer: NextWake
		j.setWaiting(policy.ReasonScheduled)
		c.noteWait(now, j, policy.ReasonScheduled)
	}
	c.enters(j, 0)
	c.listBackground(j)
	c.addWriter(j)
	before := g.demand()
	g.pending++
	c.demandChanged(g, before)
	c.waiting(j, 1)
	if c.rules != nil {
		c.rules.joins(now, j.Priority(), 1)
	}
	c.arrives(now, j)
	if c.shed != nil {
		c.shedAdd(now, j)
	}
	return nil
}

// Dispatch admits pending jobs in order — higher effective priority (the
// base priority when aging is off), lower accumulated cost of the key,
// earlier arrival — skipping every job a limit holds back,
// until the global cap is reached or no pending job may start. It appends the
// admitted jobs to buf, in admission order, and returns it.
func (c *Core) Dispatch(now time.Time, buf []*Job) []*Job {
	c.queue.At(now)
	c.queue.TakeWoken() // this dispatch acts on it
	c.expire(now)
	c.refill(now)
	if c.limits.Groups != nil && c.limits.Aging != nil {
		c.queue.ReleaseUrgent(func(g *queue.Group) bool { return c.mayBorrow(c.groups[g.Name]) })
	}
	if c.load.holding {
		c.holdOverloaded(now)
		return buf
	}
	defer func() { c.lending = false }()
	for !c.usage.GlobalFull() {
		qj := c.queue.Best()
		if qj == nil {
			if c.lending || !c.lend() {
				break
			}
			continue
		}
		j := jobOf(qj)
		if c.tenantBlocks(j) {
			c.queue.HoldForKey(qj)
			c.startsWaiting(now, j, policy.ReasonTenantLimit, 0)
			continue
		}
		if c.groupBlocks(j) {
			c.queue.Hold(qj)
			continue
		}
		if c.conflictBlocks(j) {
			c.park(j)
			c.noteWait(now, j, policy.ReasonConflict)
			continue
		}
		if c.buckets != nil {
			if b := c.emptyBucket(now, j); b != nil {
				c.block(now, b, qj)
				c.startsWaiting(now, j, policy.ReasonRateLimited, b.until.Sub(now))
				continue
			}
		}
		if c.rules != nil { // a starved lower tier's job may take the slot instead
			if s := c.starvedFirst(now, j); s != j {
				if c.holdsBack(now, s) {
					continue
				}
				j, qj = s, &s.Job
			}
		}
		if c.noOwnerSlot(j) {
			break // the best job waits for its owner's next free slot
		}
		if c.limits.Admission != nil && !c.askPolicy(now, j) {
			continue
		}
		// A group this admission fills has the lane held now, while it is
		// at hand, rather than when its next job reaches the top.
		fills := c.limits.Groups != nil && c.room(j.grp()) <= 1
		c.admit(now, j, c.queue.Admit(qj, fills))
		c.takeOwnerSlot(j)
		j.setWaiting("")
		c.record(now, j, DecisionAdmit, c.admitCode(j), 0)
		buf = append(buf, j)
	}
	if c.rules != nil && len(c.rules.preemptors) > 0 {
		// A slot lent in this Dispatch is not one a group may take next
		// time: a preemption is judged within the allocations.
		c.lending = false
		c.preempt(now)
	}
	return buf
}

func (c *Core) admit(now time.Time, j *Job, key queue.KeyRef) {
	c.leaves(j)
	c.forgetWaits(j)
	c.unlistBackground(j)
	c.started(j)
	c.removeWriter(j, true)
	c.countWaiting(j, -1) // the tiers are synced below
	if c.rules != nil {
		c.rules.admitted(now, j)
	}
	tr := c.usage.Start(j.slot, j.ID)
	if c.usage.Shares() {
		c.syncTiers()
	} else if tr.TierFull {
		c.queue.BlockTier(j.Priority(), true)
	}
	if tr.TypeFull {
		c.queue.BlockType(j.Type, true)
	}
	if j.Running == nil { // a retried job keeps its own
		if n := len(c.runFree); n > 0 {
			j.Running, c.runFree[n-1] = c.runFree[n-1], nil
			c.runFree = c.runFree[:n-1]
		} else {
			j.Running = new(Running)
		}
	}
	j.Worker = nil
	if j.slot.Config.RequiresWorker {
		c.takeWorker(j)
	}
	j.estimate, j.estRef = c.estimates.CostRef(estimateKey(j), j.slot.Config.DefaultCost, now)
	if c.buckets != nil {
		c.take(now, j)
	}
	j.Cost = j.estimate
	if t := j.Tokens(); t > 0 {
		j.Cost = t
	}
	j.KeyCost, j.account = c.ledger.ChargeRef(j.Key, policy.Weighted(j.Cost, c.chargeWeight(j.Key)))
	if shift := c.ledger.Rebase(j.KeyCost); shift > 0 {
		c.queue.Rebase(shift)
		c.rebaseHier(shift)
		j.KeyCost = costmodel.Lower(j.KeyCost, shift)
	}
	c.queue.SetKeyCostOf(key, j.KeyCost)
	j.Started = now
	j.Effective = c.queue.Effective(&j.Job, j.Priority())
	j.grp().pending--
	j.grp().running++
	if c.limits.Tenants != nil {
		c.keyRunning[j.Key]++
		shrink.Note(c.keyRunning, &c.kpeak)
	}
	c.admits++
	j.admitted = c.admits
	j.runIdx = len(c.running)
	c.running = append(c.running, j)
	if c.shed != nil {
		c.shedLeaves(j) // after the charge: its key's claim grew
	}
}

// Finish records the end of a running job, whatever its outcome, and folds
// its wall time into the cost estimate of its (type, id). Call Dispatch next:
// the job's slot, type slot and conflict key are free again.
func (c *Core) Finish(now time.Time, j *Job) Completion {
	c.queue.At(now)
	if j.Running == nil || j.runIdx < 0 {
		panic(fmt.Sprintf("core: Finish of job %s/%s that is not running", j.Type, j.ID))
	}
	inUse := len(c.running) >= c.limits.MaxConcurrency // the limit bound concurrency
	last := len(c.running) - 1
	c.running[j.runIdx] = c.running[last]
	c.running[j.runIdx].runIdx = j.runIdx
	c.running[last] = nil
	c.running = c.running[:last]
	j.runIdx = -1

	elapsed := now.Sub(j.Started)
	tr := c.usage.Finish(j.slot, j.ID)
	if c.usage.Shares() {
		c.syncTiers()
	} else if tr.TierFreed {
		c.queue.BlockTier(j.Priority(), false)
	}
	if tr.TypeFreed {
		c.queue.BlockType(j.Type, c.typeBlocked(j.slot))
	}
	if j.Worker != nil {
		c.releaseWorker(j)
	}
	if tr.HasReleased {
		c.released(tr.Released)
	}
	preempted := j.preemptBy != nil
	est := j.estimate
	if preempted { // a cut-short attempt says nothing of the job's cost
		c.preemptEnded(j)
	} else {
		est = c.estimates.ObserveRef(j.estRef, estimateKey(j), elapsed, j.estimate, now)
	}
	c.ledger.LeaveRef(j.account, j.Key, now)
	c.leaveKey(j.Key)
	if c.limits.Tenants != nil {
		n := c.keyRunning[j.Key] - 1
		if n == 0 {
			delete(c.keyRunning, j.Key)
		} else {
			c.keyRunning[j.Key] = n
		}
		if limit := c.limits.Tenants.For(j.Key).MaxRunning; limit > 0 && n == limit-1 && !c.keyRateBlocked(j.Key) {
			c.queue.ReleaseKey(j.Key) // it may run one more
		}
	}
	g := j.grp()
	before := g.demand()
	g.running--
	c.demandChanged(g, before)
	if c.room(g) > 0 {
		c.queue.ReleaseGroup(g.q)
	}
	// Last, so that the job's own effects (a drained group) are reported
	// as such before the limit moves every share.
	if a := c.limits.Adaptive; a != nil && a.LoadTarget == 0 { // else it follows load (Load)
		if next := a.Next(c.limits.MaxConcurrency, elapsed, j.estimate, inUse); next != c.limits.MaxConcurrency {
			c.setLimit(next)
		}
	}
	return Completion{Elapsed: elapsed, Estimate: est, Preempted: preempted}
}

// Release takes back the Running record of j, which has ended for good and
// which nothing reads any more, for the next admission. Call it before j's
// record is reused; a record never released simply keeps its own.
func (c *Core) Release(j *Job) {
	if r := j.Running; r != nil {
		if r.runIdx >= 0 {
			panic(fmt.Sprintf("core: Release of running job %s/%s", j.Type, j.ID))
		}
		j.Running = nil
		c.runFree = append(c.runFree, r)
	}
}

// Withdraw removes a pending job: it will never run and is never charged. It
// reports false when the job is not pending (running or already gone).
func (c *Core) Withdraw(now time.Time, j *Job) bool {
	c.queue.At(now)
	if !j.Job.Queued() {
		return false
	}
	c.drop(now, j)
	return true
}

// drop takes pending job j out of the queue and out of every count.
func (c *Core) drop(now time.Time, j *Job) {
	c.leaves(j)
	c.forgetWaits(j)
	c.unlistBackground(j)
	c.queue.Remove(&j.Job)
	c.removeWriter(j, false)
	c.ledger.Leave(j.Key, now)
	c.leaveKey(j.Key)
	before := j.grp().demand()
	j.grp().pending--
	c.demandChanged(j.grp(), before)
	c.waiting(j, -1)
	if c.rules != nil {
		c.rules.joins(now, j.Priority(), -1)
	}
	if c.shed != nil {
		c.shedLeaves(j)
	}
}

// WithdrawAll removes every pending job and returns them in arrival order.
func (c *Core) WithdrawAll(now time.Time) []*Job {
	var out []*Job
	c.queue.Each(func(qj *queue.Job) { out = append(out, jobOf(qj)) })
	slices.SortFunc(out, func(a, b *Job) int { return cmp.Compare(a.Seq, b.Seq) })
	for _, j := range out {
		c.Withdraw(now, j)
	}
	return out
}

// Running returns the running jobs in admission order.
func (c *Core) Running() []*Job {
	out := slices.Clone(c.running)
	slices.SortFunc(out, func(a, b *Job) int { return cmp.Compare(a.admitted, b.admitted) })
	return out
}

// Advance moves the core's clock to now: jobs that have aged into a higher
// band since move up (and are reported by TakeAged). Every other call that
// takes now does it too.
func (c *Core) Advance(now time.Time) {
	c.queue.At(now)
	c.expire(now)
}

// TakeAged returns the pending jobs whose effective priority rose since the
// last call, each at most once per aging step. The slice is reused: use it
// before the next call into the core.
func (c *Core) TakeAged() []Aged {
	out := c.aged
	c.aged = c.aged[:0]
	return out
}

// Pending returns the number of pending jobs.
func (c *Core) Pending() int { return c.queue.Len() }

// IsPending reports whether j waits in the queue (not yet admitted, not
// gone).
func (c *Core) IsPending(j *Job) bool { return j.Job.Queued() }

// RunningCount returns the number of running jobs.
func (c *Core) RunningCount() int { return len(c.running) }

// Idle reports whether nothing is pending or running.
func (c *Core) Idle() bool { return c.queue.Len() == 0 && len(c.running) == 0 }

// Evict drops idle fairness keys and cost estimates unused for the key TTL.
func (c *Core) Evict(now time.Time) (keys, estimates int) {
	forget := func(key string) { c.queue.ForgetKey(key) }
	keys, estimates = c.ledger.Evict(now, c.limits.KeyTTL, forget), c.estimates.Evict(now, c.limits.KeyTTL)
	c.forgetIdle()
	c.queue.Compact()
	c.groups = shrink.Map(c.groups, &c.gpeak)
	c.busy = shrink.Map(c.busy, &c.bpeak)
	c.keyRunning = shrink.Map(c.keyRunning, &c.kpeak)
	c.byRef = shrink.Map(c.byRef, &c.refPeak)
	c.joinable = shrink.Map(c.joinable, &c.joinPeak)
	return keys, estimates
}

// TierRunning returns the running count of tier p.
func (c *Core) TierRunning(p policy.Priority) int { return c.usage.TierRunning(p) }

// KeyCost returns the accumulated cost of a fairness key.
func (c *Core) KeyCost(key string) time.Duration { return c.ledger.Cost(key) }

func estimateKey(j *Job) costmodel.EstimateKey {
	return costmodel.EstimateKey{Type: string(j.Type), ID: j.ID}
}

// keyWeight returns the weight of fairness key key.
func (c *Core) keyWeight(key string) float64 {
	if w, ok := c.limits.KeyWeights[key]; ok {
		return w
	}
	return policy.DefaultKeyWeight
}

// SetKeyWeight changes the weight of fairness key key from its next
// admission on; weight 0 restores the default. It fails with
// ErrInvalidConfig, changing nothing, for a negative or non-finite weight.
func (c *Core) SetKeyWeight(key string, weight float64) error {
	if err := policy.CheckKeyWeight(key, weight); err != nil {
		return err
	}
	defer c.reweigh(key)
	if weight == 0 {
		delete(c.limits.KeyWeights, key)
		return nil
	}
	if c.limits.KeyWeights == nil {
		c.limits.KeyWeights = map[string]float64{}
	}
	c.limits.KeyWeights[key] = weight
	return nil
}

// Refuses reports whether Submit may refuse a job for a bound on pending
// jobs (Limits.MaxPending, TenantLimits.MaxPending) or for the load signal
// (OverloadRefuse): its callers must then wait for its answer.
func (c *Core) Refuses() bool {
	if c.limits.MaxPending > 0 || c.limits.Load != nil && c.limits.Load.Action == policy.OverloadRefuse {
		return true
	}
	if t := c.limits.Tenants; t != nil {
		if t.Default.MaxPending > 0 {
			return true
		}
		for _, l := range t.Keys {
			if l.MaxPending > 0 {
				return true
			}
		}
	}
	return false
}

// refusal returns the *policy.RefusalError that keeps j out of the queue,
// if any: its key's pending bound first (a noisy tenant is told so even
// when the whole queue is full), then the queue's, then the load signal's.
func (c *Core) refusal(j *Job) error {
	if t := c.limits.Tenants; t != nil {
		if limit := t.For(j.Key).MaxPending; limit > 0 && c.queue.KeyPending(j.Key) >= limit {
			return &policy.RefusalError{Reason: policy.ReasonTenantLimit, Type: j.Type, ID: j.ID, Key: j.Key, Limit: limit}
		}
	}
	if limit := c.limits.MaxPending; limit > 0 && c.queue.Len() >= limit {
		return &policy.RefusalError{Reason: policy.ReasonPoolOverloaded, Type: j.Type, ID: j.ID, Key: j.Key, Limit: limit}
	}
	if c.limits.Load != nil && c.overloadRefuses() {
		return &policy.RefusalError{Reason: policy.ReasonOverloaded, Type: j.Type, ID: j.ID, Key: j.Key}
	}
	return nil
}

// tenantBlocks reports whether j's fairness key runs as many jobs as its
// limits allow.
func (c *Core) tenantBlocks(j *Job) bool {
	if c.limits.Tenants == nil {
		return false
	}
	limit := c.limits.Tenants.For(j.Key).MaxRunning
	return limit > 0 && c.keyRunning[j.Key] >= limit
}

func newUsage(l policy.Limits) *policy.Usage {
	u := policy.NewUsage(l.MaxConcurrency)
	u.SetPriorityMode(l.PriorityMode)
	u.SetTiers(l.Tiers)
	return u
}

// waiting tells the tier shares that j joined (1) or left (-1) the queue
// unrun; a tier lending its idle reservation takes it back while it has
// jobs waiting.
func (c *Core) waiting(j *Job, delta int) {
	if c.countWaiting(j, delta) {
		c.syncTiers()
	}
}

// countWaiting counts j in its tier's waiting jobs (delta 1) or out of them
// (-1), and reports whether the tier shares saw a change. A job whose group
// is allocated no slot is kept apart (group.waiting): it cannot take the
// slot a reservation would keep for it, and a tier that lends its idle
// reservation must lend it then too. Otherwise the tier could hold its
// reservation for jobs its groups hold back, while the groups that have the
// slots hold only other tiers' jobs, which the reservation keeps out:
// nothing would run at all. reallocate moves a group's count in and out as
// its allocation leaves or reaches 0.
func (c *Core) countWaiting(j *Job, delta int) bool {
	if !c.usage.Shares() {
		return false
	}
	if c.limits.Groups != nil {
		g := j.grp()
		if g.waiting == nil {
			g.waiting = map[policy.Priority]int{}
		}
		g.waiting[j.Priority()] += delta
		if g.alloc == 0 {
			return false
		}
	}
	c.usage.Waiting(j.Priority(), delta)
	return true
}

// syncTiers switches every tier's level on or off as the tier shares say.
// With shares, whether a tier may start depends on the other tiers' running
// and waiting jobs, so every change re-asks each tier: O(tiers), a handful.
func (c *Core) syncTiers() { c.usage.SyncTiers(c.queue.BlockTier) }

// Denied reports a pending job the admission policy denied: it left the
// queue unrun, with Err for its submitter.
type Denied struct {
	Job *Job
	Err error
	// Panicked: the policy panicked, and Err wraps ErrDenied with the
	// panic's value.
	Panicked bool
	// Shed: fair shedding dropped it for a newcomer (Err is a
	// *policy.RefusalError of reason shed), not the admission policy.
	Shed bool
}

// askPolicy asks the admission policy about j, which may start now, and
// carries out a denial or a deferral. It reports whether j may be admitted.
func (c *Core) askPolicy(now time.Time, j *Job) bool {
	info := policy.JobInfo{Type: j.Type, ID: j.ID, Key: j.Key, Group: j.Group, Priority: j.Priority(),
		Effective: c.queue.Effective(&j.Job, j.Priority()), Waited: c.Waited(j, now), Attempt: int(j.Deferrals()),
		QueueDepth: c.queue.Len(), Running: len(c.running)}
	d, panicked := c.decide(info)
	if err, ok := d.Denied(); ok {
		c.drop(now, j)
		c.denied = append(c.denied, Denied{Job: j, Err: err, Panicked: panicked})
		c.record(now, j, DecisionDeny, CodeDenied, 0)
		return false
	}
	if delay, ok := d.Deferred(); ok {
		if r := j.more(); r.deferrals < math.MaxInt32 { // int32: stops, never wraps
			r.deferrals++
		}
		c.record(now, j, DecisionDefer, string(policy.ReasonDeferred), delay)
		c.queue.Defer(&j.Job, now.Add(delay))
		if j.widx >= 0 { // a writer waiting on its own holds no shared job back
			k, _ := j.slot.Config.Conflicts(j.ID)
			c.wakeShared(k)
		}
		c.deferred = append(c.deferred, Deferral{Job: j, Until: now.Add(delay)})
		j.setWaiting(policy.ReasonDeferred)
		return false
	}
	return true
}

// decide runs the policy; a panic denies the job.
func (c *Core) decide(info policy.JobInfo) (d policy.Decision, panicked bool) {
	defer func() {
		if v := recover(); v != nil {
			d, panicked = policy.Deny(fmt.Errorf("%w: the admission policy panicked: %v", policy.ErrDenied, v)), true
		}
	}()
	return c.limits.Admission(info), false
}

// Deferral reports a job the admission policy deferred until Until.
type Deferral struct {
	Job   *Job
	Until time.Time
}

// TakeDeferred returns the deferrals since the last call. The slice is
// reused: use it before the next call into the core.
func (c *Core) TakeDeferred() []Deferral {
	out := c.deferred
	c.deferred = c.deferred[:0]
	return out
}

// TakeDenied returns the jobs the admission policy denied since the last
// call. The slice is reused: use it before the next call into the core.
func (c *Core) TakeDenied() []Denied {
	out := c.denied
	c.denied = c.denied[:0]
	return out
}

// TakeWoken reports, and clears, whether a call other than Dispatch took
// time past a deferred job's return (its backoff, its NotBefore or its
// admission policy's deferral over) or a lane's rise to a higher aging
// band since the last Dispatch: the caller must dispatch then, as NextWake
// no longer holds that moment.
func (c *Core) TakeWoken() bool { return c.queue.TakeWoken() }

// NextWake returns when a deferred job next returns to dispatch: the
// caller's one timer (Advance or Dispatch at that time admits it).
func (c *Core) NextWake() (time.Time, bool) {
	at, ok := c.queue.NextWake()
	if a := c.limits.Aging; a != nil && a.UrgentThreshold > 0 && c.limits.Groups != nil && !c.usage.GlobalFull() {
		// A job that ages into urgency may borrow a free slot past its
		// group's share: wake when the next lane rises a band. (With no
		// slot free, the next Finish dispatches anyway.)
		if p, ok2 := c.queue.NextPromotion(); ok2 && (!ok || p.Before(at)) {
			at, ok = p, true
		}
	}
	if c.refills.Len() > 0 && (!ok || c.refills.Top().until.Before(at)) {
		at, ok = c.refills.Top().until, true
	}
	if w, ok2 := c.ruleWake(); ok2 && (!ok || w.Before(at)) {
		at, ok = w, true
	}
	return at, ok
}

// setLimit changes the global cap (adaptive limit): the groups' shares and
// the tiers' are taken of the new one.
func (c *Core) setLimit(n int) {
	c.limits.MaxConcurrency = n
	c.usage.SetMax(n)
	if c.usage.Shares() {
		c.syncTiers()
	}
	if c.limits.Groups != nil {
		c.reallocate(AllocRebalance, "")
	}
}

// expire removes the pending jobs whose deadline has come.
func (c *Core) expire(now time.Time) {
	c.queue.TakeExpired(now, func(qj *queue.Job) {
		if c.expireWatched(qj) {
			return
		}
		j := jobOf(qj)
		c.drop(now, j)
		c.expired = append(c.expired, j)
		c.expiredTotal++
		c.record(now, j, DecisionDeny, CodeExpired, 0)
	})
}

// Deadline returns when pending job j expires, at the time of the last
// call: its Deadline moved back by the time its group was paused since it
// arrived. It reports false when j has no deadline, is not pending, or its
// group is paused (its deadline stands still until the group resumes).
func (c *Core) Deadline(j *Job) (time.Time, bool) {
	if !j.Job.Queued() {
		return time.Time{}, false
	}
	return c.queue.Deadline(&j.Job)
}

// TakeExpired returns the jobs that expired pending since the last call.
// The slice is reused: use it before the next call into the core.
func (c *Core) TakeExpired() []*Job {
	out := c.expired
	c.expired = c.expired[:0]
	return out
}

// Retry returns j, which Finish just recorded as a failed attempt, to the
// queue: it waits out delay outside dispatch (reason backoff), then
// competes again with its first submission's arrival and aging clock. Its
// next admission is charged again, like any.
func (c *Core) Retry(now time.Time, j *Job, delay time.Duration) {
	c.requeue(now, j, now.Add(delay))
	j.setWaiting(policy.ReasonBackoff)
	c.noteWait(now, j, policy.ReasonBackoff)
	c.record(now, j, DecisionDefer, string(policy.ReasonBackoff), delay)
}

// requeue returns j, which Finish just recorded, to the queue, out of
// dispatch until until; it competes again with its first arrival.
func (c *Core) requeue(now time.Time, j *Job, until time.Time) {
	c.queue.At(now)
	g := j.grp()
	before := g.demand()
	g.pending++
	c.demandChanged(g, before)
	c.queue.Backoff(&j.Job, until, c.joinKey(j, now))
	c.addWriter(j)
	c.enters(j, c.queue.Waited(&j.Job)) // it waits on with its first clock
	c.listBackground(j)
	c.waiting(j, 1)
	if c.rules != nil {
		c.rules.joins(now, j.Priority(), 1)
	}
}
