package invariant

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/fairsched/fairsched"
)

// tierCap is the most jobs of tier p that may run at once: its burst
// share, at most its MaxRunning (spec 5's max_inflight, never exceeded);
// else its value, unless priorities only order (or p is 0): then none.
func (c *config) tierCap(p fairsched.Priority) int {
	if t, ok := c.tiers[p]; ok {
		cp := math.MaxInt
		if t.MinShare != 0 || t.BurstShare != 0 {
			cp = max(int(math.Floor(t.BurstShare*float64(c.maxConc))), c.tierReserve(t), 1)
		}
		if t.MaxRunning > 0 {
			cp = min(cp, t.MaxRunning)
		}
		return cp
	}
	if c.orderOnly || p == 0 {
		return math.MaxInt
	}
	return int(p)
}

// tierReserve is the slots a tier reserves: ⌊MinShare·C⌋, at most its
// MaxRunning.
func (c *config) tierReserve(t fairsched.TierConfig) int {
	r := int(math.Floor(t.MinShare * float64(c.maxConc)))
	if t.MaxRunning > 0 {
		r = min(r, t.MaxRunning)
	}
	return r
}

func (c *config) groupLimit(g string) int {
	if !c.groupsOn {
		return 0
	}
	if v, ok := c.groupCfg[g]; ok {
		return v[2]
	}
	return 0
}

func (c *config) tenantFor(key string) fairsched.TenantLimits {
	if l, ok := c.keyLimits[key]; ok {
		return l
	}
	if c.tenants != nil {
		return *c.tenants
	}
	return fairsched.TenantLimits{}
}

func conflictKey(t *typeSpec, id string) string {
	if t.cfg.ConflictGroup == "" {
		return ""
	}
	return string(t.cfg.ConflictGroup) + "\x00" + id
}

func (sm *sim) acct(sig string) *acct {
	if sm.opts.Jobs > 0 {
		sig = "" // the soak keeps one ledger
	}
	a := sm.accts[sig]
	if a == nil {
		a = &acct{}
		sm.accts[sig] = a
	}
	return a
}

// begin records the start of an attempt and checks every rule a start
// must obey, counting the attempt against every cap first.
func (sm *sim) begin(ctx context.Context, j *jobRun, p *perRun) *attempt {
	now := sm.clock()
	a := &attempt{job: j, per: p, start: now, release: make(chan struct{})}
	if p != nil {
		p.n++
		a.n, a.typ, a.key, a.group, a.id = p.n, &sm.cfg.types[p.spec.typ], p.spec.key, p.spec.group, p.spec.id
		a.plan = attemptSpec{dur: time.Duration(p.r.IntN(int(sm.cfg.dmax/tick)+1)) * tick}
		if p.r.IntN(4) == 0 {
			a.plan.out = outFail
		}
		p.count++
		if p.count > 1 {
			sm.violate("periodic %s: two occurrences execute at once", p.spec.id)
		}
	} else {
		if j.superseded {
			sm.violate("j%d (%s) starts an attempt after a Supersede of its (type, id) replaced it", j.spec.idx, j.sig)
		}
		j.attempts++
		a.n, a.typ, a.key, a.group, a.id = j.attempts, j.typ, j.key, j.spec.group, j.spec.id
		max := sm.cfg.maxAttempts(j.spec)
		if a.n <= len(j.spec.attempts) {
			a.plan = j.spec.attempts[a.n-1]
		}
		sm.checkAttempt(a, max, now)
		j.cur = a
	}
	a.due = now.Add(a.plan.dur)
	sm.lastProgress = now
	sm.res.Starts++
	sm.executing = append(sm.executing, a)
	sm.byTier[sm.tier(a)]++
	sm.byType[a.typ.name]++
	sm.byGroup[a.group]++
	sm.byKey[a.key]++
	if ck := conflictKey(a.typ, a.id); ck != "" {
		// An exclusive job runs alone on its (group, id); a shared one
		// never beside an exclusive one.
		if a.typ.cfg.ConflictMode == fairsched.ConflictExclusive && sm.byConflict[ck] > 0 || sm.byExclusive[ck] > 0 {
			sm.violate("%s (%v) starts while %d other %q jobs, %d exclusive, run on id %q",
				a.name(), a.typ.cfg.ConflictMode, sm.byConflict[ck], a.typ.cfg.ConflictGroup, sm.byExclusive[ck], a.id)
		}
		sm.byConflict[ck]++
		if a.typ.cfg.ConflictMode == fairsched.ConflictExclusive {
			sm.byExclusive[ck]++
		}
	}
	c := sm.cfg
	if c.maxConc > 0 && len(sm.executing) > c.maxConc {
		sm.violate("%s starts: %d jobs execute, global cap %d", a.name(), len(sm.executing), c.maxConc)
	}
	if p := sm.tier(a); sm.byTier[p] > c.tierCap(p) {
		sm.violate("%s starts: %d jobs of tier %d execute, tier cap %d", a.name(), sm.byTier[p], p, c.tierCap(p))
	}
	if m := a.typ.cfg.MaxConcurrency; m > 0 && sm.byType[a.typ.name] > m {
		sm.violate("%s starts: %d jobs of type %s execute, MaxConcurrency %d", a.name(), sm.byType[a.typ.name], a.typ.name, m)
	}
	if l := c.groupLimit(a.group); l > 0 && sm.byGroup[a.group] > l {
		sm.violate("%s starts: %d jobs of group %q execute, group limit %d", a.name(), sm.byGroup[a.group], a.group, l)
	}
	if l := c.tenantFor(a.key).MaxRunning; c.tenants != nil || c.keyLimits != nil {
		if l > 0 && sm.byKey[a.key] > l {
			sm.violate("%s starts: %d jobs of key %q execute, MaxRunning %d", a.name(), sm.byKey[a.key], a.key, l)
		}
	}
	if sm.paused[a.group] {
		sm.violate("%s starts while its group %q is paused", a.name(), a.group)
	}
	w, idx, ok := fairsched.SlotFromContext(ctx)
	if ok != a.typ.cfg.RequiresWorker {
		sm.violate("%s: SlotFromContext ok=%v for a type with RequiresWorker=%v", a.name(), ok, a.typ.cfg.RequiresWorker)
	}
	if ok {
		a.slot, a.onSlot = slotRef{w, idx}, true
		spec, reg := sm.workers[w]
		switch {
		case !reg:
			sm.violate("%s starts on %s/%d, a worker that is not registered", a.name(), w, idx)
		case idx < 0 || idx >= len(spec.Slots):
			sm.violate("%s starts on %s/%d: the worker has %d slots", a.name(), w, idx, len(spec.Slots))
		case !slices.Contains(spec.Slots[idx].Types, a.typ.name):
			sm.violate("%s starts on %s/%d, which takes %v only", a.name(), w, idx, spec.Slots[idx].Types)
		}
		if other := sm.bySlot[a.slot]; other != nil {
			sm.violate("%s starts on %s/%d, where %s runs", a.name(), w, idx, other.name())
		}
		sm.bySlot[a.slot] = a
	}
	for i, r := range c.rates {
		if !r.matches(a) {
			continue
		}
		starts := append(sm.rateStarts[i], rateStart{now, r.tokens(a)})
		if len(starts) > rateWindow {
			starts = starts[1:]
		}
		sm.rateStarts[i] = starts
		n := 0.0
		for k := len(starts) - 1; k >= 0; k-- {
			n += starts[k].tokens
			if allowed := float64(r.burst) + r.perSec*now.Sub(starts[k].at).Seconds(); n > allowed+1e-6 {
				sm.violate("%s starts: rate limit %c:%q (%v/s, burst %d) gave %v tokens in %v",
					a.name(), r.kind, r.name, r.perSec, r.burst, n, now.Sub(starts[k].at))
				break
			}
		}
	}
	slot := ""
	if a.onSlot {
		slot = fmt.Sprintf(" on %s/%d", w, idx)
	}
	sm.logf("start %s key=%q group=%q%s for %v", a.name(), a.key, a.group, slot, a.plan.dur)
	return a
}

// rateStart is an admission a rate limit counted: when, and the tokens it
// took.
type rateStart struct {
	at     time.Time
	tokens float64
}

// tokens is what attempt a takes from rate limit r (spec 4): its job's
// stated tokens in whole seconds, rounded up, else 1; at most the burst.
// A coalescing type's run may be any of its requests', so it counts 1,
// the least any takes.
func (r rateSpec) tokens(a *attempt) float64 {
	n := 1.0
	if a.job != nil && !a.typ.cfg.Coalesce && a.job.spec.tokens > 0 {
		n = math.Ceil(a.job.spec.tokens.Seconds())
	}
	return min(n, float64(r.burst))
}

func (r rateSpec) matches(a *attempt) bool {
	switch r.kind {
	case 't':
		return string(a.typ.name) == r.name
	case 'g':
		return a.group == r.name
	}
	return a.key == r.name
}

// checkAttempt checks attempt a of a job against the job's history: each
// attempt once, none after a success, none past the policy, never two at
// once, after the backoff, before the time to live, never for a denied job.
func (sm *sim) checkAttempt(a *attempt, max int, now time.Time) {
	j := a.job
	c := sm.cfg
	switch {
	case j.cur != nil:
		sm.violate("%s starts while attempt %d of the job still executes", a.name(), j.cur.n)
	case j.succeeded:
		sm.violate("%s starts after an attempt succeeded", a.name())
	case a.n > 1 && (j.lastOut == outPermanent || j.lastOut == outPanic):
		sm.violate("%s starts after a %s failure, which is never retried", a.name(), j.lastOut)
	case a.n > max:
		sm.violate("%s starts: the job may make %d attempts", a.name(), max)
	case j.spec.fg && j.fgDone && !j.typ.cfg.Coalesce:
		sm.violate("%s starts after its RunSync returned", a.name())
	case j.spec.deny:
		sm.violate("%s starts though the admission policy denies it", a.name())
	}
	// Its group's pauses do not count against its time to live.
	if ttl, waited := c.ttlOf(j.spec), now.Sub(j.submitted)-sm.pausedSince(j.spec.group, j.submitted); a.n == 1 && ttl > 0 && waited > ttl && !j.typ.cfg.Coalesce {
		sm.violate("%s starts %v after its submission (%v unpaused), past its time to live %v", a.name(), now.Sub(j.submitted), waited, ttl)
	}
	if j.spec.deferred && now.Sub(j.submitted) < c.deferDelay {
		sm.violate("%s starts %v after its submission, before the policy's deferral of %v", a.name(), now.Sub(j.submitted), c.deferDelay)
	}
	if a.n > 1 && !j.typ.cfg.Coalesce {
		r := c.retryOf(j.spec)
		if min := minBackoff(r, a.n-1); now.Sub(j.lastEnd) < min {
			sm.violate("%s starts %v after attempt %d ended; its backoff is at least %v", a.name(), now.Sub(j.lastEnd), a.n-1, min)
		}
	}
	if bound, ok := c.waitBound(j.typ); ok && a.n == 1 && j.preempted == 0 {
		sm.res.AgingChecks++
		// Aging bounds each job's wait. A starvation window bounds the
		// tier's: the time it had work — this job, waiting — and no
		// admission; a job behind others of its tier waits its turn.
		from := j.submitted
		if c.aging == nil && sm.loStarted.After(from) {
			from = sm.loStarted
		}
		if w := now.Sub(from); j.typ.name == "lo" && w > sm.res.LongestWait {
			sm.res.LongestWait, sm.res.WaitBound = w, bound
		}
		if w := now.Sub(from); w > bound {
			sm.violate("%s (priority %d) starts after waiting %v, %v of them with no admission of its tier; its bound (MaxWait(%d), or the starvation window since its tier's last admission) + one job duration = %v",
				a.name(), j.typ.cfg.Priority, now.Sub(j.submitted), w, j.typ.cfg.Priority, bound)
		}
	}
	if j.typ.name == "lo" {
		sm.loStarted = now
	}
}

// minBackoff is the shortest wait after failed attempt n: the full backoff
// less all of its jitter, never under 1ns.
func minBackoff(r fairsched.RetryPolicy, n int) time.Duration {
	d := float64(r.MaxBackoff)
	if n-1 < 62 {
		d = math.Min(d, float64(r.MinBackoff)*math.Exp2(float64(n-1)))
	}
	return max(time.Duration(d*(1-r.Jitter))-time.Microsecond, 0)
}

// end records the end of an attempt.
func (sm *sim) end(a *attempt, out outcome, err error) {
	now := sm.clock()
	i := slices.Index(sm.executing, a)
	sm.executing = slices.Delete(sm.executing, i, i+1)
	sm.byTier[sm.tier(a)]--
	sm.byType[a.typ.name]--
	sm.byGroup[a.group]--
	sm.byKey[a.key]--
	if ck := conflictKey(a.typ, a.id); ck != "" {
		sm.byConflict[ck]--
		if a.typ.cfg.ConflictMode == fairsched.ConflictExclusive {
			sm.byExclusive[ck]--
		}
	}
	if a.onSlot {
		delete(sm.bySlot, a.slot)
	}
	sm.maxElapsed = max(sm.maxElapsed, now.Sub(a.start))
	sm.lastProgress = now
	sm.logf("end %s: %v", a.name(), out)
	if a.per != nil {
		a.per.count--
		return
	}
	j := a.job
	j.cur, j.lastEnd, j.lastOut = nil, now, out
	if err == nil {
		j.succeeded = true
		sm.acct(j.sig).succeeded++
		if j.typ.cfg.Coalesce {
			sm.successes[j.sig] = now
		}
	}
	if sm.cfg.mode == Aging && j.spec.respawn && now.Sub(sm.t0) < sm.horizon {
		sm.respawns++ // the stream keeps its backlog: a fresh job arrives as one ends
	}
}

// submitted checks Submit's verdict.
func (sm *sim) submitted(j *jobRun, err error) {
	if err == nil {
		sm.acct(j.sig).bgAccepted++
		if j.spec.supersede { // it replaces what of its (type, id) does not execute
			for _, o := range sm.background[j.sig] {
				o.superseded = o.superseded || o.cur == nil
			}
		}
		sm.background[j.sig] = append(sm.background[j.sig], j)
		return
	}
	sm.logf("Submit j%d = %v", j.spec.idx, err)
	if !sm.refusalOK(j, err) && !(sm.closeCalled && errors.Is(err, fairsched.ErrClosed)) {
		sm.violate("Submit j%d (%s) = %v", j.spec.idx, j.sig, err)
	}
}

// isShed reports whether err is a queued job's end by fair shedding.
func isShed(err error) bool {
	var re *fairsched.RefusalError
	return errors.As(err, &re) && re.Reason == fairsched.ReasonShed && errors.Is(err, fairsched.ErrOverloaded)
}

// refusalOK reports whether err is a refusal the configuration allows.
func (sm *sim) refusalOK(j *jobRun, err error) bool {
	var re *fairsched.RefusalError
	if !errors.As(err, &re) {
		return false
	}
	switch {
	case errors.Is(err, fairsched.ErrTenantLimit):
		return re.Reason == fairsched.ReasonTenantLimit && sm.cfg.tenantFor(j.key).MaxPending > 0
	case errors.Is(err, fairsched.ErrOverloaded):
		return re.Reason == fairsched.ReasonPoolOverloaded && sm.cfg.maxPending > 0
	}
	return false
}

// returned checks what RunSync returned against the job's history.
func (sm *sim) returned(j *jobRun, err error) {
	now := sm.clock()
	j.fgDone = true
	sm.fgOut--
	sm.logf("RunSync j%d returned %v", j.spec.idx, err)
	c := sm.cfg
	co := j.typ.cfg.Coalesce
	max := c.maxAttempts(j.spec)
	bad := func(why string) {
		sm.violate("RunSync j%d (%s key=%q) = %v: %s (attempts %d of %d, last %v, cancelled=%v, close called=%v aborted=%v)",
			j.spec.idx, j.sig, j.key, err, why, j.attempts, max, j.lastOut, j.cancelled, sm.closeCalled, sm.closeAbort)
	}
	if j.cur != nil && !co {
		bad("returned while its attempt still executes")
	}
	ac := sm.acct(j.sig)
	definite := true
	var pe *fairsched.PanicError
	switch {
	case err == nil:
		if co {
			if last, ok := sm.successes[j.sig]; !ok || last.Before(j.submitted) {
				bad("nil, but no run of its (type, id) succeeded since it was submitted")
			}
		} else if !j.succeeded {
			bad("nil, but no attempt succeeded")
		}
	case errors.As(err, &pe):
		if !co && j.lastOut != outPanic {
			bad("a panic, but its last attempt did not panic")
		}
	case errors.Is(err, fairsched.ErrWorkerLost):
		if !j.typ.cfg.RequiresWorker || !co && !j.lost {
			bad("worker lost, but no attempt ran on a worker that left")
		}
	case errors.Is(err, errAttempt):
		// Before its last allowed attempt only if Close aborted, or its
		// time to live ran out during the retry's backoff (it then reports
		// the failure, not ErrExpired: it ran).
		ttlRanOut := c.ttlOf(j.spec) > 0 && now.Sub(j.submitted)-sm.pausedSince(j.spec.group, j.submitted) >= c.ttlOf(j.spec)
		if !co && (j.succeeded || j.attempts == 0 || j.lastOut != outFail && j.lastOut != outPermanent ||
			j.lastOut == outFail && j.attempts < max && !sm.closeAbort && !ttlRanOut) {
			bad("its own failure, but not after its last allowed attempt")
		}
	case errors.Is(err, context.Canceled):
		definite = false
		if !co && !j.cancelled && !sm.closeAbort {
			bad("context.Canceled, but neither the caller nor Close cancelled it")
		}
	case errors.Is(err, fairsched.ErrExpired):
		// Its group's pauses do not count against its time to live. A
		// coalesced caller's own time to live follows the pauses of its
		// run's group, which may not be its own: only the wall time bounds
		// it, unless its type's QueueTimeout (the run's) expired it.
		ttl, unpaused := c.ttlOf(j.spec), now.Sub(j.submitted)-sm.pausedSince(j.spec.group, j.submitted)
		if !co && (ttl == 0 || unpaused < ttl) {
			bad(fmt.Sprintf("expired after %v (%v unpaused) with time to live %v", now.Sub(j.submitted), unpaused, ttl))
		}
		if co && j.spec.ttl > 0 && j.typ.cfg.QueueTimeout == 0 && now.Sub(j.submitted) < j.spec.ttl {
			bad(fmt.Sprintf("a coalesced caller expired after %v with its own time to live %v", now.Sub(j.submitted), j.spec.ttl))
		}
	case errors.Is(err, fairsched.ErrClosed):
		definite = false
		if !sm.closeCalled {
			bad("ErrClosed before Close")
		}
	case errors.Is(err, fairsched.ErrDenied):
		if !c.policy || !co && !j.spec.deny {
			bad("denied, but the policy admits it")
		}
	case isShed(err):
		if !c.shed {
			bad("shed, but shedding is off")
		}
	case sm.refusalOK(j, err):
		return // never queued: no terminal event
	default:
		bad("not an error the scheduler may return")
	}
	if !co {
		if definite {
			ac.fgDefinite++
		} else {
			ac.fgFlexible++
		}
	}
}

// count counts a terminal event per (type, id).
func (sm *sim) count(e fairsched.Event) {
	var typ fairsched.JobType
	var id string
	var kind *int
	get := func(t fairsched.JobType, i string) *evCount {
		typ, id = t, i
		sig := string(t) + "/" + i
		if sm.opts.Jobs > 0 {
			sig = ""
		}
		c := sm.events[sig]
		if c == nil {
			c = &evCount{}
			sm.events[sig] = c
		}
		return c
	}
	switch e := e.(type) {
	case fairsched.JobCompleted:
		kind = &get(e.Type, e.ID).completed
	case fairsched.JobFailed:
		if !e.Retrying {
			kind = &get(e.Type, e.ID).failed
		}
	case fairsched.JobExpired:
		kind = &get(e.Type, e.ID).expired
	case fairsched.JobDropped:
		kind = &get(e.Type, e.ID).dropped
	case fairsched.JobDenied:
		kind = &get(e.Type, e.ID).denied
	case fairsched.JobRefused:
		if e.Reason == fairsched.ReasonShed { // a queued job's end; other refusals never queued it
			kind = &get(e.Type, e.ID).shed
			sm.res.Shed++
		}
	case fairsched.JobSuperseded:
		kind = &get(e.Type, e.ID).superseded
		sm.res.Superseded++
	case fairsched.JobPreempted:
		sm.preemptedEvent(e)
	}
	if kind != nil && sm.evTypes[typ] && !strings.HasPrefix(id, "per") {
		*kind++
	}
}

// checkSnapshot compares a settled snapshot with the test's own books and
// checks that every pending job waits for a reason that holds.
func (sm *sim) checkSnapshot() {
	snap, err := sm.s.Snapshot(context.Background(), fairsched.SnapshotAll())
	if err != nil {
		if !(sm.closeCalled && errors.Is(err, fairsched.ErrClosed)) {
			sm.violate("Snapshot = %v", err)
		}
		return
	}
	sm.res.Snapshots++
	if sm.haveSnap { // the aging rises are a counter: they never decrease
		for typ, n := range sm.lastSnap.AgingRises {
			if snap.AgingRises[typ] < n {
				sm.violate("aging rises of %s fell from %d to %d", typ, n, snap.AgingRises[typ])
			}
		}
	}
	if c := sm.cfg; c.aging == nil && len(snap.AgingRises) > 0 {
		sm.violate("aging rises %v without aging", snap.AgingRises)
	}
	sm.lastSnap, sm.haveSnap = snap, true
	if sm.opts.Log != nil {
		sm.opts.Log(fmt.Sprintf("snapshot at t=%v:%s", snap.Time.Sub(sm.t0), describe(snap)))
	}
	c := sm.cfg
	if snap.EventsLost > 0 {
		sm.violate("%d events lost by a subscriber that keeps up", snap.EventsLost)
	}
	// What runs is what executes.
	want := map[string]int{}
	for _, a := range sm.executing {
		want[fmt.Sprintf("%s/%s key=%q slot=%s/%d", a.typ.name, a.id, a.key, a.slot.worker, a.slot.slot)]++
	}
	for _, r := range snap.Running {
		want[fmt.Sprintf("%s/%s key=%q slot=%s/%d", r.Type, r.ID, r.FairnessKey, r.Worker, r.Slot)]--
	}
	for k, n := range want {
		if n > 0 {
			sm.violate("executing but not running in the snapshot: %s (x%d)", k, n)
		} else if n < 0 {
			sm.violate("running in the snapshot but not executing: %s (x%d)", k, -n)
		}
	}
	for p, n := range snap.RunningByTier {
		if n != sm.byTier[p] {
			sm.violate("snapshot: tier %d runs %d, %d execute", p, n, sm.byTier[p])
		}
	}
	for t, n := range snap.RunningByType {
		if n != sm.byType[t] {
			sm.violate("snapshot: type %s runs %d, %d execute", t, n, sm.byType[t])
		}
	}
	groups := map[string]fairsched.GroupSnapshot{}
	alloc := 0
	for _, g := range snap.Groups {
		groups[g.Name] = g
		alloc += g.Allocation
		if g.Running != sm.byGroup[g.Name] {
			sm.violate("snapshot: group %q runs %d, %d execute", g.Name, g.Running, sm.byGroup[g.Name])
		}
	}
	if c.groupsOn && alloc > snap.MaxConcurrency {
		sm.violate("group allocations add up to %d, over the global cap %d", alloc, snap.MaxConcurrency)
	}
	waiting := map[fairsched.Priority]int{}
	for _, p := range snap.Pending {
		waiting[p.Priority]++
	}
	running := len(sm.executing)
	// The earliest arrival of a pending exclusive job on each conflict key:
	// a shared job that arrived after it may wait on it (writer preference).
	sm.writers = map[string]time.Time{}
	for _, p := range snap.Pending {
		if i := slices.IndexFunc(c.types, func(t typeSpec) bool { return t.name == p.Type }); i >= 0 {
			t := &c.types[i]
			if ck := conflictKey(t, p.ID); ck != "" && t.cfg.ConflictMode == fairsched.ConflictExclusive {
				if at, ok := sm.writers[ck]; !ok || p.Submitted.Before(at) {
					sm.writers[ck] = p.Submitted
				}
			}
		}
	}
	for _, p := range snap.Pending {
		// Every rule listed must hold, the headline first of them.
		if len(p.Reasons) == 0 && p.Reason != "" || len(p.Reasons) > 0 && p.Reason != p.Reasons[0] {
			sm.violate("pending %s/%s: headline %q is not the first of %q", p.Type, p.ID, p.Reason, p.Reasons)
		}
		rows := []fairsched.Reason{p.Reason}
		if len(p.Reasons) > 0 {
			rows = p.Reasons
		}
		for _, r := range rows {
			q := p
			q.Reason = r
			why := sm.reasonFalse(q, running, groups, waiting)
			if why == "" {
				continue
			}
			sm.violate("pending %s/%s key=%q group=%q waits for %q (of %q), but %s (%d running, cap %d)%s",
				p.Type, p.ID, p.FairnessKey, p.Group, r, p.Reasons, why, running, c.maxConc, describe(snap))
		}
	}
	switch c.mode {
	case Fairness:
		sm.checkFairness(snap)
	case Aging:
		if c.aging == nil {
			break // a starvation window instead
		}
		for _, p := range snap.Pending {
			if want := c.aging.Effective(p.Priority, snap.Time.Sub(p.Submitted)); p.EffectivePriority != want {
				sm.violate("pending %s/%s waited %v: effective priority %d, AgingConfig.Effective gives %d",
					p.Type, p.ID, snap.Time.Sub(p.Submitted), p.EffectivePriority, want)
			}
		}
	}
}

// reasonFalse returns why pending job p's reason does not hold, or "".
// A reason that holds means the job may not start now: work conservation.
func (sm *sim) reasonFalse(p fairsched.PendingJob, running int, groups map[string]fairsched.GroupSnapshot,
	waiting map[fairsched.Priority]int) string {
	c := sm.cfg
	i := slices.IndexFunc(c.types, func(t typeSpec) bool { return t.name == p.Type })
	if i < 0 {
		return "its type is unknown"
	}
	t := &c.types[i]
	switch p.Reason {
	case "":
		return "it has no reason: an admissible job sits in the queue"
	case fairsched.ReasonPaused:
		if !sm.paused[p.Group] {
			return "its group is not paused"
		}
	case fairsched.ReasonBackoff:
		if t.cfg.Retry.MaxAttempts < 2 && !sm.retryTypes[p.Type] {
			return "no job of the type retries"
		}
	case fairsched.ReasonDeferred:
		if !c.policy || !strings.HasSuffix(p.ID, deferMark) {
			return "the policy defers no such job"
		}
	case fairsched.ReasonTenantLimit:
		if l := c.tenantFor(p.FairnessKey).MaxRunning; l == 0 || sm.byKey[p.FairnessKey] < l {
			return fmt.Sprintf("its key runs %d of MaxRunning %d", sm.byKey[p.FairnessKey], l)
		}
	case fairsched.ReasonGlobalLimit:
		if c.maxConc == 0 {
			return "there is no global cap"
		}
		if running < c.maxConc && !sm.reserved(p.Priority, running, waiting) {
			return "the cap has room and no other tier's reservation holds it"
		}
	case fairsched.ReasonTierLimit:
		if n, cp := sm.byTier[p.Priority], c.tierCap(p.Priority); n < cp && !sm.reserved(p.Priority, running, waiting) {
			return fmt.Sprintf("tier %d runs %d of %d and no other tier's reservation holds the free slots", p.Priority, n, cp)
		}
	case fairsched.ReasonTypeLimit:
		if m := t.cfg.MaxConcurrency; m == 0 || sm.byType[p.Type] < m {
			return fmt.Sprintf("its type runs %d of %d", sm.byType[p.Type], m)
		}
	case fairsched.ReasonNoWorkers:
		if !t.cfg.RequiresWorker || sm.slotsFor(p.Type) > 0 {
			return fmt.Sprintf("%d registered slots take its type", sm.slotsFor(p.Type))
		}
	case fairsched.ReasonWorkerBusy:
		if !t.cfg.RequiresWorker || sm.slotsFor(p.Type) == 0 || sm.freeSlotsFor(p.Type) > 0 {
			return fmt.Sprintf("%d of %d slots that take its type are free", sm.freeSlotsFor(p.Type), sm.slotsFor(p.Type))
		}
	case fairsched.ReasonGroupLimit:
		g, ok := groups[p.Group]
		if !c.groupsOn || !ok {
			return "group shares are not configured"
		}
		if g.Running < g.Allocation && (g.Limit == 0 || g.Running < g.Limit) {
			return fmt.Sprintf("its group runs %d of allocation %d (limit %d)", g.Running, g.Allocation, g.Limit)
		}
	case fairsched.ReasonConflict:
		ck := conflictKey(t, p.ID)
		switch {
		case ck == "":
			return "its type has no conflict group"
		case t.cfg.ConflictMode == fairsched.ConflictExclusive && sm.byConflict[ck] == 0:
			return "no job runs on its conflict key"
		case t.cfg.ConflictMode == fairsched.ConflictShared && sm.byExclusive[ck] == 0:
			if at, ok := sm.writers[ck]; !ok || at.After(p.Submitted) {
				return "no exclusive job runs on its conflict key, and none that arrived before it waits"
			}
		}
	case fairsched.ReasonRateLimited:
		a := &attempt{typ: t, key: p.FairnessKey, group: p.Group}
		if !slices.ContainsFunc(c.rates, func(r rateSpec) bool { return r.matches(a) }) {
			return "no rate limit covers it"
		}
	default:
		return "the reason is unknown"
	}
	return ""
}

// reserved reports whether tier p may not take a free slot because other
// tiers are owed their reservations (WithTier). It assumes every tier with
// a pending job is owed its reservation, so it errs towards "reserved".
func (sm *sim) reserved(p fairsched.Priority, running int, waiting map[fairsched.Priority]int) bool {
	c := sm.cfg
	owed := 0
	for q, t := range c.tiers {
		if q == p || t.LendIdle && waiting[q] == 0 {
			continue
		}
		owed += max(0, c.tierReserve(t)-sm.byTier[q])
	}
	return running+1+owed > c.maxConc
}

func (sm *sim) slotsFor(t fairsched.JobType) int {
	n := 0
	for _, w := range sm.workers {
		for _, s := range w.Slots {
			if slices.Contains(s.Types, t) {
				n++
			}
		}
	}
	return n
}

func (sm *sim) freeSlotsFor(t fairsched.JobType) int {
	n := 0
	for _, w := range sm.workers {
		for i, s := range w.Slots {
			if slices.Contains(s.Types, t) && sm.bySlot[slotRef{w.ID, i}] == nil {
				n++
			}
		}
	}
	return n
}

// checkFairness: while both keys have work pending, their weighted
// accumulated costs stay within one job's weighted cost of each other.
func (sm *sim) checkFairness(snap fairsched.Snapshot) {
	c := sm.cfg
	pending := map[string]bool{}
	for _, p := range snap.Pending {
		pending[p.FairnessKey] = true
	}
	for _, k := range c.keys {
		if !pending[k] {
			return
		}
	}
	// Every key has work waiting: their accumulated costs, in the units
	// of their shares, are within one job's charge at the lightest share.
	biggest := max(c.types[0].cfg.DefaultCost, sm.maxElapsed, c.dmax)
	bound := time.Duration(math.Ceil(float64(biggest)/c.lightestShare())) + 2
	lo, hi := c.keys[0], c.keys[0]
	for _, k := range c.keys {
		if snap.AccumulatedCost[k] < snap.AccumulatedCost[lo] {
			lo = k
		}
		if snap.AccumulatedCost[k] > snap.AccumulatedCost[hi] {
			hi = k
		}
	}
	a, b := snap.AccumulatedCost[hi], snap.AccumulatedCost[lo]
	sm.res.FairChecks++
	sm.res.MaxDrift, sm.res.DriftBound = max(sm.res.MaxDrift, a-b), bound
	if a-b > bound {
		sm.violate("weighted service: %s (weight %v) has %v, %s (weight %v) has %v: apart by %v, more than one job's weighted cost %v (tenants %v)",
			hi, c.keyWeights[hi], a, lo, c.keyWeights[lo], b, a-b, bound, c.tenantWeights)
	}
	sm.checkShares(bound)
}

// finish checks the end state: everything returned, every accepted job
// answered exactly once in the event stream.
func (sm *sim) finish() {
	if sm.s == nil {
		return
	}
	sm.settle()
	sm.res.Virtual = sm.mock.Now().Sub(sm.t0)
	if len(sm.res.Violations) > 0 {
		return // a torn-down run proves nothing more
	}
	if !sm.closeDone {
		sm.violate("Close did not return")
	}
	if sm.fgOut != 0 {
		sm.violate("%d RunSync calls never returned", sm.fgOut)
	}
	if len(sm.executing) != 0 {
		sm.violate("%d attempts still execute after Close returned", len(sm.executing))
	}
	if !sm.evDone {
		sm.violate("Close did not close the subscriber's channel")
	}
	for _, sig := range sortedKeys(sm.accts) {
		ac := sm.accts[sig]
		ev := sm.events[sig]
		if ev == nil {
			ev = &evCount{}
		}
		if i := strings.IndexByte(sig, '/'); i >= 0 && !sm.evTypes[fairsched.JobType(sig[:i])] || strings.Contains(sig, "/per") {
			continue
		}
		total := ev.completed + ev.failed + ev.expired + ev.dropped + ev.denied + ev.superseded + ev.shed
		exact := ac.bgAccepted + ac.fgDefinite
		if ev.completed != ac.succeeded || total < exact || total > exact+ac.fgFlexible {
			sm.violate("%s: %d attempts succeeded, %d background jobs accepted, %d RunSync answered (+%d cancelled or closed); "+
				"events: %d completed, %d failed, %d expired, %d dropped, %d denied, %d superseded, %d shed",
				sig, ac.succeeded, ac.bgAccepted, ac.fgDefinite, ac.fgFlexible, ev.completed, ev.failed, ev.expired, ev.dropped, ev.denied, ev.superseded, ev.shed)
		}
	}
}

// teardown ends a run that broke an invariant: Close with an expired
// context cancels everything, and every attempt is released.
func (sm *sim) teardown() {
	sm.tornDown = true // what teardown causes is not a finding
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan struct{})
	go func() { _ = sm.s.Close(ctx); close(done) }()
	for _, j := range sm.cancels {
		j.cancel()
	}
	for range 10000 {
		for _, a := range sm.executing {
			if !a.released {
				a.released = true
				close(a.release)
			}
		}
		idle := sm.fgOut == 0 && len(sm.executing) == 0
		select {
		case <-done:
			if idle {
				return
			}
		default:
		}
		sm.mock.Add(time.Second)
		sm.settle()
	}
}

// describe lists a snapshot's running and pending jobs and groups, for a
// violation's report.
func describe(snap fairsched.Snapshot) string {
	var b strings.Builder
	for _, r := range snap.Running {
		fmt.Fprintf(&b, "\n      running %s/%s key=%q group=%q prio=%d eff=%d", r.Type, r.ID, r.FairnessKey, r.Group, r.Priority, r.EffectivePriority)
	}
	for _, p := range snap.Pending {
		fmt.Fprintf(&b, "\n      pending %s/%s key=%q group=%q prio=%d eff=%d reason=%q", p.Type, p.ID, p.FairnessKey, p.Group, p.Priority, p.EffectivePriority, p.Reason)
	}
	for _, g := range snap.Groups {
		fmt.Fprintf(&b, "\n      group %q weight=%d min=%d limit=%d allocation=%d running=%d pending=%d paused=%v",
			g.Name, g.Weight, g.MinSlots, g.Limit, g.Allocation, g.Running, g.Pending, g.Paused)
	}
	return b.String()
}
