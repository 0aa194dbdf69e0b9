package core

import (
	"fmt"
	"testing"
	"time"

	"github.com/fairsched/fairsched/policy"
)

// refEngine drives the reference scheduler of reference_test.go — a literal
// port of the spec's sort-every-pass dispatcher, which TestReferenceMatchesCore
// shows to make the very decisions of Core — through the benchmark harness,
// so that the two can be timed on the same workload.
type refEngine struct {
	r    *refScheduler
	refs map[*Job]*refJob
	jobs map[*refJob]*Job
}

func newRefEngine(maxConcurrency int) engine {
	l := policy.DefaultLimits()
	l.MaxConcurrency = maxConcurrency
	return &refEngine{r: newRef(l), refs: map[*Job]*refJob{}, jobs: map[*refJob]*Job{}}
}

func (e *refEngine) RegisterType(t policy.JobType, cfg policy.JobTypeConfig) error {
	e.r.types[t] = cfg
	return nil
}

func (e *refEngine) Submit(now time.Time, j *Job) error {
	rj := e.r.submit(now, j.Type, j.ID, j.Key)
	j.Seq, j.Submitted = rj.seq, now.UnixNano()
	e.refs[j], e.jobs[rj] = rj, j
	return nil
}

func (e *refEngine) Dispatch(now time.Time, buf []*Job) []*Job {
	for _, rj := range e.r.dispatch(now) {
		j := e.jobs[rj]
		if j.Running == nil {
			j.Running = &Running{} // the core's Dispatch gives it one from its free list
		}
		j.Cost, j.KeyCost, j.Started = rj.cost, rj.keyCost, rj.started
		buf = append(buf, j)
	}
	return buf
}

func (e *refEngine) Finish(now time.Time, j *Job) Completion {
	rj := e.refs[j]
	delete(e.refs, j)
	delete(e.jobs, rj)
	return e.r.finish(now, rj)
}

func (e *refEngine) Pending() int      { return len(e.r.pending) }
func (e *refEngine) RunningCount() int { return len(e.r.running) }

// sortPassKeys is the number of fairness keys of the sort-pass comparison.
const sortPassKeys = 1000

// BenchmarkSortPass runs the steady-state workload of BenchmarkCoreDispatch
// (Finish + Submit + Dispatch per op) through the sort-every-pass port.
func BenchmarkSortPass(b *testing.B) {
	benchCompare(b, "sortpass", newRefEngine)
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
			h := cachedHarness(impl+"/"+name, pending, sortPassKeys, 0, newEngine)
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
