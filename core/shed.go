package core

import (
	"time"

	"github.com/fairsched/fairsched/policy"
)

// CodeShed is the decision code of a pending job shed for a newcomer of a
// key under its fair share (policy.ShedConfig).
const CodeShed = string(policy.ReasonShed)

// shedIndex finds, without scanning keys or jobs, the key furthest over
// its fair share and that key's newest pending job that may be shed.
//
// A key's claim is its accumulated cost in the ledger (weighted service
// received) plus the weighted cost estimates of its indexed pending jobs.
// The keys with indexed jobs sit in a max-heap by claim: a job's arrival,
// admission or removal, and the charge its admission makes, fix its key's
// place in O(log keys); a key's newest job is at the end of its list,
// O(1) amortised (entries of jobs gone are skipped and compacted away).
type shedIndex struct {
	keys map[string]*shedKey
	heap []*shedKey
	live map[*Job]shedLive // indexed pending jobs
	// keeps reports a job that must never be shed (a durable one, unless
	// ShedConfig.Durable); nil keeps none.
	keeps func(*Job) bool
}

type shedLive struct {
	seq  uint64
	cost time.Duration // weighted estimate counted in its key's demand
}

type shedKey struct {
	key    string
	jobs   []shedEntry // arrival order; entries of jobs gone are skipped
	live   int
	demand time.Duration
	at     int // heap position
}

type shedEntry struct {
	j   *Job
	seq uint64
}

func newShedIndex() *shedIndex {
	return &shedIndex{keys: map[string]*shedKey{}, live: map[*Job]shedLive{}}
}

// SetShedKeeps sets which pending jobs fair shedding must never shed (its
// caller's durable jobs, unless ShedConfig.Durable).
func (c *Core) SetShedKeeps(keeps func(*Job) bool) {
	if c.shed != nil {
		c.shed.keeps = keeps
	}
}

// claim is k's claim on service: its accumulated cost plus its demand.
func (c *Core) claim(k *shedKey) time.Duration {
	return policy.AddSat(c.ledger.Cost(k.key), k.demand)
}

// shedCost is the weighted cost j would charge its key: its Tokens, else
// its type's learned estimate.
func (c *Core) shedCost(now time.Time, j *Job) time.Duration {
	cost := j.Tokens()
	if cost <= 0 {
		cost = c.estimates.Peek(estimateKey(j), j.slot.Config.DefaultCost)
	}
	return policy.Weighted(cost, c.keyWeight(j.Key))
}

// shedAdd indexes j, just queued, if it may be shed.
func (c *Core) shedAdd(now time.Time, j *Job) {
	s := c.shed
	if j.isRun || j.Runs > 0 || s.keeps != nil && s.keeps(j) {
		return
	}
	k := s.keys[j.Key]
	if k == nil {
		k = &shedKey{key: j.Key, at: len(s.heap)}
		s.keys[j.Key] = k
		s.heap = append(s.heap, k)
	}
	cost := c.shedCost(now, j)
	s.live[j] = shedLive{seq: j.Seq, cost: cost}
	k.jobs = append(k.jobs, shedEntry{j: j, seq: j.Seq})
	k.live++
	k.demand = policy.AddSat(k.demand, cost)
	c.shedFix(k)
}

// shedLeaves takes j, which leaves the queue (admitted or dropped), out of
// the index, and re-places its key: an admission charged it.
func (c *Core) shedLeaves(j *Job) {
	s := c.shed
	k := s.keys[j.Key]
	if k == nil {
		return
	}
	if l, ok := s.live[j]; ok && l.seq == j.Seq {
		delete(s.live, j)
		k.live--
		k.demand -= l.cost
		if k.live == 0 {
			c.shedForget(k)
			return
		}
		if len(k.jobs) > 2*k.live+8 {
			k.jobs = c.shedCompact(k.jobs)
		}
	}
	c.shedFix(k)
}

// shedCompact keeps the entries of jobs still indexed.
func (c *Core) shedCompact(jobs []shedEntry) []shedEntry {
	out := jobs[:0]
	for _, e := range jobs {
		if l, ok := c.shed.live[e.j]; ok && l.seq == e.seq {
			out = append(out, e)
		}
	}
	clear(jobs[len(out):])
	return out
}

func (c *Core) shedForget(k *shedKey) {
	s := c.shed
	last := len(s.heap) - 1
	i := k.at
	s.heap[i], s.heap[last] = s.heap[last], s.heap[i]
	s.heap[i].at = i
	s.heap[last] = nil
	s.heap = s.heap[:last]
	delete(s.keys, k.key)
	if i < last {
		c.shedFix(s.heap[i])
	}
}

// shedFix restores the heap around k after its claim changed.
func (c *Core) shedFix(k *shedKey) {
	if !c.shedUp(k.at) {
		c.shedDown(k.at)
	}
}

func (c *Core) shedOver(i, j int) bool {
	h := c.shed.heap
	a, b := c.claim(h[i]), c.claim(h[j])
	return a > b || a == b && h[i].key < h[j].key
}

func (c *Core) shedSwap(i, j int) {
	h := c.shed.heap
	h[i], h[j] = h[j], h[i]
	h[i].at, h[j].at = i, j
}

func (c *Core) shedUp(i int) bool {
	moved := false
	for i > 0 {
		p := (i - 1) / 2
		if !c.shedOver(i, p) {
			break
		}
		c.shedSwap(i, p)
		i, moved = p, true
	}
	return moved
}

func (c *Core) shedDown(i int) {
	n := len(c.shed.heap)
	for {
		l, top := 2*i+1, i
		if l < n && c.shedOver(l, top) {
			top = l
		}
		if r := l + 1; r < n && c.shedOver(r, top) {
			top = r
		}
		if top == i {
			return
		}
		c.shedSwap(i, top)
		i = top
	}
}

// shedFor makes room for j, which the queue's bound refused (refusal): if
// j's key, with j, claims less than the key furthest over its share, that
// key's newest indexed job is dropped (for TakeDenied, with a *RefusalError
// of reason shed) and shedFor reports true. O(log keys) amortised.
func (c *Core) shedFor(now time.Time, j *Job, refusal error) bool {
	s := c.shed
	re, _ := refusal.(*policy.RefusalError)
	if s == nil || re == nil || re.Reason != policy.ReasonPoolOverloaded || len(s.heap) == 0 {
		return false
	}
	top := s.heap[0]
	if top.key == j.Key {
		return false // the newcomer's own key is the furthest over
	}
	mine := max(c.ledger.Cost(j.Key), c.ledger.Floor()) // an idle key joins at the floor
	if k := s.keys[j.Key]; k != nil {
		mine = policy.AddSat(mine, k.demand)
	}
	mine = policy.AddSat(mine, c.shedCost(now, j))
	if c.claim(top) <= mine {
		return false
	}
	victim := c.shedNewest(top)
	c.drop(now, victim) // shedLeaves: out of the index
	err := &policy.RefusalError{Reason: policy.ReasonShed, Type: victim.Type, ID: victim.ID, Key: victim.Key, Limit: re.Limit}
	c.denied = append(c.denied, Denied{Job: victim, Err: err, Shed: true})
	c.record(now, victim, DecisionDeny, CodeShed, 0)
	return true
}

// shedNewest returns k's newest indexed job, dropping the entries of jobs
// gone from the end of its list.
func (c *Core) shedNewest(k *shedKey) *Job {
	for {
		e := k.jobs[len(k.jobs)-1]
		if l, ok := c.shed.live[e.j]; ok && l.seq == e.seq {
			return e.j
		}
		k.jobs[len(k.jobs)-1] = shedEntry{}
		k.jobs = k.jobs[:len(k.jobs)-1]
	}
}
