package core

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/fairsched/fairsched/queue"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/workers"
)

// FuzzCoreOps reads its input as a configuration and a program of
// operations on a Core — submissions, finishes, retries, withdrawals,
// time passing, workers coming and going, eviction, dispatch — and checks
// after every operation that the limits hold, the core's counts match a
// plain model of which job is where, and (after a Dispatch) that no
// pending job waits without a reason.
//
// Input layout: four header bytes, then operations of one opcode byte and
// their operand bytes; missing bytes read as 0.
//
//	header[0]  global cap: value % 9 (0 = unlimited)
//	header[1]  flags, fzScoring…fzKeyLimits
//	header[2]  group weights A, B: 1 + two bits each; bits 4-5 A's minimum, 6-7 A's limit
//	header[3]  tenant MaxRunning: 1 + (bits 0-5) % 3; bits 2-3 the key k1's own (0: none);
//	           bit 6 priorities only order (c has priority 0; tiers 2 and 8 capped by MaxRunning);
//	           bit 7 rate limits on type a, key k1 and group A (jobs take their tokens)
//
//	op % 12   operands
//	0, 1      submit     type, id, key, group, flags (fzOnDemand…fzTTL)
//	2         finish     running job (index)
//	3         fail+retry running job (index), backoff
//	4         withdraw   pending job (index; with bit 7, a running job: refused)
//	5         advance    time: value % 13 quarter seconds (0 to 3s)
//	6         register   worker (index)
//	7         unregister worker (index)
//	8         evict
//	9         dispatch
//	10        withdraw all when operand % 4 == 0, else dispatch
//	11        pause or resume group A or B (operand)
func FuzzCoreOps(f *testing.F) {
	for _, seed := range fzSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fzRun(t, data)
	})
}

// Header flags.
const (
	fzScoring      = 1 << iota // linear scoring (else priority order)
	fzGroups                   // weighted groups (the cap becomes at least 1)
	fzTenants                  // tenant MaxRunning
	fzAging                    // aging, when not scoring
	fzAutoDispatch             // Dispatch after every operation, as the actor does
	fzGroupLimit               // group A's limit and minimum from header[2]
	fzUrgent                   // aging's urgent threshold: urgent jobs borrow past group shares
	fzKeyLimits                // key k1's own MaxRunning
)

// header[3]'s flags besides the tenant limits.
const (
	fzOrderOnly = 1 << 6 // PriorityOrderOnly: c at priority 0, tiers 2 and 8 capped by MaxRunning
	fzRated     = 1 << 7 // rate limits: jobs take their tokens
)

// Submission flags.
const (
	fzOnDemand = 1 << iota
	fzTokens
	fzFloor
	fzTTL
)

// fzMaxOps bounds the operations of one input.
const fzMaxOps = 200

// The fixed job types: caps, two conflict groups (a shared, b and w
// exclusive on g), expiring types, and two
// types that run on worker slots.
var fzTypes = []struct {
	name policy.JobType
	cfg  policy.JobTypeConfig
}{
	{"a", policy.JobTypeConfig{DefaultCost: time.Second, Priority: 2, ConflictGroup: "g", ConflictMode: policy.ConflictShared}},
	{"b", policy.JobTypeConfig{DefaultCost: 2 * time.Second, Priority: 3, MaxConcurrency: 1, ConflictGroup: "g"}},
	{"c", policy.JobTypeConfig{DefaultCost: 500 * time.Millisecond, Priority: 1, QueueTimeout: 2 * time.Second}},
	{"d", policy.JobTypeConfig{DefaultCost: time.Second, Priority: 8, MaxConcurrency: 3, ConflictGroup: "h"}},
	{"w", policy.JobTypeConfig{DefaultCost: time.Second, Priority: 4, MaxConcurrency: 2, ConflictGroup: "g", RequiresWorker: true}},
	{"v", policy.JobTypeConfig{DefaultCost: 3 * time.Second, Priority: 2, QueueTimeout: 5 * time.Second, RequiresWorker: true}},
}

// fzConfigs are fzTypes by name.
var fzConfigs = func() map[policy.JobType]policy.JobTypeConfig {
	m := map[policy.JobType]policy.JobTypeConfig{}
	for _, ty := range fzTypes {
		m[ty.name] = ty.cfg
	}
	return m
}()

// The workers an input may register, by index.
var fzWorkers = []struct {
	id    string
	slots [][]policy.JobType
}{
	{"w0", [][]policy.JobType{{"w"}, {"w", "v"}}},
	{"w1", [][]policy.JobType{{"v"}}},
	{"w2", [][]policy.JobType{{"v", "w"}, {"w"}}},
}

var (
	fzIDs        = []string{"0", "1", "2", "3"}
	fzKeys       = []string{"", "k1", "k2", "k3"}
	fzGroupNames = []string{"", "A", "B"}
	fzStart      = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
)

// fzReasons are the reasons a pending job may show.
var fzReasons = []policy.Reason{
	policy.ReasonPaused, policy.ReasonBackoff, policy.ReasonDeferred, policy.ReasonTenantLimit,
	policy.ReasonGlobalLimit, policy.ReasonTierLimit, policy.ReasonTypeLimit, policy.ReasonNoWorkers,
	policy.ReasonWorkerBusy, policy.ReasonGroupLimit, policy.ReasonConflict, policy.ReasonRateLimited,
}

// fzReader hands out the input's bytes, then zeros.
type fzReader struct {
	data []byte
	pos  int
}

func (r *fzReader) more() bool { return r.pos < len(r.data) }

func (r *fzReader) next() int {
	if r.pos >= len(r.data) {
		return 0
	}
	r.pos++
	return int(r.data[r.pos-1])
}

// pick returns an element of s chosen by the next byte.
func fzPick[T any](r *fzReader, s []T) T { return s[r.next()%len(s)] }

// The model's places of a job.
type fzPlace int

const (
	fzPending fzPlace = iota + 1
	fzRunning
	fzGone
)

// fzState is one run: the core, the model of where each job is, and the
// counts the core's totals must match.
type fzState struct {
	t       *testing.T
	c       *Core
	limits  policy.Limits
	now     time.Time
	place   map[*Job]fzPlace
	pending []*Job // the model's pending jobs, in submission order
	workers map[string]bool
	paused  map[string]bool
	buf     []*Job
	op      int
	trace   []fzEvent

	wasPending map[*Job]bool // pending at some time during the operation
	expiredNow map[*Job]bool // expired by the operation

	submitted, finished, withdrawn, expired, retried int

	taken map[policy.RateScope]float64 // tokens each rate limit gave, since the start

	// The pause model: each group's paused time so far (a pause under way
	// counted up to now) and when its pause began; each job's and
	// waiter's group's paused time at its arrival. A deadline moves back
	// by the pauses after its arrival and never comes while paused.
	pausedTotal map[string]time.Duration
	pausedAt    map[string]time.Time
	pauseMark   map[*Job]time.Duration
	// waiters: for each job submitted with a time to live, one waiter
	// watching it (Watch) with half of it, as the actor does for a
	// coalesced run's callers; unwatched when the job leaves the queue.
	waiters map[*Job]*fzWaiter
}

// fzWaiter is a watched deadline on a pending job.
type fzWaiter struct {
	w, on *Job
	// leftAt is the operation in which its job left the queue, -1 while
	// it is pending.
	leftAt int
}

// pausedSoFar returns group g's paused time up to now.
func (s *fzState) pausedSoFar(g string) time.Duration {
	d := s.pausedTotal[g]
	if s.paused[g] {
		d += s.now.Sub(s.pausedAt[g])
	}
	return d
}

// deadline returns the model's effective deadline of j (a job or a
// waiter) of group g: its Deadline moved back by g's pauses since it
// arrived; false while g is paused or j has none.
func (s *fzState) deadline(j *Job, g string) (time.Time, bool) {
	if j.Deadline == 0 || s.paused[g] {
		return time.Time{}, false
	}
	return deadlineAt(s.c, j).Add(s.pausedSoFar(g) - s.pauseMark[j]), true
}

// config is type t's registration: c has priority 0 when priorities only
// order.
func (s *fzState) config(t policy.JobType) policy.JobTypeConfig {
	cfg := fzConfigs[t]
	if s.limits.PriorityMode == policy.PriorityOrderOnly && t == "c" {
		cfg.Priority = 0
	}
	return cfg
}

// tierCap is the most jobs tier p may run: its MaxRunning when configured,
// else its value, or no cap when priorities only order.
func (s *fzState) tierCap(p policy.Priority) int {
	if t, ok := s.limits.Tiers[p]; ok {
		return t.MaxRunning
	}
	if s.limits.PriorityMode == policy.PriorityOrderOnly {
		return math.MaxInt
	}
	return int(p)
}

// takeTokens counts what admitted job j took from each rate limit that
// applies (its tokens in whole seconds, rounded up, else 1; at most the
// burst), and fails when a limit gave more than its burst and refill since
// the start allow.
func (s *fzState) takeTokens(j *Job) {
	for _, l := range s.limits.RateLimits {
		if name := map[policy.RateScopeKind]string{policy.RateType: string(j.Type), policy.RateKey: j.Key, policy.RateGroup: j.Group}[l.Scope.Kind]; name != l.Scope.Name {
			continue
		}
		n := 1.0
		if j.Tokens() > 0 {
			n = math.Ceil(j.Tokens().Seconds())
		}
		s.taken[l.Scope] += min(n, float64(l.Burst))
		if allowed := float64(l.Burst) + l.PerSecond*s.now.Sub(fzStart).Seconds(); s.taken[l.Scope] > allowed+1e-9 {
			s.fail("rate limit %v gave %v tokens by +%v; at most %v", l.Scope, s.taken[l.Scope], s.now.Sub(fzStart), allowed)
		}
	}
}

// fzLimits builds the limits the header asks for.
func fzLimits(t *testing.T, h *fzReader) policy.Limits {
	l := policy.DefaultLimits()
	l.KeyTTL = 5 * time.Second // short, so that Evict drops keys within a run
	l.MaxConcurrency = h.next() % 9
	flags, groups, tenants := h.next(), h.next(), h.next()
	if flags&fzScoring != 0 {
		sc := policy.ScoreConfig{}.WithDefaults()
		l.Scoring = &sc
	} else if flags&fzAging != 0 {
		a := policy.AgingConfig{GracePeriod: time.Second, Interval: time.Second, MaxEffectivePriority: 9}
		if flags&fzUrgent != 0 {
			a.UrgentThreshold = 8
		}
		l.Aging = &a
	}
	if flags&fzGroups != 0 {
		l.MaxConcurrency = max(l.MaxConcurrency, 1)
		a := policy.GroupConfig{Weight: 1 + groups&3}
		if flags&fzGroupLimit != 0 {
			a.MinSlots, a.Limit = groups>>4&3, groups>>6&3
			if a.Limit > 0 && a.MinSlots > a.Limit || a.MinSlots > l.MaxConcurrency {
				a.MinSlots = 0
			}
		}
		l.Groups = &policy.GroupsConfig{DefaultWeight: 1, Groups: map[string]policy.GroupConfig{
			"A": a, "B": {Weight: 1 + groups>>2&3},
		}}
	}
	if tenants&fzOrderOnly != 0 {
		l.PriorityMode = policy.PriorityOrderOnly
		l.Tiers = map[policy.Priority]policy.TierConfig{2: {MaxRunning: 1}, 8: {MaxRunning: 2}}
	}
	if tenants&fzRated != 0 {
		l.RateLimits = []policy.RateLimit{
			{Scope: policy.RateScope{Kind: policy.RateType, Name: "a"}, PerSecond: 2, Burst: 2},
			{Scope: policy.RateScope{Kind: policy.RateKey, Name: "k1"}, PerSecond: 1, Burst: 3},
			{Scope: policy.RateScope{Kind: policy.RateGroup, Name: "A"}, PerSecond: 0.5, Burst: 1},
		}
	}
	tenants &^= fzOrderOnly | fzRated
	if flags&fzTenants != 0 {
		l.Tenants = &policy.TenantsConfig{Default: policy.TenantLimits{MaxRunning: 1 + tenants%3}}
		if flags&fzKeyLimits != 0 {
			l.Tenants.Keys = map[string]policy.TenantLimits{"k1": {MaxRunning: tenants >> 2 & 3}}
		}
	}
	if err := l.Validate(); err != nil {
		t.Fatalf("the target built invalid limits: %v", err)
	}
	return l
}

func fzRun(t *testing.T, data []byte) {
	r := &fzReader{data: data}
	l := fzLimits(t, r)
	flags := 0
	if len(data) > 1 {
		flags = int(data[1])
	}
	s := &fzState{t: t, c: New(l), limits: l, now: fzStart, place: map[*Job]fzPlace{}, taken: map[policy.RateScope]float64{},
		workers: map[string]bool{}, paused: map[string]bool{}, wasPending: map[*Job]bool{}, expiredNow: map[*Job]bool{},
		pausedTotal: map[string]time.Duration{}, pausedAt: map[string]time.Time{}, pauseMark: map[*Job]time.Duration{}, waiters: map[*Job]*fzWaiter{}}
	for _, ty := range fzTypes {
		if err := s.c.RegisterType(ty.name, s.config(ty.name)); err != nil {
			t.Fatal(err)
		}
	}
	s.check(false, false)
	for s.op = 0; s.op < fzMaxOps && r.more(); s.op++ {
		clear(s.wasPending)
		for _, j := range s.pending {
			s.wasPending[j] = true
		}
		clear(s.expiredNow)
		dispatched, expiredAll := s.step(r)
		if flags&fzAutoDispatch != 0 && !dispatched {
			s.dispatch()
			dispatched, expiredAll = true, true
		}
		s.collect()
		s.check(dispatched, expiredAll)
	}
}

// fzRiseAt returns the earliest time job j can have aged to effective,
// aging from the higher of its base priority and its floor and never
// paused: a lower bound of when it rose.
func fzRiseAt(c *Core, a *policy.AgingConfig, j *Job, effective policy.Priority) time.Time {
	from := j.Priority()
	if j.Floored {
		from = max(from, j.Floor)
	}
	step := max(a.Step, 1)
	k := max((effective-from+step-1)/step, 0)
	return submittedAt(c, j).Add(a.GracePeriod + time.Duration(k)*a.Interval)
}

// fail reports a broken invariant with the operations so far.
func (s *fzState) fail(format string, args ...any) {
	s.t.Helper()
	var tail []string
	for _, e := range s.trace[max(0, len(s.trace)-30):] {
		tail = append(tail, e.String())
	}
	s.t.Fatalf("after op %d at +%v: %s\nlimits: cap %d, scoring %v, aging %+v, groups %+v, tenants %+v\nlast ops:\n  %s",
		s.op, s.now.Sub(fzStart), fmt.Sprintf(format, args...), s.limits.MaxConcurrency, s.limits.Scoring != nil,
		s.limits.Aging, s.limits.Groups, s.limits.Tenants, strings.Join(tail, "\n  "))
}

// logf records an operation for the failure message; it formats nothing
// until a failure needs it.
func (s *fzState) logf(format string, args ...any) {
	s.trace = append(s.trace, fzEvent{s.op, s.now.Sub(fzStart), format, args})
}

// fzEvent is one line of a run's trace.
type fzEvent struct {
	op     int
	at     time.Duration
	format string
	args   []any
}

func (e fzEvent) String() string {
	return fmt.Sprintf("%3d +%-6v ", e.op, e.at) + fmt.Sprintf(e.format, e.args...)
}

// fzJ and fzJs format jobs lazily, in traces.
type (
	fzJ  struct{ j *Job }
	fzJs []*Job
)

func (j fzJ) String() string   { return fzLabel(j.j) }
func (js fzJs) String() string { return fmt.Sprint(fzLabels(js)) }

func fzLabel(j *Job) string {
	return fmt.Sprintf("%s/%s@%s[%s]#%d", j.Type, j.ID, j.Key, j.Group, j.Seq)
}

// step runs one operation. It reports whether it dispatched, and whether
// it expired every job whose time was up (Dispatch and Advance do).
func (s *fzState) step(r *fzReader) (dispatched, expiredAll bool) {
	switch op := r.next() % 12; op {
	case 0, 1:
		s.submit(r)
	case 2, 3:
		running := s.c.Running()
		i, delay := r.next(), time.Duration(r.next()%8)*250*time.Millisecond
		if len(running) == 0 {
			return
		}
		j := running[i%len(running)]
		comp := s.c.Finish(s.now, j)
		if comp.Elapsed != s.now.Sub(j.Started) || comp.Elapsed < 0 || comp.Estimate <= 0 {
			s.fail("Finish(%s) = %+v, started %v", fzLabel(j), comp, j.Started)
		}
		if op == 2 {
			s.logf("finish %s", fzJ{j})
			s.finished++
			s.place[j] = fzGone
			return
		}
		s.logf("retry %s after %v", fzJ{j}, delay)
		s.c.Retry(s.now, j, delay)
		s.retried++
		s.place[j] = fzPending
		s.pending = append(s.pending, j)
		s.wasPending[j] = true
	case 4:
		i := r.next()
		if i&0x80 != 0 {
			running := s.c.Running()
			if len(running) > 0 {
				j := running[i%len(running)]
				if s.c.Withdraw(s.now, j) {
					s.fail("Withdraw of running job %s reported true", fzLabel(j))
				}
				s.logf("withdraw running %s: refused", fzJ{j})
			}
			return
		}
		if len(s.pending) == 0 {
			return
		}
		j := s.pending[i%len(s.pending)]
		if !s.c.Withdraw(s.now, j) {
			s.fail("Withdraw of pending job %s reported false", fzLabel(j))
		}
		s.logf("withdraw %s", fzJ{j})
		s.leave(j)
		s.withdrawn++
	case 5:
		d := time.Duration(r.next()%13) * 250 * time.Millisecond
		s.now = s.now.Add(d)
		s.c.Advance(s.now)
		s.logf("advance %v", d)
		return false, true
	case 6:
		w := fzPick(r, fzWorkers)
		err := s.c.RegisterWorker(s.now, w.id, w.slots)
		s.logf("register %s: %v", w.id, err)
		switch {
		case s.workers[w.id] && !errors.Is(err, workers.ErrDuplicateWorker):
			s.fail("RegisterWorker(%s) twice: %v, want ErrDuplicateWorker", w.id, err)
		case !s.workers[w.id] && err != nil:
			s.fail("RegisterWorker(%s): %v", w.id, err)
		}
		s.workers[w.id] = true
	case 7:
		w := fzPick(r, fzWorkers)
		var want []*Job
		for _, j := range s.c.Running() {
			if j.Worker != nil && !j.Worker.Lost() && j.Worker.Worker == w.id {
				want = append(want, j)
			}
		}
		lost, err := s.c.UnregisterWorker(s.now, w.id)
		s.logf("unregister %s: %d lost, %v", w.id, len(lost), err)
		switch {
		case !s.workers[w.id] && !errors.Is(err, workers.ErrUnknownWorker):
			s.fail("UnregisterWorker(%s) of an unknown worker: %v, want ErrUnknownWorker", w.id, err)
		case s.workers[w.id] && err != nil:
			s.fail("UnregisterWorker(%s): %v", w.id, err)
		}
		byAdmission := func(a, b *Job) int { return cmp.Compare(a.admitted, b.admitted) }
		slices.SortFunc(lost, byAdmission)
		if !slices.Equal(lost, want) {
			s.fail("UnregisterWorker(%s) lost %v, want the jobs running there %v", w.id, fzLabels(lost), fzLabels(want))
		}
		for _, j := range lost {
			if !j.Worker.Lost() {
				s.fail("job %s lost with its worker, but its slot is not Lost", fzLabel(j))
			}
		}
		delete(s.workers, w.id)
	case 8:
		keys, ests := s.c.Evict(s.now)
		s.logf("evict: %d keys, %d estimates", keys, ests)
	case 9:
		s.dispatch()
		return true, true
	case 10:
		if r.next()%4 != 0 {
			s.dispatch()
			return true, true
		}
		out := s.c.WithdrawAll(s.now)
		s.logf("withdraw all: %d", len(out))
		if len(out) != len(s.pending) {
			s.fail("WithdrawAll returned %d jobs, %d pending", len(out), len(s.pending))
		}
		for i, j := range out {
			if s.place[j] != fzPending {
				s.fail("WithdrawAll returned %s, which is not pending", fzLabel(j))
			}
			if i > 0 && out[i-1].Seq >= j.Seq {
				s.fail("WithdrawAll out of arrival order: %s before %s", fzLabel(out[i-1]), fzLabel(j))
			}
			s.leave(j)
			s.withdrawn++
		}
	case 11:
		g := fzPick(r, fzGroupNames[1:])
		var err error
		if s.paused[g] {
			err = s.c.ResumeGroup(s.now, g)
			s.pausedTotal[g] += s.now.Sub(s.pausedAt[g])
		} else {
			err = s.c.PauseGroup(s.now, g)
			s.pausedAt[g] = s.now
		}
		if err != nil {
			s.fail("pause/resume %s: %v", g, err)
		}
		s.paused[g] = !s.paused[g]
		s.logf("paused %s: %v", g, s.paused[g])
	}
	return false, false
}

func (s *fzState) submit(r *fzReader) {
	ti := r.next() % (len(fzTypes) + 1)
	j := &Job{Job: queue.Job{ID: fzPick(r, fzIDs), Key: fzPick(r, fzKeys)}, Group: fzPick(r, fzGroupNames)}
	flags := r.next()
	j.OnDemand = flags&fzOnDemand != 0
	if flags&fzTokens != 0 {
		j.SetTokens(time.Duration(1+flags>>4) * 100 * time.Millisecond)
	}
	if flags&fzFloor != 0 {
		j.Floor, j.Floored = policy.Priority(flags>>4&7), true
	}
	if flags&fzTTL != 0 {
		j.SetTTL(time.Duration(1+flags>>6) * 500 * time.Millisecond)
	}
	if ti == len(fzTypes) {
		j.Type = "unknown"
		if err := s.c.Submit(s.now, j); !errors.Is(err, policy.ErrUnknownJobType) {
			s.fail("Submit of an unregistered type: %v, want ErrUnknownJobType", err)
		}
		s.logf("submit unknown type: refused")
		return
	}
	j.Type = fzTypes[ti].name
	if err := s.c.Submit(s.now, j); err != nil {
		s.fail("Submit(%s): %v", fzLabel(j), err)
	}
	s.logf("submit %s on-demand=%v tokens=%v floor=%v/%v ttl=%v", fzJ{j}, j.OnDemand, j.Tokens(), j.Floor, j.Floored, j.TTL())
	s.submitted++
	s.place[j] = fzPending
	s.pauseMark[j] = s.pausedSoFar(j.Group)
	if j.TTL() > 0 {
		w := &Job{Job: queue.Job{Type: j.Type, ID: j.ID, Key: j.Key}}
		s.c.Watch(s.now, w, j, j.TTL()/2)
		s.waiters[w] = &fzWaiter{w: w, on: j, leftAt: -1}
		s.pauseMark[w] = s.pauseMark[j]
	}
	s.pending = append(s.pending, j)
	s.wasPending[j] = true
}

func (s *fzState) dispatch() {
	s.buf = s.c.Dispatch(s.now, s.buf[:0])
	s.logf("dispatch: %v", fzJs(slices.Clone(s.buf)))
	for _, j := range s.buf {
		if s.place[j] != fzPending {
			s.fail("Dispatch admitted %s, which was not pending (place %d)", fzLabel(j), s.place[j])
		}
		if !j.Started.Equal(s.now) {
			s.fail("Dispatch admitted %s with Started %v, now %v", fzLabel(j), j.Started, s.now)
		}
		s.leave(j)
		s.place[j] = fzRunning
		s.takeTokens(j)
	}
}

// leave takes j out of the model's pending list.
func (s *fzState) leave(j *Job) {
	i := slices.Index(s.pending, j)
	if i < 0 {
		s.fail("%s left the queue, but the model does not have it pending", fzLabel(j))
	}
	s.pending = slices.Delete(s.pending, i, i+1)
	s.place[j] = fzGone
	for _, w := range s.waiters { // the actor unwatches a run's waiters when it leaves
		if w.on == j && w.leftAt < 0 {
			s.c.Unwatch(w.w)
			w.leftAt = s.op
		}
	}
}

// collect takes the core's reports: expired jobs leave the model's queue.
func (s *fzState) collect() {
	// Waiters first: one may have expired in the pass in which its job
	// left.
	for _, w := range s.c.TakeExpiredWaiters() {
		fw := s.waiters[w]
		if fw == nil {
			s.fail("%s expired as a waiter, but nothing watched it", fzLabel(w))
			continue
		}
		switch d, ok := s.deadline(w, fw.on.Group); {
		case fw.leftAt >= 0 && fw.leftAt != s.op:
			s.fail("waiter of %s expired after it was unwatched", fzLabel(w))
		case !ok || d.After(s.now):
			s.fail("waiter of %s expired at %v, its deadline (paused %v) %v", fzLabel(w), s.now, s.paused[fw.on.Group], d)
		}
		s.logf("waiter of %s expired", fzJ{w})
		delete(s.waiters, w)
	}
	for w, fw := range s.waiters {
		if fw.leftAt >= 0 {
			delete(s.waiters, w)
		}
	}
	for _, j := range s.c.TakeExpired() {
		if s.place[j] != fzPending {
			s.fail("%s expired, but was not pending (place %d)", fzLabel(j), s.place[j])
		}
		if d, ok := s.deadline(j, j.Group); !ok || d.After(s.now) {
			s.fail("%s expired at %v, its deadline %v moved back by its group's pauses to %v (paused %v)", fzLabel(j), s.now, deadlineAt(s.c, j), d, s.paused[j.Group])
		}
		s.logf("expired %s", fzJ{j})
		s.leave(j)
		s.expired++
		s.expiredNow[j] = true
	}
	for _, a := range s.c.TakeAged() {
		j := a.Job
		switch {
		case s.expiredNow[j]:
			// It expired in this operation: it must have risen before its
			// deadline, when it was still pending.
			if rise := fzRiseAt(s.c, s.limits.Aging, j, a.Effective); !rise.Before(deadlineAt(s.c, j)) {
				s.fail("%s reported aged to %d (at %v at the earliest) but expired at its deadline %v",
					fzLabel(j), a.Effective, rise.Sub(fzStart), deadlineAt(s.c, j).Sub(fzStart))
			}
		case !s.wasPending[j]:
			s.fail("%s reported aged, but was not pending (place %d)", fzLabel(j), s.place[j])
		}
	}
	s.c.TakeAllocationChanges()
	if d := s.c.TakeDenied(); len(d) > 0 {
		s.fail("%d jobs denied without an admission policy", len(d))
	}
	if d := s.c.TakeDeferred(); len(d) > 0 {
		s.fail("%d jobs deferred without an admission policy", len(d))
	}
}

// fzKey identifies pending jobs in the snapshot.
type fzKey struct {
	typ            policy.JobType
	id, key, group string
}

func fzLabels(js []*Job) []string {
	out := make([]string, len(js))
	for i, j := range js {
		out[i] = fzLabel(j)
	}
	return out
}

// check verifies every invariant. dispatched: Dispatch just ran, so every
// pending job must have a reason to wait; expiredAll: no pending job may be
// past its deadline.
func (s *fzState) check(dispatched, expiredAll bool) {
	s.t.Helper()
	c := s.c
	running := c.Running()
	snap := c.Snapshot(s.now)

	// Counts: the core, its snapshot and the model agree.
	// A retried job stays in the count: its failed attempt is no finish.
	want := s.submitted - s.finished - s.withdrawn - s.expired
	if got := c.Pending() + c.RunningCount(); got != want {
		s.fail("Pending %d + RunningCount %d = %d, want submitted %d − finished %d − withdrawn %d − expired %d = %d (%d retries)",
			c.Pending(), c.RunningCount(), got, s.submitted, s.finished, s.withdrawn, s.expired, want, s.retried)
	}
	if c.Pending() != len(s.pending) || len(snap.Pending) != len(s.pending) {
		s.fail("Pending %d, snapshot %d, model %d", c.Pending(), len(snap.Pending), len(s.pending))
	}
	if len(running) != c.RunningCount() || len(snap.Running) != len(running) {
		s.fail("Running %d, RunningCount %d, snapshot %d", len(running), c.RunningCount(), len(snap.Running))
	}
	if snap.Expired != uint64(s.expired) {
		s.fail("snapshot Expired %d, model %d", snap.Expired, s.expired)
	}
	if c.Idle() != (len(running) == 0 && len(s.pending) == 0) {
		s.fail("Idle %v with %d running and %d pending", c.Idle(), len(running), len(s.pending))
	}

	// Running jobs: the model's, within every cap.
	tiers := map[policy.Priority]int{}
	types := map[policy.JobType]int{}
	keys := map[string]int{}
	groups := map[string]int{}
	conflicts := map[policy.ConflictKey][]*Job{}
	slots := map[*workers.Slot]*Job{}
	for i, j := range running {
		if s.place[j] != fzRunning {
			s.fail("%s runs, but the model has it at place %d", fzLabel(j), s.place[j])
		}
		if i > 0 && running[i-1].admitted >= j.admitted {
			s.fail("Running out of admission order")
		}
		if j.Started.After(s.now) || submittedAt(s.c, j).After(j.Started) {
			s.fail("%s submitted %v, started %v, now %v", fzLabel(j), submittedAt(s.c, j), j.Started, s.now)
		}
		if rj := snap.Running[i]; rj.Type != j.Type || rj.ID != j.ID || rj.FairnessKey != j.Key || rj.Group != j.Group {
			s.fail("snapshot running[%d] = %+v, Running()[%d] = %s", i, rj, i, fzLabel(j))
		}
		cfg := s.config(j.Type)
		if j.Priority() != cfg.Priority {
			s.fail("%s at priority %d, its type's is %d", fzLabel(j), j.Priority(), cfg.Priority)
		}
		tiers[j.Priority()]++
		types[j.Type]++
		keys[j.Key]++
		groups[j.Group]++
		if k, ok := cfg.Conflicts(j.ID); ok {
			// Shared jobs together, an exclusive one alone.
			for _, other := range conflicts[k] {
				if cfg.ConflictMode == policy.ConflictExclusive || s.config(other.Type).ConflictMode == policy.ConflictExclusive {
					s.fail("%s and %s run at once on conflict key %v", fzLabel(other), fzLabel(j), k)
				}
			}
			conflicts[k] = append(conflicts[k], j)
		}
		switch w := j.Worker; {
		case !cfg.RequiresWorker && w != nil:
			s.fail("%s of a type without workers runs on slot %s/%d", fzLabel(j), w.Worker, w.Index)
		case cfg.RequiresWorker && w == nil:
			s.fail("%s of a worker type runs without a slot", fzLabel(j))
		case w != nil:
			if !slices.Contains(w.Types(), j.Type) {
				s.fail("%s runs on slot %s/%d, which takes %v", fzLabel(j), w.Worker, w.Index, w.Types())
			}
			if other := slots[w]; other != nil {
				s.fail("%s and %s share slot %s/%d", fzLabel(other), fzLabel(j), w.Worker, w.Index)
			}
			slots[w] = j
			if !w.Busy() || w.Job != any(j) {
				s.fail("%s runs on slot %s/%d, which is busy %v with %v", fzLabel(j), w.Worker, w.Index, w.Busy(), w.Job)
			}
			if !w.Lost() && !s.workers[w.Worker] {
				s.fail("%s runs on slot %s/%d of an unregistered worker, not marked lost", fzLabel(j), w.Worker, w.Index)
			}
			if rj := snap.Running[i]; rj.Worker != w.Worker || rj.Slot != w.Index {
				s.fail("snapshot shows %s on %s/%d, it runs on %s/%d", fzLabel(j), rj.Worker, rj.Slot, w.Worker, w.Index)
			}
		}
	}
	if m := s.limits.MaxConcurrency; m > 0 && len(running) > m {
		s.fail("%d jobs run, global cap %d", len(running), m)
	}
	for p, n := range tiers {
		if n > s.tierCap(p) {
			s.fail("tier %d runs %d jobs", p, n)
		}
	}
	for ty, n := range types {
		if m := fzConfigs[ty].MaxConcurrency; m > 0 && n > m {
			s.fail("type %s runs %d jobs, its cap is %d", ty, n, m)
		}
	}
	if !maps.Equal(snap.RunningByTier, tiers) || !maps.Equal(snap.RunningByType, types) {
		s.fail("snapshot by tier %v, by type %v; counted %v, %v", snap.RunningByTier, snap.RunningByType, tiers, types)
	}
	if tc := s.limits.Tenants; tc != nil {
		for key, n := range keys {
			if m := tc.For(key).MaxRunning; m > 0 && n > m {
				s.fail("key %q runs %d jobs, its MaxRunning is %d", key, n, m)
			}
		}
	}
	if gc := s.limits.Groups; gc != nil {
		for g, n := range groups {
			if m := gc.Config(g).Limit; m > 0 && n > m {
				s.fail("group %q runs %d jobs, its limit is %d", g, n, m)
			}
		}
	}

	// Worker slots in the snapshot: one job each, of a type they take.
	busy := 0
	for _, w := range snap.Workers {
		if !s.workers[w.ID] {
			s.fail("snapshot lists worker %s, which is not registered", w.ID)
		}
		for i, sl := range w.Slots {
			if sl.Type == "" {
				continue
			}
			busy++
			if !slices.Contains(sl.Types, sl.Type) {
				s.fail("snapshot: slot %s/%d takes %v and runs %s", w.ID, i, sl.Types, sl.Type)
			}
		}
	}
	onLive := 0
	for w := range slots {
		if !w.Lost() {
			onLive++
		}
	}
	if busy != onLive {
		s.fail("snapshot shows %d busy slots, %d jobs run on registered slots", busy, onLive)
	}

	// Pending jobs: the model's, each with a reason once Dispatch ran.
	model := map[fzKey]int{}
	for _, j := range s.pending {
		model[fzKey{j.Type, j.ID, j.Key, j.Group}]++
		// Its deadline, moved back by its group's pauses, is the model's
		// and has not come.
		d, ok := s.c.Deadline(j)
		if md, mok := s.deadline(j, j.Group); ok != mok || !d.Equal(md) {
			s.fail("%s: Deadline %v, %v; the model's (paused %v) %v, %v", fzLabel(j), d, ok, s.paused[j.Group], md, mok)
		}
		if expiredAll && ok && !d.After(s.now) {
			s.fail("%s pending past its deadline %v", fzLabel(j), d)
		}
	}
	for _, fw := range s.waiters {
		if d, ok := s.deadline(fw.w, fw.on.Group); expiredAll && fw.leftAt < 0 && ok && !d.After(s.now) {
			s.fail("waiter of %s still watched past its deadline %v", fzLabel(fw.w), d)
		}
	}
	for _, p := range snap.Pending {
		model[fzKey{p.Type, p.ID, p.FairnessKey, p.Group}]--
		for i, r := range p.Reasons {
			if !slices.Contains(fzReasons, r) || slices.Index(p.Reasons, r) != i {
				s.fail("pending %s/%s: unknown or repeated reason %q in %q", p.Type, p.ID, r, p.Reasons)
			}
		}
		if len(p.Reasons) == 0 && p.Reason != "" || len(p.Reasons) > 0 && p.Reason != p.Reasons[0] {
			s.fail("pending %s/%s: headline %q is not the first of %q", p.Type, p.ID, p.Reason, p.Reasons)
		}
		if s.paused[p.Group] != slices.Contains(p.Reasons, policy.ReasonPaused) {
			s.fail("pending %s/%s in group %q (paused %v) has reasons %q", p.Type, p.ID, p.Group, s.paused[p.Group], p.Reasons)
		}
		if dispatched && p.Reason == "" {
			s.fail("work conservation: %s/%s of key %q, group %q waits with no reason after Dispatch\nsnapshot pending: %+v\nrunning: %v",
				p.Type, p.ID, p.FairnessKey, p.Group, snap.Pending, fzLabels(running))
		}
	}
	for k, n := range model {
		if n != 0 {
			s.fail("pending %+v: the model and the snapshot differ by %d", k, n)
		}
	}
}

// fzSeeds are programs that exercise every operation.
func fzSeeds() [][]byte {
	const (
		opSubmit     = 0
		opFinish     = 2
		opRetry      = 3
		opWithdraw   = 4
		opAdvance    = 5
		opRegister   = 6
		opUnregister = 7
		opEvict      = 8
		opDispatch   = 9
		opWithdrawAl = 10
		opPause      = 11
	)
	// Types by index: a b c d w v, then an unknown one.
	const (
		ta, tb, tc, td, tw, tv, tUnknown = 0, 1, 2, 3, 4, 5, 6
	)
	prog := func(header [4]byte, ops ...[]byte) []byte {
		return slices.Concat(append([][]byte{header[:]}, ops...)...)
	}
	submit := func(ty, id, key, group, flags byte) []byte { return []byte{opSubmit, ty, id, key, group, flags} }
	return [][]byte{
		// Priorities that only order, with tier caps by MaxRunning; rate
		// limits taking the jobs' tokens.
		prog([4]byte{3, fzAutoDispatch, 0, fzOrderOnly | fzRated},
			submit(ta, 0, 1, 1, fzTokens|0x30), submit(ta, 1, 1, 1, 0), submit(tc, 1, 0, 0, 0), submit(tc, 2, 0, 0, 0),
			submit(td, 0, 2, 0, 0), submit(td, 1, 2, 0, 0), submit(td, 2, 2, 0, 0), submit(ta, 2, 1, 0, fzTokens|0xf0),
			[]byte{opAdvance, 4}, []byte{opFinish, 0, 0}, []byte{opAdvance, 8}, []byte{opFinish, 1, 0}, []byte{opAdvance, 12},
			[]byte{opFinish, 0, 0}, []byte{opAdvance, 12}, []byte{opDispatch}),
		// Caps and conflicts: the global cap 2, b's cap 1, a and b on one id.
		prog([4]byte{2, 0, 0, 0},
			submit(ta, 0, 1, 0, 0), submit(tb, 0, 2, 0, 0), submit(tb, 1, 2, 0, 0), submit(tc, 1, 0, 0, 0),
			[]byte{opDispatch}, []byte{opFinish, 0, 0}, []byte{opDispatch}, []byte{opWithdraw, 0},
			[]byte{opAdvance, 12}, []byte{opDispatch}, submit(tUnknown, 0, 0, 0, 0)),
		// Workers: no slot, then a slot, a crash with jobs on it, duplicates.
		prog([4]byte{0, 0, 0, 0},
			submit(tw, 0, 1, 0, 0), submit(tv, 1, 2, 0, 0), submit(tw, 2, 3, 0, 0), []byte{opDispatch},
			[]byte{opRegister, 0}, []byte{opDispatch}, []byte{opRegister, 0}, []byte{opUnregister, 0},
			[]byte{opDispatch}, []byte{opFinish, 0, 0}, []byte{opRegister, 1}, []byte{opRegister, 2},
			[]byte{opDispatch}, []byte{opUnregister, 0}, []byte{opFinish, 1, 0}, []byte{opDispatch}),
		// Scoring and groups, dispatching after every operation.
		prog([4]byte{3, fzScoring | fzGroups | fzAutoDispatch, 0x0d, 0},
			submit(ta, 0, 1, 1, fzOnDemand), submit(tc, 1, 2, 2, 0), submit(td, 2, 3, 1, fzTokens|0x30),
			submit(td, 3, 1, 2, 0), submit(tc, 2, 0, 0, fzOnDemand), []byte{opAdvance, 8},
			[]byte{opFinish, 0, 0}, []byte{opFinish, 1, 0}, []byte{opAdvance, 12}, []byte{opFinish, 0, 0}),
		// Tenants and aging with urgent borrowing, group A limited.
		prog([4]byte{4, fzTenants | fzAging | fzUrgent | fzGroups | fzGroupLimit | fzKeyLimits, 0x51, 0x04},
			submit(td, 0, 1, 1, 0), submit(td, 1, 1, 1, 0), submit(td, 2, 1, 1, 0), submit(ta, 0, 2, 2, 0),
			submit(tc, 3, 1, 1, fzFloor|0x50), []byte{opDispatch}, []byte{opAdvance, 12}, []byte{opAdvance, 12},
			[]byte{opDispatch}, []byte{opFinish, 0, 0}, []byte{opDispatch}, []byte{opAdvance, 12}, []byte{opDispatch}),
		// Retries with backoff, expiry by TTL, eviction of idle keys.
		prog([4]byte{1, 0, 0, 0},
			submit(ta, 0, 1, 0, fzTTL), submit(ta, 1, 2, 0, 0), []byte{opDispatch},
			[]byte{opRetry, 0, 4}, []byte{opDispatch}, []byte{opAdvance, 6}, []byte{opDispatch},
			[]byte{opFinish, 0, 0}, []byte{opDispatch}, []byte{opAdvance, 12}, []byte{opAdvance, 12},
			[]byte{opEvict}, []byte{opFinish, 0, 0}, []byte{opAdvance, 12}, []byte{opAdvance, 12}, []byte{opEvict}),
		// Withdrawals: of pending jobs, of a running one (refused), of all.
		prog([4]byte{2, 0, 0, 0},
			submit(td, 0, 1, 0, 0), submit(td, 1, 2, 0, 0), submit(td, 2, 3, 0, 0), submit(tc, 0, 0, 0, 0),
			[]byte{opDispatch}, []byte{opWithdraw, 0x80}, []byte{opWithdraw, 1}, submit(tb, 3, 1, 2, 0),
			[]byte{opWithdrawAl, 0}, []byte{opDispatch}, []byte{opWithdrawAl, 1}),
		// Deadlines while paused: TTL jobs (and their waiters) in group A,
		// paused past their time to live, resumed, expiring after.
		prog([4]byte{1, fzAutoDispatch, 0, 0},
			submit(ta, 0, 1, 0, 0), submit(ta, 1, 1, 1, fzTTL), submit(tc, 2, 2, 1, fzTTL|0xc0),
			submit(td, 0, 3, 2, fzTTL), []byte{opPause, 0}, []byte{opAdvance, 12}, submit(ta, 2, 2, 1, fzTTL),
			[]byte{opAdvance, 12}, []byte{opAdvance, 12}, []byte{opPause, 0}, []byte{opAdvance, 1}, []byte{opAdvance, 1},
			[]byte{opAdvance, 1}, []byte{opAdvance, 1}, []byte{opAdvance, 4}, []byte{opPause, 0}, []byte{opAdvance, 12},
			[]byte{opPause, 0}, []byte{opAdvance, 4}, []byte{opAdvance, 4}, []byte{opFinish, 0, 0}),
		// Paused groups, with and without group weights.
		prog([4]byte{0, fzAutoDispatch, 0, 0},
			submit(ta, 0, 1, 1, 0), []byte{opPause, 0}, submit(ta, 1, 1, 1, 0), submit(ta, 2, 1, 2, 0),
			[]byte{opFinish, 0, 0}, []byte{opPause, 0}, []byte{opPause, 1}, submit(tc, 1, 2, 2, 0), []byte{opPause, 1}),
		prog([4]byte{2, fzGroups | fzAging, 0x05, 0},
			submit(ta, 0, 1, 1, 0), submit(ta, 1, 1, 1, 0), submit(tc, 2, 2, 2, 0), []byte{opPause, 0},
			[]byte{opDispatch}, []byte{opFinish, 0, 0}, []byte{opDispatch}, []byte{opPause, 0}, []byte{opDispatch}),
		// Worker types under scoring (rarity bonus) with a global cap.
		prog([4]byte{3, fzScoring | fzAutoDispatch, 0, 0},
			[]byte{opRegister, 1}, []byte{opRegister, 2}, submit(tv, 0, 1, 0, 0), submit(tw, 1, 2, 0, fzOnDemand),
			submit(tv, 2, 3, 0, 0), submit(tw, 3, 1, 0, 0), submit(tw, 0, 2, 0, 0), []byte{opFinish, 0, 0},
			[]byte{opUnregister, 2}, []byte{opRetry, 0, 1}, []byte{opAdvance, 4}, []byte{opRegister, 0}),
	}
}
