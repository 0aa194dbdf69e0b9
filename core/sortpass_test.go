package core_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/costmodel"
	"github.com/fairsched/fairsched/policy"
)

// sortPass is the spec's dispatcher, ported from the Python simulation's
// Scheduler._dispatch: every pass lists all pending jobs, sorts them by
// (-priority, accumulated cost of the key, arrival), walks the list checking
// the tier cap (the priority value), the type cap and conflicts by scanning
// the running jobs, admits the first admissible job and starts over, while
// a job was admitted and the global cap is not reached.
//
// Only the dispatch is ported. The cost numbers come from the project's own
// costmodel (the ledger with its advance-on-join rule, the EMA estimates) and
// are fed the same events as in core.Core, so the two dispatchers can be
// compared admission by admission. Seq stands for the simulation's
// (arrival_time, index in pending): pending is kept in arrival order.
type sortPass struct {
	max       int // 0 = unlimited
	types     map[policy.JobType]policy.JobTypeConfig
	ledger    *costmodel.Ledger
	estimates *costmodel.Estimates
	pending   []*core.Job // arrival order
	running   []*core.Job // admission order
	seq       uint64
	scorable  []scored // reused between passes
}

type scored struct {
	negPriority int
	vt          time.Duration
	seq         uint64
	job         *core.Job
}

func newSortPass(maxConcurrency int) engine {
	return &sortPass{
		max:       maxConcurrency,
		types:     map[policy.JobType]policy.JobTypeConfig{},
		ledger:    costmodel.NewLedger(),
		estimates: costmodel.NewEstimates(policy.DefaultCostSmoothing),
	}
}

func (s *sortPass) RegisterType(t policy.JobType, cfg policy.JobTypeConfig) error {
	s.types[t] = cfg
	return nil
}

func (s *sortPass) Submit(now time.Time, j *core.Job) error {
	cfg, ok := s.types[j.Type]
	if !ok {
		return fmt.Errorf("%w: %q", policy.ErrUnknownJobType, j.Type)
	}
	s.seq++
	j.Seq, j.Submitted, j.Priority = s.seq, now, cfg.Priority
	s.ledger.Join(j.Key, now)
	s.pending = append(s.pending, j)
	return nil
}

func (s *sortPass) Dispatch(now time.Time, buf []*core.Job) []*core.Job {
	admittedAny := true
	for admittedAny && (s.max == 0 || len(s.running) < s.max) {
		admittedAny = false
		sc := s.scorable[:0]
		for _, j := range s.pending {
			sc = append(sc, scored{-int(j.Priority), s.ledger.Cost(j.Key), j.Seq, j})
		}
		slices.SortFunc(sc, func(a, b scored) int {
			return cmp.Or(cmp.Compare(a.negPriority, b.negPriority), cmp.Compare(a.vt, b.vt), cmp.Compare(a.seq, b.seq))
		})
		s.scorable = sc
		for _, e := range sc {
			j := e.job
			cfg := s.types[j.Type]
			if s.priorityRunningCount(j.Priority) >= int(j.Priority) {
				continue
			}
			if cfg.MaxConcurrency > 0 && s.typeRunningCount(j.Type) >= cfg.MaxConcurrency {
				continue
			}
			if s.hasConflict(j, cfg) {
				continue
			}
			i := slices.Index(s.pending, j) // list.remove: a scan, as in the simulation
			s.pending = slices.Delete(s.pending, i, i+1)
			j.Started = now
			j.Cost = s.estimates.Cost(costmodel.EstimateKey{Type: string(j.Type), ID: j.ID}, cfg.DefaultCost, now)
			j.KeyCost = s.ledger.Charge(j.Key, j.Cost)
			s.running = append(s.running, j)
			buf = append(buf, j)
			admittedAny = true
			break
		}
	}
	return buf
}

func (s *sortPass) priorityRunningCount(p policy.Priority) int {
	n := 0
	for _, r := range s.running {
		if r.Priority == p {
			n++
		}
	}
	return n
}

func (s *sortPass) typeRunningCount(t policy.JobType) int {
	n := 0
	for _, r := range s.running {
		if r.Type == t {
			n++
		}
	}
	return n
}

func (s *sortPass) hasConflict(j *core.Job, cfg policy.JobTypeConfig) bool {
	if cfg.ConflictGroup == "" {
		return false
	}
	for _, r := range s.running {
		if r.ID == j.ID && s.types[r.Type].ConflictGroup == cfg.ConflictGroup {
			return true
		}
	}
	return false
}

func (s *sortPass) Finish(now time.Time, j *core.Job) core.Completion {
	i := slices.Index(s.running, j)
	s.running = slices.Delete(s.running, i, i+1)
	elapsed := now.Sub(j.Started)
	est := s.estimates.Observe(costmodel.EstimateKey{Type: string(j.Type), ID: j.ID}, elapsed, j.Cost, now)
	s.ledger.Leave(j.Key, now)
	return core.Completion{Elapsed: elapsed, Estimate: est}
}

func (s *sortPass) Pending() int      { return len(s.pending) }
func (s *sortPass) RunningCount() int { return len(s.running) }

// TestSortPassMatchesCore drives the port and the real core through the same
// random events — submissions, finishes of any running job, time steps of 0
// to 3ms — on a small configuration where every limit binds, and requires
// the same admissions, in the same order, with the same costs.
func TestSortPassMatchesCore(t *testing.T) {
	types := []struct {
		name policy.JobType
		cfg  policy.JobTypeConfig
		fg   bool
	}{
		{"sync-clone", policy.JobTypeConfig{DefaultCost: 10 * time.Millisecond, MaxConcurrency: 4, ConflictGroup: "git", Priority: 6}, true},
		{"pull", policy.JobTypeConfig{DefaultCost: 3 * time.Millisecond, ConflictGroup: "git", Priority: 6}, true},
		{"repack", policy.JobTypeConfig{DefaultCost: 20 * time.Millisecond, MaxConcurrency: 2, ConflictGroup: "git", Priority: 3}, false},
		{"snapshot", policy.JobTypeConfig{DefaultCost: 5 * time.Millisecond, MaxConcurrency: 2, Priority: 3}, false},
	}
	ids := []string{"r1", "r2", "r3", "r4", "r5", "r6"}
	keys := []string{"a", "b", "c", "d"}
	blocked := 0 // dispatches that left a free slot and a waiting job
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 42))
		engines := []engine{newCoreEngine(8), newSortPass(8)}
		for _, e := range engines {
			for _, ty := range types {
				if err := e.RegisterType(ty.name, ty.cfg); err != nil {
					t.Fatal(err)
				}
			}
		}
		running := make([][]*core.Job, len(engines)) // per engine, admission order
		now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		for step := range 1500 {
			now = now.Add(time.Duration(rng.IntN(4)) * time.Millisecond)
			if len(running[0]) == 0 || rng.IntN(2) == 0 {
				ty := types[rng.IntN(len(types))]
				id, key := ids[rng.IntN(len(ids))], ""
				if ty.fg {
					key = keys[rng.IntN(len(keys))]
				}
				for _, e := range engines {
					if err := e.Submit(now, &core.Job{Type: ty.name, ID: id, Key: key}); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				i := rng.IntN(len(running[0]))
				var done [2]core.Completion
				for k, e := range engines {
					done[k] = e.Finish(now, running[k][i])
					running[k] = slices.Delete(running[k], i, i+1)
				}
				if done[0] != done[1] {
					t.Fatalf("seed %d step %d: completion: core %+v, port %+v", seed, step, done[0], done[1])
				}
			}
			var got [2][]*core.Job
			for k, e := range engines {
				got[k] = e.Dispatch(now, nil)
				running[k] = append(running[k], got[k]...)
			}
			if !slices.EqualFunc(got[0], got[1], sameAdmission) {
				t.Fatalf("seed %d step %d: core admitted %s, port admitted %s", seed, step, admissions(got[0]), admissions(got[1]))
			}
			if engines[0].Pending() != engines[1].Pending() {
				t.Fatalf("seed %d step %d: pending: core %d, port %d", seed, step, engines[0].Pending(), engines[1].Pending())
			}
			if len(running[0]) < 8 && engines[0].Pending() > 0 {
				blocked++
			}
		}
	}
	if blocked == 0 {
		t.Fatal("no dispatch skipped a waiting job: the workload does not exercise the limits")
	}
}

func sameAdmission(a, b *core.Job) bool {
	return a.Seq == b.Seq && a.Type == b.Type && a.ID == b.ID && a.Key == b.Key &&
		a.Priority == b.Priority && a.Cost == b.Cost && a.KeyCost == b.KeyCost && a.Started.Equal(b.Started)
}

func admissions(js []*core.Job) string {
	s := "["
	for _, j := range js {
		s += fmt.Sprintf(" #%d %s/%s key=%q cost=%v keycost=%v", j.Seq, j.Type, j.ID, j.Key, j.Cost, j.KeyCost)
	}
	return s + " ]"
}

// sortPassKeys is the number of fairness keys of the sort-pass comparison.
const sortPassKeys = 1000

// BenchmarkSortPass runs the steady-state workload of BenchmarkCoreDispatch
// (Finish + Submit + Dispatch per op) through the sort-every-pass port.
func BenchmarkSortPass(b *testing.B) {
	benchCompare(b, "sortpass", newSortPass)
}

// BenchmarkSortPassCore runs the same workload through the core and reports
// x-faster: the median ns/op of BenchmarkSortPass at the same size over its
// own (target: ≥ 10 at pending=10000).
func BenchmarkSortPassCore(b *testing.B) {
	benchCompare(b, "sortpass-core", newCoreEngine)
}

func benchCompare(b *testing.B, impl string, newEngine func(int) engine) {
	defer dropCache()
	for _, pending := range []int{1_000, 10_000} {
		name := fmt.Sprintf("pending=%d", pending)
		b.Run(name, func(b *testing.B) {
			h := cachedHarness(impl+"/"+name, pending, sortPassKeys, newEngine)
			b.ReportAllocs()
			for b.Loop() {
				h.step()
			}
			h.check(b, pending)
			ns := book.Record(b, impl+"/"+name)
			if base := book.Median("sortpass/" + name); impl != "sortpass" && base > 0 {
				b.ReportMetric(base/ns, "x-faster")
			}
		})
	}
}
