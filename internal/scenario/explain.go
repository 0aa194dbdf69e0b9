package scenario

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/fairsched/fairsched"
)

// The job types of the estimate and blocker scenarios.
const (
	Report fairsched.JobType = "report"
	Lookup fairsched.JobType = "lookup"
	Export fairsched.JobType = "export"
)

// explain asks the scheduler why j, just arrived, waits: an "explain"
// event naming its blockers and estimated start, which Estimated keeps.
func (r *runner) explain(j Job) error {
	if _, started := r.res.Start[j.Name()]; started {
		return nil
	}
	e, err := r.s.Explain(context.Background(), j.Type, j.ID)
	if err != nil || e.Running || e.Estimate == nil {
		return err
	}
	at := int(math.Round(e.Estimate.At.Sub(r.t0).Seconds()))
	r.res.Estimated[j.Name()] = at
	r.res.Timeline = append(r.res.Timeline, Event{T: r.now, Kind: "explain", Job: j.Name(), Key: j.Key, Group: j.Group,
		Reason: string(e.Reason), Detail: fmt.Sprintf("%s, held by %s; estimated start T=%d (%d ahead)", e.Reason, blockers(e.Blockers), at, e.Estimate.Ahead)})
	return nil
}

// blockers names what holds a job, briefly.
func blockers(bs []fairsched.Blocker) string {
	var out []string
	for _, b := range bs {
		switch {
		case b.ID != "":
			out = append(out, fmt.Sprintf("%s(%s)", b.Type, b.ID))
		case b.Key != nil:
			key := *b.Key
			if key == "" {
				key = "bg"
			}
			out = append(out, fmt.Sprintf("key %s ×%d", key, b.Running))
		case b.Tier != nil:
			out = append(out, fmt.Sprintf("tier %d ×%d", *b.Tier, b.Running))
		default:
			out = append(out, fmt.Sprintf("group %q ×%d", b.Group, b.Running))
		}
	}
	if len(out) == 0 {
		return "nothing named"
	}
	return strings.Join(out, ", ")
}

// EstimateErrors returns, over the jobs explained pending on arrival, the
// median and 90th percentile of |estimated start − actual start| in steps
// (seconds), and how many there were.
func EstimateErrors(res Result) (median, p90 float64, n int) {
	var errs []float64
	for name, est := range res.Estimated {
		if start, ok := res.Start[name]; ok {
			errs = append(errs, math.Abs(float64(est-start)))
		}
	}
	if len(errs) == 0 {
		return 0, 0, 0
	}
	slices.Sort(errs)
	q := func(p float64) float64 { return errs[int(math.Ceil(p*float64(len(errs))))-1] }
	return q(0.5), q(0.9), len(errs)
}

// StartEstimate measures the estimate's accuracy. Four slots in steady
// state at about 90 % load: three tenants send reports (4–8 s, 6 s on
// average: the type's default cost) and lookups (1–3 s, 2 s), each at its
// own uneven rhythm; every job that waits on arrival is explained, and its
// estimated start compared with its actual start. The estimate plays
// dispatch forward with what the scheduler knows — the average costs, the
// running jobs' starts — so its error comes from what it cannot know: how
// long each job really runs, and the jobs that arrive after it was made
// and go ahead in fair order (a tenant below its share).
func StartEstimate() Scenario {
	sc := Scenario{Name: "30-start-estimate", Title: "Estimated vs actual start of every waiting job, in steady state at ~90 % load on 4 slots",
		MaxConcurrency: 4, Explain: true,
		Types: []Type{
			{Report, fairsched.JobTypeConfig{DefaultCost: 6 * time.Second, Priority: 10}},
			{Lookup, fairsched.JobTypeConfig{DefaultCost: 2 * time.Second, Priority: 10}},
		}}
	rng := rand.New(rand.NewPCG(30, 30))
	for _, key := range []string{"acme", "globex", "initech"} {
		for t, i := rng.IntN(3), 0; t < 120; t, i = t+2+rng.IntN(3), i+1 {
			typ, d := Lookup, 1+rng.IntN(3)
			if i%2 == 0 {
				typ, d = Report, 4+rng.IntN(5)
			}
			sc.Jobs = append(sc.Jobs, Job{Type: typ, ID: fmt.Sprintf("%s-%d", key, i), Key: key, Arrival: t, Duration: d, Mode: ModeQueued})
		}
	}
	return sc
}

// Blocker: a waiting job names what holds it and when it should start. Two
// slots; "big" fills both with 10 s exports; an export of the same
// document as a running one waits on the conflict, naming that job;
// "small"'s lookup waits on the cap, naming the key that holds it; both
// start when the exports end, as estimated.
func Blocker() Scenario {
	sc := Scenario{Name: "31-blocker-eta", Title: "A waiting job names its blocker and its estimated start: the running export on its document, the key holding the slots",
		MaxConcurrency: 2, Explain: true,
		Types: []Type{
			{Export, fairsched.JobTypeConfig{DefaultCost: 10 * time.Second, Priority: 10, ConflictGroup: "doc"}},
			{Lookup, fairsched.JobTypeConfig{DefaultCost: 2 * time.Second, Priority: 10}},
		},
		Jobs: []Job{
			{Type: Export, ID: "doc1", Key: "big", Arrival: 0, Duration: 10, Mode: ModeQueued},
			{Type: Export, ID: "doc2", Key: "big", Arrival: 0, Duration: 10, Mode: ModeQueued},
			{Type: Export, ID: "doc1", Key: "small", Tag: "-again", Arrival: 1, Duration: 4, Mode: ModeQueued},
			{Type: Lookup, ID: "q1", Key: "small", Arrival: 2, Duration: 2},
		}}
	return sc
}

// estimateFigures states the start estimate's accuracy.
func estimateFigures(res Result) []string {
	median, p90, n := EstimateErrors(res)
	return []string{fmt.Sprintf("start estimate over %d jobs that waited (median wait %ds): median error %gs, p90 error %gs",
		n, medianWait(res), median, p90)}
}

// medianWait is the median wait of the jobs explained on arrival.
func medianWait(res Result) int {
	arrived := map[string]int{}
	for _, e := range res.Timeline {
		if e.Kind == "arrive" {
			arrived[e.Job] = e.T
		}
	}
	var waits []int
	for name := range res.Estimated {
		waits = append(waits, res.Start[name]-arrived[name])
	}
	if len(waits) == 0 {
		return 0
	}
	slices.Sort(waits)
	return waits[(len(waits)-1)/2]
}

// startEstimate checks the estimate's accuracy: it fails only when the
// error is past what the workload's spread explains (a median over one
// lookup's length, a p90 over half a report's).
func startEstimate(res Result) []string {
	median, p90, n := EstimateErrors(res)
	return []string{verdict(n >= 50 && median <= 2 && p90 <= 4,
		"estimated vs actual start over %d jobs that waited: median error %gs, p90 %gs", n, median, p90)}
}

// blockerETA checks that each waiting job named its blocker and started
// when estimated.
func blockerETA(res Result) []string {
	var named []string
	for _, e := range res.Timeline {
		if e.Kind == "explain" {
			named = append(named, e.Job+": "+e.Detail)
		}
	}
	exact := true
	for name, est := range res.Estimated {
		exact = exact && res.Start[name] == est
	}
	return []string{
		verdict(slices.Equal(named, []string{
			"export(doc1)-again: conflict, held by export(doc1); estimated start T=10 (0 ahead)",
			"lookup(q1): global_limit, held by key big ×2; estimated start T=10 (0 ahead)",
		}), "each waiting job named its blocker: %q", named),
		verdict(exact && len(res.Estimated) == 2, "each started when estimated (%v, started %v)", res.Estimated, res.Start),
	}
}
