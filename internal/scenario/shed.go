package scenario

import (
	"fmt"
	"time"

	"github.com/fairsched/fairsched"
)

// FairShedding: on 2 slots with a queue of 10 (WithMaxPending) and
// shedding on, tenant "noisy" queues 14 two-second background clones at
// T=0: 2 start, 10 wait, its last 2 are refused (pool_overloaded: it is
// the key furthest over its share). At T=1 tenants "quiet-a" and
// "quiet-b" call with 2 clones each: the queue is full, but each claims
// less than noisy, so each is accepted and noisy's newest waiting job is
// shed in its place (reason shed). The quiet clones start as the first
// slots free, ahead of noisy's backlog.
func FairShedding() Scenario {
	sc := Scenario{Name: "29-fair-shedding", Title: "A full queue sheds the noisy client's newest jobs for quiet clients, who are served at once; the noisy client's own extra jobs are refused",
		MaxConcurrency: 2,
		Types:          []Type{{SyncClone, fairsched.JobTypeConfig{DefaultCost: 2 * time.Second, Priority: 8}}},
		Options:        []fairsched.Option{fairsched.WithMaxPending(10), fairsched.WithShedding()}}
	for i := range 14 {
		sc.Jobs = append(sc.Jobs, Job{Type: SyncClone, ID: fmt.Sprintf("noisy-%02d", i+1), Key: "noisy", Duration: 2, Mode: ModeQueued, Refused: i >= 12})
	}
	for _, key := range []string{"quiet-a", "quiet-b"} {
		for i := range 2 {
			sc.Jobs = append(sc.Jobs, Job{Type: SyncClone, ID: fmt.Sprintf("%s-%d", key, i+1), Key: key, Arrival: 1, Duration: 2})
		}
	}
	return sc
}

// fairShedding checks scenario 29: noisy's own extra jobs are refused,
// each quiet job sheds one of noisy's newest, and the quiet jobs start
// within two of their durations of arriving, ahead of noisy's backlog.
func fairShedding(sc Scenario, res Result) []string {
	var refused, shed []string
	for _, e := range res.Timeline {
		switch {
		case e.Kind == "refuse" && e.Reason == "pool_overloaded":
			refused = append(refused, e.Job)
		case e.Kind == "shed" && e.Key == "noisy" && e.Reason == "shed":
			shed = append(shed, e.Job)
		}
	}
	out := []string{
		verdict(fmt.Sprint(refused) == "[sync-clone(noisy-13) sync-clone(noisy-14)]", "the full queue refused only noisy's own extra jobs: %v", refused),
		verdict(fmt.Sprint(shed) == "[sync-clone(noisy-12) sync-clone(noisy-11) sync-clone(noisy-10) sync-clone(noisy-09)]",
			"each quiet job shed one of noisy's newest waiting jobs: %v", shed),
	}
	for _, key := range []string{"quiet-a", "quiet-b"} {
		for i := range 2 {
			name := fmt.Sprintf("sync-clone(%s-%d)", key, i+1)
			j := find(sc, name)
			out = append(out, verdict(res.Start[name] <= j.Arrival+2*j.Duration+1,
				"%s arrived at T=%d into a full queue and started at T=%d, ahead of noisy's backlog", name, j.Arrival, res.Start[name]))
		}
	}
	return out
}
