package replay

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"time"
)

// Tenant is what a tenant got in a run of a trace.
type Tenant struct {
	Name string
	// Jobs is the tenant's jobs; NotRun those never started.
	Jobs, NotRun int
	// Share is the tenant's part of the service while the service was
	// contended: while some job waited and two or more tenants had work
	// (waiting or running), the run time its jobs got over that of all.
	// Contended is false when the service never was.
	Share     float64
	Contended bool
	// P95Wait and MaxWait are over the tenant's jobs that started.
	P95Wait, MaxWait time.Duration
}

// Measure returns what each tenant got in runs, by name.
func Measure(runs []Run) []Tenant {
	byName := map[string]*Tenant{}
	waits := map[string][]time.Duration{}
	for _, r := range runs {
		t := byName[r.Tenant]
		if t == nil {
			t = &Tenant{Name: r.Tenant}
			byName[r.Tenant] = t
		}
		t.Jobs++
		if r.NotRun {
			t.NotRun++
			continue
		}
		waits[r.Tenant] = append(waits[r.Tenant], r.Start-r.Arrival)
	}
	served, total := contendedService(runs)
	var out []Tenant
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		t := byName[name]
		if total > 0 {
			t.Share, t.Contended = served[name]/total, true
		}
		if w := waits[name]; len(w) > 0 {
			slices.Sort(w)
			t.P95Wait, t.MaxWait = w[int(math.Ceil(0.95*float64(len(w))))-1], w[len(w)-1]
		}
		out = append(out, *t)
	}
	return out
}

// change is one step of a tenant's waiting or running jobs.
type change struct {
	at               time.Duration
	tenant           string
	waiting, running int
}

// contendedService sweeps the runs' arrivals, starts and ends and sums, per
// tenant, the run time its jobs got while the service was contended
// (seconds).
func contendedService(runs []Run) (map[string]float64, float64) {
	var changes []change
	for _, r := range runs {
		if r.NotRun {
			continue
		}
		changes = append(changes, change{r.Arrival, r.Tenant, 1, 0}, change{r.Start, r.Tenant, -1, 1},
			change{r.Start + r.Run, r.Tenant, 0, -1})
	}
	slices.SortStableFunc(changes, func(a, b change) int { return cmp.Compare(a.at, b.at) })
	waiting, running := map[string]int{}, map[string]int{}
	totalWaiting := 0
	served, total := map[string]float64{}, 0.0
	for i, c := range changes {
		waiting[c.tenant] += c.waiting
		running[c.tenant] += c.running
		totalWaiting += c.waiting
		if waiting[c.tenant]+running[c.tenant] == 0 {
			delete(waiting, c.tenant)
			delete(running, c.tenant)
		}
		if i+1 == len(changes) || totalWaiting == 0 || len(waiting) < 2 { // waiting holds every tenant with work
			continue
		}
		dt := (changes[i+1].at - c.at).Seconds()
		for name, n := range running {
			served[name] += dt * float64(n)
			total += dt * float64(n)
		}
	}
	return served, total
}
